"""The native forward pass of the AlphaZero policy-value net (rebel._core.ConvPolicyValueNet via
rebel.alphazero.inference): against torch, against a float64 numpy reference of the folded
layers (with the bf16 kernels' rounding emulated for bf16), across thread counts, and its
errors. The bf16 fallbacks are forced with REBEL_CPU_DISABLE in a subprocess, so they are
checked on every machine. The tests marked torch-free build their layers in numpy: they also
run under the sanitizers (scripts/sanitize.sh), where torch is not loaded."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from rebel import _core

try:
    import torch

    from rebel.alphazero.inference import NativeNet, TorchEvaluator, make_evaluator, native_layers
    from rebel.alphazero.net import PolicyValueNet, predict
except ModuleNotFoundError:  # the sanitizer builds run without torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")
PLANES = 4  # rebel.alphazero.net.PLANES
HAS_BF16 = bool(_core.mlp_supported_bf16_isas())
PRECISIONS = ["fp32"] + (["bf16"] if HAS_BF16 else [])
SHAPES = [(3, 3, 16, 1), (6, 6, 64, 2), (5, 7, 20, 1), (8, 8, 32, 0)]  # m, n, channels, blocks


def random_net(m: int, n: int, channels: int, blocks: int, seed: int = 0) -> "PolicyValueNet":
    """A net with non-trivial BatchNorm statistics (a fresh one has mean 0, variance 1)."""
    torch.manual_seed(seed)
    net = PolicyValueNet(m, n, channels=channels, blocks=blocks)
    for module in net.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)
    return net.eval()


def random_positions(m: int, n: int, count: int, seed: int = 0) -> np.ndarray:
    """Planes of random legal-looking positions (stones on a third of the cells)."""
    rng = np.random.default_rng(seed)
    planes = np.zeros((count, PLANES, m, n), np.float32)
    stones = rng.random((count, m, n))
    planes[:, 0] = stones < 0.15
    planes[:, 1] = (stones >= 0.15) & (stones < 0.3)
    last = rng.integers(0, m * n, size=count)
    planes[np.arange(count), 2, last // n, last % n] = 1
    planes[:, 3] = (rng.random(count) < 0.5)[:, None, None]
    return planes


def random_layers(m: int, n: int, channels: int, blocks: int, seed: int = 0) -> dict:
    """Folded layers drawn in numpy (no torch), scaled like a fresh net's."""
    rng = np.random.default_rng(seed)
    cells = m * n

    def pair(out, inp):
        w = rng.normal(0, 1 / np.sqrt(inp), size=(out, inp)).astype(np.float32)
        return w, rng.normal(0, 0.1, size=out).astype(np.float32)

    return {"stem": pair(channels, 9 * PLANES), "convs": [pair(channels, 9 * channels) for _ in range(2 * blocks)],
            "policy_conv": pair(2, channels), "policy_fc": pair(cells, 2 * cells), "value_conv": pair(1, channels),
            "value_fc1": pair(32, cells), "value_fc2": pair(1, 32)}


def reference(layers: dict, planes: np.ndarray, m: int, n: int, bf16: bool = False):
    """The folded net in float64 numpy; with bf16, the residual convolutions' inputs and weights
    rounded to bf16 first, as the bf16 kernels do."""
    if bf16:
        def rnd(a):
            rounded = _core.bf16_round(np.ascontiguousarray(a, dtype=np.float32).ravel())
            return rounded.reshape(a.shape).astype(np.float64)
    else:
        def rnd(a):
            return a.astype(np.float64)
    count, cells = len(planes), m * n
    relu = lambda a: np.maximum(a, 0.0)  # noqa: E731

    def im2col(act):  # (count, m, n, C) -> (count * cells, 9 C), tap-major then channel
        pad = np.pad(act, ((0, 0), (1, 1), (1, 1), (0, 0)))
        taps = [pad[:, di:di + m, dj:dj + n, :] for di in range(3) for dj in range(3)]
        return np.concatenate(taps, axis=-1).reshape(count * cells, -1)

    def dense(x, pair, round_inputs=False):
        w, b = pair
        if round_inputs:
            x, w = rnd(x), rnd(w)
        return x @ w.astype(np.float64).T + b.astype(np.float64)

    x = planes.transpose(0, 2, 3, 1).astype(np.float64)
    c = layers["stem"][0].shape[0]
    x = relu(dense(im2col(x), layers["stem"])).reshape(count, m, n, c)
    convs = layers["convs"]
    for i in range(0, len(convs), 2):
        t = relu(dense(im2col(x), convs[i], True)).reshape(count, m, n, c)
        x = relu(x + dense(im2col(t), convs[i + 1], True).reshape(count, m, n, c))
    flat = x.reshape(count * cells, c)
    pc = relu(dense(flat, layers["policy_conv"])).reshape(count, -1)
    logits = dense(pc, layers["policy_fc"])
    priors = np.exp(logits - logits.max(axis=1, keepdims=True))
    priors /= priors.sum(axis=1, keepdims=True)
    vc = relu(dense(flat, layers["value_conv"])).reshape(count, -1)
    hidden = relu(dense(vc, layers["value_fc1"]))
    values = np.tanh(dense(hidden, layers["value_fc2"])[:, 0])
    return priors, values


