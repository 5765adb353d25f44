"""The int16 native MLP kernel (AVX512_VNNI) against a portable numpy reference.

The int16 path quantises each weight row and each activation row to int16 with one float32
scale, sums the products exactly in int32 and scales back in float32 (csrc/nets/gemm_int16.h).
Every step is reproducible in numpy: the reference computes the same quantised integers and
the same two float32 roundings, so one layer must match the kernel bit for bit. The whole
net is checked against a float64 emulation and against torch's float32 forward. The fallbacks
(precision "auto" without VNNI, "int16" refused) are forced with REBEL_CPU_DISABLE in a
subprocess, so they run on every machine.
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import List

import numpy as np
import pytest

import rebel
from rebel import _core

try:
    import torch
    from helpers.mlp_torch import queries, random_model, reference_forward

    from rebel.nets.value_mlp import ValueMLP, to_native, weights_to_bytes
except ModuleNotFoundError:  # the sanitizer jobs run without torch
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (or not loaded, under the sanitizers)")

INT16_ISAS: List[str] = list(_core.mlp_supported_int16_isas())
needs_int16 = pytest.mark.skipif(not INT16_ISAS, reason="this CPU has no int16 kernel (needs AVX512_VNNI)")


def qmax_of(inputs: int) -> int:
    """floor(sqrt((2^31 - 1) / inputs)), at most 32767: no int32 sum of a layer can overflow."""
    return min(32767, int(np.floor(np.sqrt((2**31 - 1) / inputs))))


def quantise_weights(w: np.ndarray, qmax: int):
    """Per output row: scale max|w| / qmax, q = rint(w / scale) (float32 arithmetic)."""
    q32 = np.float32(qmax)
    m = np.abs(w).max(axis=1)
    with np.errstate(divide="ignore", over="ignore"):
        usable = (m > 0) & np.isfinite(q32 / np.where(m > 0, m, np.float32(1)))
    scale = np.where(usable, m / q32, np.float32(0)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(usable[:, None], np.clip(np.rint(w / scale[:, None]), -q32, q32), 0)
    return q.astype(np.int64), scale


def quantise_rows(x: np.ndarray, qmax: int):
    """Per row: factor qmax / max|x| (0 if that overflows), q = rint(x * factor), scale max|x| / qmax."""
    q32 = np.float32(qmax)
    m = np.abs(x).max(axis=1)
    with np.errstate(divide="ignore", over="ignore"):
        factor = np.where(m > 0, q32 / np.where(m > 0, m, np.float32(1)), np.float32(0)).astype(np.float32)
    usable = np.isfinite(factor) & (factor > 0)
    factor = np.where(usable, factor, np.float32(0)).astype(np.float32)
    scale = np.where(usable, m / q32, np.float32(0)).astype(np.float32)
    q = np.clip(np.rint(x * factor[:, None]), -q32, q32)
    return q.astype(np.int64), scale


def linear_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What the kernel computes: float32(sum) * (s_w * s_x) + b, each product and sum rounded once."""
    qmax = qmax_of(w.shape[1])
    qw, sw = quantise_weights(w, qmax)
    qx, sx = quantise_rows(x, qmax)
    sums = qx @ qw.T
    assert np.abs(sums).max() < 2**31  # exact in int64, and within int32 as the kernel holds it
    scale = (sw[None, :] * sx[:, None]).astype(np.float32)
    return (sums.astype(np.float32) * scale).astype(np.float32) + b.astype(np.float32)


def test_qmax_leaves_no_room_for_overflow():
    for inputs in (1, 2, 255, 256, 257, 1024, 4096, 1 << 20):
        q = _core._int16_qmax(inputs)
        assert q == qmax_of(inputs)
        assert inputs * q * q <= 2**31 - 1 and q <= 32767
    assert _core._int16_qmax(256) == 2896


