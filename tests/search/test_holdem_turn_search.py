"""Depth-limited search on hold'em turn endgames (rebel/search/holdem_turn_search.py, the leaves
of csrc/solvers/holdem_cfr.h): exact against the full game where the river is a check-down,
the evaluation's locks, the cut tree and the leaf API's errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rebel
from rebel import _core
from rebel.games.holdem_bets import BetSizes
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import Spot, load_spot
from rebel.games.holdem_tree import LEAF, build_action_tree, depth_limited
from rebel.search.holdem_turn_search import TurnSubgame, evaluate_turn_strategy, exact_river_values, turn_decisions

# The package's own copy: the sanitizer jobs run from a build folder without the configs/ link.
SPOTS = Path(rebel.__file__).resolve().parent / "configs" / "spots"
NO_BETS = (BetSizes(), BetSizes())
TURN_BETS = (BetSizes.from_text("50%, a", "a", "turn"), BetSizes.from_text("50%, a", "a", "turn"))


def short_turn_spot(river_bets: tuple[BetSizes, BetSizes] = NO_BETS) -> Spot:
    # Six ranks (2-7) of four suits: 20 cards off the board, 190 hands a player. The turn closes
    # with chips behind after check-check, bet 5-call and check-bet 5-call: three leaves.
    return Spot(board=tuple(_core.parse_cards("7s 6h 3d 2c")), pot=10, stack=30, ranges=("full", "full"),
                bets=(NO_BETS, TURN_BETS, river_bets), ranks=6, suits=4)


def test_with_a_check_down_river_the_search_is_the_full_game_solve() -> None:
    # Where the river has no bets, a leaf's exact value is linear in the opponent's reach, so the
    # depth-limited CFR runs the same iterations as CFR on the whole tree: same turn strategy.
    spot = short_turn_spot()
    subgame = TurnSubgame(spot)
    assert len(subgame.leaves) == 3 and len(subgame.river_cards) == 20 and subgame.divisor == 16
    search = subgame.solve(12, exact_river_values(spot))
    game = build_endgame(spot)
    full = _core.HoldemSolver(game, "dcfr", 1, False)
    full.iterate(12)
    pairs = turn_decisions(subgame, game)
    assert len(pairs) == subgame.game.size()["decision_nodes"] == 8
    for node, target in pairs.items():
        np.testing.assert_allclose(search.average_strategy(node), full.average_strategy(target), atol=2e-5)
    # Locking the full game's own turn strategy and solving the rivers (nothing to solve on a
    # check-down) gives back its exploitability.
    evaluation = evaluate_turn_strategy(subgame, search, target_pct=0.01)
    assert evaluation.exploitability == pytest.approx(full.exploitability(), rel=1e-4)
    assert evaluation.river_exploitability == pytest.approx(0.0, abs=1e-9)


def test_the_evaluation_measures_the_turn_strategy_with_the_rivers_solved_below_it() -> None:
    spot = short_turn_spot((BetSizes.from_text("a", "", "river"), BetSizes.from_text("a", "", "river")))
    subgame = TurnSubgame(spot)
    weak = subgame.solve(2, exact_river_values(spot, target_pct=0.5))
    strong = subgame.solve(10, exact_river_values(spot, target_pct=0.5))
    weak_eval = evaluate_turn_strategy(subgame, weak, target_pct=0.05)
    strong_eval = evaluate_turn_strategy(subgame, strong, target_pct=0.05)
    assert strong_eval.river_exploitability <= 0.05 * spot.pot / 100
    assert strong_eval.exploitability < weak_eval.exploitability / 3
    # The whole game solved by DCFR bounds what a turn strategy with exact rivers can reach.
    game = build_endgame(spot)
    full = _core.HoldemSolver(game, "dcfr", 1, False)
    full.iterate(400)
    assert full.exploitability() < strong_eval.exploitability


def test_the_best_response_through_locks_sees_a_locked_mistake() -> None:
    spot = load_spot(SPOTS / "river_example.yaml")
    game = build_endgame(spot)
    solver = _core.HoldemSolver(game, "dcfr", 1, False)
    actions = len(game.node(0)["children"])
    uniform = np.full((actions, game.num_hands(0)), 1.0 / actions, dtype=np.float32)
    solver.lock(0, uniform)
    solver.iterate(100)
    rest, whole = solver.exploitability(), solver.exploitability(through_locks=True)
    assert rest < 0.01 * spot.pot and whole > 10 * rest


def test_the_cut_tree_ends_at_the_river_deal_where_betting_goes_on() -> None:
    spot = load_spot(SPOTS / "turn_two_tone.yaml")
    tree = build_action_tree(spot)
    cut = depth_limited(tree)
    # 13 lines close the turn with chips behind; the all-ins' run-outs stay.
    assert int((cut.kind == LEAF).sum()) == 13 and cut.num_nodes() < tree.num_nodes()
    assert (cut.street[cut.kind == LEAF] == 1).all()
    assert cut.counts()["turn"]["leaf"] == 13
    with pytest.raises(ValueError, match="no deal of the river"):
        depth_limited(build_action_tree(load_spot(SPOTS / "river_example.yaml")))


def test_leaf_values_are_asked_for_before_iterating_and_checked() -> None:
    subgame = TurnSubgame(short_turn_spot())
    solver = _core.HoldemSolver(subgame.game, "dcfr", 1, False)
    with pytest.raises(RuntimeError, match="3 depth-limit leaves: set player 0's leaf values"):
        solver.iterate(1)
    hands = subgame.game.num_hands(0)
    with pytest.raises(ValueError, match="shape"):
        solver.set_leaf_values(0, np.zeros((2, hands), np.float32))
    with pytest.raises(ValueError, match="value 3 is not finite"):
        solver.set_leaf_values(0, np.where(np.arange(3 * hands).reshape(3, hands) == 3, np.nan, 0).astype(np.float32))
    solver.set_leaf_values(0, np.zeros((3, hands), np.float32))
    solver.set_leaf_values(1, np.zeros((3, subgame.game.num_hands(1)), np.float32))
    with pytest.raises(RuntimeError, match="player 0's half comes next"):
        solver.iterate_player(1)
    solver.iterate_player(0)
    with pytest.raises(RuntimeError, match="not finished"):
        solver.iterate(1)
    solver.iterate_player(1)
    assert solver.iterations == 1
    reach0, reach1 = solver.leaf_reaches(average=True)
    assert reach0.shape == (3, hands) and (reach0 >= 0).all() and reach1.shape[0] == 3
    plain = _core.HoldemSolver(build_endgame(short_turn_spot()), "dcfr", 1, False)
    with pytest.raises(ValueError, match="no depth-limit leaves"):
        plain.set_leaf_values(0, np.zeros((0, hands), np.float32))
