"""Run the native MLP value net's forward in a loop, for a profiler to sample.

Builds the same net as bench_mlp.py (2 x 256 on the 1x4f query size by default, torch's
random initialisation under ``--seed``), converts it to the native kernel of ``--precision``
and calls ``forward`` on one batch for ``--seconds``, then prints the time per row. Run it
under a sampling profiler to see where the forward's time goes, e.g.

    perf record -F 4000 -o bf16.data python benchmarks/profile_mlp.py --precision bf16 --batch 64
    perf report -i bf16.data --stdio --sort symbol

(docs/performance.md reports such a split for fp32 and bf16.)
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional

import numpy as np
import torch

import rebel
from rebel.nets.value_mlp import ValueMLP, to_native


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precision", choices=("fp32", "bf16", "int16"), default="bf16")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--num-dice", type=int, default=1)
    parser.add_argument("--num-faces", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.batch < 1 or args.seconds <= 0:
        parser.error("--batch must be at least 1 and --seconds positive")

    torch.manual_seed(args.seed)
    game = rebel.make_game("liars_dice", {"num_dice": args.num_dice, "num_faces": args.num_faces})
    model = ValueMLP.for_game(game, hidden=args.hidden, layers=args.layers).eval()
    try:
        net = to_native(model, game, precision=args.precision)
    except ValueError as e:  # e.g. bf16 on a CPU without a bf16 kernel
        print(f"profile_mlp.py: {e}", file=sys.stderr)
        return 2
    x = np.random.default_rng(args.seed).uniform(0.0, 1.0, (args.batch, model.input_size)).astype(np.float32)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        for _ in range(100):
            net.forward(x)
        calls += 100
    ns_per_row = (time.perf_counter() - start) / calls / args.batch * 1e9
    print(f"{args.precision} ({net.isa}), batch {args.batch}: {ns_per_row:.1f} ns per row over {calls} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
