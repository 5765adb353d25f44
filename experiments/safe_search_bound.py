"""The safe-search bound in practice: exploitability of search against leaf-value error and T.

    python experiments/safe_search_bound.py [--quick] [--dice 1] [--faces 4] [--depth 2]
        [--deltas 0 0.003 0.01 0.03 0.1] [--iters 64 256 1024 4096] [--solvers lcfr lfp]
        [--kinds random bias] [--leaf-iters 1024] [--oracle-iters N] [--error-seed 0]
        [--checkpoint RUN_DIR ...] [--jobs 2] [--out-dir experiments/results/safe_search_bound]

Theorem 3 of the ReBeL paper: if every leaf value is within delta of the exact one, playing a
random CFR-D iteration at every subgame is an (O(delta) + O(1/sqrt(T)))-Nash equilibrium.
This script measures the exploitability of that protocol (mode (b)) on a grid of leaf-value
errors delta and half-iterations T, fits exploitability ~ a*delta + b/sqrt(T) + c, and shows
the unsafe contrast, mode (a) (each subgame's average policy), on the same grid.

Leaf values with a known error come from ``rebel.PerturbedNet`` around the oracle (exact
values from a full-depth solve below the leaf): its error has max norm exactly delta over the
hands of every query and is a fixed function of the query (kind ``random``: a fixed random
vector per public state and queried player; ``bias``: +delta for player 0, -delta for
player 1, favouring player 0 everywhere).

Every cell is exact in the N -> infinity sense, computed as ``experiments/cfrd_rate.py``
does: the root subgame is depth-limited and solved with the perturbed net; below each of its
pseudo-leaves play continues with the linear average of an exact full-depth solve from the
beliefs the root policy induces there; mode (b)'s policy is the exact reach-weighted mixture
of the root iterates (weights m + 1), mode (a)'s the root's average policy. So the leaf error
enters at the leaves of the root subgame, which is where the protocol's depth limit is; the
full recursive protocol of ``rebel eval`` (errors at every subgame, N sampled policies) can be
run per cell with ``rebel eval --net oracle --leaf-error DELTA --leaf-error-kind KIND``.
One run of the root solver to max(T) gives every T (the iterates do not depend on T).

``--checkpoint RUN_DIR`` (a ``rebel train`` run directory) places a trained net on the same
axes: its held-out error (mean over the run's held-out PBSs of the max over hands, measured
here against the exact labels) as delta, and its exploitability measured the same way.

Writes ``safe_search_bound.json`` (every cell, the fits) and three PNGs to --out-dir.
``--quick`` runs a small grid on 1x3f in well under a minute (what the tests run).
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import math
import multiprocessing
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cfrd_rate import ITERATE_WEIGHT_POWER, FullTreeTools, RootOnlyPlay  # noqa: E402

from rebel import _core  # noqa: E402
from rebel.games import make  # noqa: E402
from rebel.search.settings import LEAF_ERROR_KINDS  # noqa: E402
from rebel.util.progress import Progress  # noqa: E402

log = logging.getLogger("safe_search_bound")

SOLVERS = tuple(s for s in ITERATE_WEIGHT_POWER if ITERATE_WEIGHT_POWER[s] == 1)  # mode (b) samples linearly
DEFAULT_OUT = "experiments/results/safe_search_bound"
# A cell whose measured exploitability the fit misses by more than this (relative) is listed
# as a place where the fit fails.
FIT_TOLERANCE = 0.25


@dataclass(frozen=True)
class Cell:
    """One root-solver run: every T of the grid for one (net, delta, kind, solver)."""

    solver: str
    delta: float
    kind: str
    net: str = "oracle"  # "oracle", "none" (no depth limit: the floor) or a weights file
    label: str = ""      # what the cell is reported as (the run directory for a checkpoint)


@dataclass
class Settings:
    dice: int = 1
    faces: int = 4
    depth: int = 2
    deltas: Sequence[float] = (0.0, 0.003, 0.01, 0.03, 0.1)
    iters: Sequence[int] = (64, 256, 1024, 4096)
    solvers: Sequence[str] = ("lcfr", "lfp")
    kinds: Sequence[str] = ("random", "bias")
    leaf_iters: int = 1024
    oracle_iters: Optional[int] = None  # default: leaf_iters
    error_seed: int = 0
    checkpoints: Sequence[str] = field(default_factory=tuple)
    # The full recursive protocol of `rebel eval` (errors at every subgame; mode (b) with N
    # sampled policies, an upper bound in expectation of its N -> infinity value), per
    # (kind, delta in full_deltas) for the first solver: N = full_repeats (0: not run).
    full_repeats: int = 0
    full_iters: int = 1024
    full_oracle_iters: int = 256
    full_deltas: Sequence[float] = (0.0, 0.01, 0.1)

    def check(self) -> None:
        """ValueError naming the first bad setting."""
        if self.dice < 1 or self.faces < 2:
            raise ValueError(f"the game needs dice >= 1 and faces >= 2, got {self.dice}x{self.faces}")
        if self.depth < 1:
            raise ValueError(f"--depth must be >= 1, got {self.depth}")
        for name in ("deltas", "iters", "solvers", "kinds"):
            if len(getattr(self, name)) == 0:
                raise ValueError(f"--{name} is empty: the grid needs at least one value")
        for delta in list(self.deltas) + list(self.full_deltas):
            if not math.isfinite(delta) or delta < 0:
                raise ValueError(f"every delta must be finite and >= 0, got {delta}")
        for t in self.iters:
            if t < 2:
                raise ValueError(f"every T must be >= 2 (one iteration per player), got {t}")
        for kind in self.kinds:
            if kind not in LEAF_ERROR_KINDS:
                raise ValueError(f"unknown error kind {kind!r}; known: {', '.join(LEAF_ERROR_KINDS)}")
        for solver in self.solvers:
            if solver not in SOLVERS:
                raise ValueError(f"unknown solver {solver!r}; known: {', '.join(SOLVERS)}")
        if self.leaf_iters < 1 or (self.oracle_iters is not None and self.oracle_iters < 1):
            raise ValueError("--leaf-iters and --oracle-iters must be >= 1")
        if self.error_seed < 0:
            raise ValueError(f"--error-seed must be >= 0, got {self.error_seed}")
        if self.full_repeats < 0 or self.full_iters < 2 or self.full_oracle_iters < 1:
            raise ValueError("--full-protocol must be >= 0, --full-iters >= 2 and --full-oracle-iters >= 1")

    def full_protocol_cells(self) -> list[tuple[str, float]]:
        """(kind, delta) of every full-protocol run; delta = 0 once."""
        if self.full_repeats == 0:
            return []
        deltas = sorted(set(self.full_deltas))
        return ([("none", 0.0)] if 0.0 in deltas else []) + [(k, d) for k in self.kinds for d in deltas if d > 0]

    def cells(self) -> list[Cell]:
        """delta = 0 once per solver (the kinds agree there), then every (kind, delta > 0)."""
        cells = []
        for solver in self.solvers:
            if 0.0 in self.deltas:
                cells.append(Cell(solver, 0.0, "none"))
            cells += [Cell(solver, d, k) for k in self.kinds for d in sorted(self.deltas) if d > 0]
            cells.append(Cell(solver, 0.0, "none", net="none", label="no depth limit"))
            cells += [Cell(solver, 0.0, "none", net=str(Path(c) / "weights.bin"), label=str(c))
                      for c in self.checkpoints]
        return cells


# ---------------------------------------------------------------------------------------
# One cell (runs in a worker process)

_progress_queue: Any = None


def _init_worker(queue: Any) -> None:
    global _progress_queue
    _progress_queue = queue


class _QueueBar:
    """The `update(n)` RootOnlyPlay calls, forwarded to the parent's bar in batches."""

    def __init__(self, queue: Any):
        self.queue, self.pending = queue, 0

    def update(self, n: int) -> None:
        self.pending += n
        if self.pending >= 32:
            self.flush()

    def flush(self) -> None:
        if self.pending and self.queue is not None:
            self.queue.put(self.pending)
        self.pending = 0


