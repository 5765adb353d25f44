"""MLP value-net weights built from numpy arrays alone (no torch), and a float64 NumPy
reference of the native forward pass: for tests that run under the sanitizers, where torch
is not loaded."""
from __future__ import annotations

import math
from typing import List, Sequence

import numpy as np

from rebel.nets.weights_io import weights_from_arrays


def random_parameters(input_size: int, output_size: int, hidden: int, layers: int, seed: int,
                      input_columns: Sequence[int] | None = None) -> List[np.ndarray]:
    """Random float32 parameters in file order (see :func:`weights_from_arrays`).

    ``input_columns``: when given, the first layer (or the head, with no hidden layer)
    reads only these input columns; the others get weight exactly 0.
    """
    rng = np.random.default_rng(seed)
    params: List[np.ndarray] = []
    fan_in = input_size
    for _ in range(layers):
        params += [rng.normal(0.0, 1.0 / math.sqrt(fan_in), (hidden, fan_in)),
                   rng.normal(0.0, 0.1, hidden), rng.uniform(0.5, 2.0, hidden), rng.normal(0.0, 0.5, hidden)]
        fan_in = hidden
    params += [rng.normal(0.0, 1.0 / math.sqrt(fan_in), (output_size, fan_in)), rng.normal(0.0, 0.1, output_size)]
    params = [p.astype(np.float32) for p in params]
    if input_columns is not None:
        mask = np.zeros(input_size, dtype=bool)
        mask[list(input_columns)] = True
        params[0][:, ~mask] = 0.0
    return params


def random_weights(input_size: int, output_size: int, hidden: int = 32, layers: int = 2, seed: int = 0,
                   input_columns: Sequence[int] | None = None) -> bytes:
    """Serialised random weights (the native format) without torch."""
    params = random_parameters(input_size, output_size, hidden, layers, seed, input_columns)
    return weights_from_arrays(input_size, output_size, hidden, layers, params)


def reference_forward(params: Sequence[np.ndarray], layers: int, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """float64 forward pass of (Linear -> LayerNorm -> exact GELU) x layers -> Linear."""
    erf = np.vectorize(math.erf)
    y = np.asarray(x, dtype=np.float64)
    for i in range(layers):
        w, b, gamma, beta = (np.asarray(p, dtype=np.float64) for p in params[4 * i: 4 * i + 4])
        y = y @ w.T + b
        mean = y.mean(axis=1, keepdims=True)
        var = ((y - mean) ** 2).mean(axis=1, keepdims=True)
        y = (y - mean) / np.sqrt(var + eps) * gamma + beta
        y = 0.5 * y * (1.0 + erf(y / math.sqrt(2.0)))
    w, b = (np.asarray(p, dtype=np.float64) for p in params[4 * layers: 4 * layers + 2])
    return y @ w.T + b
