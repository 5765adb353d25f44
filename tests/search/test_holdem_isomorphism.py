"""Suit isomorphism of the dealt cards (`build_endgame(..., isomorphism=True)`, `--isomorphism`):
the deals merged where a board leaves suits alike, counted by hand; the same solution as the
whole tree (exploitability, values and per-hand results to float32 rounding) on turn and flop
spots, one and two threads; nothing merged when a range tells the suits apart; locking and
lines naming a merged card refused with a one-line error."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_cli

import rebel
from rebel import _core
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_lines import find_node
from rebel.games.holdem_ranges import card_name, parse_cards
from rebel.games.holdem_spot import load_spot
from rebel.games.holdem_tree import build_action_tree
from rebel.search.holdem_solve import solve_spot

# The package's own copy: the sanitizer jobs run the tests against a build folder with no configs/ link.
SPOTS = Path(rebel.__file__).resolve().parent / "configs" / "spots"


def short_spot(board: str, oop: str = "full", ip: str = "full", flop: bool = False) -> Any:
    """A spot on the 32-card deck (ranks 2-9), small enough to solve both ways in a few seconds
    (flop spots: checks on the flop and one size a street after it)."""
    bets: dict[str, Any] = {"turn": {"bet": "50%"}, "river": {"bet": "a" if flop else "75%, a"}}
    return load_spot({"board": board, "pot": 100, "stack": 300, "ranges": {"oop": oop, "ip": ip}, "bets": bets,
                      "ranks": 8, "suits": 4})


def chance_children(game: _core.HoldemEndgame, node: int) -> list[dict[str, Any]]:
    return [game.node(c) for c in game.node(node)["children"]]


def first_chance(game: _core.HoldemEndgame) -> int:
    return next(i for i in range(game.num_nodes) if game.node(i)["kind"] == "chance")


def test_a_monotone_flop_deals_one_suit_for_the_three_it_cannot_tell_apart() -> None:
    """9h8h7h on the 32-card deck: clubs, diamonds and spades are off the board, so a turn card of
    any of them is the club of its rank (8 subtrees for 24 cards) beside the 5 hearts left; under
    the turn 2c, diamonds and spades still hold the same ranks, so a river spade is its diamond."""
    spot = short_spot("9h8h7h", flop=True)
    whole, merged = build_endgame(spot), build_endgame(spot, isomorphism=True)
    assert not whole.isomorphism and merged.isomorphism
    assert whole.size()["isomorphic_deals"] == 0
    turn = chance_children(merged, first_chance(merged))
    assert len(chance_children(whole, first_chance(whole))) == 29
    assert len(turn) == 13
    by_card = {card_name(n["board"][-1]): sorted(card_name(c) for c in n["isomorphic"]) for n in turn}
    assert by_card["2c"] == ["2d", "2s"] and by_card["6c"] == ["6d", "6s"]
    assert by_card["6h"] == [] and "2d" not in by_card
    two_c = next(n for n in turn if card_name(n["board"][-1]) == "2c")
    below = next(i for i in range(merged.num_nodes) if merged.node(i)["kind"] == "chance"
                 and merged.node(i)["board"][3:] == [parse_cards("2c")[0]])
    river = {card_name(n["board"][-1]): sorted(card_name(c) for c in n["isomorphic"])
             for n in chance_children(merged, below)}
    assert len(river) == 28 - 8  # 28 cards left, each of the 8 spades dealt as its diamond
    assert river["3d"] == ["3s"] and "3s" not in river and river["3c"] == [] and river["3h"] == []
    assert two_c["isomorphic"] == parse_cards("2d2s")


@pytest.mark.parametrize("board, flop", [("9h8h5s3s", False), ("9h8h7h", True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_merged_tree_solves_to_the_whole_trees_numbers(board: str, flop: bool, threads: int) -> None:
    spot = short_spot(board, flop=flop)
    results = []
    for isomorphism in (False, True):
        game = build_endgame(spot, isomorphism=isomorphism)
        engine, result = solve_spot(spot, "dcfr", 20, threads=threads, check_every=10, game=game)
        results.append((game, engine, result))
    (whole, whole_engine, a), (merged, merged_engine, b) = results
    assert merged.size()["decision_nodes"] < whole.size()["decision_nodes"]
    assert merged.size()["solver_bytes"] < whole.size()["solver_bytes"]
    for (_, x), (_, y) in zip(a.curve, b.curve):
        assert y == pytest.approx(x, rel=1e-4)  # float32 sums in another order
    assert b.values == pytest.approx(a.values, rel=1e-5)
    assert b.br_values == pytest.approx(a.br_values, rel=1e-4)
    # per-hand results at the root and at a node below a deal both trees have
    line = "check, check, 2c" if not flop else "check, check, 2c, check, check, 3c"
    for node_line in ("", line):
        r1 = whole_engine.node_report(find_node(whole, node_line))
        r2 = merged_engine.node_report(find_node(merged, node_line))
        for who in ("oop", "ip"):
            for key in ("reach", "ev", "equity"):
                np.testing.assert_allclose(r2[who][key], r1[who][key], rtol=1e-4, atol=1e-4)


def test_a_range_that_tells_the_suits_apart_merges_nothing() -> None:
    """9c8c without 9d8d: clubs and diamonds are no longer alike, spades and hearts never were."""
    spot = short_spot("9h8h5s3s", oop="88+,9c8c")
    merged = build_endgame(spot, isomorphism=True)
    assert merged.size()["isomorphic_deals"] == 0
    assert merged.size()["decision_nodes"] == build_endgame(spot).size()["decision_nodes"]
    spot = short_spot("9h8h5s3s", oop="88+,98s:0.5")  # suited combos alike: merged again
    assert build_endgame(spot, isomorphism=True).size()["isomorphic_deals"] > 0


def test_the_shipped_two_tone_turn_merges_each_diamond_river_into_its_club() -> None:
    spot = load_spot(SPOTS / "turn_two_tone.yaml")
    whole, merged = build_endgame(spot), build_endgame(spot, isomorphism=True)
    chance = whole.size()["chance_nodes"]
    assert merged.size()["chance_nodes"] == chance == 19
    assert merged.size()["isomorphic_deals"] == 13 * chance  # 13 diamonds under each river deal
    assert merged.size()["river_boards"] == 35 and whole.size()["river_boards"] == 48
    counts = build_action_tree(spot).counts()
    turn, river = counts["turn"]["decision"], counts["river"]["decision"]
    assert whole.size()["decision_nodes"] == turn + 48 * river
    assert merged.size()["decision_nodes"] == turn + 35 * river


def test_locking_and_lines_naming_a_merged_card_are_refused() -> None:
    spot = short_spot("9h8h5s3s")
    merged = build_endgame(spot, isomorphism=True)
    engine = _core.HoldemSolver(merged, "dcfr", 1)
    root = merged.node(0)
    with pytest.raises(ValueError, match="without suit isomorphism"):
        engine.lock(0, np.full((len(root["children"]), merged.num_hands(0)), 1.0 / len(root["children"]), np.float32))
    with pytest.raises(ValueError, match="shares the subtree of 2c"):
        find_node(merged, "check, check, 2d")
    assert merged.node(find_node(merged, "check, check, 2c"))["board"][-1] == parse_cards("2c")[0]


def test_cli_isomorphism_solves_the_same_and_refuses_locks(tmp_path) -> None:
    spot = SPOTS / "turn_two_tone.yaml"
    reports = []
    for extra in ([], ["--isomorphism"]):
        proc = run_cli("solve", "--spot", str(spot), "--iters", "10", "--check-every", "10", "--threads", "2",
                       "--json", *extra, timeout=300)
        assert proc.returncode == 0, proc.stderr
        reports.append(json.loads(proc.stdout))
    assert reports[1]["size"]["isomorphic_deals"] == 247 and reports[0]["size"]["isomorphic_deals"] == 0
    assert reports[1]["exploitability"] == pytest.approx(reports[0]["exploitability"], rel=1e-4)
    proc = run_cli("solve", "--spot", str(spot), "--isomorphism", "--iters", "10", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "247 deals merged by suit isomorphism" in proc.stdout and "suit isomorphism" in proc.stdout
    proc = run_cli("solve", "--spot", str(spot), "--isomorphism", "--lock", "check=check:1")
    assert proc.returncode == 2 and "needs the tree without --isomorphism" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
