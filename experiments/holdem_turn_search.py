"""Depth-limited search on a hold'em turn endgame with exact and learned river leaves, measured
in the whole turn endgame (issue 93; rebel/search/holdem_turn_search.py).

For each leaf kind (``exact``: each river PBS solved to ``--river-target`` % of the pot;
``net:PATH``: a river value net saved by experiments/holdem_river_net.py) the turn's betting is
solved for ``--iterations`` iterations from the spot's ranges. The search's average turn strategy
is then locked in the whole turn endgame, the rivers are solved below it to ``--eval-target`` %
of the pot, and the exploitability of the whole strategy is recorded (chips and % of the pot),
beside full-game DCFR after the same number of iterations. Each leaf kind's result is written to
``--out`` as soon as it is done, and a kind already there is skipped (a killed run resumes).

    python experiments/holdem_turn_search.py --spot configs/spots/turn_two_tone.yaml \\
        --iterations 20 --leaves exact net:runs/h512.pt --out results.json
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import torch

from rebel import _core
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import load_spot
from rebel.nets.holdem_river_net import RiverValueNet
from rebel.search.holdem_turn_search import TurnSubgame, evaluate_turn_strategy, exact_river_values, net_river_values
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.progress import Progress

log = logging.getLogger("holdem_turn_search")


def load_net(path: str) -> RiverValueNet:
    """A river net saved by experiments/holdem_river_net.py (pot-relative targets only)."""
    saved = torch.load(path, weights_only=True)
    if saved.get("target") != "pot":
        raise ValueError(f"{path}: a net trained on {saved.get('target')!r} targets; the search needs pot units")
    net = RiverValueNet(int(saved["hidden"]), int(saved["layers"]))
    net.load_state_dict(saved["state_dict"])
    return net


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spot", required=True)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--leaves", nargs="+", default=["exact"], help="exact and/or net:PATH")
    parser.add_argument("--river-target", type=float, default=0.5)
    parser.add_argument("--eval-target", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("rebel.games").setLevel(logging.WARNING)
    torch.set_num_threads(args.threads)
    spot = load_spot(args.spot)
    out = Path(args.out)
    results: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    command = "python experiments/holdem_turn_search.py " + " ".join(sys.argv[1:] if argv is None else argv)
    results.update({"spot": args.spot, "iterations": args.iterations, "river_target_pct": args.river_target,
                    "eval_target_pct": args.eval_target, "threads": args.threads, "command": command})
    runs = results.setdefault("runs", {})

    def save() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, (json.dumps(results, indent=2) + "\n").encode())

    if "full_game_dcfr" not in runs:
        started = time.perf_counter()
        full = _core.HoldemSolver(build_endgame(spot), "dcfr", args.threads, False)
        full.iterate(args.iterations)
        chips = full.exploitability()
        runs["full_game_dcfr"] = {"exploitability": chips, "exploitability_pct": 100 * chips / spot.pot,
                                  "seconds": time.perf_counter() - started, "command": command}
        save()
    subgame = TurnSubgame(spot)
    for kind in args.leaves:
        if kind in runs:
            log.info("%s: already in %s", kind, out)
            continue
        if kind == "exact":
            river = exact_river_values(spot, target_pct=args.river_target)
        elif kind.startswith("net:"):
            river = net_river_values(load_net(kind[4:]))
        else:
            parser.error(f"unknown leaf kind {kind!r} (exact or net:PATH)")
        started = time.perf_counter()
        with Progress(f"search with {kind} leaves", args.iterations, "it") as bar:
            engine = subgame.solve(args.iterations, river, threads=args.threads, progress=bar)
        search_seconds = time.perf_counter() - started
        evaluation = evaluate_turn_strategy(subgame, engine, target_pct=args.eval_target, threads=args.threads)
        runs[kind] = {"exploitability": evaluation.exploitability, "exploitability_pct": evaluation.exploitability_pct,
                      "river_exploitability": evaluation.river_exploitability,
                      "river_iterations": evaluation.river_iterations, "search_seconds": search_seconds,
                      "eval_seconds": evaluation.seconds, "command": command}
        log.info("%s: %s", kind, json.dumps(runs[kind]))
        save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
