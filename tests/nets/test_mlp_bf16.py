"""The bf16 native MLP kernels (AMX-BF16, AVX512_BF16) against a portable numpy reference.

The reference rounds to bfloat16 in numpy (round to nearest even, denormals to zero, as the
hardware's conversion) and computes in float64, so it does not depend on the CPU. Each
kernel this CPU runs is checked layer by layer against it to a stated bound, and the whole
net against torch's float32 forward. The fallbacks (precision "auto" without bf16, "bf16"
refused) are forced with REBEL_CPU_DISABLE in a subprocess, so they are checked on every
machine.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from typing import List

import numpy as np
import pytest

import rebel
from rebel import _core

# The kernel-level tests need numpy only (they also run in the sanitizer jobs, where torch is
# absent); the whole-net tests build their nets with torch.
try:
    import torch
    from helpers.mlp_torch import queries, random_model, reference_forward

    from rebel.nets.value_mlp import ValueMLP, to_native, weights_to_bytes
except ModuleNotFoundError:  # also the sanitizer jobs' stub
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (or not loaded, under the sanitizers)")

BF16_ISAS: List[str] = list(_core.mlp_supported_bf16_isas())
needs_bf16 = pytest.mark.skipif(not BF16_ISAS, reason="this CPU has no bf16 kernel (needs AMX-BF16 or AVX512_BF16)")
U32 = 2.0**-24  # unit roundoff of float32


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 -> float32 in numpy: nearest even, denormals to +-0, NaN kept."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    denormal = (u & 0x7F800000) == 0
    rounded = np.where(denormal, u & 0x80000000, rounded)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = np.where(nan, ((u >> 16) | 0x40) << 16, rounded)
    return rounded.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def linear_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray):
    """Exact (float64) x_bf16 W_bf16^T + b and the bound a float32 accumulation may miss it by."""
    xb, wb = bf16_round(x).astype(np.float64), bf16_round(w).astype(np.float64)
    exact = xb @ wb.T + b.astype(np.float64)
    magnitude = np.abs(xb) @ np.abs(wb).T + np.abs(b.astype(np.float64))
    # One rounding per addition into the float32 accumulator (k_pad + 1 of them at most,
    # k_pad = in rounded up to 32), each relative to the partial sum <= magnitude.
    k_pad = max(32, -(-w.shape[1] // 32) * 32)
    return exact, (k_pad + 2) * U32 * magnitude + 1e-37


def test_bf16_round_reference_matches_core():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(4096) * 10.0 ** rng.integers(-30, 30, 4096),
                        [0.0, -0.0, 1.0, 1.00390625, 1.01171875, 3.389e38, -3.4e38, np.inf, -np.inf, 1e-39, -1e-40]])
    x = x.astype(np.float32)
    ours = _core.bf16_round(x)
    assert np.array_equal(ours.view(np.uint32), bf16_round(x).view(np.uint32))
    assert bf16_round(np.float32([1.00390625]))[0] == 1.0        # tie to even (down)
    assert bf16_round(np.float32([1.01171875]))[0] == 1.015625   # tie to even (up)
    assert np.isinf(bf16_round(np.float32([3.4e38]))[0])          # past bf16's largest finite
    assert np.isnan(_core.bf16_round(np.float32([np.nan]))[0])


def _rounding_paths() -> List[str]:
    """The float -> bf16 roundings this CPU can run: the vector ones need AVX-512 F/BW/VL
    (implied by a bf16 or int16 kernel), the instruction AVX512_BF16."""
    paths = ["scalar"]
    if BF16_ISAS or list(_core.mlp_supported_int16_isas()):
        paths.append("integer_ops")
    if "avx512bf16" in BF16_ISAS:
        paths.append("instruction")
    return paths


@pytest.mark.parametrize("path", _rounding_paths())
def test_every_bf16_rounding_path_gives_the_reference_bits(path):
    """VCVTNEPS2BF16, its emulation in AVX-512 integer operations and the scalar C++ give the
    numpy reference's bits on random bit patterns (every exponent, NaN payloads, denormals)
    and on the edge cases, across a length that leaves a masked tail."""
    rng = np.random.default_rng(1)
    random_bits = rng.integers(0, 2**32, 100_003, dtype=np.uint64).astype(np.uint32)
    edges = np.array([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
                      0x7F800000, 0xFF800000, 0x7F800001, 0x7FC00000, 0xFFBFFFFF, 0x3F808000, 0x3F818000,
                      0x3F80FFFF, 0x3F817FFF, 0x7F7F8000, 0x7F7F7FFF], dtype=np.uint32)
    x = np.concatenate([edges, random_bits]).view(np.float32)
    ours = _core.bf16_round(x, path).view(np.uint32)
    expected = bf16_round(x).view(np.uint32)
    assert np.array_equal(ours, expected), f"{np.count_nonzero(ours != expected)} patterns differ"
    # 0x7F7F8000, a tie above bf16's largest finite value, rounds (to even) to inf
    assert ours[edges.size - 2] == 0x7F800000


def test_bf16_round_rejects_an_unknown_path_and_a_missing_instruction():
    with pytest.raises(ValueError, match="unknown bf16 rounding path 'fast'"):
        _core.bf16_round(np.float32([1.0]), "fast")
    if "instruction" not in _rounding_paths():
        with pytest.raises(ValueError, match="AVX512_BF16|AVX-512"):
            _core.bf16_round(np.float32([1.0]), "instruction")


def test_without_avx512bf16_the_instruction_path_is_refused():
    """REBEL_CPU_DISABLE=avx512bf16 hides the instruction: asking for it is a ValueError, and
    the integer emulation still runs wherever AVX-512 does."""
    code = ("import numpy as np\nfrom rebel import _core\n"
            "try:\n    _core.bf16_round(np.float32([1.0]), 'instruction')\n    print('ran')\n"
            "except ValueError as e:\n    print('refused:', e)\n")
    env = dict(os.environ, REBEL_CPU_DISABLE="avx512bf16")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("refused:"), out.stdout
    assert "AVX512_BF16" in out.stdout or "AVX-512 F/BW/VL" in out.stdout, out.stdout


def _exact_gelu(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    return 0.5 * z * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))


def _layer_norm_gelu_reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return _exact_gelu((x - mean) / np.sqrt(var + eps) * gamma + beta)


AVX512_FITS = ["float32", "bf16"] if (_core.mlp_supported_bf16_isas() or _core.mlp_supported_int16_isas()) else []


@pytest.mark.skipif(not AVX512_FITS,
                    reason="the AVX-512 LayerNorm + GELU needs AVX-512 F/BW/VL (a bf16 or int16 kernel)")
@pytest.mark.parametrize("fit", AVX512_FITS)
def test_gelu_fits_within_their_stated_bounds(fit):
    """GELU alone (gamma 0, the grid in beta) against the exact erf GELU in float64: the float32
    fit to 1e-6 absolute (and 2^-22 relative); the bf16 path's cheaper fit to 8e-5 relative + 7e-6 absolute (its
    reciprocal is VRCP14PS, relative error below 2^-14: activations.h), exactly z far above its
    clamp and 0 far below it, NaN kept."""
    z = np.concatenate([np.linspace(-12.0, 12.0, 95_994), [-1e30, -60.0, -4.7, 4.7, 60.0, 1e30]]).astype(np.float32)
    n = 96
    rows = z.reshape(-1, n)
    got = np.stack([_core._layer_norm_gelu(np.zeros((1, n), np.float32), np.zeros(n, np.float32), row.copy(), 1e-5,
                                           fit)[0] for row in rows]).ravel()
    err = np.abs(got.astype(np.float64) - _exact_gelu(z))
    if fit == "float32":
        bound = 1e-6 + 2.4e-7 * np.abs(_exact_gelu(z))  # plus float32's own rounding of large results
        assert np.all(err <= bound), float(np.max(err / bound))
    else:
        bound = 8e-5 * np.abs(_exact_gelu(z)) + 7e-6
        worst = int(np.argmax(err / bound))
        assert err[worst] <= bound[worst], (float(z[worst]), float(err[worst]), float(bound[worst]))
        assert np.all(got[z >= 60.0] / z[z >= 60.0] == pytest.approx(1.0, rel=1e-4))
        assert np.all(got[z <= -60.0] == 0.0)
    nan = _core._layer_norm_gelu(np.zeros((1, 16), np.float32), np.zeros(16, np.float32),
                                 np.full(16, np.nan, np.float32), 1e-5, fit)
    assert np.isnan(nan).all()


@pytest.mark.skipif(not AVX512_FITS,
                    reason="the AVX-512 LayerNorm + GELU needs AVX-512 F/BW/VL (a bf16 or int16 kernel)")
@pytest.mark.parametrize("fit", ["portable"] + AVX512_FITS)
@pytest.mark.parametrize("n", [1, 17, 64, 100, 256, 300])
def test_layer_norm_gelu_matches_float64(fit, n):
    """The whole LayerNorm + GELU, every row width (the row statistics' four accumulators and
    their masked tail), against float64; large offsets check the two-pass variance."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((5, n)) * 3.0 + np.array([[0.0], [100.0], [-40.0], [0.5], [1e3]])).astype(np.float32)
    gamma = rng.uniform(0.5, 2.0, n).astype(np.float32)
    beta = rng.normal(0.0, 0.5, n).astype(np.float32)
    got = _core._layer_norm_gelu(x, gamma, beta, 1e-5, fit).astype(np.float64)
    ref = _layer_norm_gelu_reference(x, gamma, beta, 1e-5)
    # The float32 row sums of values near 1e3 (spread 3) carry rounding errors of a few 1e-4 in z;
    # the fits' own errors are tested above. Measured: at most 0.61 of this on the portable
    # kernel (one accumulator), 0.1 on the AVX-512 ones (four).
    tolerance = 1e-3 * np.abs(ref) + 1e-4
    assert np.all(np.abs(got - ref) <= tolerance), float(np.max(np.abs(got - ref) / tolerance))


