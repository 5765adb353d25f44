"""What evaluates the policy-value net at MCTS leaves: torch (:class:`TorchEvaluator`, i.e.
:func:`rebel.alphazero.net.predict`) or the C++ core (:class:`NativeNet`).

The native forward pass (``rebel._core.ConvPolicyValueNet``) takes the torch net with its
BatchNorms folded into their convolutions (evaluation mode: running statistics) and its 3x3
convolutions turned into Linear layers on im2col rows, and runs without torch and with the
GIL released, in float32 or with bf16 products (AMX / AVX512_BF16 where the CPU has them).
It follows the net only through :meth:`NativeNet.update` (a new snapshot after training).
benchmarks/bench_mcts.py measures both evaluators.
"""
from __future__ import annotations

from typing import Tuple, Union

import numpy as np
import torch
from torch import nn

from rebel import _core
from rebel.alphazero.net import PLANES, PolicyValueNet, predict

__all__ = ["Evaluator", "NativeNet", "TorchEvaluator", "describe", "make_evaluator", "native_layers"]


def _folded(conv: object, bn: object) -> Tuple[torch.Tensor, torch.Tensor]:
    """conv followed by bn (running statistics) as one convolution's weight and bias, float64."""
    assert isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d)
    assert bn.running_mean is not None and bn.running_var is not None  # track_running_stats, as in PolicyValueNet
    scale = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
    weight = conv.weight.detach().double() * scale.view(-1, 1, 1, 1)
    bias = bn.bias.detach().double() - bn.running_mean.double() * scale
    if conv.bias is not None:
        bias = bias + conv.bias.detach().double() * scale
    return weight, bias


def _pair(weight: torch.Tensor, bias: torch.Tensor) -> Tuple[np.ndarray, np.ndarray]:
    return (np.ascontiguousarray(weight.float().numpy()), np.ascontiguousarray(bias.float().numpy()))


def _im2col(weight: torch.Tensor) -> torch.Tensor:
    """[out][in][3][3] -> [out][9 * in] in the core's (tap, channel) column order."""
    out, inp, kh, kw = weight.shape
    if (kh, kw) != (3, 3):
        raise ValueError(f"expected a 3x3 convolution, got {kh}x{kw}")
    return weight.permute(0, 2, 3, 1).reshape(out, kh * kw * inp)


def _conv1x1(weight: torch.Tensor) -> torch.Tensor:
    return weight.reshape(weight.shape[0], weight.shape[1])


def _cell_major(weight: torch.Tensor, planes: int, cells: int) -> torch.Tensor:
    """A Linear layer reading torch's flattened (plane, cell) input, rearranged to read (cell, plane)."""
    out = weight.shape[0]
    return weight.reshape(out, planes, cells).permute(0, 2, 1).reshape(out, cells * planes)


def native_layers(net: PolicyValueNet) -> dict:
    """The layers ``rebel._core.ConvPolicyValueNet`` takes, from a torch net (BatchNorms folded)."""
    cells = net.m * net.n
    stem = _folded(net.stem[0], net.stem[1])
    convs = []
    for block in net.blocks:
        for conv, bn in ((block.conv1, block.bn1), (block.conv2, block.bn2)):
            w, b = _folded(conv, bn)
            convs.append(_pair(_im2col(w), b))
    pw, pb = _folded(net.policy_conv[0], net.policy_conv[1])
    vw, vb = _folded(net.value_conv[0], net.value_conv[1])
    policy_fc, value_fc1, value_fc2 = net.policy_fc, net.value_fc[0], net.value_fc[2]
    assert isinstance(policy_fc, nn.Linear) and isinstance(value_fc1, nn.Linear) and isinstance(value_fc2, nn.Linear)
    return {
        "stem": _pair(_im2col(stem[0]), stem[1]),
        "convs": convs,
        "policy_conv": _pair(_conv1x1(pw), pb),
        "policy_fc": _pair(_cell_major(policy_fc.weight.detach(), pw.shape[0], cells), policy_fc.bias.detach()),
        "value_conv": _pair(_conv1x1(vw), vb),
        "value_fc1": _pair(_cell_major(value_fc1.weight.detach(), vw.shape[0], cells), value_fc1.bias.detach()),
        "value_fc2": _pair(value_fc2.weight.detach(), value_fc2.bias.detach()),
    }


class NativeNet:
    """A snapshot of a :class:`PolicyValueNet` evaluated by the C++ core; called like
    ``predict``: ``priors, values = native(planes)``.

    ``precision``: "fp32", "bf16" (ValueError on a CPU without a bf16 kernel) or "auto" (bf16
    where it is faster here). ``threads``: threads of one forward call. :meth:`update` takes
    new weights (after training steps).
    """

    def __init__(self, net: PolicyValueNet, precision: str = "auto", threads: int = 1) -> None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.precision_asked = precision
        self.threads = threads
        self.m, self.n = net.m, net.n
        self._core = self._build(net)

    def _build(self, net: PolicyValueNet) -> "_core.ConvPolicyValueNet":
        return _core.ConvPolicyValueNet(net.m, net.n, PLANES, native_layers(net), precision=self.precision_asked)

    def update(self, net: PolicyValueNet) -> None:
        """Takes the current weights of ``net`` (same board)."""
        if (net.m, net.n) != (self.m, self.n):
            raise ValueError(f"net is for a {net.m} x {net.n} board, this one for {self.m} x {self.n}")
        self._core = self._build(net)

    @property
    def precision(self) -> str:
        """The precision that runs: "fp32" or "bf16"."""
        return self._core.precision

    @property
    def isa(self) -> str:
        return self._core.isa

    def __call__(self, planes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        if len(planes) == 0:
            return np.zeros((0, self.m * self.n), np.float32), np.zeros(0, np.float32)
        return self._core.forward(planes, self.threads)


class TorchEvaluator:
    """The torch net itself (:func:`predict`, evaluation mode); it follows the net's weights."""

    precision = "fp32"
    isa = "torch"

    def __init__(self, net: PolicyValueNet) -> None:
        self.net = net
        self.m, self.n = net.m, net.n

    def update(self, net: PolicyValueNet) -> None:
        self.net = net

    def __call__(self, planes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        return predict(self.net, planes)


Evaluator = Union[NativeNet, TorchEvaluator]


def make_evaluator(net: PolicyValueNet, inference: str = "native", precision: str = "auto",
                   threads: int = 1) -> Evaluator:
    """``inference``: "native" (the C++ core at ``precision``) or "torch" (``precision`` must
    then be fp32 or auto). ValueError naming a bad choice."""
    if inference == "native":
        return NativeNet(net, precision, threads)
    if inference == "torch":
        if precision not in ("auto", "fp32"):
            raise ValueError(f"precision {precision!r}: the torch evaluator runs fp32 only")
        return TorchEvaluator(net)
    raise ValueError(f"unknown inference {inference!r}: expected native or torch")


def describe(evaluator: object) -> str:
    """E.g. "native-fp32 (avx512)" or "torch"."""
    if isinstance(evaluator, TorchEvaluator):
        return "torch"
    if isinstance(evaluator, NativeNet):
        return f"native-{evaluator.precision} ({evaluator.isa})"
    return "custom"  # any other callable handed to NetPlayer
