"""The native MLP value net (rebel._core.MlpValueNet) against the torch ValueMLP.

Covers forward parity on every instruction set this CPU runs, the weights file format
(round trip, atomic export, rejection of malformed files), strict argument checking, and
swapping weights while other threads evaluate.
"""
from __future__ import annotations

import os
import struct
import threading
import zlib
from pathlib import Path
from typing import List

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rebel  # noqa: E402
from rebel import _core  # noqa: E402
from rebel.nets.value_mlp import (  # noqa: E402
    ValueMLP,
    export_weights,
    load_weights,
    query_size,
    to_native,
    update_native,
    weights_from_bytes,
    weights_to_bytes,
)
from rebel.nets.weights_io import HEADER_SIZE, MAGIC, read_header  # noqa: E402

ISAS: List[str] = list(_core.mlp_supported_isas())
PARITY_ATOL = 1e-5


@pytest.fixture(scope="module")
def game():
    return rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})


@pytest.fixture(scope="module")
def other_game():
    return rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 5})


def random_model(input_size: int, output_size: int, hidden: int = 256, layers: int = 2, seed: int = 0) -> ValueMLP:
    """A ValueMLP with randomised LayerNorm affine parameters (torch initialises them to 1 / 0)."""
    torch.manual_seed(seed)
    model = ValueMLP(input_size, output_size, hidden=hidden, layers=layers)
    with torch.no_grad():
        for _, norm in model.blocks():
            norm.weight.uniform_(-3.0, 3.0)
            norm.bias.normal_(0.0, 1.0)
    return model.eval()


def model_for(game, hidden: int = 256, layers: int = 2, seed: int = 0) -> ValueMLP:
    return random_model(game.query_size, game.num_hands, hidden, layers, seed)


def torch_forward(model: ValueMLP, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def inputs(batch: int, size: int, scale: float, seed: int = 1) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((batch, size)) * scale).astype(np.float32)


def with_crc(body: bytes) -> bytes:
    """Re-seals a modified header + payload with a valid checksum."""
    return body + struct.pack("<I", zlib.crc32(body))


# ---------------------------------------------------------------------------------------
# Parity with torch


def test_query_size_matches_game(game):
    assert query_size(game) == 2 + game.feature_size + 2 * game.num_hands == 18
    model = ValueMLP.for_game(game)
    assert (model.input_size, model.output_size, model.hidden, model.layers) == (18, 4, 256, 2)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("layers", [0, 1, 2, 3])
def test_forward_matches_torch(game, isa, layers):
    model = model_for(game, layers=layers, seed=layers)
    net = to_native(model, game, isa=isa)
    assert net.isa == isa and net.num_layers == layers
    # Large-magnitude inputs push pre-activations deep into the GELU tails; without a
    # LayerNorm (layers == 0) they would only test float32 rounding of huge outputs.
    scales = (1.0, 1000.0) if layers > 0 else (1.0,)
    for batch in (1, 7, 16, 61, 256):
        for scale in scales:
            x = inputs(batch, game.query_size, scale, seed=batch)
            diff = np.abs(net.forward(x) - torch_forward(model, x)).max()
            assert diff <= PARITY_ATOL, (isa, layers, batch, scale, diff)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("hidden", [40, 100])
def test_forward_matches_torch_odd_widths(isa, hidden):
    # Widths that are not multiples of a vector or a panel, and a head wider than 16
    # outputs (packed GEMM path rather than dot products).
    game = rebel.make_game("liars_dice", {"num_dice": 2, "num_faces": 5})
    assert game.num_hands == 25
    model = model_for(game, hidden=hidden, layers=2, seed=hidden)
    net = to_native(model, game, isa=isa)
    x = inputs(37, game.query_size, 30.0)
    assert np.abs(net.forward(x) - torch_forward(model, x)).max() <= PARITY_ATOL


def test_gelu_is_exact_erf(game):
    # One wide-input layer with huge LayerNorm gains: every GELU tail and the clamp
    # region of the erf approximation are exercised.
    model = model_for(game, layers=1, seed=3)
    with torch.no_grad():
        model.blocks()[0][1].weight.uniform_(-40.0, 40.0)
        model.head.weight.mul_(0.05)
    x = inputs(128, game.query_size, 10.0)
    net = to_native(model, game)
    assert np.abs(net.forward(x) - torch_forward(model, x)).max() <= PARITY_ATOL