def test_layer_norm_gelu_hook_refuses_bad_input():
    with pytest.raises(ValueError, match="unknown fit 'fast'"):
        _core._layer_norm_gelu(np.zeros((1, 4), np.float32), np.ones(4, np.float32), np.zeros(4, np.float32), 1e-5,
                               "fast")
    with pytest.raises(ValueError, match="gamma"):
        _core._layer_norm_gelu(np.zeros((1, 4), np.float32), np.ones(3, np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="float32"):
        _core._layer_norm_gelu(np.zeros((1, 4)), np.ones(4, np.float32), np.zeros(4, np.float32))


@pytest.mark.skipif(not AVX512_FITS,
                    reason="the AVX-512 LayerNorm + GELU needs AVX-512 F/BW/VL (a bf16 or int16 kernel)")
@pytest.mark.parametrize("n", [1, 17, 256, 300])
def test_doubled_fit_is_twice_the_plain_one_bit_for_bit(n):
    """The bf16 net runs GELU doubled (its factor 1/2 moved into the next layer's weights):
    doubling is exact, so the values are those of the plain fit times 2, every bit."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((6, n)) * 3.0 + rng.normal(0.0, 5.0, (6, 1))).astype(np.float32)
    gamma = rng.uniform(0.5, 2.0, n).astype(np.float32)
    beta = rng.normal(0.0, 1.0, n).astype(np.float32)
    plain = _core._layer_norm_gelu(x, gamma, beta, 1e-5, "bf16")
    doubled = _core._layer_norm_gelu(x, gamma, beta, 1e-5, "bf16_doubled")
    assert np.array_equal(doubled, 2.0 * plain)


@pytest.mark.skipif(not AVX512_FITS, reason="the fused head runs in AVX-512 F/BW/VL (a bf16 or int16 kernel)")
@pytest.mark.parametrize("outputs", [1, 3, 4, 6, 9, 16])
@pytest.mark.parametrize("n", [1, 17, 256, 300])
def test_fused_head_matches_float64(outputs, n):
    """LayerNorm + GELU with the head fused in (the bf16 net's last layer) against float64: the
    GELU fit's bound (8e-5 relative + 7e-6) carried through the head's sums, plus float32's
    rounding of them; the doubled form with halved weights gives the same bits; each row's
    result does not depend on the rows around it."""
    rng = np.random.default_rng(100 * outputs + n)
    rows = 21  # more than one block of row statistics (16)
    x = (rng.standard_normal((rows, n)) * 2.0 + rng.normal(0.0, 3.0, (rows, 1))).astype(np.float32)
    gamma = rng.uniform(0.5, 2.0, n).astype(np.float32)
    beta = rng.normal(0.0, 0.5, n).astype(np.float32)
    w = rng.normal(0.0, 1.0 / math.sqrt(n), (outputs, n)).astype(np.float32)
    b = rng.normal(0.0, 0.1, outputs).astype(np.float32)
    got = _core._layer_norm_gelu_head(x, gamma, beta, w, b, 1e-5)
    assert got.shape == (rows, outputs)
    g = _layer_norm_gelu_reference(x, gamma, beta, 1e-5)
    ref = g @ w.astype(np.float64).T + b
    # The fit's bound on each activation, the LayerNorm's float32 statistics (the tolerance of
    # the test above), and float32 sums of n products.
    per_activation = 8e-5 * np.abs(g) + 7e-6 + 1e-3 * np.abs(g) + 1e-4
    bound = per_activation @ np.abs(w.astype(np.float64)).T + (n + 2) * U32 * (np.abs(g) @ np.abs(w).T + np.abs(b))
    assert np.all(np.abs(got - ref) <= bound), float(np.max(np.abs(got - ref) / bound))
    doubled = _core._layer_norm_gelu_head(x, gamma, beta, 0.5 * w, b, 1e-5, doubled=True)
    assert np.array_equal(doubled, got)
    singles = np.concatenate([_core._layer_norm_gelu_head(x[i:i + 1], gamma, beta, w, b, 1e-5) for i in range(rows)])
    assert np.array_equal(singles, got)


@pytest.mark.skipif(not AVX512_FITS, reason="the fused head runs in AVX-512 F/BW/VL (a bf16 or int16 kernel)")
def test_fused_head_hook_refuses_bad_shapes():
    x, ones, zeros = np.zeros((2, 8), np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="1 to 16 rows"):
        _core._layer_norm_gelu_head(x, ones, zeros, np.zeros((17, 8), np.float32), np.zeros(17, np.float32))
    with pytest.raises(ValueError, match="w"):
        _core._layer_norm_gelu_head(x, ones, zeros, np.zeros((4, 7), np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="bias"):
        _core._layer_norm_gelu_head(x, ones, zeros, np.zeros((4, 8), np.float32), np.zeros(3, np.float32))


@needs_bf16
@pytest.mark.parametrize("isa", BF16_ISAS)
@pytest.mark.parametrize("rows,out,inp", [(1, 256, 18), (16, 256, 256), (37, 100, 77), (5, 33, 1), (64, 9, 300)])
def test_linear_within_bound_of_exact(isa, rows, out, inp):
    rng = np.random.default_rng(rows * 1000 + out + inp)
    scale = 10.0 ** rng.uniform(-3, 3, size=(1, inp))  # columns of very different magnitudes
    x = (rng.standard_normal((rows, inp)) * scale).astype(np.float32)
    w = (rng.standard_normal((out, inp)) / np.sqrt(inp)).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32)
    y = _core._bf16_linear(x, w, b, isa)
    exact, bound = linear_reference(x, w, b)
    err = np.abs(y.astype(np.float64) - exact)
    assert np.all(err <= bound), (isa, float((err / bound).max()))


@needs_bf16
@pytest.mark.parametrize("isa", BF16_ISAS)
def test_linear_exact_when_sums_are_exact(isa):
    # Small integers: every product and partial sum is exact in float32, so any order of
    # accumulation must give the exact result bit for bit.
    rng = np.random.default_rng(3)
    x = rng.integers(-8, 9, size=(23, 70)).astype(np.float32)
    w = rng.integers(-8, 9, size=(40, 70)).astype(np.float32)
    b = rng.integers(-100, 100, size=40).astype(np.float32)
    assert np.array_equal(_core._bf16_linear(x, w, b, isa), x @ w.T + b)


def bf16_hidden_linear(h: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The bf16 path's hidden-to-hidden layer: inputs and weights rounded to bf16, summed exactly."""
    return bf16_round(h.astype(np.float32)).astype(np.float64) @ bf16_round(w).astype(np.float64).T + b


@needs_torch
@needs_bf16
@pytest.mark.parametrize("isa", BF16_ISAS)
@pytest.mark.parametrize("faces,hidden,layers", [(4, 256, 2), (6, 100, 1), (3, 64, 3), (16, 64, 2), (20, 256, 2)])
def test_net_matches_reference_and_torch(isa, faces, hidden, layers):
    # Heads of up to 16 outputs run fused into the last LayerNorm + GELU (16: the largest); 20
    # outputs take the packed head after a plain one.
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": faces})
    model = random_model(game, hidden, layers)
    net = to_native(model, game, isa=isa, precision="bf16")
    assert (net.precision, net.isa) == ("bf16", isa)
    for batch in (1, 15, 16, 17, 50):
        x = queries(game, batch, seed=batch)
        y = net.forward(x)
        ref = reference_forward(model, x, bf16_hidden_linear)
        with torch.no_grad():
            fp32 = model(torch.from_numpy(x)).numpy()
        # Against the same arithmetic in float64: float32 sums differ by ulps, which now and
        # then tips an activation's rounding to the neighbouring bf16 value (2^-8 relative).
        assert np.abs(y - ref).max() <= 5e-3, (batch, float(np.abs(y - ref).max()))
        # Against float32 torch: bf16's own error (8-bit significands), well under the
        # accuracy target of 1e-2 on a trained net's values.
        assert np.abs(y - fp32).max() <= 2e-2, (batch, float(np.abs(y - fp32).max()))


@needs_torch
@needs_bf16
@pytest.mark.parametrize("isa", BF16_ISAS)
def test_rows_are_independent_and_deterministic(isa):
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    net = to_native(random_model(game), game, isa=isa, precision="bf16")
    x = queries(game, 40)
    y = net.forward(x)
    assert np.array_equal(y, net.forward(x))
    singles = np.concatenate([net.forward(x[i:i + 1]) for i in range(len(x))])
    assert np.array_equal(y, singles)  # a row's value does not depend on the batch around it


@needs_torch
@needs_bf16
def test_weights_swap_keeps_precision():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    net = to_native(random_model(game, seed=0), game, precision="bf16")
    other = random_model(game, seed=1)
    net.set_weights_bytes(weights_to_bytes(other))
    assert net.precision == "bf16"
    x = queries(game, 8)
    fresh = to_native(other, game, precision="bf16", isa=net.isa)
    assert np.array_equal(net.forward(x), fresh.forward(x))


@needs_torch
@needs_bf16
def test_weight_too_large_for_bf16_is_refused():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    model = random_model(game)
    with torch.no_grad():
        model.blocks()[1][0].weight[3, 5] = 3.399e38  # finite in float32, inf in bf16 (layer 0 stays fp32)
    data = weights_to_bytes(model)
    _core.MlpValueNet(game, data, precision="fp32")  # fine in float32
    with pytest.raises(ValueError, match="too large for bf16"):
        _core.MlpValueNet(game, data, precision="bf16")


@needs_torch
def test_bad_precision_and_isa_combinations():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    data = weights_to_bytes(random_model(game, hidden=32))
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        _core.MlpValueNet(game, data, precision="fp16")
    with pytest.raises(ValueError, match="bf16 kernel, but precision is 'fp32'"):
        _core.MlpValueNet(game, data, isa="amx", precision="fp32")
    with pytest.raises(ValueError, match="fp32 kernel, but precision is 'bf16'"):
        _core.MlpValueNet(game, data, isa="generic", precision="bf16")
    # auto with an fp32 isa named: that isa
    assert _core.MlpValueNet(game, data, isa="generic", precision="auto").precision == "fp32"
    auto = _core.MlpValueNet(game, data, precision="auto")
    expected = "bf16" if _core.mlp_bf16_preferred() else "int16" if _core.mlp_int16_preferred() else "fp32"
    assert auto.precision == expected


FALLBACK_SCRIPT = r"""
import sys
import numpy as np
import rebel
from rebel import _core
from rebel.config.train import ConfigError, load_train_config
from rebel.nets.value_mlp import ValueMLP, to_native
import torch
torch.manual_seed(0)
assert _core.mlp_supported_bf16_isas() == [], _core.mlp_supported_bf16_isas()
assert not _core.mlp_bf16_preferred()
game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
model = ValueMLP.for_game(game, hidden=64).eval()
auto = to_native(model, game, precision="auto")
assert auto.precision == "fp32", auto.precision
x = np.random.default_rng(0).uniform(size=(5, game.query_size)).astype(np.float32)
assert np.array_equal(auto.forward(x), to_native(model, game, precision="fp32").forward(x))
for isa in ("auto", "amx", "avx512bf16"):
    try:
        to_native(model, game, isa=isa, precision="bf16")
    except ValueError as e:
        print("refused:", e)
    else:
        sys.exit(f"bf16 ran with isa {isa} on a CPU without it")
try:
    load_train_config(None, ["search.precision=bf16"])
except ConfigError as e:
    print("config:", e)
else:
    sys.exit("search.precision=bf16 accepted")
print("ok")
"""


@needs_torch
def test_forced_fallback_without_bf16_cpu_features():
    env = dict(os.environ, REBEL_CPU_DISABLE="amx,avx512bf16,avx512vnni")  # auto would pick int16 with VNNI
    out = subprocess.run([sys.executable, "-c", FALLBACK_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.strip().endswith("ok")
    assert "needs a CPU with AMX-BF16 or AVX512_BF16" in out.stdout
    assert "does not support isa 'amx'" in out.stdout and "does not support isa 'avx512bf16'" in out.stdout
    assert "config: search.precision" in out.stdout


@needs_torch
def test_eval_cli_refuses_bf16_without_cpu_support(tmp_path):
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    weights = tmp_path / "w.bin"
    weights.write_bytes(weights_to_bytes(ValueMLP.for_game(game, hidden=16)))
    env = dict(os.environ, REBEL_CPU_DISABLE="amx,avx512bf16")
    cmd = [sys.executable, "-m", "rebel", "eval", "--faces", "3", "--net", str(weights), "--precision", "bf16",
           "--repeats", "2", "--iters", "8"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "AMX-BF16 or AVX512_BF16" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    bad = subprocess.run(cmd[:-6] + ["--precision", "fp16"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "fp16" in bad.stderr


@needs_torch
def test_eval_records_kernel(tmp_path):
    import json

    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    weights = tmp_path / "w.bin"
    weights.write_bytes(weights_to_bytes(ValueMLP.for_game(game, hidden=16)))
    out = subprocess.run([sys.executable, "-m", "rebel", "eval", "--faces", "3", "--net", str(weights),
                          "--precision", "fp32", "--repeats", "2", "--iters", "8", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["net_kernel"]["precision"] == "fp32"
