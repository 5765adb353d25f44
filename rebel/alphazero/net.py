"""The AlphaZero policy-value net for m,n,k boards: a small residual conv trunk with a policy
head (a logit per cell) and a value head (tanh, for the player to move).

Input: the core's planes (``MnkBoard.planes``, ``MctsBatch.select``): (batch, 4, m, n) float32
(the mover's stones, the opponent's, the last move, ones when player 0 is to move).
"""
from __future__ import annotations

from typing import Tuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

PLANES = 4

__all__ = ["PLANES", "PolicyValueNet", "predict"]


class _ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class PolicyValueNet(nn.Module):
    """``blocks`` residual blocks of ``channels`` 3x3 convolutions on an m x n board."""

    def __init__(self, m: int, n: int, channels: int = 64, blocks: int = 4, value_hidden: int = 64) -> None:
        super().__init__()
        if not (1 <= m <= 19 and 1 <= n <= 19):
            raise ValueError(f"board {m} x {n}: m and n must be in 1..19")
        if channels < 1 or blocks < 0 or value_hidden < 1:
            raise ValueError(f"channels ({channels}) and value_hidden ({value_hidden}) must be >= 1, blocks "
                             f"({blocks}) >= 0")
        self.m, self.n = m, n
        self.channels, self.num_blocks, self.value_hidden = channels, blocks, value_hidden
        self.stem = nn.Sequential(nn.Conv2d(PLANES, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                  nn.ReLU())
        self.blocks = nn.Sequential(*[_ResidualBlock(channels) for _ in range(blocks)])
        self.policy_conv = nn.Sequential(nn.Conv2d(channels, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU())
        self.policy_fc = nn.Linear(2 * m * n, m * n)
        self.value_conv = nn.Sequential(nn.Conv2d(channels, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU())
        self.value_fc = nn.Sequential(nn.Linear(m * n, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))

    def forward(self, planes: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Policy logits (batch, m * n) and values (batch,) in [-1, 1]."""
        if planes.dim() != 4 or tuple(planes.shape[1:]) != (PLANES, self.m, self.n):
            raise ValueError(f"planes have shape {tuple(planes.shape)}, expected (batch, {PLANES}, {self.m}, {self.n})")
        x = self.blocks(self.stem(planes))
        logits = self.policy_fc(self.policy_conv(x).flatten(1))
        value = torch.tanh(self.value_fc(self.value_conv(x).flatten(1))).squeeze(1)
        return logits, value

    def architecture(self) -> dict[str, int]:
        """What rebuilds this net (stored with its weights)."""
        return {"m": self.m, "n": self.n, "channels": self.channels, "blocks": self.num_blocks,
                "value_hidden": self.value_hidden}


@torch.no_grad()
def predict(net: PolicyValueNet, planes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Priors (softmax over cells; the search masks illegal ones) and values for a batch of
    planes, as float32 numpy arrays, in evaluation mode."""
    if len(planes) == 0:
        return np.zeros((0, net.m * net.n), np.float32), np.zeros(0, np.float32)
    was_training = net.training
    net.eval()
    logits, value = net(torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32)))
    if was_training:
        net.train()
    priors = torch.softmax(logits, dim=1)
    return priors.numpy().astype(np.float32, copy=False), value.numpy().astype(np.float32, copy=False)


def save_net(net: PolicyValueNet, path: str) -> None:
    """Writes the net's architecture and weights atomically (a plain torch file of tensors and
    ints, readable with ``torch.load(weights_only=True)``)."""
    import io

    from rebel.util.atomic_io import atomic_write_bytes

    state = {"format": "rebel-alphazero-net", "version": 1, "architecture": net.architecture(),
             "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()}}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def load_net(path: str) -> PolicyValueNet:
    """Reads a net written by :func:`save_net` (ValueError naming the problem if the file is
    not one: no code from the file is executed)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except Exception as e:  # truncated or foreign files fail inside torch's unpickler
        raise ValueError(f"{path}: not a rebel AlphaZero net ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict) or state.get("format") != "rebel-alphazero-net":
        raise ValueError(f"{path}: not a rebel AlphaZero net (no 'rebel-alphazero-net' format tag)")
    arch = state.get("architecture")
    if not isinstance(arch, dict) or set(arch) != {"m", "n", "channels", "blocks", "value_hidden"}:
        raise ValueError(f"{path}: the net's architecture record is missing or malformed")
    net = PolicyValueNet(**{k: int(v) for k, v in arch.items()})
    try:
        net.load_state_dict(state["state_dict"])
    except (KeyError, RuntimeError) as e:
        raise ValueError(f"{path}: the weights do not match the recorded architecture ({e})") from None
    if not all(torch.isfinite(t).all() for t in net.state_dict().values() if t.is_floating_point()):
        raise ValueError(f"{path}: the weights contain non-finite values")
    net.eval()
    return net
