"""Mode-(b) evaluation: samples solved one at a time against samples solved together.

Mode (b) draws N full-game policies; each stops every subgame search at a random
iteration. The baseline is how evaluate_sampled computed them before sampled_policies:
one sample at a time, each recursing through every subgame (only the game's root
trajectory shared between samples), here ``TestTimeSearch.sampled_policy`` per sample. The
new path, ``TestTimeSearch.sampled_policies``, draws every sample's stops first and solves a
subgame once for all samples that reach it with the same PBS (the same stops above it).
Both run on one thread, side by side in this process, on the same samples; the policies
must agree bit for bit (checked, reported as ``identical``).

    PYTHONPATH=. python benchmarks/bench_sampled_eval.py [--cases 1x4f-oracle,1x4f-net,2x3f-net] [--repeats N]
        [--out FILE]

Prints one JSON object (and writes it to --out): per case the seconds of each path, the
speed-up, and the settings. Speed is reported, never asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import numpy as np

from rebel import _core
from rebel.cli.common import emit_report
from rebel.util.machine import cpu_name

PRETRAINED = Path(__file__).resolve().parent.parent / "rebel" / "nets" / "pretrained"


def _liars_dice(dice: int, faces: int) -> _core.Game:
    return _core.make_game("liars_dice", {"num_dice": dice, "num_faces": faces})


def _oracle_1x4f() -> Tuple[_core.TestTimeSearch, Dict[str, Any]]:
    game = _liars_dice(1, 4)
    net = _core.OracleNet(game, "lcfr", 256)
    return (_core.TestTimeSearch(game, net, "lcfr", 2, 256),
            {"game": "1x4f", "net": "oracle (256 LCFR iterations a leaf)", "solver": "lcfr", "depth": 2, "T": 256})


def _net(key: str, dice: int, faces: int) -> Callable[[], Tuple[_core.TestTimeSearch, Dict[str, Any]]]:
    def build() -> Tuple[_core.TestTimeSearch, Dict[str, Any]]:
        game = _liars_dice(dice, faces)
        net = _core.MlpValueNet(game, str(PRETRAINED / f"{key}.bin"), precision="fp32")
        return (_core.TestTimeSearch(game, net, "lcfr", 2, 1024),
                {"game": key, "net": f"pretrained:{key} (fp32)", "solver": "lcfr", "depth": 2, "T": 1024})
    return build


CASES: Dict[str, Tuple[Callable[[], Tuple[_core.TestTimeSearch, Dict[str, Any]]], int]] = {
    "1x4f-oracle": (_oracle_1x4f, 64),
    "1x4f-net": (_net("1x4f", 1, 4), 256),
    "2x3f-net": (_net("2x3f", 2, 3), 32),
}


def run_case(name: str, seed: int, repeats: int | None) -> Dict[str, Any]:
    build, default_repeats = CASES[name]
    repeats = repeats or default_repeats
    search, settings = build()
    seeds = [_core.sample_seed(seed, k) for k in range(repeats)]
    search.sampled_policy(seeds[0])  # records the root trajectory the one-at-a-time path shares
    start = time.perf_counter()
    one_by_one = np.stack([search.sampled_policy(s) for s in seeds])
    one_by_one_s = time.perf_counter() - start
    start = time.perf_counter()
    together = search.sampled_policies(seeds, threads=1)
    together_s = time.perf_counter() - start
    print(f"# {name}: one at a time {one_by_one_s:.2f} s, together {together_s:.2f} s", file=sys.stderr)
    return {**settings, "samples": repeats, "seed": seed, "one_at_a_time_seconds": one_by_one_s,
            "together_seconds": together_s, "speedup": one_by_one_s / together_s,
            "identical": bool(np.array_equal(one_by_one, together))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, help="N, the samples of every case (default: each case's own, "
                                                 "small; the protocol's N = 1024 shows the full gain)")
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    names = [c for c in args.cases.split(",") if c]
    unknown = [c for c in names if c not in CASES]
    if args.repeats is not None and args.repeats < 1:
        p.error("--repeats must be >= 1")
    if unknown or not names:
        p.error(f"--cases: unknown {unknown or args.cases!r}; one or more of {', '.join(CASES)}")
    report = {"benchmark": "sampled_eval", "cpu": cpu_name(), "logical_cpus": os.cpu_count(),
              "load_average_1_5_15": list(os.getloadavg()), "threads": 1,
              "baseline": "one sample at a time (sampled_policy), the root trajectory shared",
              "cases": {name: run_case(name, args.seed, args.repeats) for name in names}}
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
