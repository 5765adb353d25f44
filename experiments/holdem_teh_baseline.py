"""The turn endgame of the paper (TEH) solved by full-game CFR: the baseline curve that ReBeL on
hold'em (issue 93) is measured against.

TEH as shipped in configs/spots/teh.yaml: turn, board Td9d6h 2c, 1,000 each in the pot, stacks
of 20,000 behind, both ranges uniform over the hands the board allows (1,128 each), bets of half
and one pot and all-in, raises the same, at most three bets or raises a street. For each solver
(LCFR and DCFR by default) this runs ``--iterations`` iterations on ``--threads`` threads and
measures the exact exploitability of the average strategy at each checkpoint (125, 250, 500 and
1,000 iterations), in chips and in percent of the pot, with the solving seconds (the checks'
own time left out) and the memory. Each solver's result is written as soon as it finishes, and a
solver already in the output file is skipped unless ``--force`` (a killed run resumes there).

    python experiments/holdem_teh_baseline.py --threads 2 \\
        --out experiments/results/holdem/teh_baseline_zen3/teh_baseline.json
"""
from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

from rebel import _core
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import load_spot
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.machine import cpu_name

log = logging.getLogger("holdem_teh_baseline")

SPOT = Path(__file__).resolve().parent.parent / "rebel" / "configs" / "spots" / "teh.yaml"


def run_solver(game: _core.HoldemEndgame, pot: int, solver: str, threads: int,
               checkpoints: list[int]) -> dict[str, Any]:
    """One solver's curve: exploitability at each checkpoint and the seconds spent iterating."""
    engine = _core.HoldemSolver(game, solver, threads)
    curve = []
    solving = 0.0
    for target in checkpoints:
        started = time.perf_counter()
        engine.iterate(target - engine.iterations)
        solving += time.perf_counter() - started
        started = time.perf_counter()
        chips = engine.exploitability()
        check = time.perf_counter() - started
        curve.append({"iterations": target, "exploitability": chips, "percent_of_pot": 100 * chips / pot,
                      "solving_seconds": solving, "check_seconds": check})
        log.info("%s: %d iterations, %.4f chips (%.4f%% of the pot), %.1f s solving", solver, target, chips,
                 100 * chips / pot, solving)
    return {"solver": solver, "threads": threads, "curve": curve, "storage_bytes": engine.storage_bytes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spot", default=str(SPOT), help="the spot file (default: the shipped TEH)")
    parser.add_argument("--solvers", nargs="+", default=["dcfr", "lcfr"])
    parser.add_argument("--checkpoints", nargs="+", type=int, default=[125, 250, 500, 1000])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", required=True, help="JSON file (solvers already in it are skipped)")
    parser.add_argument("--force", action="store_true", help="run every solver again")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    report: dict[str, Any] = json.loads(out.read_text()) if out.exists() and not args.force else {}
    spot = load_spot(args.spot)
    game = build_endgame(spot)
    report.update({"spot": str(Path(args.spot).name), "description": spot.describe(), "pot": spot.pot,
                   "stack": spot.stack, "hands": [game.num_hands(0), game.num_hands(1)], "size": dict(game.size()),
                   "cpu": cpu_name(),
                   "command": "python experiments/holdem_teh_baseline.py " + " ".join(argv or sys.argv[1:])})
    report.setdefault("solvers", {})
    for solver in args.solvers:
        if solver in report["solvers"] and not args.force:
            log.info("%s: already in %s", solver, out)
            continue
        report["solvers"][solver] = run_solver(game, spot.pot, solver, args.threads, sorted(args.checkpoints))
        report["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, (json.dumps(report, indent=1) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
