"""A net's file names its game and search (weights format version 3): written by training and
the shipped nets, read identically by Python and C++, and used by `rebel eval` and `rebel play`
to take the net's own game and search and to refuse a net of another game."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rebel import _core
from rebel.nets.pretrained import available, available_policies
from rebel.nets.weights_io import (
    HEADER_SIZE_V3,
    net_metadata,
    payload_from_bytes,
    read_header,
    read_metadata,
    weights_from_arrays,
    with_metadata,
)
from tests.conftest import run_cli

KUHN = {"name": "kuhn"}
SEARCH = {"solver": "lcfr", "depth": 2, "iterations": 64, "chance_leaves": "after_deal"}


def _kuhn_arrays(seed: int = 0) -> tuple[int, int, list[np.ndarray]]:
    game = _core.make_game("kuhn", {})
    q, h = int(game.query_size), int(game.num_hands)
    rng = np.random.default_rng(seed)
    hidden = 8
    arrays = [rng.normal(size=(hidden, q)), rng.normal(size=hidden), 1 + rng.normal(size=hidden) * 0.1,
              rng.normal(size=hidden), rng.normal(size=(h, hidden)), rng.normal(size=h)]
    return q, h, arrays


def test_version_3_round_trips_and_loads_in_cpp_with_the_same_values():
    q, h, arrays = _kuhn_arrays()
    plain = weights_from_arrays(q, h, 8, 1, arrays)
    meta = net_metadata("value", KUHN, SEARCH)
    stamped = weights_from_arrays(q, h, 8, 1, arrays, metadata=meta)
    assert read_header(plain).version == 1 and read_metadata(plain) is None
    assert read_header(stamped).version == 3 and read_header(stamped).header_size == HEADER_SIZE_V3
    assert read_metadata(stamped) == {"kind": "value", "game": KUHN, "search": SEARCH}
    assert with_metadata(plain, meta) == stamped  # the parameters bit for bit, the metadata added
    np.testing.assert_array_equal(payload_from_bytes(plain)[1], payload_from_bytes(stamped)[1])
    game = _core.make_game("kuhn", {})
    queries = np.random.default_rng(1).random((5, q)).astype(np.float32)
    a = _core.MlpValueNet(game, plain, precision="fp32").forward(queries)
    b = _core.MlpValueNet(game, stamped, precision="fp32").forward(queries)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:-7], "truncated"),                         # the metadata block cut short
    (lambda d: d[:-6] + bytes([d[-6] ^ 1]) + d[-5:], "CRC-32"),  # a metadata byte flipped
    (lambda d: d + b"x", "trailing"),
])
def test_a_damaged_version_3_file_is_refused_by_python_and_cpp(damage, message):
    q, h, arrays = _kuhn_arrays()
    bad = damage(weights_from_arrays(q, h, 8, 1, arrays, metadata=net_metadata("value", KUHN, SEARCH)))
    with pytest.raises(ValueError, match=message):
        payload_from_bytes(bad)
    with pytest.raises(ValueError, match=message):
        _core.MlpValueNet(_core.make_game("kuhn", {}), bad)


def test_metadata_must_be_a_json_object():
    q, h, arrays = _kuhn_arrays()
    good = weights_from_arrays(q, h, 8, 1, arrays, metadata={"kind": "value"})
    body = good[:-4].replace(b'{"kind":"value"}', b'["kind","value"]')
    import zlib
    bad = body + zlib.crc32(body).to_bytes(4, "little")
    with pytest.raises(ValueError, match="not a JSON object"):
        read_metadata(bad)
    with pytest.raises(ValueError, match="value or policy"):
        net_metadata("critic", KUHN, SEARCH)


@pytest.mark.parametrize("net", available(), ids=[n.name for n in available()])
def test_every_shipped_net_names_its_game_and_the_search_of_its_figure(net):
    meta = read_metadata(net.path.read_bytes())
    assert meta is not None and meta["kind"] == "value" and meta["game"] == net.game
    e = net.exploitability
    assert meta["search"] == {"solver": e["solver"], "depth": e["depth"], "iterations": e["iterations"],
                              "chance_leaves": "after_deal"}
    assert e["precision"] == "fp32"  # every shipped figure is the fp32 net's


@pytest.mark.parametrize("policy", available_policies(), ids=[p.name for p in available_policies()])
def test_every_shipped_policy_net_names_its_game(policy):
    meta = read_metadata(policy.path.read_bytes())
    assert meta is not None and meta["kind"] == "policy" and meta["game"] == policy.game


def _eval_json(*args: str) -> dict:
    r = run_cli("eval", *args, "--repeats", "2", "--no-mode-a", "--json", "--threads", "1")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_eval_takes_the_nets_game_and_search_unless_told_otherwise():
    # pretrained:leduc was trained and measured at depth 10: eval searches at depth 10 with it.
    out = _eval_json("--net", "pretrained:leduc", "--iters", "8")
    assert out["game"]["name"] == "leduc" and out["depth"] == 10 and out["iterations"] == 8
    assert out["from_net"] == ["game", "depth"]
    # a flag or an override still wins
    out = _eval_json("--net", "pretrained:leduc", "--iters", "8", "search.depth=4")
    assert out["depth"] == 4 and out["from_net"] == ["game"]


def test_eval_refuses_a_net_of_another_game_in_one_line():
    nolimit = "is a net of leduc_nolimit(stack=1200, ante=100, fold_without_bet=0)"
    for net, args, message in (
            ("leduc", ["--game", "leduc_nolimit"], "is a net of leduc()"),
            ("leduc", ["game.name=leduc_nolimit", "game.ante=1"], "is a net of leduc()"),
            ("leduc", ["--stack", "900"], "--stack does not apply to leduc"),
            ("leduc_nolimit", ["--stack", "900", "--ante", "1"], nolimit),
            ("leduc_nolimit", ["game.fold_without_bet=1"], nolimit),
            ("leduc_nolimit", ["--game", "leduc"], nolimit)):
        r = run_cli("eval", "--net", f"pretrained:{net}", *args, "--repeats", "2")
        assert r.returncode == 2, (args, r.stdout)
        assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    r = run_cli("eval", "--net", "pretrained:kuhn", "--policy-net", "pretrained:1x4f-policy", "--warm-start", "15")
    assert r.returncode == 2 and "--policy-net" in r.stderr and "liars_dice" in r.stderr, r.stderr


def test_eval_of_a_run_file_without_game_flags_uses_the_nets_game(tmp_path):
    # what `rebel train` writes: a file naming its game (here Kuhn; eval's default game is Liar's Dice)
    q, h, arrays = _kuhn_arrays()
    path = tmp_path / "weights.bin"
    path.write_bytes(weights_from_arrays(q, h, 8, 1, arrays, metadata=net_metadata("value", KUHN, SEARCH)))
    out = _eval_json("--net", str(path))
    assert out["game"] == {"name": "kuhn"} and out["iterations"] == 64 and out["depth"] == 2


def test_play_takes_the_nets_game_and_search_and_refuses_another_game():
    r = run_cli("play", "--net", "pretrained:leduc", "--hands", "1", "--seed", "1", "--iters", "16")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("rebel play: leduc(), bot = depth-10 search, T = 16, net pretrained:leduc")
    r = run_cli("play", "--net", "pretrained:leduc", "--hands", "1", "--seed", "1", "--iters", "16", "--depth", "3")
    assert "bot = depth-3 search" in r.stdout, r.stderr
    for args in (["--game", "leduc_nolimit"], ["--stack", "900", "--ante", "1"]):
        net = "leduc" if "--game" in args else "leduc_nolimit"
        r = run_cli("play", "--net", f"pretrained:{net}", *args, "--hands", "1")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and f"is a net of {net}(" in r.stderr, r.stderr
