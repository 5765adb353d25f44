"""Solving hold'em endgame spots with the core's full-game solvers (csrc/solvers/holdem_cfr.h).

``solve_spot`` runs a solver (``dcfr`` by default; ``dcfr-pfs`` is postflop-solver's schedule)
until a number of iterations or a target exploitability, measuring the exact exploitability
every ``check_every`` iterations (postflop-solver checks every 10), and returns the curve.
Exploitability is (best-response value of OOP + that of IP) / 2 against the average strategies,
in chips and in percent of the starting pot, as postflop-solver reports it.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from rebel import _core
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import Spot
from rebel.util.progress import Progress

log = logging.getLogger(__name__)

__all__ = ["HOLDEM_SOLVERS", "SpotSolveResult", "check_same_game", "parse_target", "solve_spot"]

#: The solvers of hold'em spots (csrc/solvers/holdem_cfr.h says each one's discounting).
HOLDEM_SOLVERS: tuple[str, ...] = ("dcfr", "dcfr-pfs", "lcfr", "cfr+", "cfr")


@dataclass
class SpotSolveResult:
    """What a solve reached: iterations, exploitability (chips, % of the pot), the curve."""

    solver: str
    threads: int
    iterations: int
    exploitability: float
    exploitability_pct: float
    br_values: tuple[float, float]
    values: tuple[float, float]
    seconds: float
    pot: int
    size: dict[str, int]
    curve: list[tuple[int, float]] = field(default_factory=list)  # (iterations, chips)
    compressed: bool = False  # regrets and strategies in 16 bits

    def summary(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"solver": self.solver, "threads": self.threads, "iterations": self.iterations,
                "exploitability": self.exploitability, "exploitability_pct": self.exploitability_pct,
                "br_values": list(self.br_values), "values": list(self.values), "seconds": self.seconds,
                "pot": self.pot, "size": self.size, "compressed": self.compressed,
                "curve": [list(p) for p in self.curve]}


def check_same_game(engine: _core.HoldemSolver, game: _core.HoldemEndgame) -> None:
    """ValueError unless ``engine`` solves ``game``: node ids and lines resolved on one game name
    other nodes (or none) in another, so a mismatched pair would read the wrong strategies."""
    if engine.game is not game:
        raise ValueError("the solver was built on another HoldemEndgame than the game given (use engine.game)")


def parse_target(text: str, pot: float) -> float:
    """A target exploitability in chips from ``0.5%`` (of the pot) or a number of chips."""
    t = text.strip()
    try:
        value = float(t[:-1]) * pot / 100.0 if t.endswith("%") else float(t)
    except ValueError:
        raise ValueError(f"target {text!r} is not a number of chips or a percentage of the pot such as 0.5%") from None
    if not value > 0:
        raise ValueError(f"target {text!r} must be positive")
    return value


def solve_spot(spot: Spot, solver: str = "dcfr", iterations: int = 1000, target: float | None = None,
               threads: int = 1, check_every: int = 10, progress: bool = False,
               game: _core.HoldemEndgame | None = None, engine: _core.HoldemSolver | None = None,
               compressed: bool = False, isomorphism: bool = False) -> tuple[_core.HoldemSolver, SpotSolveResult]:
    """Solves ``spot`` for at most ``iterations`` iterations, stopping at the first check whose
    exploitability is at most ``target`` chips (None: run them all). Returns the solver (its
    strategies) and the result. ``game``: the spot's expanded game if already built.
    ``engine``: a solver to go on with (of ``game`` where given, else of its own ``engine.game``;
    e.g. after locking nodes: the rest is solved, the exploitability is the rest's) for at most
    ``iterations`` more; ``solver``, ``threads`` and ``compressed`` are then its own.
    ``compressed``: regrets and strategies in 16 bits with a float32 scale per node
    (postflop-solver's compression: half the memory).
    ``isomorphism``: build the game with suit isomorphism (:func:`build_endgame`) when no
    ``game`` is given."""
    if solver not in HOLDEM_SOLVERS:
        raise ValueError(f"unknown hold'em solver {solver!r} (choose from {', '.join(HOLDEM_SOLVERS)})")
    if iterations < 1 or check_every < 1:
        raise ValueError(f"iterations and check_every must be >= 1, got {iterations} and {check_every}")
    if engine is not None:
        game = engine.game if game is None else game
        check_same_game(engine, game)
    game = build_endgame(spot, isomorphism=isomorphism) if game is None else game
    started = time.perf_counter()
    if engine is None:
        engine = _core.HoldemSolver(game, solver, threads, compressed)
    else:
        solver, threads, compressed = engine.algorithm, engine.threads, engine.compressed
    first = engine.iterations
    curve: list[tuple[int, float]] = []
    exploitability = float("inf")
    with Progress(f"{solver} on the spot", iterations, "it", enabled=progress) as bar:
        while engine.iterations - first < iterations:
            step = min(check_every, iterations - (engine.iterations - first))
            engine.iterate(step)
            exploitability = engine.exploitability()
            curve.append((engine.iterations, exploitability))
            bar.set_postfix({"exploitability": f"{100 * exploitability / spot.pot:.3f}% of the pot"})
            bar(engine.iterations - first)
            if target is not None and exploitability <= target:
                break
    seconds = time.perf_counter() - started
    br = engine.best_response_values()
    values = engine.average_values()
    result = SpotSolveResult(solver=solver, threads=threads, iterations=engine.iterations,
                             exploitability=exploitability, exploitability_pct=100 * exploitability / spot.pot,
                             br_values=(br[0], br[1]), values=(values[0], values[1]), seconds=seconds, pot=spot.pot,
                             size=dict(game.size()), curve=curve, compressed=compressed)
    log.info("%s: %d iterations, exploitability %.6g chips (%.4f%% of the pot) in %.2f s", solver,
             result.iterations, exploitability, result.exploitability_pct, seconds)
    return engine, result
