"""Hold'em endgame solving speed (issue 92): iterations and seconds to reach 0.5% and 0.1% of the
pot in exact exploitability on the shipped spots, the memory, and a showdown micro-benchmark.

    python benchmarks/bench_holdem_solve.py --threads 2 1 --repeats 3 \\
        --baseline experiments/results/benchmarks/bench_holdem_solve_postflop_solver_zen3.json \\
        --json-out experiments/results/benchmarks/bench_holdem_solve_zen3.json

Each run solves one spot from scratch in a fresh process (so its peak RSS is its own): the
expanded game is built (``build_endgame``; ``--isomorphism``: with suit isomorphism), the solver
allocated (``--solver``, ``dcfr-pfs`` by default: postflop-solver's DCFR schedule), then
iterated ``--check-every`` (10) iterations at a time with the exact exploitability after each
block, as postflop-solver's ``solve`` checks it, until the last target is reached (or
``--max-iterations``). A target's seconds are those of the solve loop (iterations and checks) up to the
first check at or under it; building and allocating are reported apart, and so are the seconds
per iteration (checks included), which split a time ratio into iterations x speed. Figures are
medians over ``--repeats`` runs; the load average before each run is recorded, and so are the
CPU seconds other processes used during it (the machine's busy time from /proc/stat less the
run's own); ``--wait-quiet`` waits before each run until the machine is idle (time it on a quiet
machine).

Spots: a shipped name (``turn_example``: rebel/configs/spots/turn_example.yaml), or a YAML path;
``NAME@uncapped`` drops the spot's raise cap (postflop-solver has none: ``teh@uncapped`` is the
TEH spot as postflop-solver builds it, 1,140 betting nodes). ``--at-iterations 170`` also records
the seconds at that iteration count.

``--baseline FILE`` reads postflop-solver's figures measured side by side on this machine (the
same spots, the same fields: see experiments/results/benchmarks/) and prints ours / theirs.

The showdown micro-benchmark times ``HoldemEndgame.terminal_values`` at one river showdown node
with every hand in both ranges (river_example: 1,081 hands each), linear against the dense
pairwise sum (``dense=True``, the test oracle); issue 92's target is a speed-up of at least 1,000.
Both are timed through the Python binding, so each call also pays its conversions.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import rebel
from rebel import _core
from rebel.cli.common import emit_report
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import Spot, load_spot
from rebel.search.holdem_solve import HOLDEM_SOLVERS
from rebel.util.machine import cpu_name

SPOTS_DIR = Path(rebel.__file__).resolve().parent / "configs" / "spots"
DEFAULT_SPOTS = ("turn_example", "turn_example_full", "river_example")
#: Issue 92: the linear showdown at least this many times faster than the dense pairwise sum.
GOAL_SHOWDOWN_SPEEDUP = 1000.0


def resolve_spot(spec: str) -> Spot:
    """A spot from a shipped name or a path, with ``@uncapped`` dropping its raise cap."""
    name, _, variant = spec.partition("@")
    path = Path(name)
    if not path.is_file():
        path = SPOTS_DIR / (name if name.endswith(".yaml") else f"{name}.yaml")
    if not path.is_file():
        known = sorted(p.stem for p in SPOTS_DIR.glob("*.yaml"))
        raise ValueError(f"spot {name!r} not found (a YAML file, or one of: {', '.join(known)})")
    spot = load_spot(path)
    if variant == "uncapped":
        return dataclasses.replace(spot, raise_cap=None)
    if variant:
        raise ValueError(f"spot {spec!r}: unknown variant {variant!r} (only @uncapped)")
    return spot


def _proc_status_bytes(field: str) -> int | None:
    """VmRSS / VmHWM (peak RSS) of this process from /proc/self/status, in bytes (None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (user, nice, system, irq, softirq;
    /proc/stat), or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def wait_for_quiet(busy_fraction: float = 0.05, window: float = 2.0, timeout: float = 3600.0) -> float:
    """Waits until the machine's CPUs were busy at most ``busy_fraction`` of one CPU over a
    ``window``-second sample (at most ``timeout`` seconds); returns the seconds waited."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        before = _busy_cpu_seconds()
        time.sleep(window)
        after = _busy_cpu_seconds()
        if before is None or after is None or after - before <= busy_fraction * window:
            break
    return time.perf_counter() - start


def normalized_weights(game: _core.HoldemEndgame, player: int) -> np.ndarray:
    """Each hand's weight times the opponent's weight on the hands that share no card with it
    (postflop-solver's normalized weights: how often the hand is dealt against the range)."""
    own, opp = game.hands(player), game.hands(1 - player)
    clash = ((own[:, None, 0] == opp[None, :, 0]) | (own[:, None, 0] == opp[None, :, 1])
             | (own[:, None, 1] == opp[None, :, 0]) | (own[:, None, 1] == opp[None, :, 1]))
    return game.weights(player) * np.where(clash, 0.0, game.weights(1 - player)[None, :]).sum(axis=1)


def solve_once(spec: str, threads: int, solver: str, targets_pct: list[float], max_iterations: int,
               check_every: int, at_iterations: list[int], compressed: bool = False,
               isomorphism: bool = False) -> dict[str, Any]:
    """One solve of a spot (run in a fresh process): the figures of one run."""
    rss_start = _proc_status_bytes("VmRSS")
    spot = resolve_spot(spec)
    t0 = time.perf_counter()
    game = build_endgame(spot, isomorphism=isomorphism)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine = _core.HoldemSolver(game, solver, threads, compressed)
    allocate_s = time.perf_counter() - t0
    targets = {f"{pct:g}%": pct * spot.pot / 100.0 for pct in targets_pct}
    reached: dict[str, dict[str, float]] = {}
    at: dict[str, dict[str, float]] = {}
    curve: list[list[float]] = []
    last_needed = max(at_iterations, default=0)
    start = time.perf_counter()
    while engine.iterations < max_iterations:
        engine.iterate(min(check_every, max_iterations - engine.iterations))
        exploitability = engine.exploitability()
        elapsed = time.perf_counter() - start
        it = engine.iterations
        curve.append([it, elapsed, exploitability])
        for label, chips in targets.items():
            if label not in reached and exploitability <= chips:
                reached[label] = {"iterations": it, "seconds": elapsed, "exploitability": exploitability}
        if it in at_iterations:
            at[str(it)] = {"seconds": elapsed, "exploitability": exploitability}
        if len(reached) == len(targets) and it >= last_needed:
            break
    solve_s = time.perf_counter() - start
    values = engine.average_values()
    report = engine.node_report(0)
    equity = []
    for p, key in enumerate(("oop", "ip")):
        w = normalized_weights(game, p)
        eq = np.nan_to_num(np.asarray(report[key]["equity"]))
        equity.append(float((eq * w).sum() / w.sum()))
    return {"iterations": engine.iterations, "exploitability": curve[-1][2] if curve else None,
            "exploitability_pct": 100 * curve[-1][2] / spot.pot if curve else None,
            "to_target": reached, "at_iterations": at, "build_seconds": build_s, "allocate_seconds": allocate_s,
            "solve_seconds": solve_s, "size": dict(game.size()), "storage_bytes": engine.storage_bytes,
            "rss_at_start_bytes": rss_start, "peak_rss_bytes": _proc_status_bytes("VmHWM"),
            "hands": [game.num_hands(0), game.num_hands(1)], "pot": spot.pot,
            "process_cpu_seconds": _own_cpu_seconds(), "core_mtime": _build_description()["core_mtime"],
            "root_values": list(values), "root_equity": equity, "curve": curve}


def _own_cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _build_description() -> dict[str, Any]:
    """Which build of the core ran: the checkout's commit (and whether it had changes) and the
    extension's modification time (the core is rebuilt in place)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    out: dict[str, Any] = {"core_mtime": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(
        Path(_core.__file__).stat().st_mtime))}
    try:
        out["commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                       check=True).stdout.strip()
        out["changed_files"] = len(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                                  capture_output=True, text=True, check=True).stdout.splitlines())
    except (OSError, subprocess.CalledProcessError):
        pass
    return out


def _median_runs(runs: list[dict[str, Any]], targets: list[str], at_iterations: list[int]) -> dict[str, Any]:
    """Medians over the runs of one spot and thread count (a target some run missed is left out)."""
    out: dict[str, Any] = {"to_target": {}, "at_iterations": {}}
    for label in targets:
        hits = [r["to_target"][label] for r in runs if label in r["to_target"]]
        if len(hits) == len(runs):
            out["to_target"][label] = {"iterations_median": statistics.median(h["iterations"] for h in hits),
                                       "seconds_median": statistics.median(h["seconds"] for h in hits),
                                       "iterations": [h["iterations"] for h in hits],
                                       "seconds": [h["seconds"] for h in hits]}
    for it in at_iterations:
        hits = [r["at_iterations"][str(it)] for r in runs if str(it) in r["at_iterations"]]
        if len(hits) == len(runs):
            out["at_iterations"][str(it)] = {"seconds_median": statistics.median(h["seconds"] for h in hits),
                                             "seconds": [h["seconds"] for h in hits]}
    first = runs[0]
    out.update({
        "solve_seconds_median": statistics.median(r["solve_seconds"] for r in runs),
        "seconds_per_iteration_median": statistics.median(r["solve_seconds"] / r["iterations"] for r in runs),
        "build_seconds_median": statistics.median(r["build_seconds"] for r in runs),
        "allocate_seconds_median": statistics.median(r["allocate_seconds"] for r in runs),
        "solver_bytes": first["size"]["solver_bytes"], "tree_bytes": first["size"]["tree_bytes"],
        "storage_bytes": first["storage_bytes"],
        "peak_rss_bytes_median": statistics.median(r["peak_rss_bytes"] or 0 for r in runs),
        "rss_at_start_bytes_median": statistics.median(r["rss_at_start_bytes"] or 0 for r in runs),
        "final": {"iterations": first["iterations"], "exploitability": first["exploitability"],
                  "exploitability_pct": first["exploitability_pct"], "root_values": first["root_values"],
                  "root_equity": first["root_equity"]},
    })
    return out


def showdown_speedup(spec: str, repeats: int, seconds: float) -> dict[str, Any]:
    """terminal_values at the spot's first showdown node: calls per second, linear and dense."""
    game = build_endgame(resolve_spot(spec))
    node = next(i for i in range(game.num_nodes) if game.node(i)["kind"] == "showdown")
    reach = np.asarray(game.weights(1), dtype=np.float64)
    linear = game.terminal_values(node, 0, reach)
    dense = game.terminal_values(node, 0, reach, dense=True)

    def per_call(dense_flag: bool) -> float:
        calls, start = 0, time.perf_counter()
        while True:
            game.terminal_values(node, 0, reach, dense=dense_flag)
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds and calls >= 3:
                return elapsed / calls

    lin = [per_call(False) for _ in range(repeats)]
    den = [per_call(True) for _ in range(repeats)]
    return {"spot": spec, "node": node, "line": game.node(node)["label"], "board": game.node(node)["board"],
            "hands": [game.num_hands(0), game.num_hands(1)],
            "linear_seconds_per_call_median": statistics.median(lin), "linear_seconds_per_call": lin,
            "dense_seconds_per_call_median": statistics.median(den), "dense_seconds_per_call": den,
            "speedup": statistics.median(den) / statistics.median(lin),
            "max_abs_difference": float(np.max(np.abs(linear - dense))),
            "goal_speedup": GOAL_SHOWDOWN_SPEEDUP,
            "goal_met": bool(statistics.median(den) / statistics.median(lin) >= GOAL_SHOWDOWN_SPEEDUP),
            "protocol": f"calls repeated for at least {seconds:g} s per batch, median of {repeats} batches; "
                        "each call includes the binding's conversions (reach in, values out)"}


def compare(ours: dict[str, Any], baseline: dict[str, Any], compressed: bool = False) -> dict[str, Any]:
    """Ours / theirs for every spot, thread count and target both have (seconds, iterations, memory;
    ``compressed``: our 16-bit storage against their compressed memory as well)."""
    out: dict[str, Any] = {}
    for spot, entry in ours.items():
        theirs_spot = baseline.get("spots", {}).get(spot)
        if not theirs_spot:
            continue
        for threads, mine in entry["threads"].items():
            theirs = theirs_spot.get("threads", {}).get(threads)
            if not theirs:
                continue
            row: dict[str, Any] = {}
            for label, m in mine["to_target"].items():
                t = theirs.get("to_target", {}).get(label)
                if t:
                    row[label] = {"seconds_ratio": m["seconds_median"] / t["seconds_median"],
                                  "iterations_ratio": m["iterations_median"] / t["iterations_median"]}
            if theirs.get("seconds_per_iteration_median"):
                row["seconds_per_iteration_ratio"] = (mine["seconds_per_iteration_median"]
                                                      / theirs["seconds_per_iteration_median"])
            for it, m in mine["at_iterations"].items():
                t = theirs.get("at_iterations", {}).get(it)
                if t:
                    row[f"{it}_iterations"] = {"seconds_ratio": m["seconds_median"] / t["seconds_median"]}
            if theirs.get("memory_usage_bytes"):
                row["solver_bytes_over_memory_usage"] = mine["solver_bytes"] / theirs["memory_usage_bytes"]
            if compressed and theirs.get("memory_usage_compressed_bytes"):
                row["storage_bytes_over_memory_usage_compressed"] = (mine["storage_bytes"]
                                                                     / theirs["memory_usage_compressed_bytes"])
            if theirs.get("peak_rss_bytes_median"):
                row["peak_rss_ratio"] = mine["peak_rss_bytes_median"] / theirs["peak_rss_bytes_median"]
            out.setdefault(spot, {})[threads] = row
    return out


def _print_comparison(ratios: dict[str, Any]) -> None:
    for spot, by_threads in ratios.items():
        for threads, row in by_threads.items():
            parts = [f"{k}: {v['seconds_ratio']:.2f}x s" + (f", {v['iterations_ratio']:.2f}x it" if "iterations_ratio"
                                                            in v else "")
                     for k, v in row.items() if isinstance(v, dict)]
            if "seconds_per_iteration_ratio" in row:
                parts.append(f"per iteration {row['seconds_per_iteration_ratio']:.2f}x")
            if "solver_bytes_over_memory_usage" in row:
                parts.append(f"memory {row['solver_bytes_over_memory_usage']:.2f}x")
            print(f"# ours/theirs {spot} {threads} thread(s): " + "; ".join(parts), file=sys.stderr)


def run(args: argparse.Namespace) -> dict[str, Any]:
    targets = [f"{pct:g}%" for pct in args.targets]
    ctx = multiprocessing.get_context("spawn")
    spots: dict[str, Any] = {}
    for spec in args.spots:
        entry: dict[str, Any] = {"threads": {}}
        for threads in args.threads:
            runs = []
            for _ in range(args.repeats):
                waited = wait_for_quiet() if args.wait_quiet else 0.0
                load = list(os.getloadavg())
                busy = _busy_cpu_seconds()
                with ctx.Pool(1) as pool:
                    one = pool.apply(solve_once, (spec, threads, args.solver, args.targets, args.max_iterations,
                                                  args.check_every, args.at_iterations, args.compressed,
                                                  args.isomorphism))
                after = _busy_cpu_seconds()
                one["load_average_before"] = load
                one["waited_for_quiet_seconds"] = waited
                if busy is not None and after is not None:
                    one["other_cpu_seconds"] = max(0.0, after - busy - one["process_cpu_seconds"])
                if not args.keep_curves:
                    one.pop("curve")
                runs.append(one)
                reached = ", ".join(f"{k} at {v['iterations']} it, {v['seconds']:.3f} s"
                                    for k, v in one["to_target"].items())
                print(f"# {spec} {threads} thread(s): {reached or 'no target reached'}", file=sys.stderr)
            summary = _median_runs(runs, targets, args.at_iterations)
            summary["runs"] = runs
            entry["threads"][str(threads)] = summary
        first = entry["threads"][str(args.threads[0])]["runs"][0]
        entry["hands"] = first["hands"]
        entry["pot"] = first["pot"]
        entry["size"] = first["size"]
        spots[spec] = entry
    report: dict[str, Any] = {
        "benchmark": "holdem_solve", "cpu": cpu_name(), "logical_cpus": os.cpu_count(),
        "command": "python benchmarks/bench_holdem_solve.py " + " ".join(args.argv), "build": _build_description(),
        "solver": args.solver, "compressed": args.compressed, "isomorphism": args.isomorphism,
        "threads": args.threads, "repeats": args.repeats,
        "targets": targets,
        "check_every": args.check_every, "max_iterations": args.max_iterations,
        "protocol": "one fresh process per run; the game built and the solver allocated before the clock starts; "
                    f"{args.check_every} iterations then the exact exploitability, repeated until the last target; "
                    "a target's seconds are the solve loop's (iterations and checks) up to the first check at or "
                    "under it; medians over the repeats; memory: solver_bytes and tree_bytes from game.size(), "
                    "other_cpu_seconds: the machine's busy CPU time during the run less the run's own; "
                    "the peak RSS of the run's process (VmHWM, the Python interpreter and numpy included: "
                    "rss_at_start_bytes is before the spot was loaded)",
        "spots": spots,
    }
    if args.showdown_spot:
        report["showdown"] = showdown_speedup(args.showdown_spot, args.repeats, args.showdown_seconds)
        sd = report["showdown"]
        print(f"# showdown ({sd['hands'][0]} x {sd['hands'][1]} hands): linear "
              f"{sd['linear_seconds_per_call_median'] * 1e6:.1f} us, "
              f"dense {sd['dense_seconds_per_call_median'] * 1e3:.2f} ms a call: {sd['speedup']:.0f}x", file=sys.stderr)
    if args.baseline:
        baseline = json.loads(Path(args.baseline).read_text())
        ratios = compare(spots, baseline, args.compressed)
        report["baseline"] = {"file": args.baseline, "solver": baseline.get("solver"), "cpu": baseline.get("cpu")}
        report["ours_over_baseline"] = ratios
        _print_comparison(ratios)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spots", nargs="+", default=list(DEFAULT_SPOTS),
                   help=f"shipped names or YAML paths, NAME@uncapped without the raise cap (default: "
                        f"{' '.join(DEFAULT_SPOTS)})")
    p.add_argument("--threads", type=int, nargs="+", default=[1], help="thread counts to run (default 1)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--solver", default="dcfr-pfs", choices=HOLDEM_SOLVERS)
    p.add_argument("--compressed", action="store_true",
                   help="regrets and strategies in 16 bits (HoldemSolver(compressed=True))")
    p.add_argument("--isomorphism", action="store_true",
                   help="build the games with suit isomorphism (build_endgame(isomorphism=True))")
    p.add_argument("--targets", type=float, nargs="+", default=[0.5, 0.1],
                   help="exploitability targets in percent of the pot (default 0.5 0.1)")
    p.add_argument("--max-iterations", type=int, default=5000)
    p.add_argument("--check-every", type=int, default=10)
    p.add_argument("--at-iterations", type=int, nargs="*", default=[],
                   help="also record the seconds at these iteration counts (multiples of --check-every)")
    p.add_argument("--showdown-spot", default="river_example",
                   help="the spot of the showdown micro-benchmark ('' to skip; default river_example)")
    p.add_argument("--showdown-seconds", type=float, default=0.3, help="seconds per timed batch of calls")
    p.add_argument("--wait-quiet", action="store_true",
                   help="before each run, wait until the machine is idle (other processes below 5%% of a CPU)")
    p.add_argument("--keep-curves", action="store_true", help="keep each run's exploitability curve")
    p.add_argument("--baseline", help="postflop-solver's figures (JSON) to print ours / theirs against")
    p.add_argument("--json-out", help="also write the JSON report here")
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.repeats < 1 or args.check_every < 1 or args.max_iterations < 1 or min(args.threads) < 1:
        p.error("--repeats, --check-every, --max-iterations and --threads must be >= 1")
    if any(t <= 0 for t in args.targets):
        p.error("--targets must be positive")
    if any(it % args.check_every for it in args.at_iterations):
        p.error("--at-iterations must be multiples of --check-every")
    args.targets = sorted(args.targets, reverse=True)
    try:
        for spec in args.spots:
            resolve_spot(spec)
    except ValueError as e:
        p.error(str(e))
    emit_report(run(args), args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
