"""Depth-limited search on hold'em turn endgames (issue 93): the turn's betting solved with the
river deal as its leaves, each leaf valued from river public belief states.

:class:`TurnSubgame` cuts a turn spot's betting tree at the river deal
(:func:`rebel.games.holdem_tree.depth_limited`; an all-in's run-out stays exact) and runs one of
the full-game solvers on it with alternating updates. Before each half-iteration it reads both
players' reaches at every leaf under the current strategies, asks a river value function for
the values of every (leaf, river card) PBS, and gives the solver each leaf's values averaged over
the river cards:

    v_p(h) = pot x sum over cards c of (1 / divisor) x (M_c / M) x v_{p,c}(h)

where v_{p,c} is the river PBS's value of hand h (pot units, given the opponent's normalised
beliefs with the hands holding c removed), M the opponent's reach mass at the leaf and M_c its
mass on the hands without c; the divisor is the number of river cards a pair of hands leaves
(44 on the full deck). The solver multiplies v_p by M, which gives the counterfactual values a
full tree would (csrc/solvers/holdem_cfr.h, set_leaf_values).

River value functions take a list of :class:`RiverQuery` and return (n, 2, 1,326) values in pot
units: :func:`exact_river_values` solves each river exactly
(:func:`rebel.search.holdem_river_values.river_values`), :func:`net_river_values` asks a
:class:`rebel.nets.holdem_river_net.RiverValueNet` in one batch.

:func:`evaluate_turn_strategy` measures a turn strategy in the whole turn endgame: the turn's
decisions are locked to it, the rivers are solved below it to a target, and the exploitability
is that of the whole strategy (the best responses deviate on the turn too).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from rebel import _core
from rebel.games.holdem_endgame import build_endgame, live_hands
from rebel.games.holdem_ranges import COMBOS, NUM_COMBOS, deck_cards
from rebel.games.holdem_spot import Spot
from rebel.games.holdem_tree import DECISION, build_action_tree, depth_limited
from rebel.search.holdem_river_values import river_spot, river_values
from rebel.search.holdem_solve import HOLDEM_SOLVERS

if TYPE_CHECKING:  # pragma: no cover  (torch only where a net is asked: the sanitizer jobs run without it)
    from rebel.nets.holdem_river_net import RiverValueNet

log = logging.getLogger(__name__)

__all__ = ["RiverQuery", "RiverValueFn", "TurnSubgame", "evaluate_turn_strategy", "exact_river_values",
           "net_river_values"]


@dataclass(frozen=True)
class RiverQuery:
    """One river PBS: five board cards, the pot and stack, beliefs (2, 1,326) normalised."""

    board: tuple[int, ...]
    pot: int
    stack: int
    beliefs: np.ndarray


RiverValueFn = Callable[[Sequence[RiverQuery]], np.ndarray]


def exact_river_values(template: Spot, target_pct: float = 0.5, solver: str = "dcfr") -> RiverValueFn:
    """River values by solving each river PBS exactly with ``template``'s river sizes (best-response
    values to ``target_pct`` % of the pot)."""
    def values(queries: Sequence[RiverQuery]) -> np.ndarray:
        out = np.zeros((len(queries), 2, NUM_COMBOS))
        for i, q in enumerate(queries):
            spot = river_spot(template, list(q.board), q.pot, q.stack)
            out[i] = river_values(spot, q.beliefs, solver=solver, target_pct=target_pct).values
        return out

    return values


def net_river_values(net: "RiverValueNet", batch: int = 1024) -> RiverValueFn:
    """River values from a river value net (pot units), in batches of ``batch`` rows."""
    import torch

    from rebel.nets.holdem_river_net import river_inputs

    def values(queries: Sequence[RiverQuery]) -> np.ndarray:
        board = np.array([q.board for q in queries], dtype=np.int64)
        pot = np.array([q.pot for q in queries], dtype=np.float64)
        stack = np.array([q.stack for q in queries], dtype=np.float64)
        beliefs = np.stack([q.beliefs for q in queries])
        out = []
        net.eval()
        with torch.no_grad():
            for i in range(0, len(queries), batch):
                s = slice(i, i + batch)
                x = torch.from_numpy(river_inputs(board[s], pot[s], stack[s], beliefs[s]))
                out.append(net(x).numpy().astype(np.float64))
        return np.concatenate(out)

    return values


class TurnSubgame:
    """The turn's betting of a turn spot with the river deal as leaves (see the module docstring).
    ``beliefs``: (2, 1,326) weights replacing the spot's ranges (a PBS at the turn's start)."""

    def __init__(self, spot: Spot, beliefs: Optional[np.ndarray] = None) -> None:
        if spot.street != 1:
            raise ValueError(f"a turn subgame needs a turn spot (4 board cards), got {len(spot.board)}")
        self.spot = spot
        self.tree = depth_limited(build_action_tree(spot), 2)
        self.game = build_endgame(spot, self.tree, beliefs=beliefs)
        self.leaves = list(self.game.leaves)
        half = spot.pot / 2
        self.leaf_pot, self.leaf_stack = [], []
        for leaf in self.leaves:
            put = self.game.node(leaf)["invested"][0]
            self.leaf_pot.append(int(round(2 * put)))
            self.leaf_stack.append(int(round(spot.stack - (put - half))))
        index = np.full((52, 52), -1, dtype=np.int64)
        index[COMBOS[:, 0], COMBOS[:, 1]] = np.arange(NUM_COMBOS)
        cards = [np.sort(self.game.hands(p), axis=1) for p in (0, 1)]
        self.combos = [index[c[:, 0], c[:, 1]] for c in cards]  # each game hand's place in COMBOS
        self.river_cards = [c for c in deck_cards(spot.ranks, spot.suits) if c not in spot.board]
        self.divisor = len(self.river_cards) - 4
        # Per river card: the hands (COMBOS indices) that hold it.
        self.with_card = {c: np.flatnonzero((COMBOS == c).any(axis=1)) for c in self.river_cards}
        self.live = {c: live_hands(river_spot_like(spot, c)) for c in self.river_cards}

    def queries(self, reaches: tuple[np.ndarray, np.ndarray]) -> tuple[list[RiverQuery], np.ndarray]:
        """The river PBSs of every (leaf, river card), leaf-major, from the players' reaches at the
        leaves (a player with no reach left there gets uniform beliefs: its values still count
        for its regrets), and the opponent masses M_c / M per player, (2, leaves, cards)."""
        queries = []
        ratio = np.zeros((2, len(self.leaves), len(self.river_cards)))
        for leaf in range(len(self.leaves)):
            full = np.zeros((2, NUM_COMBOS))
            for p in (0, 1):
                full[p, self.combos[p]] = reaches[p][leaf]
            for k, card in enumerate(self.river_cards):
                b = full.copy()
                b[:, self.with_card[card]] = 0.0
                for p in (0, 1):
                    total = full[p].sum()
                    ratio[1 - p, leaf, k] = b[p].sum() / total if total > 0 else 0.0
                    if not b[p].sum() > 0:
                        b[p] = 0.0
                        b[p, self.live[card]] = 1.0
                b /= b.sum(axis=1, keepdims=True)
                queries.append(RiverQuery(tuple(self.spot.board) + (card,), self.leaf_pot[leaf],
                                          self.leaf_stack[leaf], b))
        return queries, ratio

    def leaf_values(self, reaches: tuple[np.ndarray, np.ndarray], river: RiverValueFn) -> list[np.ndarray]:
        """Each player's values at the leaves ((leaves, hands) float32, chips per unit of the
        opponent's normalised beliefs) from the reaches there and a river value function."""
        queries, ratio = self.queries(reaches)
        values = river(queries).reshape(len(self.leaves), len(self.river_cards), 2, NUM_COMBOS)
        out = []
        for p in (0, 1):
            weights = ratio[p] / self.divisor  # (leaves, cards)
            per_leaf = np.einsum("lk,lkh->lh", weights, values[:, :, p, :])  # (leaves, 1,326)
            out.append((per_leaf[:, self.combos[p]] * np.asarray(self.leaf_pot)[:, None]).astype(np.float32))
        return out

    def solve(self, iterations: int, river: RiverValueFn, solver: str = "dcfr", threads: int = 1,
              progress: Optional[Callable[[int], None]] = None) -> _core.HoldemSolver:
        """``iterations`` iterations of ``solver`` on the subgame, the leaves' values asked from
        ``river`` before each half-iteration; returns the solver (its average strategy is the
        search's)."""
        if solver not in HOLDEM_SOLVERS:
            raise ValueError(f"unknown hold'em solver {solver!r} (choose from {', '.join(HOLDEM_SOLVERS)})")
        engine = _core.HoldemSolver(self.game, solver, threads, False)
        for t in range(iterations):
            for player in (0, 1):
                v0, v1 = self.leaf_values(engine.leaf_reaches(False), river)
                engine.set_leaf_values(0, v0)
                engine.set_leaf_values(1, v1)
                engine.iterate_player(player)
            if progress is not None:
                progress(t + 1)
        return engine