@pytest.mark.skipif("avx2" not in ISAS, reason="this CPU has no AVX2 + FMA")
@pytest.mark.skipif("avx512" not in ISAS, reason="without AVX-512 the tests above already run the AVX2 path")
def test_avx2_layer_norm_gelu_matches_torch_where_avx512_is_hidden():
    """LayerNorm + GELU has its own AVX2 code for CPUs without AVX-512 (csrc/nets/activations.cc);
    REBEL_CPU_DISABLE=avx512 selects it here, and the parity tests above run on it."""
    import subprocess
    import sys

    env = dict(os.environ, REBEL_CPU_DISABLE="avx512")
    probe = subprocess.run([sys.executable, "-c", "from rebel import _core; print(list(_core.mlp_supported_isas()))"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0 and "avx512" not in probe.stdout, probe.stdout + probe.stderr
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                          "matches_torch and not avx2_layer_norm or gelu_is_exact_erf"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout, out.stdout[-2000:]


def test_forward_accepts_views_and_empty_batches(game):
    model = model_for(game)
    net = to_native(model, game)
    x = inputs(20, game.query_size, 1.0)
    strided = np.repeat(x, 2, axis=0)[::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(net.forward(strided), net.forward(x))
    out = net.forward(np.zeros((0, game.query_size), np.float32))
    assert out.shape == (0, game.num_hands) and out.dtype == np.float32


# ---------------------------------------------------------------------------------------
# Weights format


def test_round_trip(game, tmp_path):
    model = model_for(game, seed=5)
    path = tmp_path / "net.rbw"
    export_weights(model, path)
    data = path.read_bytes()
    assert data == weights_to_bytes(model) and data[:8] == MAGIC
    header = read_header(data)
    assert (header.input_size, header.output_size, header.hidden_size, header.num_layers) == (18, 4, 256, 2)
    assert header.layer_norm_eps == pytest.approx(1e-5) and header.file_size() == len(data)

    back = load_weights(path)
    for a, b in zip(model.state_dict().values(), back.state_dict().values()):
        assert torch.equal(a, b)
    x = inputs(33, game.query_size, 1.0)
    from_file = _core.MlpValueNet(game, path)
    from_str = _core.MlpValueNet(game, str(path))
    from_bytes = _core.MlpValueNet(game, bytearray(data))
    expected = to_native(model, game).forward(x)
    for net in (from_file, from_str, from_bytes):
        np.testing.assert_array_equal(net.forward(x), expected)
    assert np.abs(torch_forward(back, x) - expected).max() <= PARITY_ATOL


def test_export_is_atomic_and_leaves_no_temp_files(game, tmp_path):
    path = tmp_path / "net.rbw"
    first, second = model_for(game, seed=1), model_for(game, seed=2)
    export_weights(first, path)
    export_weights(second, path)
    assert os.listdir(tmp_path) == ["net.rbw"]
    assert path.read_bytes() == weights_to_bytes(second)

    with torch.no_grad():
        first.head.bias[0] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        export_weights(first, path)
    assert os.listdir(tmp_path) == ["net.rbw"]
    assert path.read_bytes() == weights_to_bytes(second)


def corrupted_files(good: bytes):
    """(name, bytes, message regex) for every kind of malformed file."""
    n = len(good)
    flipped = bytearray(good)
    flipped[HEADER_SIZE + 1000] ^= 0x01
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    body = bytearray(good[:-4])
    struct.pack_into("<I", body, 8, 3)
    bad_version = with_crc(bytes(body))
    body = bytearray(good[:-4])
    struct.pack_into("<I", body, 24, 128)
    bad_dims = with_crc(bytes(body))
    body = bytearray(good[:-4])
    struct.pack_into("<f", body, HEADER_SIZE + 4 * 7, float("nan"))
    nan_weight = with_crc(bytes(body))
    cases = [
        ("magic", b"NOTMAGIC" + good[8:], "magic"),
        ("empty", b"", "magic"),
        ("version", bad_version, "version"),
        ("dims", bad_dims, "payload floats"),
        ("payload bit flip", bytes(flipped), "checksum"),
        ("checksum", bytes(bad_crc), "checksum"),
        ("trailing", good + b"\0", "trailing"),
        ("nan", nan_weight, "non-finite"),
    ]
    for cut in (5, 8, 30, HEADER_SIZE - 1, HEADER_SIZE, n // 2, n - 4, n - 1):
        cases.append((f"truncated at {cut}", good[:cut], "magic" if cut < 8 else "truncated"))
    return cases


def test_bad_files_rejected(game, tmp_path):
    model = model_for(game)
    good = weights_to_bytes(model)
    net = to_native(model, game)
    x = inputs(8, game.query_size, 1.0)
    before = net.forward(x)
    path = tmp_path / "bad.rbw"
    for name, data, message in corrupted_files(good):
        path.write_bytes(data)
        with pytest.raises(ValueError, match=message):
            _core.MlpValueNet(game, data)
        with pytest.raises(ValueError, match=message):
            _core.MlpValueNet(game, path)
        with pytest.raises(ValueError, match=message):
            net.load(path)
        with pytest.raises(ValueError, match=message):
            net.set_weights_bytes(data)
        with pytest.raises(ValueError):
            load_weights(path)
        # A rejected file leaves the current weights in place.
        np.testing.assert_array_equal(net.forward(x), before, err_msg=name)


def test_shape_must_fit_game(game, other_game, tmp_path):
    other = model_for(other_game)
    path = tmp_path / "other.rbw"
    export_weights(other, path)
    with pytest.raises(ValueError, match="query size"):
        _core.MlpValueNet(game, path)
    with pytest.raises(ValueError, match="query size"):
        to_native(other, game)
    net = to_native(model_for(game), game)
    with pytest.raises(ValueError, match="query size"):
        net.load(path)
    with pytest.raises(ValueError, match="num_hands"):
        net.set_weights_bytes(weights_to_bytes(random_model(game.query_size, 7)))
    assert net.input_size == game.query_size and net.output_size == game.num_hands


def test_unreadable_and_wrong_arguments(game, tmp_path):
    data = weights_to_bytes(model_for(game))
    with pytest.raises(FileNotFoundError):
        _core.MlpValueNet(game, tmp_path / "missing.rbw")
    with pytest.raises(OSError):
        _core.MlpValueNet(game, tmp_path)
    with pytest.raises(TypeError):
        _core.MlpValueNet(game, 42)
    with pytest.raises(ValueError, match="isa"):
        _core.MlpValueNet(game, data, isa="sse9")
    net = _core.MlpValueNet(game, data)
    with pytest.raises(TypeError):
        net.set_weights_bytes(str(tmp_path / "x"))
    with pytest.raises(TypeError):
        weights_to_bytes(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError):
        weights_from_bytes(b"REBELMLP")


def test_forward_argument_checks(game):
    net = to_native(model_for(game), game)
    q = game.query_size
    for bad in (np.zeros((4, q), np.float64), np.zeros((4, q), np.int32), np.zeros((4, q), ">f4"),
                [[0.0] * q], torch.zeros(4, q)):
        with pytest.raises(TypeError):
            net.forward(bad)
    for bad in (np.zeros(q, np.float32), np.zeros((4, q - 1), np.float32), np.zeros((2, 4, q), np.float32)):
        with pytest.raises(ValueError):
            net.forward(bad)


# ---------------------------------------------------------------------------------------
# Concurrency and use from the solvers


def test_concurrent_forward_while_swapping(game):
    model_a, model_b = model_for(game, seed=10), model_for(game, seed=11)
    bytes_a, bytes_b = weights_to_bytes(model_a), weights_to_bytes(model_b)
    net = _core.MlpValueNet(game, bytes_a)
    x = inputs(64, game.query_size, 1.0)
    out_a = net.forward(x)
    out_b = _core.MlpValueNet(game, bytes_b).forward(x)
    assert not np.array_equal(out_a, out_b)

    stop = threading.Event()
    results: List[np.ndarray] = []
    errors: List[BaseException] = []

    def evaluate() -> None:
        try:
            local = []
            while not stop.is_set() or len(local) < 20:
                local.append(net.forward(x))
            results.extend(local)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=evaluate) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(200):
        net.set_weights_bytes(bytes_b if i % 2 == 0 else bytes_a)
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) >= 80
    seen_a = seen_b = 0
    for out in results:
        is_a, is_b = np.array_equal(out, out_a), np.array_equal(out, out_b)
        assert is_a or is_b
        seen_a += is_a
        seen_b += is_b
    assert seen_a + seen_b == len(results)


def test_solver_uses_net_and_survives_swaps(game):
    model_a, model_b = model_for(game, seed=20), model_for(game, seed=21)
    tree = rebel.build_tree(game, [], 2)
    assert len(tree.pseudo_leaves) > 0

    def root_values(net) -> np.ndarray:
        solver = rebel.SubgameSolver(game, tree, net=net)
        solver.run(20)
        return np.concatenate([solver.root_values(0), solver.root_values(1)])

    values_a = root_values(to_native(model_a, game))
    np.testing.assert_array_equal(values_a, root_values(to_native(model_a, game)))
    assert np.all(np.isfinite(values_a))
    assert not np.allclose(values_a, root_values(to_native(model_b, game)))

    # The solver evaluates without the GIL while weights are swapped underneath it.
    net = to_native(model_a, game)
    solver = rebel.SubgameSolver(game, tree, net=net)
    runner = threading.Thread(target=solver.run, args=(400,))
    runner.start()
    for i in range(100):
        update_native(net, model_b if i % 2 == 0 else model_a)
    runner.join()
    assert solver.num_steps == 400
    assert np.all(np.isfinite(solver.root_values(0)))


def test_repr_and_properties(game):
    net = to_native(model_for(game, hidden=64, layers=3), game)
    assert isinstance(net, _core.ValueNet)
    assert net.name == "mlp" and net.hidden_size == 64 and net.num_layers == 3
    assert net.layer_norm_eps == pytest.approx(1e-5)
    assert "layers=3" in repr(net) and "hidden=64" in repr(net)
    assert ISAS[-1] == "generic"


def test_format_document_exists():
    doc = Path(__file__).resolve().parents[2] / "docs" / "weights_format.md"
    assert doc.is_file() and "REBELMLP" in doc.read_text()


def test_value_scale_is_folded_into_the_exported_head():
    """No-limit Leduc's net works in antes: the torch model scales its head, the weights file
    holds the scaled head, and every reader computes the same chips."""
    import torch

    from rebel.games.units import value_unit
    from rebel.train.trainer import value_loss

    game = rebel.make_game("leduc_nolimit")
    assert value_unit(game) == 100.0 and value_unit(rebel.make_game("leduc")) == 1.0
    torch.manual_seed(0)
    scaled = ValueMLP.for_game(game, hidden=16, value_scale=value_unit(game))
    plain = weights_from_bytes(weights_to_bytes(ValueMLP.for_game(game, hidden=16)))
    plain.load_state_dict(scaled.state_dict())
    x = torch.from_numpy(np.random.default_rng(0).random((5, game.query_size), dtype=np.float32))
    with torch.no_grad():
        np.testing.assert_allclose(scaled(x).numpy(), 100.0 * plain(x).numpy(), rtol=1e-6)
        back = weights_from_bytes(weights_to_bytes(scaled))
        assert back.value_scale == 1.0
        np.testing.assert_allclose(back(x).numpy(), scaled(x).numpy(), rtol=1e-5, atol=1e-4)
    native = to_native(scaled, game)
    np.testing.assert_allclose(native.forward(x.numpy()), scaled(x).detach().numpy(), rtol=1e-5, atol=1e-3)
    # The training loss is taken in the net's unit.
    y = torch.zeros(5, game.num_hands)
    with torch.no_grad():
        assert float(value_loss(scaled(x) / 100.0, y)) < float(value_loss(scaled(x), y))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="value_scale"):
            ValueMLP.for_game(game, value_scale=bad)
