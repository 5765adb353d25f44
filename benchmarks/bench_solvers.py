"""Full-game solver benchmark: seconds for N iterations of every solver, seconds per exact
exploitability, peak memory; compared with the original ReBeL C++ core's anchors.

    PYTHONPATH=. python benchmarks/bench_solvers.py [--iters 1024] [--repeats 3] [--out FILE]

Prints one JSON object on stdout (and writes it to --out if given). Timings are the wall
time of the solver loop alone (``SubgameSolver.run``), the median over ``--repeats`` fresh
solvers; tree building and solver construction are reported separately.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import rebel
from rebel.cli.common import emit_report
from rebel.games import make
from rebel.search.solve import SOLVERS

#: The original ReBeL core, measured on this class of machine: 1024 linear-CFR iterations,
#: and one exact exploitability of a 2x3f policy.
BASELINE = {
    "source": "original ReBeL C++ core (facebookresearch/rebel), measured on this class of machine",
    "lcfr_1024_seconds": {"1x4f": 0.05, "1x5f": 0.25, "1x6f": 2.0, "2x3f": 2.9},
    "exploitability_2x3f_ms": [12.0, 22.0],
}
GOALS = {"lcfr_1024_seconds_2x3f": 0.3, "exploitability_2x3f_ms": 5.0, "speedup_vs_original_1x6f_2x3f": 10.0}
GAMES = {"1x4f": (1, 4), "1x5f": (1, 5), "1x6f": (1, 6), "2x3f": (2, 3)}


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024.0 if sys.platform != "darwin" else kib / 2**20


def machine_info() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "load_average_1_5_15": list(os.getloadavg()),
            "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__, "rebel_commit": commit}


def time_solver(game: rebel.Game, tree: rebel.PublicTree, solver: str, iters: int, repeats: int) -> dict[str, Any]:
    """Median/min seconds of ``iters`` iterations over ``repeats`` fresh solvers."""
    runs, construct = [], []
    s = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = rebel.SubgameSolver(game, tree, solver=solver)
        t1 = time.perf_counter()
        s.run(iters)
        runs.append(time.perf_counter() - t1)
        construct.append(t1 - t0)
    assert s is not None
    expl = rebel.exploitability(game, tree, s.average_policy())["exploitability"]
    return {"seconds_median": statistics.median(runs), "seconds_min": min(runs), "seconds_all": runs,
            "construct_seconds_median": statistics.median(construct), "exploitability": expl}


def time_exploitability(game: rebel.Game, tree: rebel.PublicTree, policy: np.ndarray, repeats: int) -> dict[str, float]:
    """Milliseconds per exact exploitability call (includes the numpy -> C++ copy and validation)."""
    rebel.exploitability(game, tree, policy)  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        rebel.exploitability(game, tree, policy)
        times.append(time.perf_counter() - t0)
    return {"ms_median": 1e3 * statistics.median(times), "ms_min": 1e3 * min(times), "calls": repeats}


def run(args: argparse.Namespace) -> dict[str, Any]:
    machine = machine_info()  # before the runs, so its load average is the starting one
    results: dict[str, Any] = {}
    for name in args.games:
        D, F = GAMES[name]
        game = make("liars_dice", num_dice=D, num_faces=F)
        t0 = time.perf_counter()
        tree = rebel.build_tree(game)
        build = time.perf_counter() - t0
        entry: dict[str, Any] = {"nodes": len(tree), "hands": game.num_hands, "tree_build_seconds": build,
                                 "solvers": {}}
        for solver in args.solvers:
            entry["solvers"][solver] = time_solver(game, tree, solver, args.iters, args.repeats)
            print(f"# {name} {solver:>4}: {entry['solvers'][solver]['seconds_median']:.4f} s", file=sys.stderr)
        s = rebel.SubgameSolver(game, tree, solver="lcfr")
        s.run(args.iters)
        entry["exploitability_timing"] = time_exploitability(game, tree, s.average_policy(), args.expl_repeats)
        entry["peak_rss_mib_so_far"] = peak_rss_mib()
        base = BASELINE["lcfr_1024_seconds"].get(name)
        if base is not None and args.iters == 1024 and "lcfr" in entry["solvers"]:
            entry["lcfr_speedup_vs_original"] = base / entry["solvers"]["lcfr"]["seconds_median"]
        results[name] = entry

    summary: dict[str, Any] = {}
    if "2x3f" in results:
        ms = results["2x3f"]["exploitability_timing"]["ms_median"]
        summary["exploitability_2x3f_ms"] = ms
        summary["exploitability_2x3f_speedup_vs_original"] = [b / ms for b in BASELINE["exploitability_2x3f_ms"]]
        if "lcfr" in results["2x3f"]["solvers"]:
            summary["lcfr_2x3f_seconds"] = results["2x3f"]["solvers"]["lcfr"]["seconds_median"]
    summary["lcfr_speedup_vs_original"] = {k: v["lcfr_speedup_vs_original"] for k, v in results.items()
                                           if "lcfr_speedup_vs_original" in v}
    return {
        "benchmark": "full_game_solvers",
        "iterations": args.iters,
        "repeats": args.repeats,
        "machine": machine,
        "baseline": BASELINE,
        "goals": GOALS,
        "games": results,
        "summary": summary,
        "peak_rss_mib": peak_rss_mib(),
        "load_average_at_end": list(os.getloadavg()),  # other processes on a shared machine skew timings
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", choices=list(GAMES), default=list(GAMES))
    p.add_argument("--solvers", nargs="+", choices=SOLVERS, default=list(SOLVERS))
    p.add_argument("--iters", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--expl-repeats", type=int, default=50)
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    if args.iters < 0 or args.repeats < 1 or args.expl_repeats < 1:
        p.error("--iters must be >= 0 and --repeats, --expl-repeats >= 1")
    report = run(args)
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