def river_spot_like(spot: Spot, card: int) -> Spot:
    """A river spot on the turn spot's board plus ``card`` (for its live hands only)."""
    return Spot(board=tuple(spot.board) + (card,), pot=spot.pot, stack=spot.stack, ranges=("full", "full"),
                ranks=spot.ranks, suits=spot.suits)


def turn_decisions(subgame: TurnSubgame, game: _core.HoldemEndgame) -> dict[int, int]:
    """The full game's node for each decision node of the subgame (matched by betting line)."""
    tree = build_action_tree(subgame.spot)
    by_line = {tuple(tree.line(i)): i for i in range(tree.num_nodes())
               if tree.kind[i] == DECISION and tree.street[i] == 1}
    full_node = {}
    for i in range(game.num_nodes):
        n = game.node(i)
        if n["kind"] == "decision" and len(n["board"]) == 4:
            full_node[n["action"]] = i
    out = {}
    for i in range(subgame.game.num_nodes):
        n = subgame.game.node(i)
        if n["kind"] == "decision":
            out[i] = full_node[by_line[tuple(subgame.tree.line(n["action"]))]]
    return out


@dataclass
class TurnEvaluation:
    """The whole strategy's exploitability (chips, % of the pot), the rivers' own exploitability
    below the locked turn, and the river solve's iterations and seconds."""

    exploitability: float
    exploitability_pct: float
    river_exploitability: float
    river_iterations: int
    seconds: float


def evaluate_turn_strategy(subgame: TurnSubgame, engine: _core.HoldemSolver, target_pct: float = 0.1,
                           max_iterations: int = 2000, threads: int = 1, check_every: int = 10) -> TurnEvaluation:
    """Locks the turn's decisions of the full turn endgame to ``engine``'s average strategy on the
    subgame, solves the rivers below it (DCFR) until their exploitability is at most
    ``target_pct`` % of the pot, and returns the exploitability of the whole strategy."""
    started = time.perf_counter()
    game = build_endgame(subgame.spot)
    full = _core.HoldemSolver(game, "dcfr", threads, False)
    for node, target in turn_decisions(subgame, game).items():
        full.lock(target, engine.average_strategy(node))
    goal = target_pct * subgame.spot.pot / 100
    river = float("inf")
    while full.iterations < max_iterations and river > goal:
        full.iterate(check_every)
        river = full.exploitability()
    whole = full.exploitability(through_locks=True)
    return TurnEvaluation(exploitability=whole, exploitability_pct=100 * whole / subgame.spot.pot,
                          river_exploitability=river, river_iterations=full.iterations,
                          seconds=time.perf_counter() - started)
