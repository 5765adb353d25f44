"""Stake-relative value nets: outputs multiplied by the pot per player (``model.stake_relative``).

The game's stake feature is checked against the pot of known betting sequences; the net against
torch (every fp32 kernel), against the plain net with the same weights times the stake, through
the weights file (format version 2) and its malformed variants, as a policy net (refused), and
in a short training run whose exported net computes what the trainer's net computes.
"""
from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rebel  # noqa: E402
from rebel import _core  # noqa: E402
from rebel.nets.policy_mlp import PolicyMLP, policy_weights_from_bytes  # noqa: E402
from rebel.nets.value_mlp import ValueMLP, load_weights, to_native, weights_from_bytes, weights_to_bytes  # noqa: E402
from rebel.nets.weights_io import HEADER_SIZE_V2, average_weights, read_header, read_policy_weights  # noqa: E402

FOLD, CALL, BET, ALL_IN = 0, 1, 2, 3


def stake_of(game: rebel.Game, history: list[int]) -> float:
    """The stake the game's stake feature gives at ``history``."""
    column, scale = game.stake_feature
    return float(game.public_features(history)[column]) * scale


@pytest.mark.parametrize("name,history,pot_per_player", [
    ("leduc_nolimit", [], 100),                   # the antes
    ("leduc_nolimit", [CALL, CALL], 100),
    ("leduc_nolimit", [BET, CALL], 300),           # bet pot (200), call
    ("leduc_nolimit", [BET, BET, CALL], 900),      # bet pot, re-raise pot (to 900), call
    ("leduc_nolimit", [ALL_IN, CALL], 1200),       # the stacks
    ("leduc", [], 1),
    ("leduc", [BET, CALL], 3),                     # raise 2, call
    ("leduc", [BET, BET, CALL], 5),                # raise 2, re-raise 2, call
])
def test_stake_feature_is_the_pot_per_player(name, history, pot_per_player):
    game = rebel.make_game(name)
    assert stake_of(game, history) == pytest.approx(pot_per_player, rel=1e-6)


def test_stake_feature_is_positive_everywhere_and_absent_without_a_pot():
    for name in ("kuhn", "liars_dice"):
        assert rebel.make_game(name).stake_feature is None
    game = rebel.make_game("leduc_nolimit", {"stack": 500, "ante": 50})
    tree = rebel.build_tree(game, [], -1)
    stakes = [stake_of(game, list(tree.history(n))) for n in range(tree.size)]
    assert min(stakes) == pytest.approx(50) and max(stakes) == pytest.approx(500)


def stake_model(game: rebel.Game, seed: int = 0) -> ValueMLP:
    torch.manual_seed(seed)
    model = ValueMLP.for_game(game, hidden=48, layers=2, value_scale=100.0, stake_relative=True)
    with torch.no_grad():
        for _, norm in model.blocks():
            norm.weight.uniform_(-2.0, 2.0)
            norm.bias.normal_(0.0, 1.0)
    return model.eval()


def query_rows(game: rebel.Game, n: int, seed: int = 1) -> np.ndarray:
    """Rows with the features of real public states (pots of every size) and random beliefs."""
    rng = np.random.default_rng(seed)
    tree = rebel.build_tree(game, [], -1)
    histories = [list(tree.history(n)) for n in range(tree.size)]
    rows = np.zeros((n, game.query_size), dtype=np.float32)
    F, H = game.feature_size, game.num_hands
    for i in range(n):
        h = histories[rng.integers(len(histories))]
        rows[i, 0], rows[i, 1] = rng.integers(2), rng.integers(2)
        rows[i, 2:2 + F] = game.public_features(h)
        for p in range(2):
            b = rng.random(H)
            rows[i, 2 + F + p * H: 2 + F + (p + 1) * H] = b / b.sum()
    return rows


def test_outputs_are_the_plain_nets_times_the_stake_in_torch_and_every_kernel():
    game = rebel.make_game("leduc_nolimit")
    model = stake_model(game)
    column, scale = game.stake_feature
    assert (model.stake_column, model.stake_scale) == (2 + column, scale / 100.0)
    plain = ValueMLP.for_game(game, hidden=48, layers=2, value_scale=100.0).eval()
    plain.load_state_dict(model.state_dict())
    x = query_rows(game, 200)
    stake = x[:, model.stake_column] * scale                  # chips: 100 .. 1200
    assert stake.min() == pytest.approx(100) and stake.max() == pytest.approx(1200)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(expected, plain(torch.from_numpy(x)).numpy() * (stake / 100.0)[:, None],
                                   rtol=1e-5, atol=1e-3)
    for isa in _core.mlp_supported_isas():
        out = to_native(model, game, isa=isa).forward(x)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=2e-2, err_msg=isa)
    for precision in ("bf16", "int16"):  # the narrow kernels scale the same outputs
        try:
            out = to_native(model, game, precision=precision).forward(x)
        except ValueError:
            continue  # this CPU has no such kernel
        assert np.abs(out - expected).max() <= 0.02 * np.abs(expected).max(), precision


