"""Exact values of river public belief states of hold'em endgames: the targets of a value net
over 1,326-hand beliefs (issue 93) and the exact leaves of a turn search.

A river PBS is a five-card board, the pot and the effective stack when the river's betting
starts, the river's bet sizes, and both players' beliefs over the 1,326 hands. Its values are
what :func:`river_values` solves for: the river's betting is solved with a full-game solver
(:mod:`rebel.search.holdem_solve`) to a target exploitability, and each hand's value is its
best-response value against the opponent's average strategy, given the opponent's *normalised*
beliefs (the convention of the core's value nets, csrc/core/value_net.h: a hand's counterfactual
value, chips times the opponent's belief on the hands compatible with it), divided by the pot.
Hands of belief 0 get the value they could win there (their best response), so a search can read
the regret of an action a hand never takes; hands the board blocks get 0.

:func:`river_situations` lists the (pot, stack) pairs at which a turn spot's betting tree reaches
the river with chips behind, the river PBSs a turn search asks about.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from rebel import _core
from rebel.games.holdem_bets import BetSizes
from rebel.games.holdem_endgame import build_endgame, check_beliefs, live_hands
from rebel.games.holdem_ranges import NUM_COMBOS, parse_cards
from rebel.games.holdem_spot import Spot
from rebel.games.holdem_tree import build_action_tree
from rebel.search.holdem_solve import HOLDEM_SOLVERS

__all__ = ["RiverValues", "river_situations", "river_spot", "river_values"]


@dataclass(frozen=True)
class RiverValues:
    """A solved river PBS: ``values`` (2, 1,326) float64 in units of the pot (0 on blocked
    hands), the solve's iterations and its exploitability in % of the pot."""

    values: np.ndarray
    iterations: int
    exploitability_pct: float


def river_spot(template: Spot, board: Sequence[int] | str, pot: int, stack: int) -> Spot:
    """A river spot with the template's river bet sizes, thresholds and cap on ``board`` (five
    cards, text or card numbers) with ``pot`` and ``stack``; both ranges full (beliefs replace
    them in :func:`river_values`)."""
    cards = parse_cards(board)
    if len(cards) != 5:
        raise ValueError(f"a river board has 5 cards, got {len(cards)}")
    if template.street < 2 and template.donk[1] is not None:
        # Which sizes OOP leads with would depend on the line that reached the river.
        raise ValueError("river_spot: a template with river donk sizes is not supported (the river's first bet "
                         "sizes would depend on the turn's line)")
    river_bets = template.bets[2]
    empty = BetSizes()
    return Spot(board=tuple(cards), pot=pot, stack=stack, ranges=("full", "full"),
                bets=((empty, empty), (empty, empty), river_bets), add_all_in_threshold=template.add_all_in_threshold,
                force_all_in_threshold=template.force_all_in_threshold, merging_threshold=template.merging_threshold,
                raise_cap=template.raise_cap, ranks=template.ranks, suits=template.suits)


def river_situations(spot: Spot) -> list[tuple[int, int]]:
    """The distinct (pot, stack) pairs, sorted, at which the betting of a flop or turn spot reaches
    the river deal with chips behind (an all-in before the river is no river PBS: its run-out
    is a showdown)."""
    if spot.street == 2:
        raise ValueError("the spot starts on the river: it has no river deal")
    tree = build_action_tree(spot)
    half = spot.pot / 2
    found = set()
    for node in range(len(tree.kind)):
        if tree.kind[node] == 1 and tree.street[node] == 1:  # the deal of the river
            put = float(tree.invested[node][0])
            stack = spot.stack - (put - half)
            if stack > 0:
                found.add((int(round(2 * put)), int(round(stack))))
    return sorted(found)


def river_values(spot: Spot, beliefs: np.ndarray, solver: str = "dcfr", target_pct: float = 0.5,
                 max_iterations: int = 2000, check_every: int = 10, threads: int = 1,
                 values: Literal["best_response", "average"] = "best_response") -> RiverValues:
    """Solves the river PBS of ``spot`` (a river spot: :func:`river_spot`) with ``beliefs`` ((2,
    1,326), each player's weights in ``COMBOS`` order, normalised here; zero on the hands the
    board blocks) until the exploitability is at most ``target_pct`` % of the pot (checked every
    ``check_every`` iterations, at most ``max_iterations``), and returns each hand's value in pot
    units given the opponent's normalised beliefs: its best response to the opponent's average
    strategy (``values='average'``: both on their averages)."""
    if spot.street != 2:
        raise ValueError(f"river_values needs a river spot (5 board cards), got {len(spot.board)}")
    if solver not in HOLDEM_SOLVERS:
        raise ValueError(f"unknown hold'em solver {solver!r} (choose from {', '.join(HOLDEM_SOLVERS)})")
    if values not in ("best_response", "average"):
        raise ValueError(f"values must be 'best_response' or 'average', got {values!r}")
    if not target_pct > 0 or max_iterations < 1 or check_every < 1:
        raise ValueError("target_pct must be positive, max_iterations and check_every at least 1")
    b = np.asarray(beliefs, dtype=np.float64)
    check_beliefs(spot, b)
    normalised = b / b.sum(axis=1, keepdims=True)
    game = build_endgame(spot, beliefs=normalised)
    engine = _core.HoldemSolver(game, solver, threads, False)
    target = target_pct * spot.pot / 100.0
    exploitability = float("inf")
    while engine.iterations < max_iterations and exploitability > target:
        engine.iterate(min(check_every, max_iterations - engine.iterations))
        exploitability = engine.exploitability()
    per_hand = engine.best_response_hand_values() if values == "best_response" else engine.average_hand_values()
    live = live_hands(spot)
    out = np.zeros((2, NUM_COMBOS), dtype=np.float64)
    for player in (0, 1):
        out[player, live] = per_hand[player] / spot.pot
    return RiverValues(values=out, iterations=engine.iterations,
                       exploitability_pct=100.0 * exploitability / spot.pot)
