"""Torch-built MLP nets and a float64 reference of the native forward pass with a pluggable
hidden-to-hidden product: shared by the bf16 and int16 kernel tests."""
from __future__ import annotations

from math import erf, sqrt
from typing import Callable

import numpy as np
import torch

from rebel.nets.value_mlp import ValueMLP


def random_model(game, hidden: int = 256, layers: int = 2, seed: int = 0) -> ValueMLP:
    """A random net with non-trivial LayerNorm parameters (eval mode)."""
    torch.manual_seed(seed)
    model = ValueMLP.for_game(game, hidden=hidden, layers=layers)
    with torch.no_grad():
        for _, norm in model.blocks():
            norm.weight.uniform_(0.5, 2.0)
            norm.bias.normal_(0.0, 0.5)
    return model.eval()


def queries(game, batch: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 1.0, (batch, game.query_size)).astype(np.float32)


def reference_forward(model: ValueMLP, x: np.ndarray,
                      hidden_linear: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """The narrow paths' arithmetic in numpy: the first layer, LayerNorm, GELU and the head in
    float64; every later hidden layer as ``hidden_linear(h, weight, bias)`` (float64 in and out)."""
    h = x.astype(np.float64)
    for i, (linear, norm) in enumerate(model.blocks()):
        w = linear.weight.detach().numpy()
        b = linear.bias.detach().numpy()
        h = h @ w.astype(np.float64).T + b if i == 0 else hidden_linear(h, w, b)
        mean = h.mean(axis=1, keepdims=True)
        var = ((h - mean) ** 2).mean(axis=1, keepdims=True)
        z = (h - mean) / np.sqrt(var + norm.eps) * norm.weight.detach().numpy() + norm.bias.detach().numpy()
        h = 0.5 * z * (1.0 + np.vectorize(lambda v: erf(v / sqrt(2.0)))(z))
    return h @ model.head.weight.detach().numpy().T.astype(np.float64) + model.head.bias.detach().numpy()
