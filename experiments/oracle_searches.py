"""Exact-leaf (oracle) rows of the search solvers on a Liar's Dice game, under the Table 2
protocol (mode (b), depth 2, T = 1024, N = 1024; each leaf PBS solved with 1,024 LCFR
iterations, as Table 2's oracle row), one evaluation seed at a time:

    python experiments/oracle_searches.py --game 1x4f --searches cfr-avg,cfr-avg-modified,lfp,flop --seeds 0
    python experiments/oracle_searches.py --game 1x4f --report

Each (solver, seed) is `rebel eval --net oracle ... --json`, written atomically to
``OUT/<game>_<solver>_T<T>_d<depth>_seed<seed>.json`` (default OUT:
experiments/results/table2/oracle_searches), so an interrupted invocation keeps its finished
seeds and the next one computes only what is missing. An oracle seed costs about half an hour
on 1x4f with two threads (experiments/results/table2/oracle_cost.json). ``--report`` prints
the rows found (mean +- sd over seeds, each seed) beside the Table 2 cell's trained net
under the same search, and writes ``OUT/<game>_summary.json``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "experiments" / "results" / "table2" / "oracle_searches"
TABLE2 = ROOT / "experiments" / "results" / "table2"
SEARCH_SOLVERS = ("lcfr", "cfr-avg", "cfr-avg-modified", "cfr-avg-play-avg", "cfr-avg-modified-play-avg",
                  "lfp", "flop")
FP_SOLVERS = ("lfp", "flop")  # the rows whose trained net is the FP cell's
ORACLE_ITERATIONS = 1024  # Table 2's oracle: every leaf PBS solved with 1,024 LCFR iterations

log = logging.getLogger("oracle_searches")


class Refused(Exception):
    """A bad argument or a cached file that does not match the asked protocol."""


def parse_game(text: str) -> tuple[int, int]:
    """'1x4f' -> (dice, faces)."""
    try:
        dice, faces = text.removesuffix("f").split("x")
        d, f = int(dice), int(faces)
    except ValueError:
        raise Refused(f"--game must look like 1x4f (dice x faces), got {text!r}") from None
    if d < 1 or f < 2:
        raise Refused(f"--game {text!r}: at least one die and two faces")
    return d, f


def row_path(out: Path, game: str, solver: str, iterations: int, depth: int, seed: int) -> Path:
    return out / f"{game}_{solver}_T{iterations}_d{depth}_seed{seed}.json"


def eval_command(game: str, solver: str, iterations: int, depth: int, repeats: int, threads: int, seed: int,
                 oracle_iterations: int) -> List[str]:
    dice, faces = parse_game(game)
    return [sys.executable, "-m", "rebel", "eval", "--dice", str(dice), "--faces", str(faces), "--net", "oracle",
            "--solver", solver, "--depth", str(depth), "--iters", str(iterations),
            "--oracle-iters", str(oracle_iterations), "--off-path", "skip", "--repeats", str(repeats),
            "--threads", str(threads), "--seed", str(seed), "--no-mode-a", "--no-progress", "--json",
            "search.full_game=false"]


def read_row(path: Path, solver: str, iterations: int, depth: int, repeats: int,
             oracle_iterations: int) -> Dict[str, Any]:
    """A cached seed, refused if it was computed under another protocol."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise Refused(f"{path}: not a JSON file ({err}); move it away") from None
    found = (data.get("solver"), data.get("iterations"), data.get("depth"), data.get("repeats"),
             (data.get("oracle") or {}).get("iterations"))
    wanted = (solver, iterations, depth, repeats, oracle_iterations)
    if data.get("net") != "oracle" or found != wanted:
        raise Refused(f"{path}: computed with (solver, T, depth, N, oracle iterations) = {found}, "
                      f"not {wanted}; move it away")
    return data


