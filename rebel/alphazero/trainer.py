"""Training the policy-value net on self-play examples: cross-entropy of the policy logits
against the search's visit distribution plus the squared error of the value against the
game's result, with L2 regularisation through the optimiser's weight decay.

With ``device`` a GPU, the gradient steps run on a copy of the net there and the CPU net,
which self-play and evaluation read, takes its weights after every :meth:`AlphaZeroTrainer.train`."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from rebel.alphazero.net import PolicyValueNet
from rebel.nets.torch_device import resolve_device, to_cpu

__all__ = ["TrainerSettings", "AlphaZeroTrainer", "losses"]


@dataclass
class TrainerSettings:
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 256
    device: str = "cpu"


def losses(net: PolicyValueNet, planes: torch.Tensor, policies: torch.Tensor,
           values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(policy cross-entropy, value squared error), each averaged over the batch."""
    logits, value = net(planes)
    policy_loss = -(policies * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    value_loss = F.mse_loss(value, values)
    return policy_loss, value_loss


class AlphaZeroTrainer:
    """Adam steps on uniformly sampled minibatches of (planes, policies, values) arrays."""

    def __init__(self, net: PolicyValueNet, settings: TrainerSettings) -> None:
        if settings.lr <= 0 or settings.batch_size < 1 or settings.weight_decay < 0:
            raise ValueError(f"bad trainer settings: {settings}")
        self.net = net  # on the CPU: what self-play and evaluation read
        self.settings = settings
        self.device = resolve_device(settings.device)
        self.train_net = net if self.device.type == "cpu" else copy.deepcopy(net).to(self.device)
        self.optimizer = torch.optim.Adam(self.train_net.parameters(), lr=settings.lr,
                                          weight_decay=settings.weight_decay)
        self.steps = 0

    def optimizer_state(self) -> dict[str, Any]:
        """A deep copy of the optimizer's state on the CPU (checkpoints load on any device)."""
        return to_cpu(copy.deepcopy(self.optimizer.state_dict()))

    def load_state(self, model: dict[str, torch.Tensor], optimizer: dict[str, Any]) -> None:
        """The net's weights (on both copies) and the optimizer's state, from a checkpoint."""
        self.net.load_state_dict(model)
        if self.train_net is not self.net:
            self.train_net.load_state_dict(model)
        self.optimizer.load_state_dict(optimizer)  # moves the state to the parameters' device

    def train(self, planes: np.ndarray, policies: np.ndarray, values: np.ndarray, steps: int,
              rng: np.random.Generator) -> dict[str, float]:
        """``steps`` gradient steps; returns the mean policy and value losses over them."""
        net, device = self.train_net, self.device
        net.train()
        total_p = total_v = 0.0
        n = len(values)
        for _ in range(steps):
            idx = rng.integers(0, n, size=min(self.settings.batch_size, n))
            p_loss, v_loss = losses(net, torch.from_numpy(planes[idx]).to(device),
                                    torch.from_numpy(policies[idx]).to(device),
                                    torch.from_numpy(values[idx]).to(device))
            self.optimizer.zero_grad(set_to_none=True)
            (p_loss + v_loss).backward()
            self.optimizer.step()
            total_p += float(p_loss.detach())
            total_v += float(v_loss.detach())
            self.steps += 1
        net.eval()
        if net is not self.net:
            self.net.load_state_dict(net.state_dict())  # copies the GPU weights into the CPU net
        return {"policy_loss": total_p / max(steps, 1), "value_loss": total_v / max(steps, 1)}
