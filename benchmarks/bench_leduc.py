"""Leduc hold'em full-game speed: seconds per CFR iteration of our solvers against OpenSpiel's
C++ CFR (``pyspiel.CFRSolver``) on the same game, in the same run, on this machine.

    PYTHONPATH=. python benchmarks/bench_leduc.py [--iters 1024] [--openspiel-iters 100] [--out FILE]

One of our iterations is two half-steps (one update of each player), as one OpenSpiel CFR
iteration updates both players, so both sides are compared per full iteration. Our timings
are the solver loop alone; OpenSpiel's are ``evaluate_and_update_policy`` calls (its CFR
keeps the policy tables in C++). Prints one JSON object (and writes it to --out). Without
OpenSpiel the comparison is left out and says why.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import rebel
from rebel.cli.common import emit_report
from rebel.games import make
from rebel.util.machine import cpu_name

#: Issue 58: LCFR on limit Leduc at least this many times faster per iteration than OpenSpiel's CFR.
GOAL_SPEEDUP = 10.0
SOLVERS = ("cfr", "lcfr", "dcfr", "cfr+", "lfp")


def time_ours(game: rebel.Game, tree: rebel.PublicTree, solver: str, half_steps: int, repeats: int) -> dict[str, Any]:
    runs = []
    s = None
    for _ in range(repeats):
        s = rebel.SubgameSolver(game, tree, solver=solver)
        t0 = time.perf_counter()
        s.run(half_steps)
        runs.append(time.perf_counter() - t0)
    assert s is not None
    full_iterations = half_steps / 2
    return {"seconds_median": statistics.median(runs), "seconds_min": min(runs),
            "seconds_per_iteration": statistics.median(runs) / full_iterations,
            "exploitability": rebel.exploitability(game, tree, s.average_policy())["exploitability"]}


def time_openspiel(game_string: str, iterations: int, repeats: int) -> dict[str, Any]:
    import pyspiel

    runs = []
    for _ in range(repeats):
        solver = pyspiel.CFRSolver(pyspiel.load_game(game_string))
        t0 = time.perf_counter()
        for _ in range(iterations):
            solver.evaluate_and_update_policy()
        runs.append(time.perf_counter() - t0)
    return {"iterations": iterations, "seconds_median": statistics.median(runs),
            "seconds_per_iteration": statistics.median(runs) / iterations}


def run(args: argparse.Namespace) -> dict[str, Any]:
    import rebel.interop.openspiel as ros

    results: dict[str, Any] = {}
    for name in ("leduc", "leduc_nolimit"):
        game = make(name)
        tree = rebel.build_tree(game)
        entry: dict[str, Any] = {"nodes": len(tree), "chance_nodes": len(tree.chance_nodes), "solvers": {}}
        for solver in SOLVERS:
            entry["solvers"][solver] = time_ours(game, tree, solver, args.iters, args.repeats)
            print(f"# {name} {solver:>4}: {entry['solvers'][solver]['seconds_median']:.4f} s", file=sys.stderr)
        if ros.available():
            os_run = time_openspiel(ros.openspiel_game_string(game), args.openspiel_iters, args.repeats)
            entry["openspiel_cfr"] = os_run
            for solver in ("cfr", "lcfr"):
                entry[f"{solver}_speedup_per_iteration_vs_openspiel_cfr"] = (
                    os_run["seconds_per_iteration"] / entry["solvers"][solver]["seconds_per_iteration"])
        else:
            entry["openspiel_cfr"] = "skipped: OpenSpiel is not installed (pip install .[openspiel])"
        results[name] = entry
    return {
        "benchmark": "leduc_full_game",
        "cpu": cpu_name(),
        "logical_cpus": os.cpu_count(),
        "load_average_1_5_15": list(os.getloadavg()),
        "half_steps": args.iters,
        "repeats": args.repeats,
        "goal": {"lcfr_speedup_per_iteration_vs_openspiel_cfr_leduc": GOAL_SPEEDUP},
        "games": results,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=1024, help="our half-steps per run")
    p.add_argument("--openspiel-iters", type=int, default=100, help="OpenSpiel CFR iterations per run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    if args.iters < 2 or args.openspiel_iters < 1 or args.repeats < 1:
        p.error("--iters must be >= 2 and --openspiel-iters, --repeats >= 1")
    emit_report(run(args), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