def compute(out: Path, game: str, solver: str, iterations: int, depth: int, repeats: int, threads: int,
            seed: int, oracle_iterations: int) -> Path:
    """Runs one seed (unless cached) and writes its JSON atomically."""
    path = row_path(out, game, solver, iterations, depth, seed)
    if path.is_file():
        read_row(path, solver, iterations, depth, repeats, oracle_iterations)
        log.info("%s: cached", path.name)
        return path
    out.mkdir(parents=True, exist_ok=True)
    log.info("%s seed %d: computing (about half an hour on 1x4f with two threads)", solver, seed)
    start = time.perf_counter()
    result = subprocess.run(eval_command(game, solver, iterations, depth, repeats, threads, seed, oracle_iterations),
                            stdout=subprocess.PIPE, check=True, cwd=ROOT)
    fd, tmp = tempfile.mkstemp(dir=out, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(result.stdout)
    os.replace(tmp, path)
    data = read_row(path, solver, iterations, depth, repeats, oracle_iterations)
    log.info("%s seed %d: %.5f (%.0f s)", solver, seed, data["mode_b"][-1]["exploitability"],
             time.perf_counter() - start)
    return path


def trained_row(game: str, solver: str, iterations: int, depth: int) -> Optional[Dict[str, Any]]:
    """The Table 2 cell's final net under the same search (its eval file), if evaluated."""
    cell = f"{game}-{'fp' if solver in FP_SOLVERS else 'cfr'}"
    protocol = solver == ("lfp" if solver in FP_SOLVERS else "lcfr") and iterations == 1024 and depth == 2
    path = TABLE2 / cell / ("eval.json" if protocol else f"eval_{solver}_T{iterations}_d{depth}.json")
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    values = [r["exploitability"] for r in data["runs"]]
    return {"cell": cell, "file": str(path.relative_to(ROOT)), "seeds": [r["seed"] for r in data["runs"]],
            "exploitability": values, "mean": statistics.fmean(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}


def report(out: Path, game: str, solvers: Sequence[str], iterations: int, depth: int, repeats: int,
           oracle_iterations: int) -> Dict[str, Any]:
    rows = []
    for solver in solvers:
        runs = []
        for path in sorted(out.glob(f"{game}_{solver}_T{iterations}_d{depth}_seed*.json")):
            data = read_row(path, solver, iterations, depth, repeats, oracle_iterations)
            runs.append({"seed": data["seed"], "exploitability": data["mode_b"][-1]["exploitability"],
                         "seconds": data["seconds"]["total"], "threads": data["threads"]})
        if not runs:
            continue
        runs.sort(key=lambda r: r["seed"])
        values = [r["exploitability"] for r in runs]
        rows.append({"solver": solver, "runs": runs, "mean": statistics.fmean(values),
                     "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
                     "trained_net": trained_row(game, solver, iterations, depth)})
    summary = {"game": game, "protocol": {"mode": "b", "depth": depth, "iterations": iterations,
                                          "repeats": repeats, "oracle": f"{oracle_iterations} LCFR iterations "
                                                                        "per leaf solve"},
               "rows": rows}
    print(f"| {game}, exact leaves | mean +- sd (seeds) | the trained net, same search |")
    print("|---|---|---|")
    for row in rows:
        seeds = " / ".join(f"{r['exploitability']:.4f}" for r in row["runs"])
        net = row["trained_net"]
        net_text = f"{net['mean']:.4f} +- {net['stdev']:.4f} ({net['cell']})" if net else "not evaluated"
        print(f"| {row['solver']} | {row['mean']:.4f} +- {row['stdev']:.4f} ({seeds}) | {net_text} |")
    return summary


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="1x4f", help="Liar's Dice as DICExFACESf (default 1x4f)")
    parser.add_argument("--searches", default="cfr-avg,cfr-avg-modified,lfp,flop",
                        help=f"comma-separated search solvers to compute, of {', '.join(SEARCH_SOLVERS)} "
                             "(the summary covers every solver found)")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--iters", type=int, default=1024, help="T of each subgame search")
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1024, help="N, mode (b)'s sampled policies")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--oracle-iters", type=int, default=ORACLE_ITERATIONS,
                        help="LCFR iterations of each leaf solve (default: Table 2's oracle, 1,024)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report", action="store_true", help="only summarise the seeds found")
    args = parser.parse_args(list(argv) or None)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    solvers = [s for s in args.searches.split(",") if s]
    try:
        parse_game(args.game)
        bad = [s for s in solvers if s not in SEARCH_SOLVERS]
        if bad or not solvers:
            raise Refused(f"--searches: unknown solver(s) {bad or args.searches!r}; "
                          f"one or more of {', '.join(SEARCH_SOLVERS)}")
        if args.iters < 2 or min(args.depth, args.repeats, args.threads, args.oracle_iters) < 1:
            raise Refused("--iters must be >= 2, --depth, --repeats, --threads and --oracle-iters >= 1")
        seeds = [int(s) for s in args.seeds.split(",") if s]
        if not args.report:
            for seed in seeds:
                for solver in solvers:
                    compute(args.out, args.game, solver, args.iters, args.depth, args.repeats, args.threads, seed,
                            args.oracle_iters)
        # The summary covers every solver with seeds on disk, not only this call's --searches, so a
        # call that adds one solver's seed does not drop the other solvers' rows from the file.
        summary = report(args.out, args.game, SEARCH_SOLVERS, args.iters, args.depth, args.repeats,
                         args.oracle_iters)
    except (Refused, ValueError) as err:
        print(f"oracle_searches.py: error: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=args.out, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(summary, f, indent=2)
    os.replace(tmp, args.out / f"{args.game}_summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