@needs_torch
@pytest.mark.parametrize("m,n,channels,blocks", SHAPES)
def test_fp32_matches_torch_and_the_folded_reference(m, n, channels, blocks):
    net = random_net(m, n, channels, blocks)
    planes = random_positions(m, n, 37)
    p_torch, v_torch = predict(net, planes)
    p_ref, v_ref = reference(native_layers(net), planes, m, n)
    # The folding and the layout changes are exact up to float32 rounding.
    assert np.abs(p_ref - p_torch).max() < 1e-5 and np.abs(v_ref - v_torch).max() < 1e-5
    native = NativeNet(net, "fp32")
    assert native.precision == "fp32"
    p, v = native(planes)
    assert p.shape == (37, m * n) and v.shape == (37,) and p.dtype == np.float32
    assert np.abs(p - p_ref).max() < 1e-5 and np.abs(v - v_ref).max() < 1e-5
    assert np.allclose(p.sum(axis=1), 1, atol=1e-5)


def assert_bf16_matches(p, v, p_ref, v_ref):
    """The bf16 kernel against the reference with the same bf16 operands: only the float32
    summation (order, rounding) differs from float64, so nearly every position agrees to 1e-5.
    But an intermediate activation that lies on a bf16 rounding boundary can round the other way
    under another summation order (AMX's, seen on 1 of 29 positions: value off by 1.1e-4, the
    rest by < 1e-7), so a few positions may differ by such a flip's effect, bounded here by 2e-3."""
    p_rows = np.abs(p - p_ref).max(axis=1)
    v_rows = np.abs(v - v_ref)
    close = (p_rows < 1e-5) & (v_rows < 1e-5)
    assert close.mean() >= 0.9, f"only {close.sum()} of {close.size} positions agree to 1e-5"
    assert p_rows.max() < 2e-3 and v_rows.max() < 2e-3


@needs_torch
@pytest.mark.skipif(not HAS_BF16, reason="this CPU has no bf16 kernel (AMX-BF16 or AVX512_BF16)")
@pytest.mark.parametrize("m,n,channels,blocks", SHAPES)
def test_bf16_matches_the_bf16_reference(m, n, channels, blocks):
    net = random_net(m, n, channels, blocks)
    planes = random_positions(m, n, 37)
    p_ref, v_ref = reference(native_layers(net), planes, m, n, bf16=True)
    native = NativeNet(net, "bf16")
    assert native.precision == "bf16" and native.isa in _core.mlp_supported_bf16_isas()
    p, v = native(planes)
    assert_bf16_matches(p, v, p_ref, v_ref)
    # And against float32 torch: bf16's 8-bit significand, through every residual block.
    p_torch, v_torch = predict(net, planes)
    assert np.abs(p - p_torch).max() < 2e-2 and np.abs(v - v_torch).max() < 2e-2


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("m,n,channels,blocks", SHAPES)
def test_torch_free_native_matches_the_reference(precision, m, n, channels, blocks):
    layers = random_layers(m, n, channels, blocks)
    planes = random_positions(m, n, 29, seed=1)
    net = _core.ConvPolicyValueNet(m, n, PLANES, layers, precision=precision)
    assert (net.m, net.n, net.channels, net.blocks, net.precision) == (m, n, channels, blocks, precision)
    p, v = net.forward(planes)
    p_ref, v_ref = reference(layers, planes, m, n, bf16=precision == "bf16")
    if precision == "bf16":
        assert_bf16_matches(p, v, p_ref, v_ref)
    else:
        assert np.abs(p - p_ref).max() < 1e-4 and np.abs(v - v_ref).max() < 1e-4


@pytest.mark.parametrize("precision", PRECISIONS)
def test_torch_free_results_do_not_depend_on_threads_or_batch(precision):
    net = _core.ConvPolicyValueNet(6, 6, PLANES, random_layers(6, 6, 32, 1), precision=precision)
    planes = random_positions(6, 6, 50, seed=3)
    one = net.forward(planes, 1)
    for threads in (2, 3, 8):
        again = net.forward(planes, threads)
        assert all(np.array_equal(a, b) for a, b in zip(one, again))
    single = net.forward(planes[17:18])
    assert np.array_equal(single[0][0], one[0][17]) and single[1][0] == one[1][17]
    empty = net.forward(planes[:0], 2)
    assert empty[0].shape == (0, 36) and empty[1].shape == (0,)