def run_cell(settings: Settings, cell: Cell, bar: Any = None) -> dict[str, Any]:
    """Exact mode (b) and mode (a) exploitability of one cell at every T of the grid."""
    start = time.perf_counter()
    game = make("liars_dice", num_dice=settings.dice, num_faces=settings.faces)
    tools = FullTreeTools(game)
    depth = -1 if cell.net == "none" else settings.depth
    net: Optional[_core.ValueNet] = None
    if cell.net == "oracle":
        net = _core.OracleNet(game, "lcfr", settings.oracle_iters or settings.leaf_iters)
        if cell.delta > 0:
            net = _core.PerturbedNet(game, net, cell.delta, cell.kind, settings.error_seed)
    elif cell.net != "none":
        net = _core.MlpValueNet(game, cell.net)
    own_bar = bar is None
    bar = _QueueBar(_progress_queue) if own_bar else bar
    play = RootOnlyPlay(tools, net, depth, settings.leaf_iters, cell.solver)
    by_t = play.run(sorted(settings.iters), bar, average_too=cell.net != "none")
    if own_bar:
        bar.flush()
    rows = []
    for t in sorted(by_t):
        r = by_t[t]
        row = {"T": t, "mode_b": {"exploitability": r["exploitability"], "br_values": r["br_values"]}}
        if "mode_a" in r:
            row["mode_a"] = r["mode_a"]
        rows.append(row)
    return {**asdict(cell), "rows": rows, "seconds": time.perf_counter() - start}