def test_weights_file_version_2_round_trip_and_average():
    game = rebel.make_game("leduc_nolimit")
    model = stake_model(game, seed=3)
    data = weights_to_bytes(model)
    header = read_header(data)
    assert struct.unpack_from("<I", data, 8)[0] == 2 and header.header_size == HEADER_SIZE_V2
    assert (header.stake_column, header.stake_scale) == (model.stake_column, pytest.approx(model.stake_scale))
    assert len(data) == header.file_size()
    x = query_rows(game, 50)
    back = weights_from_bytes(data)
    assert back.value_scale == 1.0 and back.stake_column == model.stake_column
    with torch.no_grad():
        np.testing.assert_allclose(back(torch.from_numpy(x)).numpy(), model(torch.from_numpy(x)).numpy(),
                                   rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(_core.MlpValueNet(game, data).forward(x), to_native(model, game).forward(x))
    assert weights_to_bytes(back) == data
    # A plain net stays version 1, byte for byte what it was.
    plain = ValueMLP.for_game(game, hidden=48, layers=2)
    assert struct.unpack_from("<I", weights_to_bytes(plain), 8)[0] == 1
    # Averaging snapshots keeps the stake column.
    averaged = read_header(average_weights([data, weights_to_bytes(stake_model(game, seed=4))]))
    assert (averaged.stake_column, averaged.stake_scale) == (header.stake_column, header.stake_scale)


def reseal(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


def test_malformed_version_2_files_are_named():
    game = rebel.make_game("leduc_nolimit")
    good = weights_to_bytes(stake_model(game))
    body = bytearray(good[:-4])
    cases = []
    for offset, fmt, value, message in [
        (48, "<I", game.query_size, "stake column"),           # not an input column
        (52, "<f", 0.0, "stake scale"),
        (52, "<f", float("nan"), "stake scale"),
        (36, "<I", 0, "flags"),                                # version 2 without its flag
        (12, "<I", 48, "header"),                              # version 2 with version 1's header size
        (8, "<I", 3, "version"),
    ]:
        bad = bytearray(body)
        struct.pack_into(fmt, bad, offset, value)
        cases.append((reseal(bytes(bad)), message))
    cases.append((good[:52], "truncated"))
    for data, message in cases:
        with pytest.raises(ValueError, match=message):
            _core.MlpValueNet(game, data)
        with pytest.raises(ValueError, match=message):
            weights_from_bytes(data)


def test_a_stake_relative_net_is_not_a_policy_net():
    game = rebel.make_game("leduc_nolimit")
    data = weights_to_bytes(stake_model(game))
    with pytest.raises(ValueError, match="stake"):
        _core.MlpPolicyNet(game, data)
    with pytest.raises(ValueError, match="stake"):
        policy_weights_from_bytes(data, game)
    with pytest.raises(ValueError, match="stake"):
        read_policy_weights(data, game)
    with pytest.raises(ValueError, match="stake-relative"):
        PolicyMLP.for_game(game, stake_relative=True)


def test_stake_relative_needs_a_game_with_a_stake(tmp_path):
    with pytest.raises(ValueError, match="no stake feature"):
        ValueMLP.for_game(rebel.make_game("kuhn"), stake_relative=True)
    for bad in (-2, 10**6):
        with pytest.raises(ValueError, match="stake_column"):
            ValueMLP(10, 3, stake_column=bad)
    from conftest import run_cli

    r = run_cli("train", "kuhn", "model.stake_relative=true", "run.epochs=1", f"run.dir={tmp_path}")
    assert r.returncode == 2, r.stderr
    assert "model.stake_relative" in r.stderr and "no stake feature" in r.stderr and "Traceback" not in r.stderr


def test_a_short_stake_relative_run_exports_the_net_it_trained(tmp_path):
    from conftest import run_cli

    r = run_cli("train", "leduc_nolimit", "model.stake_relative=true", "model.hidden=32", "search.iterations=32",
                "selfplay.iterations=32", "selfplay.threads=1", "trainer.torch_threads=1", "trainer.batch_size=64",
                "trainer.epoch_examples=256", "run.epochs=3", "run.max_minutes=null", "evaluation.every=0",
                "evaluation.final=false", "evaluation.references=false", "evaluation.heldout_steps=0",
                f"run.dir={tmp_path}", "run.name=stake", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    run = tmp_path / "stake"
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    losses = [row["loss"] for row in rows if "loss" in row]
    assert len(losses) == 3 and all(np.isfinite(losses))
    game = rebel.make_game("leduc_nolimit")
    net = load_weights(run / "weights.bin")
    assert net.stake_column == 2 + game.stake_feature[0]
    x = query_rows(game, 20)
    with torch.no_grad():
        np.testing.assert_allclose(_core.MlpValueNet(game, run / "weights.bin").forward(x),
                                   net(torch.from_numpy(x)).numpy(), rtol=1e-4, atol=1e-2)
