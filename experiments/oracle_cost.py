"""What the exact-leaf (oracle net) row of Table 2 would cost: mode (b) timed at small N.

The oracle net answers each leaf query of the depth-limited search by solving the game below
that leaf (1024 linear-CFR iterations), so its evaluation grows with the game far faster than
a trained net's. This script times ``rebel eval --net oracle`` (the paper's protocol: depth 2,
T = 1024, mode (b)) at two small N per game, fits seconds = fixed + per_policy * N (the fixed
part is the root subgame's trajectory, solved once and shared by every sampled policy) and
extrapolates to N = 1024. A run that outlasts ``--timeout`` is stopped and recorded as a lower
bound. 1x4f, whose N = 1024 oracle evaluation was measured in full (34 minutes, docs/results.md),
checks the extrapolation.

    python experiments/oracle_cost.py --games 1x4f,1x5f,1x6f,2x3f --out experiments/results/table2/oracle_cost.json
"""
from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.machine import cpu_name

log = logging.getLogger("oracle_cost")

GAMES = {"1x4f": (1, 4), "1x5f": (1, 5), "1x6f": (1, 6), "2x3f": (2, 3), "1x3f": (1, 3)}


def timed_eval(dice: int, faces: int, repeats: int, args: argparse.Namespace) -> Dict[str, Any]:
    """One oracle evaluation in a subprocess: its mode (b) seconds, or a lower bound on them."""
    cmd = [sys.executable, "-m", "rebel", "eval", "--dice", str(dice), "--faces", str(faces), "--net", "oracle",
           "--depth", "2", "--iters", str(args.iters), "--repeats", str(repeats), "--threads", str(args.threads),
           "--no-mode-a", "--no-progress", "--json"]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"repeats": repeats, "finished": False, "seconds_at_least": time.perf_counter() - start}
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:])} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    report = json.loads(done.stdout)
    return {"repeats": repeats, "finished": True, "seconds": report["seconds"]["mode_b"],
            "exploitability": report["mode_b"][-1]["exploitability"]}


def extrapolate(small: Dict[str, Any], large: Dict[str, Any], target: int) -> Dict[str, Any]:
    """seconds = fixed + per_policy * N through the two timings (a lower bound where one did not finish)."""
    if not small["finished"]:
        return {"seconds_at_least": small["seconds_at_least"], "basis": f"N = {small['repeats']} did not finish"}
    if not large["finished"]:
        # The larger run's time bounds the per-policy cost from below.
        per_policy = max(large["seconds_at_least"] - small["seconds"], 0.0) / (large["repeats"] - small["repeats"])
        return {"seconds_at_least": small["seconds"] + per_policy * (target - small["repeats"]),
                "basis": f"N = {large['repeats']} did not finish"}
    per_policy = (large["seconds"] - small["seconds"]) / (large["repeats"] - small["repeats"])
    fixed = small["seconds"] - per_policy * small["repeats"]
    return {"fixed_seconds": fixed, "per_policy_seconds": per_policy, "seconds": fixed + per_policy * target,
            "basis": f"N = {small['repeats']} and {large['repeats']}"}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", default="1x4f,1x5f,1x6f,2x3f", help=f"comma-separated, from {', '.join(GAMES)}")
    parser.add_argument("--repeats", type=int, nargs=2, default=[2, 8], metavar=("SMALL", "LARGE"),
                        help="the two N timed (multiples of --threads keep every thread busy in both)")
    parser.add_argument("--target", type=int, default=1024, help="the N extrapolated to")
    parser.add_argument("--iters", type=int, default=1024, help="T of the search")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds before a run is stopped")
    parser.add_argument("--out", type=Path, default=Path("experiments/results/table2/oracle_cost.json"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        print(f"oracle_cost.py: unknown game {unknown[0]!r} (known: {', '.join(GAMES)})", file=sys.stderr)
        return 2
    small, large = args.repeats
    if not 1 <= small < large:
        print("oracle_cost.py: --repeats needs 1 <= SMALL < LARGE", file=sys.stderr)
        return 2
    result: Dict[str, Any] = {"protocol": {"depth": 2, "iterations": args.iters, "threads": args.threads,
                                           "oracle": "1024 LCFR iterations per leaf solve (rebel eval's default)"},
                              "cpu": cpu_name(), "command": " ".join(["python experiments/oracle_cost.py",
                                                                      *(sys.argv[1:] if argv is None else argv)]),
                              "games": {}}
    for game in games:
        dice, faces = GAMES[game]
        runs = []
        for repeats in (small, large):
            runs.append(timed_eval(dice, faces, repeats, args))
            log.info("%s N = %d: %s", game, repeats, runs[-1])
            if not runs[-1]["finished"]:
                break
        if len(runs) == 1:
            runs.append({"repeats": large, "finished": False, "seconds_at_least": runs[0]["seconds_at_least"]})
        estimate = extrapolate(runs[0], runs[1], args.target)
        result["games"][game] = {"runs": runs, f"estimate_n{args.target}": estimate}
        log.info("%s: N = %d estimated %s", game, args.target, estimate)
        atomic_write_bytes(args.out, (json.dumps(result, indent=2) + "\n").encode())
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
