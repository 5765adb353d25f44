"""Random river public belief states below a turn spot, solved exactly: training data for a
river value net (issue 93; rebel/train/holdem_river_data.py says the recipe and the format).

Shards of ``--shard-size`` examples go to ``--out``; shard k is drawn from the seed (seed, k), so
a killed run resumes (present shards are skipped) and the same command gives the same files.
``--workers`` processes solve shards side by side, one thread each. At the end the rate (examples
per second of wall time) and the solves' iterations are logged and written to
``--out``/summary.json with the CPU's name.

    python experiments/holdem_river_data.py --spot configs/spots/turn_two_tone.yaml \\
        --examples 2000 --out runs/river_two_tone --workers 2
"""
from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from rebel.games.holdem_spot import load_spot
from rebel.train.holdem_river_data import RiverDataSettings, read_shards, shard_path, write_shard
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.progress import Progress

log = logging.getLogger("holdem_river_data")


def cpu_name() -> str:
    """The CPU's model name with its family and model numbers (Linux), for speed figures."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "unknown"
    return f"{fields.get('model name', 'unknown')} (family {fields.get('cpu family', '?')}, model " \
           f"{fields.get('model', '?')})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spot", required=True, help="a turn spot file (configs/spots/...)")
    parser.add_argument("--examples", type=int, required=True)
    parser.add_argument("--shard-size", type=int, default=100)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--solver", default="dcfr")
    parser.add_argument("--target", type=float, default=0.5, help="exploitability of each solve, %% of the pot")
    parser.add_argument("--max-iterations", type=int, default=2000)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("rebel.games").setLevel(logging.WARNING)  # one tree line per solve otherwise
    if args.examples < 1 or args.shard_size < 1 or args.workers < 1:
        parser.error("--examples, --shard-size and --workers must be at least 1")
    try:
        template = load_spot(args.spot)
    except (OSError, ValueError) as e:
        parser.error(str(e))
    if template.street != 1:
        parser.error(f"{args.spot} starts on the {('flop', 'turn', 'river')[template.street]}; a turn spot is needed")
    settings = RiverDataSettings(solver=args.solver, target_pct=args.target, max_iterations=args.max_iterations)
    out = Path(args.out)
    shards = list(range((args.examples + args.shard_size - 1) // args.shard_size))
    todo = [k for k in shards if not shard_path(out, k).exists()]
    log.info("%d shards of %d examples, %d to solve, %d workers", len(shards), args.shard_size, len(todo), args.workers)
    started = time.perf_counter()
    with Progress("river shards", len(todo), "shard") as bar, ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(write_shard, template, out, k, args.shard_size, args.seed, settings) for k in todo]
        for done, future in enumerate(futures, 1):
            future.result()
            bar(done)
    seconds = time.perf_counter() - started
    data = list(read_shards([shard_path(out, k) for k in shards]))
    iterations = np.concatenate([d["iterations"] for d in data])
    exploitability = np.concatenate([d["exploitability_pct"] for d in data])
    solved = args.shard_size * len(todo)
    summary = {"spot": args.spot, "examples": int(len(iterations)), "seed": args.seed, "workers": args.workers,
               "solver": args.solver, "target_pct": args.target, "cpu": cpu_name(),
               "solved_this_run": solved, "seconds_this_run": seconds,
               "examples_per_second": solved / seconds if solved else None,
               "iterations_median": float(np.median(iterations)), "iterations_max": int(iterations.max()),
               "exploitability_pct_max": float(exploitability.max()),
               "command": "python experiments/holdem_river_data.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    atomic_write_bytes(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode())
    log.info("%s", json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
