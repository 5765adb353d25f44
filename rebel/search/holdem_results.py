"""Per-hand results at a node of a solved hold'em endgame, as numpy arrays and as JSON.

:func:`hand_results` reads the solver (:func:`rebel.search.holdem_solve.solve_spot`) at one node
of the expanded game, given by its id or its line (:mod:`rebel.games.holdem_lines`): for each
player (``oop``, ``ip``) and each of its hands, the hand's name (``AsKd``), its weight in the
range, its reach at the node (the weight times the player's own strategy on the path; 0 for a
hand holding a dealt card), its EV (chips expected from the start of the spot, given the hand
and the node reached; NaN where unreached) and its equity (showdown share over every run-out;
NaN where unreached); for the player to act, its average strategy per action. Summaries:

* ``frequencies``: the actor's action frequencies over its combos at the node, each hand
  weighted by its reach (what PioSOLVER and GTO Wizard show);
* ``range_ev``, ``range_equity``: each player's EV and equity at the node, each hand weighted by
  its reach times the opponent's reach over the hands it does not block (the hand's
  probability given the node), so the root's ``range_ev`` is the game value.

:func:`results_json` and :func:`export_json` turn them into JSON (NaN written as null);
:func:`grid_strategy` folds the actor's strategy onto the 13 x 13 hand grid.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from rebel import _core
from rebel.games.holdem_lines import NodeRef, action_labels, format_line, node_line, resolve_node
from rebel.games.holdem_ranges import COMBOS, card_name, grid_cell, parse_cards
from rebel.games.holdem_spot import STREETS, Spot
from rebel.search.holdem_solve import SpotSolveResult, check_same_game
from rebel.util.atomic_io import atomic_write_bytes

__all__ = ["PLAYER_KEYS", "GridStrategy", "export_json", "grid_strategy", "hand_names", "hand_results",
           "opponent_mass", "results_json", "spot_summary", "write_json"]

#: The players' keys in results: 0 is OOP, 1 is IP.
PLAYER_KEYS = ("oop", "ip")
#: Digits kept of a float32 strategy in JSON (its precision).
STRATEGY_DIGITS = 7


def hand_names(game: _core.HoldemEndgame, player: int) -> list[str]:
    """The names of ``player``'s hands in the order of its arrays, the higher card first (``AsKd``)."""
    return [card_name(int(b)) + card_name(int(a)) for a, b in game.hands(player)]


def opponent_mass(game: _core.HoldemEndgame, player: int, opp_reach: np.ndarray) -> np.ndarray:
    """For each hand of ``player``, the opponent's reach summed over its hands that share no
    card with it (card removal), from per-card sums in linear time."""
    mine, theirs = game.hands(player), game.hands(1 - player)
    reach = np.asarray(opp_reach, dtype=np.float64)
    per_card = np.zeros(52)
    np.add.at(per_card, theirs[:, 0], reach)
    np.add.at(per_card, theirs[:, 1], reach)
    same = np.zeros((52, 52))
    same[theirs[:, 0], theirs[:, 1]] = reach  # the identical hand was subtracted twice
    return reach.sum() - per_card[mine[:, 0]] - per_card[mine[:, 1]] + same[mine[:, 0], mine[:, 1]]


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    keep = weights > 0
    total = float(weights[keep].sum())
    return float(np.dot(weights[keep], values[keep]) / total) if total > 0 else float("nan")


def hand_results(engine: _core.HoldemSolver, game: _core.HoldemEndgame, node: NodeRef) -> dict[str, Any]:
    """The results at ``node`` (an id or a line) as numpy arrays (module docstring).

    Keys: ``node`` (id), ``line`` (its steps), ``kind``, ``player`` (``'oop'``, ``'ip'`` or None
    off a decision), ``actions`` (the actor's labels; ``[]`` off a decision), ``board`` (card
    names), ``pot`` and ``invested`` (chips in, the starting pot included), ``frequencies``
    (label -> the actor's frequency), and ``oop`` and ``ip``, each a dict of ``hands`` (names),
    ``weight``, ``reach``, ``ev``, ``equity`` (float64, one per hand), ``range_ev``,
    ``range_equity`` and, for the actor, ``strategy`` ((actions, hands) float64)."""
    check_same_game(engine, game)
    node = resolve_node(game, node)
    info = game.node(node)
    report = engine.node_report(node)
    actor: Optional[int] = int(info["player"]) if info["kind"] == "decision" else None
    actions = action_labels(game, node) if actor is not None else []
    out: dict[str, Any] = {
        "node": node, "line": node_line(game, node), "kind": info["kind"],
        "player": PLAYER_KEYS[actor] if actor is not None else None, "actions": actions,
        "board": [card_name(c) for c in info["board"]], "pot": float(sum(info["invested"])),
        "invested": [float(x) for x in info["invested"]], "frequencies": {},
    }
    for p, key in enumerate(PLAYER_KEYS):
        r = report[key]
        reach = np.asarray(r["reach"], dtype=np.float64)
        prob = reach * opponent_mass(game, p, report[PLAYER_KEYS[1 - p]]["reach"])
        ev, equity = np.asarray(r["ev"], dtype=np.float64), np.asarray(r["equity"], dtype=np.float64)
        out[key] = {"hands": hand_names(game, p), "weight": np.asarray(game.weights(p), dtype=np.float64),
                    "reach": reach, "ev": ev, "equity": equity, "range_ev": _weighted_mean(ev, prob),
                    "range_equity": _weighted_mean(equity, prob)}
    if actor is not None:
        strategy = np.asarray(engine.average_strategy(node), dtype=np.float64)
        mine = out[PLAYER_KEYS[actor]]
        mine["strategy"] = strategy
        reach = mine["reach"]
        total = float(reach.sum())
        out["frequencies"] = {a: (float(strategy[i] @ reach) / total if total > 0 else float("nan"))
                              for i, a in enumerate(actions)}
    return out


