"""Denormal floats: the native nets read them as zero (and flush denormal results), the
caller's floating-point environment is left as it was, and the training runs make torch do
the same (rebel.nets.torch_device.flush_denormals). Denormal weights are what weight decay leaves
behind; each operation on one costs x86 cores a microcode assist. The native tests build their
nets in numpy, so they also run under the sanitizers."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from helpers.mlp_arrays import random_parameters

from rebel import _core
from rebel.nets.weights_io import weights_from_arrays

TINY = np.float32(1e-39)  # a float32 denormal (the smallest normal is 1.18e-38)
PLANES = 4


def caller_keeps_denormals() -> bool:
    """numpy on this (the caller's) thread still produces a denormal result."""
    return float(np.float32(1e-38) / np.float32(4.0)) != 0.0


def conv_layers(value_fc2_weight: np.ndarray) -> dict:
    rng = np.random.default_rng(0)

    def pair(out, inp):
        return (rng.normal(0, 1 / np.sqrt(inp), size=(out, inp)).astype(np.float32),
                rng.normal(0, 0.1, size=out).astype(np.float32))

    return {"stem": pair(8, 9 * PLANES), "convs": [pair(8, 9 * 8), pair(8, 9 * 8)], "policy_conv": pair(2, 8),
            "policy_fc": pair(9, 18), "value_conv": pair(1, 8), "value_fc1": pair(16, 9),
            "value_fc2": (value_fc2_weight, np.zeros(1, np.float32))}


def test_conv_net_reads_denormal_weights_as_zero():
    """The value head's last layer all denormal, its bias 0: with denormals read as zero the
    value is exactly tanh(0) = 0, as with the layer zeroed; IEEE arithmetic would give a
    denormal value instead."""
    planes = np.zeros((5, PLANES, 3, 3), np.float32)
    planes[:, 0, 1, 1] = 1
    planes[:, 3] = 1
    assert caller_keeps_denormals()
    tiny = _core.ConvPolicyValueNet(3, 3, PLANES, conv_layers(np.full((1, 16), TINY)), precision="fp32")
    zero = _core.ConvPolicyValueNet(3, 3, PLANES, conv_layers(np.zeros((1, 16), np.float32)), precision="fp32")
    for threads in (1, 2):
        p_tiny, v_tiny = tiny.forward(planes, threads=threads)
        p_zero, v_zero = zero.forward(planes, threads=threads)
        np.testing.assert_array_equal(v_tiny, np.zeros(5, np.float32))
        np.testing.assert_array_equal(p_tiny, p_zero)
        np.testing.assert_array_equal(v_tiny, v_zero)
    assert caller_keeps_denormals()  # the caller's MXCSR is restored


def test_mlp_reads_denormal_weights_as_zero():
    """The same for the value MLP's output layer (weights denormal, bias 0: outputs exactly 0)."""
    game = _core.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    params = random_parameters(game.query_size, game.num_hands, 32, 2, seed=0)
    params[-2] = np.full_like(params[-2], TINY)
    params[-1] = np.zeros_like(params[-1])
    net = _core.MlpValueNet(game, weights_from_arrays(game.query_size, game.num_hands, 32, 2, params),
                            precision="fp32")
    x = np.random.default_rng(1).random((7, game.query_size)).astype(np.float32)
    np.testing.assert_array_equal(net.forward(x), np.zeros((7, game.num_hands), np.float32))
    assert caller_keeps_denormals()


def test_training_runs_flush_denormals_in_torch():
    """flush_denormals() (called by both training runs) makes torch read denormals as zero; a
    subprocess, so that this test process keeps IEEE behaviour."""
    pytest.importorskip("torch", reason="needs torch (not loaded under the sanitizers)")
    code = ("import torch; from rebel.nets.torch_device import flush_denormals; t = torch.full((4,), 1e-39); "
            "before = float((t * 1.0).sum()); flush_denormals(); after = float((t * 1.0).sum()); "
            "print(before > 0, after == 0)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=root), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
