"""Self-play examples per second with and without the reuse of the initial PBS's solve.

Every episode starts at the initial PBS, and while the net's weights stay the same its solve
does too: ``SelfPlayGenerator(reuse_initial_solve=True)`` (the default) keeps it and only
draws each step's iteration, hands and walk (csrc/search/selfplay.h; the steps are bit for bit
the same). A game of few subgames an episode gains most. Per game, one self-play loop (one
thread, no trainer, a 2 x 256 MLP with seeded random weights or ``--weights GAME=FILE``, a
trained net, whose longer episodes make the initial PBS a smaller share; the native net
in the machine's default self-play precision) runs in alternating blocks with the reuse off
and on, so drift in machine load hits both alike; the report gives examples per second, the
share of steps at the initial PBS and the speed-up. The same seeds play the same episodes in
both arms, so the two arms do the same work but for the reused solves.

    python benchmarks/bench_selfplay_reuse.py --out runs/bench_selfplay_reuse.json
    python benchmarks/bench_selfplay_reuse.py --weights liars_dice_1x4f=experiments/results/table2/1x4f-cfr/weights.bin
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch
from _machine import cpu_name  # benchmarks/_machine.py (this script's folder is on sys.path)

import rebel
from rebel import _core
from rebel.cli.common import emit_report
from rebel.nets.precision import DEFAULT_PRECISION
from rebel.nets.value_mlp import ValueMLP, weights_to_bytes
from rebel.search.selfplay import SelfPlayLoop

# (name, game, params, depth): Leduc's subgames are whole betting rounds, Liar's Dice's depth 2.
CASES = [("leduc", "leduc", {}, 10), ("leduc_nolimit", "leduc_nolimit", {}, 10),
         ("liars_dice_1x4f", "liars_dice", {"num_dice": 1, "num_faces": 4}, 2)]


def run_block(loop: SelfPlayLoop, steps: int) -> Dict[str, float]:
    initial = 0
    start = time.perf_counter()
    for _ in range(steps):
        initial += not loop.history
        loop.step()
    return {"seconds": time.perf_counter() - start, "steps": steps, "initial": initial}


def measure(name: str, game: Any, data: bytes, depth: int, iterations: int, steps: int, blocks: int,
            precision: str) -> Dict[str, Any]:
    arms: Dict[bool, Dict[str, Any]] = {}
    for reuse in (False, True):
        net = _core.MlpValueNet(game, data, precision=precision)
        generator = _core.SelfPlayGenerator(game, net, depth=depth, iterations=iterations, epsilon=0.25,
                                            reuse_initial_solve=reuse)
        arms[reuse] = {"generator": generator, "net": net,
                       "loop": SelfPlayLoop(game, generator, np.random.SeedSequence([0, 1])), "blocks": []}
    for _ in range(blocks):
        for reuse in (False, True):
            arms[reuse]["blocks"].append(run_block(arms[reuse]["loop"], steps))
    out: Dict[str, Any] = {"game": name, "depth": depth, "iterations": iterations,
                           "precision": arms[True]["net"].precision, "isa": arms[True]["net"].isa}
    for reuse, arm in arms.items():
        seconds = sum(b["seconds"] for b in arm["blocks"])
        total = sum(b["steps"] for b in arm["blocks"])
        out["reuse" if reuse else "no_reuse"] = {
            "examples_per_s": 2 * total / seconds, "steps": total, "seconds": seconds,
            "initial_pbs_share": sum(b["initial"] for b in arm["blocks"]) / total,
            "initial_solves_computed": arm["generator"].initial_solves_computed,
            "initial_solves_reused": arm["generator"].initial_solves_reused,
        }
    out["speedup"] = out["reuse"]["examples_per_s"] / out["no_reuse"]["examples_per_s"]
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--steps", type=int, default=100, help="steps per block")
    parser.add_argument("--blocks", type=int, default=4, help="alternating blocks per arm")
    parser.add_argument("--games", nargs="+", choices=[c[0] for c in CASES], default=[c[0] for c in CASES])
    parser.add_argument("--precision", default=DEFAULT_PRECISION,
                        help="the native net's precision (default: self-play's)")
    parser.add_argument("--weights", action="append", default=[], metavar="GAME=FILE",
                        help="a trained net (exported weights) for GAME instead of the random one; repeatable")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args(argv)
    weights: Dict[str, str] = {}
    for item in args.weights:
        name, sep, path = item.partition("=")
        if not sep or name not in [c[0] for c in CASES]:
            parser.error(f"--weights takes GAME=FILE with GAME one of {', '.join(c[0] for c in CASES)}; got {item!r}")
        weights[name] = path
    if args.steps < 1 or args.blocks < 1 or min(args.iterations) < 2:
        parser.error("--steps and --blocks must be >= 1 and every --iterations >= 2")

    cases: List[Dict[str, Any]] = []
    for name, game_name, params, depth in CASES:
        if name not in args.games:
            continue
        game = _core.make_game(game_name, params)
        if name in weights:
            with open(weights[name], "rb") as f:
                data = f.read()
        else:
            torch.manual_seed(0)
            data = weights_to_bytes(ValueMLP.for_game(game))
        for iterations in args.iterations:
            case = measure(name, game, data, depth, iterations, args.steps, args.blocks, args.precision)
            case["net"] = weights.get(name, "mlp 2x256 random init (torch seed 0)")
            cases.append(case)
    report = {
        "benchmark": "selfplay_reuse",
        "threads": 1,
        "cpu": cpu_name(),
        "cases": cases,
        "rebel_version": rebel.__version__,
        "torch": torch.__version__,
    }
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