@needs_int16
@pytest.mark.parametrize("rows,out,inp", [(1, 32, 32), (16, 64, 256), (37, 70, 256), (8, 5, 3), (50, 33, 100)])
def test_linear_matches_reference_bit_for_bit(rows, out, inp):
    rng = np.random.default_rng(rows * 1000 + out + inp)
    x = rng.normal(size=(rows, inp)).astype(np.float32)
    x[rows // 2] = 0.0                                   # a zero row: scale 0
    w = (rng.normal(size=(out, inp)) * 0.05).astype(np.float32)
    w[out // 2] = 0.0                                    # a zero weight row
    w[0, 0] = 7.5                                        # one large weight: its row's scale
    b = rng.normal(size=out).astype(np.float32)
    y = _core._int16_linear(x, w, b)
    ref = linear_reference(x, w, b)
    assert np.array_equal(y, ref), float(np.abs(y - ref).max())
    # And the quantisation's own error against float32: within a step of each operand.
    exact = x.astype(np.float64) @ w.astype(np.float64).T + b
    step = (np.abs(x).max(axis=1, keepdims=True) * np.abs(w).sum(axis=1)[None, :]
            + np.abs(w).max(axis=1)[None, :] * np.abs(x).sum(axis=1, keepdims=True)) / qmax_of(inp)
    assert np.all(np.abs(y - exact) <= step + 1e-5 * (1 + np.abs(exact)))


@needs_int16
def test_linear_edge_values():
    # Tiny rows (their factor would overflow float32) quantise to zero; huge ones do not overflow.
    w = np.eye(32, dtype=np.float32)
    b = np.zeros(32, np.float32)
    x = np.zeros((3, 32), np.float32)
    x[0, 3] = 1e-40   # denormal
    x[1, 4] = 1e-38   # normal, factor = 2896 / 1e-38 overflows
    x[2, 5] = 3e38
    y = _core._int16_linear(x, w, b)
    assert np.array_equal(y[:2], np.zeros((2, 32), np.float32))
    assert y[2, 5] == pytest.approx(3e38, rel=1e-6) and np.isfinite(y).all()


def int16_hidden_linear(h: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The int16 path's hidden-to-hidden layer on the float32 activations (linear_reference)."""
    return linear_reference(h.astype(np.float32), w, b).astype(np.float64)


@needs_torch
@needs_int16
@pytest.mark.parametrize("faces,hidden,layers", [(4, 256, 2), (6, 100, 1), (3, 64, 3), (16, 64, 2), (20, 64, 2)])
def test_net_matches_reference_and_torch(faces, hidden, layers):
    """The whole int16 net against float64 and torch, with small heads (dot products, up to 16
    outputs, the largest included) and a 20-output one (packed panels)."""
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": faces})
    model = random_model(game, hidden, layers)
    net = to_native(model, game, precision="int16")
    assert (net.precision, net.isa) == ("int16", "avx512vnni")
    for batch in (1, 15, 16, 17, 50):
        x = queries(game, batch, seed=batch)
        y = net.forward(x)
        ref = reference_forward(model, x, int16_hidden_linear)
        with torch.no_grad():
            fp32 = model(torch.from_numpy(x)).numpy()
        # The float32 LayerNorm/GELU differ from float64 by ulps, which can tip a quantised
        # activation to its neighbour (one step: 2^-11.5 of the row's largest value).
        assert np.abs(y - ref).max() <= 1e-3, (batch, float(np.abs(y - ref).max()))
        # Against float32 torch: about 12 bits per operand (bf16 keeps 8 and is allowed 2e-2).
        assert np.abs(y - fp32).max() <= 5e-3, (batch, float(np.abs(y - fp32).max()))


@needs_torch
@needs_int16
def test_rows_are_independent_deterministic_and_swappable():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    net = to_native(random_model(game), game, precision="int16")
    x = queries(game, 40)
    y = net.forward(x)
    assert np.array_equal(y, net.forward(x))
    singles = np.concatenate([net.forward(x[i:i + 1]) for i in range(len(x))])
    assert np.array_equal(y, singles)  # per-row scales: a row's value does not depend on its batch
    other = random_model(game, seed=1)
    net.set_weights_bytes(weights_to_bytes(other))
    assert net.precision == "int16"
    assert np.array_equal(net.forward(x), to_native(other, game, precision="int16").forward(x))


@needs_torch
def test_precision_and_isa_combinations():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    data = weights_to_bytes(random_model(game, hidden=32))
    with pytest.raises(ValueError, match="int16 kernel, but precision is 'fp32'"):
        _core.MlpValueNet(game, data, isa="avx512vnni", precision="fp32")
    with pytest.raises(ValueError, match="fp32 kernel, but precision is 'int16'"):
        _core.MlpValueNet(game, data, isa="generic", precision="int16")
    with pytest.raises(ValueError, match="bf16 kernel, but precision is 'int16'"):
        _core.MlpValueNet(game, data, isa="amx", precision="int16")
    with pytest.raises(ValueError, match="unknown int16 isa"):
        _core.MlpValueNet(game, data, isa="vnni9", precision="int16")
    with pytest.raises(ValueError, match="unknown isa 'vnni9'|unknown"):
        _core.MlpValueNet(game, data, isa="vnni9", precision="auto")
    auto = _core.MlpValueNet(game, data, precision="auto")
    expected = "bf16" if _core.mlp_bf16_preferred() else "int16" if _core.mlp_int16_preferred() else "fp32"
    assert auto.precision == expected
    # The conv net has no int16 path: refused by name, and auto never picks it.
    from rebel.alphazero.inference import NativeNet
    from rebel.alphazero.net import PolicyValueNet

    conv = PolicyValueNet(3, 3, channels=8, blocks=1, value_hidden=8).eval()
    with pytest.raises(ValueError, match="int16' is for the MLP value net only"):
        NativeNet(conv, precision="int16")
    assert NativeNet(conv, precision="auto").precision in ("bf16", "fp32")


FALLBACK_SCRIPT = r"""
import sys
import numpy as np
import rebel
from rebel import _core
from rebel.config.train import ConfigError, load_train_config
from rebel.nets.value_mlp import ValueMLP, to_native
import torch
torch.manual_seed(0)
assert _core.mlp_supported_int16_isas() == [], _core.mlp_supported_int16_isas()
assert not _core.mlp_int16_preferred()
game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
model = ValueMLP.for_game(game, hidden=64).eval()
auto = to_native(model, game, precision="auto")
assert auto.precision == ("bf16" if _core.mlp_bf16_preferred() else "fp32"), auto.precision
try:
    to_native(model, game, precision="int16")
except ValueError as e:
    print("refused:", e)
else:
    sys.exit("int16 ran on a CPU without VNNI")
try:
    load_train_config(None, ["search.precision=int16"])
except ConfigError as e:
    print("config:", e)
else:
    sys.exit("search.precision=int16 accepted")
print("ok")
"""


@needs_torch
def test_forced_fallback_without_vnni():
    env = dict(os.environ, REBEL_CPU_DISABLE="avx512vnni")
    out = subprocess.run([sys.executable, "-c", FALLBACK_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.strip().endswith("ok")
    assert "needs a CPU with AVX512_VNNI" in out.stdout
    assert "config: search.precision" in out.stdout


@needs_torch
def test_eval_cli_runs_int16_or_refuses_it(tmp_path):
    import json

    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    weights = tmp_path / "w.bin"
    weights.write_bytes(weights_to_bytes(ValueMLP.for_game(game, hidden=16)))
    cmd = [sys.executable, "-m", "rebel", "eval", "--faces", "3", "--net", str(weights), "--precision", "int16",
           "--repeats", "2", "--iters", "8", "--json"]
    refused = subprocess.run(cmd, env=dict(os.environ, REBEL_CPU_DISABLE="avx512vnni"), capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2
    assert "AVX512_VNNI" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    if INT16_ISAS:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["net_kernel"] == {"precision": "int16", "isa": "avx512vnni"}