@needs_torch
def test_snapshot_follows_the_net_only_on_update():
    net = random_net(3, 3, 8, 1)
    planes = random_positions(3, 3, 4)
    native = NativeNet(net, "fp32")
    before = native(planes)
    with torch.no_grad():
        net.value_fc[2].bias.add_(0.5)
    assert all(np.array_equal(a, b) for a, b in zip(before, native(planes)))
    native.update(net)
    assert np.abs(native(planes)[1] - predict(net, planes)[1]).max() < 1e-5
    with pytest.raises(ValueError, match="3 x 4 board"):
        native.update(PolicyValueNet(3, 4, channels=8, blocks=1))
    torch_eval = TorchEvaluator(net)
    assert np.array_equal(torch_eval(planes)[1], predict(net, planes)[1])


def test_torch_free_bad_input_is_refused():
    layers = random_layers(3, 3, 8, 1)
    core = _core.ConvPolicyValueNet(3, 3, PLANES, layers, precision="fp32")
    with pytest.raises(ValueError, match=r"planes has shape \(2, 4, 3, 4\)"):
        core.forward(np.zeros((2, 4, 3, 4), np.float32))
    with pytest.raises(TypeError, match="float32"):
        core.forward(np.zeros((2, 4, 3, 3), np.float64))
    with pytest.raises(ValueError, match="threads"):
        core.forward(np.zeros((2, 4, 3, 3), np.float32), 0)
    with pytest.raises(ValueError, match="'value_fc2' is missing"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {k: v for k, v in layers.items() if k != "value_fc2"})
    with pytest.raises(ValueError, match="unknown layer 'extra'"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {**layers, "extra": layers["stem"]})
    with pytest.raises(ValueError, match="two per block"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {**layers, "convs": layers["convs"][:1]})
    with pytest.raises(ValueError, match="'policy_fc' is 9 x 18, expected 16 x 32"):
        _core.ConvPolicyValueNet(4, 4, PLANES, layers)
    with pytest.raises(ValueError, match="sides must be in 1..19"):
        _core.ConvPolicyValueNet(20, 3, PLANES, layers)
    w, b = layers["stem"]
    with pytest.raises(ValueError, match="'stem' has non-finite weights"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {**layers, "stem": (np.where(w == w.flat[0], np.nan, w), b)})
    with pytest.raises(ValueError, match="stem bias has shape"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {**layers, "stem": (w, b[:-1])})
    with pytest.raises(TypeError, match="float32"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {**layers, "stem": (w.astype(np.float64), b)})
    with pytest.raises(TypeError, match="pair"):
        _core.ConvPolicyValueNet(3, 3, PLANES, {**layers, "stem": w})
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        _core.ConvPolicyValueNet(3, 3, PLANES, layers, precision="fp16")


@needs_torch
def test_evaluator_choices_are_checked():
    net = random_net(3, 3, 8, 1)
    with pytest.raises(ValueError, match="threads"):
        NativeNet(net, "fp32", threads=0)
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        NativeNet(net, "fp16")
    with pytest.raises(ValueError, match="fp32 only"):
        make_evaluator(net, "torch", "bf16")
    with pytest.raises(ValueError, match="unknown inference 'onnx'"):
        make_evaluator(net, "onnx")


FALLBACK_SCRIPT = r"""
import torch
from rebel.alphazero.inference import NativeNet
from rebel.alphazero.net import PolicyValueNet
from rebel.config.alphazero import load_alphazero_config
from rebel.config.common import ConfigError
net = PolicyValueNet(3, 3, channels=8, blocks=1).eval()
print("auto runs", NativeNet(net, "auto").precision)
try:
    NativeNet(net, "bf16")
except ValueError as e:
    print("bf16:", e)
else:
    raise SystemExit("bf16 accepted without a bf16 kernel")
try:
    load_alphazero_config(None, ["mcts.precision=bf16"])
except ConfigError as e:
    print("config:", e)
else:
    raise SystemExit("mcts.precision=bf16 accepted")
print("ok")
"""


@needs_torch
def test_forced_fallback_without_bf16_cpu_features():
    env = dict(os.environ, REBEL_CPU_DISABLE="amx,avx512bf16")
    out = subprocess.run([sys.executable, "-c", FALLBACK_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "auto runs fp32" in out.stdout
    assert "bf16: " in out.stdout and "AMX-BF16 or AVX512_BF16" in out.stdout
    assert "config: mcts.precision=bf16" in out.stdout and out.stdout.strip().endswith("ok")


@needs_torch
def test_config_checks_the_evaluator_keys():
    from rebel.config.alphazero import load_alphazero_config
    from rebel.config.common import ConfigError

    assert load_alphazero_config(None, []).mcts.inference == "native"
    with pytest.raises(ConfigError, match="mcts.inference must be 'native' or 'torch'"):
        load_alphazero_config(None, ["mcts.inference=onnx"])
    with pytest.raises(ConfigError, match="mcts.precision must be auto, fp32 or bf16"):
        load_alphazero_config(None, ["mcts.precision=fp16"])