def _floats(values: Any, digits: Optional[int] = None) -> list[Optional[float]]:
    arr = np.asarray(values, dtype=np.float64)
    if digits is not None:
        arr = arr.round(digits)
    return [None if not np.isfinite(x) else float(x) for x in arr.tolist()]


def _float(x: float) -> Optional[float]:
    return float(x) if np.isfinite(x) else None


def results_json(results: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`hand_results`' dict as JSON-ready values: lists for arrays, None for NaN, the
    strategy as ``{action: [one per hand]}``."""
    out: dict[str, Any] = {k: results[k] for k in ("node", "line", "kind", "player", "actions", "board", "pot",
                                                    "invested")}
    out["line_text"] = format_line(results["line"])
    out["frequencies"] = {a: _float(f) for a, f in results["frequencies"].items()}
    for key in PLAYER_KEYS:
        r = results[key]
        player: dict[str, Any] = {"hands": list(r["hands"]), "weight": _floats(r["weight"]),
                                  "reach": _floats(r["reach"]), "ev": _floats(r["ev"]),
                                  "equity": _floats(r["equity"]), "range_ev": _float(r["range_ev"]),
                                  "range_equity": _float(r["range_equity"])}
        if "strategy" in r:
            player["strategy"] = {a: _floats(row, STRATEGY_DIGITS) for a, row in zip(results["actions"], r["strategy"])}
        out[key] = player
    return out


def spot_summary(spot: Spot) -> dict[str, Any]:
    """The spot as JSON: description, street, board, pot, stack and the ranges' text."""
    return {"description": spot.description, "street": STREETS[spot.street],
            "board": [card_name(c) for c in spot.board], "pot": spot.pot, "stack": spot.stack,
            "ranges": dict(zip(PLAYER_KEYS, spot.ranges))}


def export_json(engine: _core.HoldemSolver, game: _core.HoldemEndgame, spot: Spot, nodes: Sequence[NodeRef] = (0,),
                solve: Union[SpotSolveResult, Mapping[str, Any], None] = None) -> dict[str, Any]:
    """The JSON document of a solved spot: ``spot`` (:func:`spot_summary`), ``solve`` (the
    solve's summary, if given), ``locked`` (the lines of the locked nodes) and ``nodes``
    (:func:`results_json` of each node, ids or lines)."""
    doc: dict[str, Any] = {"spot": spot_summary(spot)}
    if solve is not None:
        doc["solve"] = dict(solve.summary() if isinstance(solve, SpotSolveResult) else solve)
    doc["locked"] = [format_line(node_line(game, n)) for n in engine.locked_nodes()]
    doc["nodes"] = [results_json(hand_results(engine, game, n)) for n in nodes]
    return doc


def write_json(path: Union[str, "os.PathLike[str]"], doc: Mapping[str, Any]) -> None:
    """Writes a JSON document atomically (NaN refused: :func:`results_json` writes null)."""
    atomic_write_bytes(path, (json.dumps(doc, allow_nan=False) + "\n").encode())


@dataclass
class GridStrategy:
    """The actor's strategy at a node on the 13 x 13 grid
    (:data:`rebel.games.holdem_ranges.GRID_LABELS`: AA top left, suited above the diagonal).

    ``frequencies[row, col, a]``: action ``a``'s frequency over the cell's combos, each hand
    weighted by its reach (NaN where the cell has none); ``combos[row, col]``: the cell's reach
    summed (combos in the range at the node); ``share[row, col]``: that over the cell's combos
    that hold no board card (1: every such combo is there with full weight)."""

    actions: list[str]
    frequencies: np.ndarray
    combos: np.ndarray
    share: np.ndarray
    player: str


def grid_strategy(results: Mapping[str, Any]) -> GridStrategy:
    """The actor's strategy of :func:`hand_results` folded onto the grid."""
    if results["player"] is None:
        raise ValueError(f"node {results['node']} ({format_line(results['line'])}) is a {results['kind']} node: "
                         "nobody acts there")
    mine = results[results["player"]]
    strategy, reach = mine["strategy"], mine["reach"]
    actions = list(results["actions"])
    weighted = np.zeros((13, 13, len(actions)))
    combos = np.zeros((13, 13))
    for name, r, column in zip(mine["hands"], reach, strategy.T):
        row, col = _cell(name)
        combos[row, col] += r
        weighted[row, col] += r * column
    live = np.zeros((13, 13))
    board = set(results["board"])
    for a, b in COMBOS:
        if card_name(int(a)) not in board and card_name(int(b)) not in board:
            row, col = grid_cell((int(a), int(b)))
            live[row, col] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        frequencies = np.where(combos[..., None] > 0, weighted / combos[..., None], np.nan)
        share = np.where(live > 0, combos / np.maximum(live, 1), 0.0)
    return GridStrategy(actions, frequencies, combos, np.clip(share, 0.0, 1.0), results["player"])


def _cell(name: str) -> tuple[int, int]:
    a, b = parse_cards(name)
    return grid_cell((a, b))