def run_full_protocol(settings: Settings, kind: str, delta: float) -> dict[str, Any]:
    """`rebel eval`'s mode (a) and mode (b) (N = full_repeats) with the perturbed oracle."""
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    game = _core.make_game("liars_dice", {"num_dice": settings.dice, "num_faces": settings.faces})
    result = evaluate(game, EvalSettings(
        net="oracle",
        solver=settings.solvers[0], depth=settings.depth, iterations=settings.full_iters,
        repeats=settings.full_repeats, threads=1, seed=0, oracle_iterations=settings.full_oracle_iters,
        leaf_error=delta, leaf_error_kind=kind if delta > 0 else "random", leaf_error_seed=settings.error_seed,
        full_game=False))
    if _progress_queue is not None:
        _progress_queue.put(settings.full_iters)
    return {"kind": kind, "delta": delta, "solver": settings.solvers[0], "T": settings.full_iters,
            "oracle_iters": settings.full_oracle_iters, "mode_a": result["mode_a"]["exploitability"],
            "mode_b": {str(r["num_policies"]): r["exploitability"] for r in result["mode_b"]},
            "seconds": result["seconds"]["total"]}


# ---------------------------------------------------------------------------------------
# The fit


def _nonnegative_lstsq(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """argmin ||x theta - y|| over theta >= 0, by trying every set of free coefficients
    (exact for the few columns used here)."""
    best, best_loss = np.zeros(x.shape[1]), float(np.sum(y ** 2))
    for k in range(1, x.shape[1] + 1):
        for free in itertools.combinations(range(x.shape[1]), k):
            theta_free, *_ = np.linalg.lstsq(x[:, free], y, rcond=None)
            if np.any(theta_free < 0):
                continue
            theta = np.zeros(x.shape[1])
            theta[list(free)] = theta_free
            loss = float(np.sum((x @ theta - y) ** 2))
            if loss < best_loss - 1e-15:
                best, best_loss = theta, loss
    return best


def fit_bound(deltas: Iterable[float], iters: Iterable[int], values: Iterable[float],
              with_constant: bool = True, delta_power: float = 1.0, t_power: float = 0.5) -> dict[str, Any]:
    """Fits exploitability ~ a*delta^p + b/T^q (+ c) with a, b, c >= 0; the bound's rates are
    p = 1, q = 1/2 (the defaults).

    Least squares on the relative error (each cell weighted by 1 / its value), so the small
    values at large T count as much as the large ones. Returns the constants, every cell's
    fitted value and relative residual, R^2 of the logarithms (the scale the fit works on)
    and the cells the fit misses by more than FIT_TOLERANCE."""
    d = np.asarray(list(deltas), dtype=float)
    t = np.asarray(list(iters), dtype=float)
    y = np.asarray(list(values), dtype=float)
    if not (len(d) == len(t) == len(y)) or len(y) == 0:
        raise ValueError("fit_bound needs as many deltas, T and values, and at least one")
    if np.any(y <= 0):
        raise ValueError("fit_bound needs positive exploitabilities")
    columns = [d ** delta_power, t ** -t_power] + ([np.ones_like(y)] if with_constant else [])
    x = np.stack(columns, axis=1)
    w = 1.0 / y
    theta = _nonnegative_lstsq(x * w[:, None], y * w)
    fitted = x @ theta
    relative = (fitted - y) / y
    ss_tot = float(np.sum((np.log(y) - np.log(y).mean()) ** 2))
    if np.any(fitted <= 0):
        r2 = float("-inf")
    else:
        r2 = 1.0 - float(np.sum((np.log(fitted) - np.log(y)) ** 2)) / ss_tot if ss_tot > 0 else 1.0
    misses = [{"delta": float(di), "T": int(ti), "measured": float(yi), "fitted": float(fi), "relative": float(ri)}
              for di, ti, yi, fi, ri in zip(d, t, y, fitted, relative) if abs(ri) > FIT_TOLERANCE]
    return {
        "a": float(theta[0]), "b": float(theta[1]), "c": float(theta[2]) if with_constant else 0.0,
        "delta_power": delta_power, "t_power": t_power, "r2_log": r2,
        "rms_relative_residual": float(np.sqrt(np.mean(relative ** 2))),
        "max_relative_residual": float(np.max(np.abs(relative))),
        "cells": [{"delta": float(di), "T": int(ti), "measured": float(yi), "fitted": float(fi),
                   "relative": float(ri)} for di, ti, yi, fi, ri in zip(d, t, y, fitted, relative)],
        "misses": misses,
    }


def fit_free_rates(deltas: Sequence[float], iters: Sequence[int], values: Sequence[float]) -> dict[str, Any]:
    """The best fit a*delta^p + b/T^q + c over a grid of exponents p, q in [0.25, 2] (steps of
    0.05): which rates the data support, against the bound's p = 1, q = 1/2."""
    best: Optional[dict[str, Any]] = None
    grid = np.round(np.arange(0.25, 2.0001, 0.05), 2)
    for p in grid:
        for q in grid:
            fit = fit_bound(deltas, iters, values, delta_power=float(p), t_power=float(q))
            if best is None or fit["rms_relative_residual"] < best["rms_relative_residual"] - 1e-12:
                best = fit
    assert best is not None
    return best


def log_slope(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Slope of log y against log x (None with fewer than two positive points)."""
    pts = [(a, b) for a, b in zip(x, y) if a > 0 and b > 0]
    if len(pts) < 2:
        return None
    lx, ly = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(lx, ly, 1)[0])


def rates(table: dict[tuple[float, int], float]) -> dict[str, Any]:
    """Empirical rates of one (solver, kind) surface: the exponent of T at each delta
    (-0.5 is the bound's 1/sqrt(T)) and the exponent of delta in the excess over delta = 0 at
    each T (1 is the bound's O(delta))."""
    deltas = sorted({d for d, _ in table})
    iters = sorted({t for _, t in table})
    in_t = {str(d): log_slope(iters, [table[(d, t)] for t in iters]) for d in deltas}
    in_delta = {}
    if 0.0 in deltas:
        for t in iters:
            positive = [d for d in deltas if d > 0]
            excess = [table[(d, t)] - table[(0.0, t)] for d in positive]
            in_delta[str(t)] = log_slope(positive, excess)
    return {"T_exponent_by_delta": in_t, "delta_exponent_of_excess_by_T": in_delta}


# ---------------------------------------------------------------------------------------
# The sweep


class CellCache:
    """Finished cells, one JSON line each (``cells.jsonl`` in the output folder): a sweep that
    was stopped resumes where it was, and a larger sweep reuses the cells it shares with an
    earlier one. Lines written under other settings (game, depth, T grid, iterations, seed)
    are ignored."""

    def __init__(self, path: Optional[Path], settings: Settings):
        self.path = path
        s = settings
        self.key = json.dumps([s.dice, s.faces, s.depth, sorted(s.iters), s.leaf_iters, s.oracle_iters,
                               s.error_seed, s.full_repeats, s.full_iters, s.full_oracle_iters])
        self.done: dict[str, dict[str, Any]] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                if isinstance(entry, dict) and entry.get("settings") == self.key:
                    self.done[entry["task"]] = entry["result"]

    def put(self, task: str, result: dict[str, Any]) -> None:
        self.done[task] = result
        if self.path is None:
            return
        with open(self.path, "a") as f:
            f.write(json.dumps({"settings": self.key, "task": task, "result": result}) + "\n")
            f.flush()
            os.fsync(f.fileno())


def _tasks(settings: Settings) -> list[tuple[str, Any]]:
    """(cache key, task) of every run: full-protocol runs first (they are the longest)."""
    full = [(json.dumps(["full", kind, delta]),
             ("full", (kind, delta))) for kind, delta in settings.full_protocol_cells()]
    cells = [(json.dumps(["cell", asdict(cell)]), ("cell", cell)) for cell in settings.cells()]
    return full + cells


def _run_task(settings: Settings, task: tuple[str, Any], bar: Any = None) -> dict[str, Any]:
    what, arg = task
    return run_full_protocol(settings, *arg) if what == "full" else run_cell(settings, arg, bar)


def _task_steps(settings: Settings, task: tuple[str, Any]) -> int:
    return settings.full_iters if task[0] == "full" else max(settings.iters)


def run_sweep(settings: Settings, jobs: int = 2, show_progress: bool = True,
              cache_path: Optional[Path] = None) -> dict[str, Any]:
    """Runs every cell (in `jobs` processes; cells already in `cache_path` are reused) and
    returns the JSON-ready report."""
    settings.check()
    start = time.perf_counter()
    cache = CellCache(cache_path, settings)
    tasks = _tasks(settings)
    todo = [(key, task) for key, task in tasks if key not in cache.done]
    if len(todo) < len(tasks):
        log.info("%d of %d cells reused from %s", len(tasks) - len(todo), len(tasks), cache_path)
    total = sum(_task_steps(settings, task) for _, task in todo)
    with Progress("safe-search sweep", total, unit="root steps", enabled=show_progress) as progress:
        bar = _StepCounter(progress)
        if jobs <= 1:
            for key, task in todo:
                cache.put(key, _run_task(settings, task, bar))
                if task[0] == "full":
                    bar.update(settings.full_iters)
                log.info("%s done (%.1f s)", _describe(cache.done[key]), cache.done[key]["seconds"])
        else:
            _run_parallel(settings, todo, jobs, bar, cache)
    results = [cache.done[key] for key, task in tasks if task[0] == "cell"]
    report = _report(settings, results)
    report["full_protocol"] = [cache.done[key] for key, task in tasks if task[0] == "full"]
    report["seconds"] = time.perf_counter() - start
    return report


class _StepCounter:
    """The `update(n)` that RootOnlyPlay calls, as the running total rebel.progress reports
    (a bar on a terminal, a line every 30 s otherwise)."""

    def __init__(self, progress: Progress):
        self.progress, self.done = progress, 0

    def update(self, n: int) -> None:
        self.done += n
        self.progress(self.done)


def _run_parallel(settings: Settings, todo: list[tuple[str, Any]], jobs: int, bar: _StepCounter,
                  cache: CellCache) -> None:
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that holds C++ threads
    queue = ctx.Manager().Queue()

    def finished(key: str) -> Any:
        def store(result: dict[str, Any]) -> None:  # runs in the pool's result thread
            cache.put(key, result)
            log.info("%s done (%.1f s)", _describe(result), result["seconds"])
        return store

    with ctx.Pool(jobs, initializer=_init_worker, initargs=(queue,)) as pool:
        pending = [pool.apply_async(_run_task, (settings, task), callback=finished(key)) for key, task in todo]
        while not all(p.ready() for p in pending):
            _drain(queue, bar, timeout=0.5)
        _drain(queue, bar, timeout=0.0)
        for p in pending:
            p.get()  # re-raises a worker's exception


def _drain(queue: Any, bar: _StepCounter, timeout: float) -> None:
    """Moves the workers' step counts from `queue` to `bar`."""
    import queue as queue_module

    try:
        n = queue.get(timeout=timeout) if timeout else queue.get_nowait()
        while True:
            bar.update(n)
            n = queue.get_nowait()
    except queue_module.Empty:
        pass


def _describe(r: dict[str, Any]) -> str:
    what = r.get("label") or f"delta={r['delta']} kind={r['kind']}"
    return f"{r['solver']} {what}" + (" (full protocol)" if "oracle_iters" in r else "")


def _report(settings: Settings, results: list[dict[str, Any]]) -> dict[str, Any]:
    grid_cells, floor, checkpoints = [], [], []
    for r in results:
        if r["net"] == "none":
            floor += [{"solver": r["solver"], "T": row["T"], "exploitability": row["mode_b"]["exploitability"]}
                      for row in r["rows"]]
        elif r["net"] != "oracle":
            checkpoints.append(r)
        else:
            kinds = settings.kinds if r["delta"] == 0 else [r["kind"]]
            for kind in kinds:  # delta = 0 belongs to every kind's surface
                grid_cells += [{"solver": r["solver"], "kind": kind, "delta": r["delta"], "T": row["T"],
                                "mode_b": row["mode_b"], "mode_a": row["mode_a"]} for row in r["rows"]]
    return {
        "game": f"liars_dice {settings.dice}x{settings.faces}f",
        "settings": {**asdict(settings), "deltas": list(settings.deltas), "iters": list(settings.iters),
                     "full_deltas": list(settings.full_deltas),
                     "solvers": list(settings.solvers), "kinds": list(settings.kinds),
                     "checkpoints": list(settings.checkpoints)},
        "protocol": "root-only mode (b), exact (N -> infinity); leaf error at the root subgame's pseudo-leaves",
        "fit_model": "exploitability ~ a*delta + b/sqrt(T) + c, a, b, c >= 0, relative least squares",
        "cells": grid_cells,
        "no_depth_limit": floor,
        "checkpoints": _checkpoint_entries(checkpoints),
        "fits": fit_surfaces(settings.solvers, settings.kinds, grid_cells),
    }


def fit_surfaces(solvers: Sequence[str], kinds: Sequence[str], grid_cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The fits of every (solver, kind) surface, mode (b) and mode (a)."""
    fits: dict[str, Any] = {}
    for solver, kind in itertools.product(solvers, kinds):
        cells = [c for c in grid_cells if c["solver"] == solver and c["kind"] == kind]
        entry: dict[str, Any] = {}
        for mode in ("mode_b", "mode_a"):
            values = [c[mode]["exploitability"] for c in cells]
            d, t = [c["delta"] for c in cells], [c["T"] for c in cells]
            entry[mode] = fit_bound(d, t, values)
            entry[mode]["free_rates"] = _brief(fit_free_rates(d, t, values))
            entry[mode]["rates"] = rates({(c["delta"], c["T"]): c[mode]["exploitability"] for c in cells})
        fits[f"{solver}/{kind}"] = entry
    return fits


def _brief(fit: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fit.items() if k not in ("cells", "misses")} | {"misses": len(fit["misses"])}


def _checkpoint_entries(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (checkpoint, solver); each run's held-out error is measured once."""
    heldout = {run_dir: heldout_error(run_dir) for run_dir in dict.fromkeys(r["label"] for r in results)}
    return [{"run_dir": r["label"], "solver": r["solver"], "heldout": heldout[r["label"]], "rows": r["rows"]}
            for r in results]


def heldout_error(run_dir: str) -> dict[str, float]:
    """The trained net's error on its run's held-out PBSs (exact labels, regenerated from the
    run's config exactly as the run drew them)."""
    from rebel.config.train import load_train_config
    from rebel.train.evaluation import HeldOutSet

    config = load_train_config(str(Path(run_dir) / "config.yaml"))
    game = config.game.make()
    heldout = HeldOutSet.generate(game, config)
    net = _core.MlpValueNet(game, str(Path(run_dir) / "weights.bin"))
    return heldout.error(net.forward)


def check_checkpoint(settings: Settings, run_dir: str) -> None:
    """ValueError unless `run_dir` is a training run of the sweep's game."""
    from rebel.config.train import load_train_config

    folder = Path(run_dir)
    for name in ("config.yaml", "weights.bin"):
        if not (folder / name).is_file():
            raise ValueError(f"--checkpoint {run_dir}: no {name} (expected a `rebel train` run directory)")
    game = load_train_config(str(folder / "config.yaml")).game
    if (game.name, game.num_dice, game.num_faces) != ("liars_dice", settings.dice, settings.faces):
        raise ValueError(f"--checkpoint {run_dir}: trained on {game.name} {game.num_dice}x{game.num_faces}f, "
                         f"the sweep is on liars_dice {settings.dice}x{settings.faces}f")


# ---------------------------------------------------------------------------------------
# Plots and summary


def plot(report: dict[str, Any], out_dir: Path) -> list[str]:
    """Three PNGs: exploitability vs T per delta, vs delta per T, mode (a) against mode (b)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = report["settings"]
    keys = [(solver, kind) for solver in s["solvers"] for kind in s["kinds"]]
    deltas, iters = sorted(s["deltas"]), sorted(s["iters"])
    cells = {(c["solver"], c["kind"], c["delta"], c["T"]): c for c in report["cells"]}
    colours = plt.cm.viridis(np.linspace(0, 0.9, max(len(deltas), len(iters))))
    t_dense = np.geomspace(min(iters), max(iters), 50)
    paths = []

    def panels(title: str):
        fig, axes = plt.subplots(1, len(keys), figsize=(4.6 * len(keys), 4.0), squeeze=False)
        fig.suptitle(f"{report['game']}, depth {s['depth']}: {title}")
        return fig, axes[0]

    fig, axes = panels("exploitability vs T (points: measured; dashed: a·δ + b/√T + c; dash-dot: best exponents)")
    for ax, (solver, kind) in zip(axes, keys):
        fit = report["fits"][f"{solver}/{kind}"]["mode_b"]
        free = fit["free_rates"]
        for colour, d in zip(colours, deltas):
            ax.loglog(iters, [cells[(solver, kind, d, t)]["mode_b"]["exploitability"] for t in iters], "o-",
                      color=colour, label=f"δ={d:g}")
            ax.loglog(t_dense, fit["a"] * d + fit["b"] / np.sqrt(t_dense) + fit["c"], "--", color=colour, lw=1)
            ax.loglog(t_dense, free["a"] * d ** free["delta_power"] + free["b"] * t_dense ** -free["t_power"]
                      + free["c"], "-.", color=colour, lw=0.8)
        _t_ticks(ax, iters)
        floor = [f["exploitability"] for f in report["no_depth_limit"] if f["solver"] == solver]
        if len(floor) == len(iters):
            ax.loglog(iters, floor, "k:", label="no depth limit")
        ax.set(title=f"mode (b), {solver}, error {kind}", xlabel="T (half-iterations)", ylabel="exploitability")
        ax.legend(fontsize=7)
    paths.append(_save(fig, out_dir / "exploitability_vs_T.png"))

    fig, axes = panels("exploitability vs leaf error δ (max over hands); stars: trained nets")
    for ax, (solver, kind) in zip(axes, keys):
        fit = report["fits"][f"{solver}/{kind}"]["mode_b"]
        d_dense = np.linspace(0, max(deltas), 50)
        for colour, t in zip(colours, iters):
            ax.plot(deltas, [cells[(solver, kind, d, t)]["mode_b"]["exploitability"] for d in deltas], "o-",
                    color=colour, label=f"T={t}")
            ax.plot(d_dense, fit["a"] * d_dense + fit["b"] / np.sqrt(t) + fit["c"], "--", color=colour, lw=1)
            for ck in report["checkpoints"]:
                if ck["solver"] == solver:
                    row = next(r for r in ck["rows"] if r["T"] == t)
                    ax.plot([ck["heldout"]["heldout_delta_mean"]], [row["mode_b"]["exploitability"]], "*",
                            color=colour, ms=11, mec="k")
        ax.set(title=f"mode (b), {solver}, error {kind}", xlabel="δ", ylabel="exploitability", yscale="log")
        ax.legend(fontsize=7)
    paths.append(_save(fig, out_dir / "exploitability_vs_delta.png"))

    fig, axes = panels("safe (mode b, solid) against unsafe (mode a, dotted)")
    for ax, (solver, kind) in zip(axes, keys):
        for colour, d in zip(colours, deltas):
            for mode, style in (("mode_b", "o-"), ("mode_a", "s:")):
                ax.loglog(iters, [cells[(solver, kind, d, t)][mode]["exploitability"] for t in iters], style,
                          color=colour, label=f"δ={d:g}" if mode == "mode_b" else None)
        ax.set(title=f"{solver}, error {kind}", xlabel="T (half-iterations)", ylabel="exploitability")
        _t_ticks(ax, iters)
        ax.legend(fontsize=7)
    paths.append(_save(fig, out_dir / "mode_a_vs_mode_b.png"))
    return paths


def _t_ticks(ax: Any, iters: Sequence[int]) -> None:
    """Ticks at the grid's T values only (log axes otherwise label every minor tick)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(list(iters)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticklabels([str(t) for t in iters])


def _save(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return str(path)


def summary_lines(report: dict[str, Any]) -> list[str]:
    """A Markdown table of mode (b) per (solver, kind, delta) row and T column, and the fits."""
    s = report["settings"]
    iters, deltas = sorted(s["iters"]), sorted(s["deltas"])
    cells = {(c["solver"], c["kind"], c["delta"], c["T"]): c for c in report["cells"]}
    lines = ["| solver | error | δ | " + " | ".join(f"T={t}: (b) / (a)" for t in iters) + " |",
             "|---" * (3 + len(iters)) + "|"]
    for solver, kind in itertools.product(s["solvers"], s["kinds"]):
        for d in deltas:
            values = [f"{cells[(solver, kind, d, t)]['mode_b']['exploitability']:.4f} / "
                      f"{cells[(solver, kind, d, t)]['mode_a']['exploitability']:.4f}" for t in iters]
            lines.append(f"| {solver} | {kind} | {d:g} | " + " | ".join(values) + " |")
    if report.get("full_protocol"):
        full = report["full_protocol"]
        lines += ["", f"full protocol (`rebel eval`, T = {full[0]['T']}, oracle {full[0]['oracle_iters']} iterations, "
                  "mode (b) at N sampled policies):", "",
                  "| error | δ | mode (a) | " + " | ".join(f"(b) N={n}" for n in full[0]["mode_b"]) + " |",
                  "|---" * (3 + len(full[0]["mode_b"])) + "|"]
        for f in full:
            lines.append(f"| {f['kind']} | {f['delta']:g} | {f['mode_a']:.4f} | "
                         + " | ".join(f"{v:.4f}" for v in f["mode_b"].values()) + " |")
    lines.append("")
    for key, fit in report["fits"].items():
        b = fit["mode_b"]
        f = b["free_rates"]
        lines.append(f"{key}: mode (b) ≈ {b['a']:.3f}·δ + {b['b']:.3f}/√T + {b['c']:.4f}  (R² of logs "
                     f"{b['r2_log']:.3f}, rms rel. residual {b['rms_relative_residual']:.2f}, {len(b['misses'])} "
                     f"cells off by > {FIT_TOLERANCE:.0%}); best rates: {f['a']:.3f}·δ^{f['delta_power']:g} + "
                     f"{f['b']:.3f}/T^{f['t_power']:g} + {f['c']:.4f} (rms rel. residual "
                     f"{f['rms_relative_residual']:.2f})")
    return lines


# ---------------------------------------------------------------------------------------
# CLI

QUICK = dict(dice=1, faces=3, deltas=(0.0, 0.01, 0.1), iters=(16, 64, 256), leaf_iters=256)


def parse_args(argv: Optional[Sequence[str]]) -> tuple[Settings, argparse.Namespace]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1] if __doc__ else None,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help=f"small grid on 1x3f ({QUICK['deltas']} x {QUICK['iters']}, leaf iterations 256)")
    p.add_argument("--dice", type=int)
    p.add_argument("--faces", type=int)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--deltas", type=float, nargs="+", help="leaf-value errors (max norm over hands)")
    p.add_argument("--iters", type=int, nargs="+", help="root half-iterations T")
    p.add_argument("--solvers", nargs="+", default=["lcfr", "lfp"], help=f"root solvers ({', '.join(SOLVERS)})")
    p.add_argument("--kinds", nargs="+", default=["random", "bias"],
                   help=f"error shapes ({', '.join(LEAF_ERROR_KINDS)})")
    p.add_argument("--leaf-iters", type=int, help="half-iterations of every continuation solve (default 1024)")
    p.add_argument("--oracle-iters", type=int, help="half-iterations of every oracle solve (default: --leaf-iters)")
    p.add_argument("--error-seed", type=int, default=0, help="seed of the random error")
    p.add_argument("--checkpoint", action="append", default=[], metavar="RUN_DIR",
                   help="a `rebel train` run directory to place on the same axes (repeatable)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    p.add_argument("--out-dir", default=DEFAULT_OUT, help="where the JSON and the PNGs go")
    p.add_argument("--full-protocol", type=int, default=0, metavar="N",
                   help="also run rebel eval's full recursive protocol (mode (a) and mode (b) with N sampled "
                        "policies) with the first solver, per kind and --full-deltas (0: not run)")
    p.add_argument("--full-iters", type=int, default=1024, help="T of the full-protocol runs")
    p.add_argument("--full-oracle-iters", type=int, default=256, help="oracle iterations of the full-protocol runs")
    p.add_argument("--full-deltas", type=float, nargs="+", default=[0.0, 0.01, 0.1])
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--refit", metavar="JSON",
                   help="recompute the fits, table and plots of a saved report (no solving)")
    args = p.parse_args(argv)
    base = Settings(**QUICK) if args.quick else Settings()
    given = {k: getattr(args, k) for k in ("dice", "faces", "deltas", "iters", "leaf_iters")
             if getattr(args, k) is not None}
    settings = Settings(**{**asdict(base), **given, "depth": args.depth, "solvers": tuple(args.solvers),
                           "kinds": tuple(args.kinds), "oracle_iters": args.oracle_iters,
                           "error_seed": args.error_seed, "checkpoints": tuple(args.checkpoint),
                           "full_repeats": args.full_protocol, "full_iters": args.full_iters,
                           "full_oracle_iters": args.full_oracle_iters, "full_deltas": tuple(args.full_deltas)})
    settings.deltas, settings.iters = tuple(settings.deltas), tuple(settings.iters)
    try:
        settings.check()
        for run_dir in settings.checkpoints:
            check_checkpoint(settings, run_dir)
        if args.jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    except ValueError as e:
        p.error(str(e))
    return settings, args


def main(argv: Optional[Sequence[str]] = None) -> int:
    settings, args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.refit:
        report = json.loads(Path(args.refit).read_text())
        s = report["settings"]
        report["fits"] = fit_surfaces(s["solvers"], s["kinds"], report["cells"])
    else:
        report = run_sweep(settings, jobs=args.jobs,
                           cache_path=out_dir / "cells.jsonl")
        report["command"] = "python experiments/safe_search_bound.py " + " ".join(
            sys.argv[1:] if argv is None else list(argv))
    if not args.no_plots:
        report["plots"] = plot(report, out_dir)
    path = out_dir / "safe_search_bound.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    os.replace(tmp, path)
    print("\n".join(summary_lines(report)))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
