"""Solving shipped hold'em endgame spots (rebel/search/holdem_solve.py, `rebel solve --spot`):
the spot's expanded tree against its betting tree and ranges, a target met at a check, the curve,
the CLI's size-and-memory lines and JSON, and one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import REPO_ROOT, run_cli

from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import load_spot
from rebel.games.holdem_tree import build_action_tree
from rebel.search.holdem_solve import parse_target, solve_spot

SPOTS = REPO_ROOT / "configs" / "spots"


def test_the_example_spot_expands_its_betting_tree_over_48_river_cards() -> None:
    spot = load_spot(SPOTS / "turn_example.yaml")
    tree = build_action_tree(spot)
    game = build_endgame(spot, tree)
    assert (game.num_hands(0), game.num_hands(1)) == (167, 250)
    counts = tree.counts()
    size = game.size()
    # The turn's nodes once, each river node under each of the 48 river cards.
    turn, river = counts["turn"], counts["river"]
    assert size["decision_nodes"] == turn["decision"] + 48 * river["decision"] == 18 + 48 * 57
    assert size["chance_nodes"] == turn["chance"] == 17
    assert size["terminal_nodes"] == turn["fold"] + 48 * (river["fold"] + river["showdown"]) == 16 + 48 * 95
    assert size["river_boards"] == 48
    root = game.node(0)
    assert root["board"] == list(spot.board)
    assert root["invested"] == [100.0, 100.0]
    assert [game.node(c)["label"] for c in root["children"]] == ["check", "bet 120", "bet 216", "all-in"]


def test_solve_spot_stops_at_its_target_with_the_curve() -> None:
    spot = load_spot(SPOTS / "river_example.yaml")
    solver, result = solve_spot(spot, "dcfr", 1000, target=parse_target("0.5%", spot.pot), threads=2)
    assert result.exploitability <= 1.0  # 0.5% of 200
    assert result.iterations % 10 == 0 and result.iterations < 200
    assert [it for it, _ in result.curve] == list(range(10, result.iterations + 1, 10))
    assert all(chips > 1.0 for _, chips in result.curve[:-1])
    assert result.exploitability == result.curve[-1][1] == solver.exploitability()
    assert result.exploitability_pct == pytest.approx(100 * result.exploitability / 200)
    assert result.values[0] + result.values[1] == pytest.approx(0.0, abs=1e-9)
    assert sum(result.br_values) / 2 == pytest.approx(result.exploitability, rel=1e-12)


def test_parse_target() -> None:
    assert parse_target("0.5%", 200) == pytest.approx(1.0)
    assert parse_target("3", 200) == 3.0
    with pytest.raises(ValueError, match="not a number of chips or a percentage"):
        parse_target("half", 200)
    with pytest.raises(ValueError, match="must be positive"):
        parse_target("-1%", 200)


def test_cli_prints_the_size_and_memory_then_the_solve() -> None:
    proc = run_cli("solve", "--spot", str(SPOTS / "river_example.yaml"), "--iters", "40", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    keys = [line.split()[0] for line in lines]
    assert keys == ["spot", "hands", "tree", "memory", "solver", "exploitability", "br_values", "values", "seconds"]
    assert "OOP 1081, IP 1081" in lines[1]
    assert "10 decision nodes, 0 chance nodes, 17 terminal nodes, 10810 information sets" in lines[2]
    assert "dcfr, 40 iterations, 1 thread" in lines[4]


def test_cli_json_is_one_object() -> None:
    proc = run_cli("solve", "--spot", str(SPOTS / "river_example.yaml"), "--solver", "dcfr-pfs", "--iters", "20",
                   "--check-every", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["solver"], report["iterations"]) == ("dcfr-pfs", 20)
    assert [p[0] for p in report["curve"]] == [5, 10, 15, 20]
    assert report["size"]["infosets"] == 10810
    assert report["compressed"] is False


def test_cli_compress_prints_the_16_bit_memory_and_solves() -> None:
    proc = run_cli("solve", "--spot", str(SPOTS / "river_example.yaml"), "--compress", "--iters", "40",
                   "--check-every", "20", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "16-bit regrets and strategies" in proc.stdout
    proc = run_cli("solve", "--spot", str(SPOTS / "river_example.yaml"), "--compress", "--iters", "40",
                   "--check-every", "20", "--json")
    report = json.loads(proc.stdout)
    assert report["compressed"] is True and report["iterations"] == 40
    assert report["exploitability_pct"] < 1.5  # the float32 solve reads about 1% of the pot at 40 iterations


@pytest.mark.parametrize("args,message", [
    (["--spot", "no_such_spot.yaml"], "not found"),
    (["--spot", str(SPOTS / "river_example.yaml"), "--target", "lots"], "not a number of chips"),
    (["--spot", str(SPOTS / "river_example.yaml"), "--game", "kuhn"], "--game does not apply"),
    (["--spot", str(SPOTS / "river_example.yaml"), "--solver", "fp"], "--solver fp does not apply to --spot"),
    (["--spot", str(SPOTS / "river_example.yaml"), "--threads", "0"], "--threads must be >= 1"),
    (["--game", "kuhn", "--target", "1"], "--target applies to --spot only"),
    (["--game", "kuhn", "--compress"], "--compress applies to --spot only"),
    (["--game", "kuhn", "--solver", "dcfr-pfs"], "--solver dcfr-pfs applies to --spot only"),
])
def test_cli_errors_are_one_line(args: list[str], message: str) -> None:
    proc = run_cli("solve", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_dcfr_keeps_converging_when_negative_regrets_reach_subnormals() -> None:
    """DCFR halves negative regrets every iteration; past iteration ~150 float32 regrets reach
    subnormal numbers, whose reciprocal is infinite. Regret matching divided by the sum of
    positive regrets through its reciprocal once, and this spot (found by the OpenSpiel
    cross-check) then jumped from 0.0008 to 0.61 chips of exploitability by iteration 300."""
    spot = load_spot({"board": "3c3d4c6d", "pot": 8, "stack": 20, "ranks": 5, "suits": 2, "raise_cap": 1,
                      "ranges": {"oop": "full", "ip": "full"},
                      "bets": {"turn": {"bet": "100%, a", "raise": "100%, a"},
                               "river": {"bet": "100%, a", "raise": "100%, a"}}})
    engine, result = solve_spot(spot, "dcfr", 300, check_every=50)
    chips = [c for _, c in result.curve]
    assert max(chips[3:]) < 0.002  # 0.0008 at 170, 0.0005 at 300 after the fix
    assert result.exploitability < 0.001


def test_the_solver_names_its_game_and_refuses_another() -> None:
    """engine.game is the game it was built with; solve_spot goes on with an engine alone, and a
    solver paired with another game (whose node ids name other nodes) is a ValueError, not the
    other game's strategies read silently."""
    from rebel import _core
    from rebel.search.holdem_lock import lock_line
    from rebel.search.holdem_results import hand_results

    spot = load_spot(SPOTS / "river_example.yaml")
    game, other = build_endgame(spot), build_endgame(spot)
    engine, first = solve_spot(spot, "dcfr", 20, game=game)
    assert engine.game is game
    same, more = solve_spot(spot, "dcfr", 20, engine=engine)
    assert same is engine and more.iterations == 40 and more.exploitability < first.exploitability
    for call in (lambda: solve_spot(spot, "dcfr", 10, game=other, engine=engine),
                 lambda: hand_results(engine, other, "check"),
                 lambda: lock_line(engine, other, "check", {"check": 1.0})):
        with pytest.raises(ValueError, match="another HoldemEndgame"):
            call()
    # a locked node's current strategy is its lock
    locked = _core.HoldemSolver(game, "dcfr", 1)
    node = game.node(0)["children"][0]  # IP after OOP's check
    actions, hands = len(game.node(node)["children"]), game.num_hands(1)
    lock = np.zeros((actions, hands), np.float32)
    lock[0] = 1.0
    locked.lock(node, lock)
    locked.iterate(3)
    np.testing.assert_array_equal(np.asarray(locked.current_strategy(node)).reshape(actions, hands), lock)
