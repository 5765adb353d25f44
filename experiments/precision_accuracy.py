"""Is the bf16 (or int16) net as good as the fp32 one? Two precisions of one trained net, side by side.

For a run directory (config.yaml and weights.bin), on the run's held-out set (regenerated
from its config, exactly as the run drew it: oracle-labelled self-play PBSs):

* the reduced-precision and fp32 native values on every held-out query: max and mean
  |difference|, and each one's error against the exact labels (the held-out error the run
  reports);
* the paper's protocol (mode (b), depth and T from the config, N sampled policies) with each
  precision under several evaluation seeds: exploitability, and the seeds' spread.

    python experiments/precision_accuracy.py experiments/results/training_curve/1x4f-60min \
        --out experiments/results/precision/bf16_accuracy.json
    python experiments/precision_accuracy.py experiments/results/training_curve/1x4f-60min --precision int16 \
        --out experiments/results/precision/int16_accuracy.json
"""
from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

from rebel import _core
from rebel.cli.common import emit_report
from rebel.config.train import load_train_config
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings
from rebel.train.evaluation import HeldOutSet
from rebel.util.progress import Progress


def main(argv: "List[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="a run directory (config.yaml and weights.bin)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="evaluation seeds of mode (b)")
    parser.add_argument("--repeats", type=int, default=1024, help="N sampled policies of mode (b)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", choices=("bf16", "int16"), default="bf16", help="the precision set against fp32")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    low = args.precision
    supported = _core.mlp_supported_bf16_isas() if low == "bf16" else _core.mlp_supported_int16_isas()
    if not supported:
        needs = "AMX-BF16 or AVX512_BF16" if low == "bf16" else "AVX512_VNNI"
        print(f"precision_accuracy.py: this CPU has no {low} kernel ({needs})", file=sys.stderr)
        return 2
    run = Path(args.run_dir)
    config = load_train_config(str(run / "config.yaml"))
    game, s = config.game.make(), config.search
    weights = str(run / "weights.bin")
    nets = {p: _core.MlpValueNet(game, weights, precision=p) for p in ("fp32", low)}

    start = time.perf_counter()
    with Progress("held-out set", config.evaluation.heldout_steps, "steps") as bar:
        heldout = HeldOutSet.generate(game, config, progress=bar)
    values = {p: net.forward(heldout.rows).astype(np.float64) for p, net in nets.items()}
    diff = np.abs(values[low] - values["fp32"])
    report: Dict[str, Any] = {
        "run_dir": str(run),
        "game": game.description(),
        f"{low}_isa": nets[low].isa,
        "heldout": {
            "queries": int(len(heldout.rows)),
            "values": int(diff.size),
            f"{low}_vs_fp32_max_abs_diff": float(diff.max()),
            f"{low}_vs_fp32_mean_abs_diff": float(diff.mean()),
            "fp32_error": heldout.error(lambda _rows: values["fp32"]),
            f"{low}_error": heldout.error(lambda _rows: values[low]),
            "seconds": time.perf_counter() - start,
        },
        "mode_b": {},
    }
    for precision in ("fp32", low):
        rows = []
        for seed in args.seeds:
            game = config.game.make()
            settings = EvalSettings(net=weights,
                                    solver=s.solver, depth=s.depth, iterations=s.iterations, repeats=args.repeats,
                                    threads=args.threads, seed=seed, off_path=s.off_path, precision=precision,
                                    mode_a=False, full_game=False)
            result = evaluate(game, settings, progress=True)
            rows.append({"seed": seed, "exploitability": result["mode_b"][-1]["exploitability"],
                         "seconds": result["seconds"]["mode_b"], "kernel": result["net_kernel"]})
        expl = [r["exploitability"] for r in rows]
        report["mode_b"][precision] = {"runs": rows, "mean": statistics.mean(expl), "min": min(expl), "max": max(expl),
                                       "stdev": statistics.stdev(expl) if len(expl) > 1 else 0.0}
    fp, bf = report["mode_b"]["fp32"], report["mode_b"][low]
    report["mode_b"]["mean_difference"] = bf["mean"] - fp["mean"]
    report["mode_b"]["seed_spread_fp32"] = fp["max"] - fp["min"]
    report["mode_b"]["within_seed_spread"] = abs(bf["mean"] - fp["mean"]) <= max(fp["max"] - fp["min"],
                                                                                  bf["max"] - bf["min"])
    report["mode_b"]["same_seed_differences"] = [b["exploitability"] - f["exploitability"]
                                                 for f, b in zip(fp["runs"], bf["runs"])]
    report["command"] = ("python experiments/precision_accuracy.py "
                         + " ".join(argv if argv is not None else sys.argv[1:]))
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
