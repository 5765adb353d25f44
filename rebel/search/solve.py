"""Full-game solving from Python: run a tabular solver, then measure its average policy.

>>> from rebel.games import make
>>> r = solve(make("liars_dice", num_dice=1, num_faces=4), "lcfr", 1024, progress=False)
>>> r.exploitability < 0.0015
True
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np

from rebel import _core
from rebel.games import Game, game_config, game_from_config
from rebel.util.progress import AFTER_SECONDS, Progress

log = logging.getLogger(__name__)

#: Full-game solver names accepted by the core (see csrc/solvers/subgame_solver.h).
SOLVERS: tuple[str, ...] = ("cfr", "lcfr", "cfr+", "dcfr", "fp", "lfp", "flop")
#: The fictitious-play family (they ignore off_path; ``optimistic`` applies to fp and lfp).
FP_SOLVERS: tuple[str, ...] = ("fp", "lfp", "flop")
#: Search solvers (``rebel eval``, self-play): the full-game ones plus the two CFR-AVG forms,
#: which differ from linear CFR-D only at the pseudo-leaves of a depth-limited subgame, each
#: also as "-play-avg": a random-iteration stop plays the average policy, not the iterate.
SEARCH_SOLVERS: tuple[str, ...] = SOLVERS + ("cfr-avg", "cfr-avg-modified", "cfr-avg-play-avg",
                                             "cfr-avg-modified-play-avg")
SOLVER_HELP: dict[str, str] = {
    "cfr": "vanilla CFR",
    "lcfr": "linear CFR (the paper's; CFR-D in a depth-limited search)",
    "cfr+": "CFR+",
    "dcfr": "discounted CFR (alpha, beta, gamma)",
    "fp": "fictitious play",
    "lfp": "linear fictitious play",
    "flop": "fictitious linear optimistic play (the paper's FLOP: lfp, optimistic)",
    "cfr-avg": "linear CFR with leaf PBSs of the average policy, the sound form (the paper's CFR-AVG)",
    "cfr-avg-modified": "linear CFR with leaf values V(average-policy PBS) themselves (CFR-AVG, modified form)",
    "cfr-avg-play-avg": "cfr-avg, and a random-iteration stop (mode (b), self-play) plays the average policy "
                        "and roots the next search at its PBS",
    "cfr-avg-modified-play-avg": "cfr-avg-modified, and a random-iteration stop plays the average policy",
}
DCFR_DEFAULTS = {"dcfr_alpha": 1.5, "dcfr_beta": 0.0, "dcfr_gamma": 2.0}
#: What the CFR solvers do at nodes the current iterate reaches with probability 0
#: (csrc/solvers/subgame_solver.h, OffPath); fp and lfp ignore it.
OFF_PATH_MODES: tuple[str, ...] = tuple(_core.OFF_PATH_MODES)
DEFAULT_OFF_PATH: str = _core.DEFAULT_OFF_PATH
OFF_PATH_HELP: dict[str, str] = {
    "skip": "no regret update where the opponent's reach is 0; unreached pseudo-leaves are not queried",
    "floor": "the limit of the original ReBeL code's 1e-80 floor on regrets and beliefs",
    "conditional": "values conditional on reaching the node (zero-probability actions count as taken)",
}

__all__ = ["DEFAULT_OFF_PATH", "FP_SOLVERS", "OFF_PATH_MODES", "SEARCH_SOLVERS", "SOLVERS", "SolveResult",
           "check_average_leaves_off_path", "check_iterations", "check_off_path", "solve"]


@dataclass
class SolveResult:
    """Outcome of :func:`solve`.

    ``seconds`` is the wall time of the solver loop alone (tree building and the final
    exploitability computation are excluded). ``policy`` is the average policy in the
    core's ``(tree.size, num_hands)`` layout; ``game_value`` is player 0's expected value
    under it.
    """

    game: dict[str, Any]
    solver: str
    iterations: int
    exploitability: float
    br_values: tuple[float, float]
    game_value: float
    seconds: float
    policy: np.ndarray = field(repr=False)
    tree: _core.PublicTree = field(repr=False)
    optimistic: bool = False
    dcfr: Optional[dict[str, float]] = None
    off_path: str = DEFAULT_OFF_PATH
    warm_iterations: int = 0

    def summary(self) -> dict[str, Any]:
        """JSON-serialisable fields (everything but the policy and the tree)."""
        out: dict[str, Any] = {
            "game": dict(self.game),
            "solver": self.solver,
            "iterations": self.iterations,
            "exploitability": self.exploitability,
            "br_values": list(self.br_values),
            "game_value": self.game_value,
            "seconds": self.seconds,
        }
        if self.solver in ("fp", "lfp"):
            out["optimistic"] = self.optimistic
        if self.dcfr is not None:
            out["dcfr"] = dict(self.dcfr)
        if self.solver not in ("fp", "lfp"):
            out["off_path"] = self.off_path
        if self.warm_iterations:
            out["warm_iterations"] = self.warm_iterations
        return out


def check_iterations(iterations: Any) -> int:
    """Returns ``iterations`` as an int >= 0; raises TypeError / ValueError otherwise."""
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)):
        raise TypeError(f"iterations must be an int, got {iterations!r}")
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    if iterations > 2**31 - 1:
        raise ValueError(f"iterations must be < 2**31, got {iterations}")
    return int(iterations)


def check_off_path(off_path: Any) -> str:
    """Returns ``off_path`` if it is one of :data:`OFF_PATH_MODES`; raises ValueError otherwise."""
    if not isinstance(off_path, str) or off_path not in OFF_PATH_MODES:
        raise ValueError(f"unknown off_path {off_path!r}; choose one of {', '.join(OFF_PATH_MODES)}")
    return off_path


def check_average_leaves_off_path(solver: str, off_path: str) -> None:
    """ValueError if ``solver`` is a CFR-AVG form and ``off_path`` is not ``skip`` (the only
    mode the average-policy leaves are defined for)."""
    if solver.startswith("cfr-avg") and off_path != "skip":
        raise ValueError(f"solver {solver} supports off_path 'skip' only, got {off_path!r}")


def _check_solver(solver: str) -> str:
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    return solver


def solve(
    game: Union[Game, Mapping[str, Any]],
    solver: str = "lcfr",
    iterations: int = 1024,
    *,
    optimistic: bool = False,
    dcfr_alpha: float = DCFR_DEFAULTS["dcfr_alpha"],
    dcfr_beta: float = DCFR_DEFAULTS["dcfr_beta"],
    dcfr_gamma: float = DCFR_DEFAULTS["dcfr_gamma"],
    off_path: str = DEFAULT_OFF_PATH,
    progress: bool = True,
    progress_after: float = AFTER_SECONDS,
    tree: Optional[_core.PublicTree] = None,
    callback: Optional[Callable[[int], None]] = None,
    warm_start: Optional[np.ndarray] = None,
    warm_iterations: Optional[int] = None,
) -> SolveResult:
    """Runs ``iterations`` half-iterations of ``solver`` on the full game.

    Args:
        game: a :class:`rebel.Game` or a config dict such as ``{"name": "kuhn"}``.
        solver: one of :data:`SOLVERS`.
        iterations: alternating half-steps, counted as in the paper (512 per player for 1024).
        optimistic: fp and lfp only: optimistic fictitious play (``flop`` is lfp, optimistic).
        dcfr_alpha, dcfr_beta, dcfr_gamma: discounting parameters (``dcfr`` only).
        off_path: CFR solvers only: one of :data:`OFF_PATH_MODES` (see :data:`OFF_PATH_HELP`).
        progress: report progress on stderr if the run lasts longer than ``progress_after`` s
            (a bar on a terminal, a line every 30 s otherwise; see :mod:`rebel.util.progress`).
        tree: the full public tree of ``game`` if already built (saves rebuilding it).
        callback: called with the number of iterations done after every solver chunk.
        warm_start: a policy in the core's ``(tree.size, num_hands)`` float64 layout to start
            from, as if each player had made ``warm_iterations`` updates with both playing it
            (csrc/solvers/warm_start.cc); ``iterations`` more half-steps follow.
        warm_iterations: the updates per player the warm start counts (default 15, the
            paper's); only with ``warm_start``.
    """
    if not isinstance(game, Game):
        game = game_from_config(game)
    _check_solver(solver)
    iterations = check_iterations(iterations)
    check_off_path(off_path)
    if optimistic and solver not in ("fp", "lfp", "flop"):
        raise ValueError(f"optimistic applies to the fictitious-play solvers (fp, lfp), not {solver!r}")
    for name, value in (("dcfr_alpha", dcfr_alpha), ("dcfr_beta", dcfr_beta), ("dcfr_gamma", dcfr_gamma)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if tree is None:
        tree = _core.build_tree(game)
    elif tree.history(0) != [] or len(tree.pseudo_leaves) != 0:
        raise ValueError("solve() needs the full game tree")
    if warm_iterations is not None and warm_start is None:
        raise ValueError("warm_iterations needs a warm_start policy")
    s = _core.SubgameSolver(game, tree, solver=solver, optimistic=optimistic,
                            dcfr_alpha=dcfr_alpha, dcfr_beta=dcfr_beta, dcfr_gamma=dcfr_gamma, off_path=off_path,
                            warm_start=warm_start, warm_iterations=warm_iterations)
    log.info("solving %s with %s for %d iterations (%d nodes x %d hands)",
             game.description(), solver, iterations, len(tree), game.num_hands)

    bar = Progress(f"{solver} {game.description()}", iterations, "it", after=progress_after) if progress else None

    def on_chunk(done: int) -> None:
        if bar is not None:
            bar(done)
        if callback is not None:
            callback(done)

    has_callback = bar is not None or callback is not None
    try:
        start = time.perf_counter()
        s.run(iterations, on_chunk if has_callback else None)
        seconds = time.perf_counter() - start
    finally:
        if bar is not None:
            bar.close()

    policy = s.average_policy()
    report = _core.exploitability(game, tree, policy)
    log.info("%s: exploitability %.6g after %d iterations in %.3f s", solver, report["exploitability"], iterations,
             seconds)
    return SolveResult(
        game=game_config(game),
        solver=solver,
        iterations=iterations,
        exploitability=float(report["exploitability"]),
        br_values=(float(report["br_values"][0]), float(report["br_values"][1])),
        game_value=float(report["game_value"]),
        seconds=seconds,
        policy=policy,
        tree=tree,
        optimistic=optimistic or solver == "flop",
        dcfr={"alpha": dcfr_alpha, "beta": dcfr_beta, "gamma": dcfr_gamma} if solver == "dcfr" else None,
        off_path=off_path,
        warm_iterations=s.warm_iterations,
    )
