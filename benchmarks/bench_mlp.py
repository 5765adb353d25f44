"""Native MLP value net (C++) against torch on the CPU, both single-threaded.

Times ``MlpValueNet.forward`` (numpy float32 in and out, through the Python binding) and
``ValueMLP.forward`` under ``torch.inference_mode`` with ``torch.set_num_threads(1)``, for
the 2 x 256 net on the 1x4f Liar's Dice query size by default. Rounds alternate between
the two so that noise from other processes hits both alike; the report gives the median
and the best round. Prints JSON and optionally writes it to ``--out``.

    python benchmarks/bench_mlp.py --out runs/bench_mlp.json
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from typing import Callable, Dict, List

import numpy as np
import torch

import rebel
from rebel.cli_common import emit_report
from rebel.model import ValueMLP, to_native


def forward_flops(model: ValueMLP, batch: int) -> int:
    """Multiply-adds of the linear layers, counted as 2 flops each (LayerNorm/GELU excluded)."""
    fan_in, macs = model.input_size, 0
    for _ in range(model.layers):
        macs += fan_in * model.hidden
        fan_in = model.hidden
    macs += fan_in * model.output_size
    return 2 * batch * macs


def seconds_per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bench_batch(model: ValueMLP, net, batch: int, rounds: int, target_s: float, seed: int) -> Dict[str, float]:
    x = np.random.default_rng(seed).standard_normal((batch, model.input_size)).astype(np.float32)
    xt = torch.from_numpy(x)
    with torch.inference_mode():
        reference = model(xt).numpy()
        native = net.forward(x)
        torch_fn = lambda: model(xt)  # noqa: E731
        native_fn = lambda: net.forward(x)  # noqa: E731
        for fn in (torch_fn, native_fn):  # warm-up, and size the rounds
            seconds_per_call(fn, 5)
        calls = max(5, int(target_s / max(seconds_per_call(torch_fn, 5), 1e-7)))
        torch_times: List[float] = []
        native_times: List[float] = []
        for _ in range(rounds):
            torch_times.append(seconds_per_call(torch_fn, calls))
            native_times.append(seconds_per_call(native_fn, calls))
    flops = forward_flops(model, batch)
    t_med, n_med = statistics.median(torch_times), statistics.median(native_times)
    t_min, n_min = min(torch_times), min(native_times)
    return {
        "batch": batch,
        "torch_us_median": t_med * 1e6,
        "native_us_median": n_med * 1e6,
        "speedup_median": t_med / n_med,
        "torch_us_best": t_min * 1e6,
        "native_us_best": n_min * 1e6,
        "speedup_best": t_min / n_min,
        "torch_gflops": flops / t_min / 1e9,
        "native_gflops": flops / n_min / 1e9,
        "max_abs_diff": float(np.abs(native - reference).max()),
    }


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--num-dice", type=int, default=1)
    parser.add_argument("--num-faces", type=int, default=4)
    parser.add_argument("--isa", default="auto", help="native kernels: auto, avx512, avx2 or generic")
    parser.add_argument("--rounds", type=int, default=9, help="alternating timing rounds per batch size")
    parser.add_argument("--round-seconds", type=float, default=0.15, help="approximate torch time per round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    game = rebel.make_game("liars_dice", {"num_dice": args.num_dice, "num_faces": args.num_faces})
    model = ValueMLP.for_game(game, hidden=args.hidden, layers=args.layers).eval()
    net = to_native(model, game, isa=args.isa)

    results = [bench_batch(model, net, b, args.rounds, args.round_seconds, args.seed + b) for b in args.batch_sizes]
    report = {
        "config": {
            "game": game.description(),
            "input_size": model.input_size,
            "output_size": model.output_size,
            "hidden": args.hidden,
            "layers": args.layers,
            "native_isa": net.isa,
            "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "native_threads": 1,
            "cpu": cpu_name(),
            "python": sys.version.split()[0],
            "rounds": args.rounds,
            "flops_note": "2 * multiply-adds of the Linear layers; LayerNorm and GELU not counted",
        },
        "results": results,
    }
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
