"""Random river PBSs solved exactly (rebel/train/holdem_river_data.py and
experiments/holdem_river_data.py): DeepStack's recursive beliefs, the sampler's support, shards
that are deterministic, resumable and checked when read."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from conftest import REPO_ROOT

from rebel import _core
from rebel.games.holdem_ranges import COMBOS, parse_cards
from rebel.games.holdem_spot import load_spot
from rebel.search.holdem_river_values import river_situations
from rebel.train.holdem_river_data import (
    RiverDataSettings,
    live_mask,
    random_beliefs,
    read_shards,
    sample_river_pbs,
    shard_path,
    write_shard,
)

TWO_TONE = REPO_ROOT / "configs" / "spots" / "turn_two_tone.yaml"
FAST = RiverDataSettings(target_pct=2.0, max_iterations=200)


def test_random_beliefs_split_the_mass_between_the_weaker_and_the_stronger_half() -> None:
    board = parse_cards("As Ks 7h 3h 5c")
    beliefs = random_beliefs(board, np.random.default_rng(3))
    live = live_mask(np.array([board]))[0]
    assert live.sum() == 1081 and (beliefs[~live] == 0).all() and beliefs[live].min() > 0
    assert beliefs.sum() == pytest.approx(1.0, abs=1e-12)
    # The first draw of the generator is the share of the 540 weakest hands.
    hands = np.flatnonzero(live)
    seven = np.concatenate([COMBOS[hands], np.tile(board, (len(hands), 1))], axis=1).astype(np.int32)
    weakest = hands[np.argsort(_core.hand_ranks(seven), kind="stable")[:540]]
    assert beliefs[weakest].sum() == pytest.approx(np.random.default_rng(3).random(), abs=1e-12)
    np.testing.assert_array_equal(random_beliefs(board, np.random.default_rng(3)), beliefs)
    with pytest.raises(ValueError, match="river board of 5 cards"):
        random_beliefs(board[:4], np.random.default_rng(3))


def test_the_sampler_draws_every_river_card_and_every_situation() -> None:
    template = load_spot(TWO_TONE)
    rng = np.random.default_rng(0)
    seen_cards, seen_pots = set(), set()
    for _ in range(400):
        spot, beliefs = sample_river_pbs(template, rng)
        assert spot.board[:4] == template.board and spot.street == 2
        seen_cards.add(spot.board[4])
        seen_pots.add((spot.pot, spot.stack))
        assert beliefs.shape == (2, 1326)
        np.testing.assert_allclose(beliefs.sum(axis=1), 1.0)
    assert len(seen_cards) == 48 and seen_pots == set(river_situations(template))
    with pytest.raises(ValueError, match="needs a turn spot"):
        sample_river_pbs(spot, rng)


def test_shards_are_deterministic_resumable_and_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    template = load_spot(TWO_TONE)
    a = write_shard(template, tmp_path / "a", 0, 3, seed=5, settings=FAST)
    b = write_shard(template, tmp_path / "b", 0, 3, seed=5, settings=FAST)
    (da,), (db,) = read_shards([a]), read_shards([b])
    for key in da:
        np.testing.assert_array_equal(da[key], db[key])
    assert da["values"].shape == (3, 2, 1326) and (da["exploitability_pct"] <= 2.0).all()
    assert (da["values"][~np.repeat(live_mask(da["board"])[:, None], 2, axis=1)] == 0).all()
    other = next(read_shards([write_shard(template, tmp_path / "a", 1, 3, seed=5, settings=FAST)]))
    assert not np.array_equal(other["beliefs"], da["beliefs"])  # shard 1 draws from its own seed
    stamp = a.stat().st_mtime_ns
    write_shard(template, tmp_path / "a", 0, 3, seed=6, settings=FAST)  # present: left as it is
    assert a.stat().st_mtime_ns == stamp
    truncated = tmp_path / "a" / "shard_00009.npz"
    truncated.write_bytes(a.read_bytes()[:1000])
    with pytest.raises(ValueError, match="shard_00009.npz: not a readable river data shard"):
        list(read_shards([truncated]))
    bad = tmp_path / "a" / "shard_00010.npz"
    np.savez(bad, **{**da, "values": da["values"].astype(np.float64)})
    with pytest.raises(ValueError, match="shard_00010.npz: array 'values' has dtype float64"):
        list(read_shards([bad]))


def test_the_script_writes_its_shards_and_a_summary(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(REPO_ROOT / "experiments"))
    import holdem_river_data

    out = tmp_path / "run"
    args = ["--spot", str(TWO_TONE), "--examples", "4", "--shard-size", "2", "--out", str(out), "--target", "2"]
    assert holdem_river_data.main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["examples"] == summary["solved_this_run"] == 4 and shard_path(out, 1).exists()
    assert summary["exploitability_pct_max"] <= 2.0 and "family" in summary["cpu"]
    assert holdem_river_data.main(args) == 0  # resumed: nothing left to solve
    assert json.loads((out / "summary.json").read_text())["solved_this_run"] == 0
    with pytest.raises(SystemExit):
        holdem_river_data.main(["--spot", str(REPO_ROOT / "configs" / "spots" / "river_example.yaml"),
                                "--examples", "2", "--out", str(out)])
    sys.modules.pop("holdem_river_data", None)
