"""Native MLP value net (C++, fp32, bf16 and int16 kernels) against torch (fp32 and bf16) on one core.

Times ``MlpValueNet.forward`` (numpy float32 in and out, through the Python binding) for
each precision this CPU runs, and ``ValueMLP.forward`` under ``torch.inference_mode`` with
``torch.set_num_threads(1)`` in float32 and in torch's own bfloat16 path (the model and
input cast to torch.bfloat16), for the 2 x 256 net on the 1x4f Liar's Dice query size by
default, at batch sizes 1 to 1024. Rounds alternate between all of them so that noise from
other processes hits each alike; GFLOP/s are from the best round (2 x multiply-adds of the
Linear layers; LayerNorm and GELU not counted) and are set against this core's peak, computed
from its clock and its multiply-add units (benchmarks/_machine.py; printed with the report).
Prints JSON and optionally writes it to ``--out``.

    python benchmarks/bench_mlp.py --out experiments/results/benchmarks/bench_mlp.json
"""
from __future__ import annotations

import argparse
import copy
import gc
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

import numpy as np
import torch
from _machine import cpu_name, peaks  # benchmarks/_machine.py (this script's folder is on sys.path)

import rebel
from rebel import _core
from rebel.cli.common import emit_report
from rebel.nets.value_mlp import ValueMLP, to_native

DEFAULT_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def forward_flops(model: ValueMLP, batch: int) -> int:
    """Multiply-adds of the linear layers, counted as 2 flops each (LayerNorm/GELU excluded)."""
    fan_in, macs = model.input_size, 0
    for _ in range(model.layers):
        macs += fan_in * model.hidden
        fan_in = model.hidden
    macs += fan_in * model.output_size
    return 2 * batch * macs


def seconds_per_call(fn: Callable[[], object], calls: int) -> float:
    """Mean seconds of fn() over `calls` calls, with Python's garbage collector paused (as
    timeit does): with torch loaded, a collection walks a few hundred thousand objects, a
    pause of the harness, not of the forward pass being timed."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - start) / calls
    finally:
        if was_enabled:
            gc.enable()


def bench_batch(model: ValueMLP, model_bf16: ValueMLP, nets: Dict[str, Any], batch: int, rounds: int,
                target_s: float, seed: int) -> Dict[str, Any]:
    x = np.random.default_rng(seed).uniform(0.0, 1.0, (batch, model.input_size)).astype(np.float32)
    xt = torch.from_numpy(x)
    xt16 = xt.to(torch.bfloat16)
    with torch.inference_mode():
        reference = model(xt).numpy()
        fns: Dict[str, Callable[[], object]] = {"torch_fp32": lambda: model(xt),
                                                "torch_bf16": lambda: model_bf16(xt16)}
        for name, net in nets.items():
            fns[name] = (lambda n: lambda: n.forward(x))(net)
        diffs = {name: float(np.abs(net.forward(x) - reference).max()) for name, net in nets.items()}
        diffs["torch_bf16"] = float(np.abs(model_bf16(xt16).float().numpy() - reference).max())
        for fn in fns.values():  # warm-up
            seconds_per_call(fn, 3)
        calls = max(3, int(target_s / max(seconds_per_call(fns["native_fp32"], 5), 1e-7)))
        times: Dict[str, List[float]] = {name: [] for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                times[name].append(seconds_per_call(fn, calls))
    flops = forward_flops(model, batch)
    out: Dict[str, Any] = {"batch": batch}
    for name, ts in times.items():
        out[name] = {"us_median": statistics.median(ts) * 1e6, "us_best": min(ts) * 1e6,
                     "gflops": flops / min(ts) / 1e9, "max_abs_diff_vs_torch_fp32": diffs.get(name, 0.0)}
    for p in ("bf16", "int16"):
        if f"native_{p}" in out:
            out[f"{p}_over_fp32"] = out[f"native_{p}"]["gflops"] / out["native_fp32"]["gflops"]
    return out


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=DEFAULT_BATCHES)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--num-dice", type=int, default=1)
    parser.add_argument("--num-faces", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=7, help="alternating timing rounds per batch size")
    parser.add_argument("--round-seconds", type=float, default=0.05, help="approximate native fp32 time per round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    game = rebel.make_game("liars_dice", {"num_dice": args.num_dice, "num_faces": args.num_faces})
    model = ValueMLP.for_game(game, hidden=args.hidden, layers=args.layers).eval()
    model_bf16 = copy.deepcopy(model).to(torch.bfloat16)  # torch's own bf16 path, same weights
    nets = {"native_fp32": to_native(model, game, precision="fp32")}
    if _core.mlp_supported_bf16_isas():
        nets["native_bf16"] = to_native(model, game, precision="bf16")
    if _core.mlp_supported_int16_isas():
        nets["native_int16"] = to_native(model, game, precision="int16")
    machine = peaks()
    fp32_peak = machine.get("fma512", machine.get("fma256", {})).get("peak_gflops")
    bf16_kind = {"amx": "amx", "avx512bf16": "dpbf16"}.get(nets["native_bf16"].isa) if "native_bf16" in nets else None
    bf16_peak = machine[bf16_kind]["peak_gflops"] if bf16_kind and bf16_kind in machine else None
    int16_peak = machine.get("dpwssd", {}).get("peak_gflops")

    results = [bench_batch(model, model_bf16, nets, b, args.rounds, args.round_seconds, args.seed + b)
               for b in args.batch_sizes]
    for row in results:
        if fp32_peak:
            row["native_fp32"]["fraction_of_fp32_peak"] = row["native_fp32"]["gflops"] / fp32_peak
        if bf16_peak and "native_bf16" in row:
            row["native_bf16"]["fraction_of_bf16_peak"] = row["native_bf16"]["gflops"] / bf16_peak
        if int16_peak and "native_int16" in row:
            row["native_int16"]["fraction_of_int16_peak"] = row["native_int16"]["gflops"] / int16_peak
    large = [r for r in results if r["batch"] >= 64]
    report = {
        "benchmark": "mlp",
        "config": {
            "game": game.description(),
            "input_size": model.input_size,
            "output_size": model.output_size,
            "hidden": args.hidden,
            "layers": args.layers,
            "native_fp32_isa": nets["native_fp32"].isa,
            "native_bf16_isa": nets["native_bf16"].isa if "native_bf16" in nets else None,
            "native_int16_isa": nets["native_int16"].isa if "native_int16" in nets else None,
            "torch_version": torch.__version__,
            "threads": 1,
            "cpu": cpu_name(),
            "python": sys.version.split()[0],
            "rounds": args.rounds,
            "flops_note": "2 * multiply-adds of the Linear layers; LayerNorm and GELU not counted",
        },
        "peaks": machine,
        "results": results,
        "bf16_over_fp32_min_at_batch_ge_64": min((r["bf16_over_fp32"] for r in large if "bf16_over_fp32" in r),
                                                 default=None),
        "int16_over_fp32_min_at_batch_ge_64": min((r["int16_over_fp32"] for r in large if "int16_over_fp32" in r),
                                                  default=None),
    }
    emit_report(report, args.out)
    for kind, p in machine.items():
        if isinstance(p, dict):
            print(f"peak {kind}: {p['peak_gflops']:.1f} GFLOP/s = {p['how']} (probe {p['probe_gflops']:.1f})",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
