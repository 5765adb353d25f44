"""Where the bf16 net's difference from float32 comes from, and what near-free fixes would buy.

The bf16 path (docs/performance.md) runs the first layer, every LayerNorm + GELU and the head
in float32 and each hidden-to-hidden product in bf16: the weights are rounded to bf16 once,
the layer's input (the GELU output before it) on every call, and the products are summed in
float32. This script emulates that path in float64 (torch), one rounding at a time, on the
run's held-out PBSs (the set `precision_accuracy.py` measures), and reports each variant's max
and mean |difference| from the float32 net:

* ``weights``: only the weights rounded;
* ``activations``: only the layer inputs rounded;
* ``both``: the kernel's arithmetic (checked against the native bf16 kernel where this CPU has
  one);
* ``both+bias_correction``: the weights' rounding error times the mean layer input folded into
  the bias (the "bias correction" of data-free quantisation), no extra work per row;
* ``both+offset``: the layer input rounded after subtracting its mean (the mean's product
  folded into the bias), one subtraction per value;
* ``both+bias_correction+offset``: the two together.

The means come from a calibration set: the same self-play walk under another seed
(``--calibration-seed``), never the evaluated PBSs. It also reports how the largest
differences relate to the second LayerNorm's input spread (a row whose pre-LayerNorm values
vary little has its rounding error scaled up by the normalisation).

    python experiments/bf16_error_sources.py experiments/results/training_curve/1x4f-60min \
        --out experiments/results/precision/bf16_error_sources_1x4f.json
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

from rebel import _core
from rebel.cli.common import emit_report
from rebel.config.train import TrainConfig, load_train_config
from rebel.nets.value_mlp import ValueMLP, load_weights
from rebel.train.evaluation import HeldOutSet
from rebel.util.progress import Progress


def to_bf16(t: torch.Tensor) -> torch.Tensor:
    """float64 -> float32 -> bf16 (nearest even) -> float64, as the kernel rounds."""
    return t.to(torch.float32).to(torch.bfloat16).to(torch.float64)


def layer_inputs(model: ValueMLP, rows: torch.Tensor) -> List[torch.Tensor]:
    """The exact (float64) input of every hidden layer after the first: GELU(LN(...)) before it."""
    inputs: List[torch.Tensor] = []
    x = rows
    blocks = model.blocks()
    for i, (linear, norm) in enumerate(blocks):
        x = torch.nn.functional.gelu(norm(linear(x)))
        if i + 1 < len(blocks):
            inputs.append(x)
    return inputs


def emulate(model: ValueMLP, rows: torch.Tensor, *, round_weights: bool, round_inputs: bool,
            means: Optional[Sequence[torch.Tensor]] = None, bias_correction: bool = False,
            offset: bool = False) -> "tuple[torch.Tensor, torch.Tensor]":
    """The net in float64 with the bf16 path's roundings switched on or off.

    Returns (outputs, spread of the last hidden layer's pre-LayerNorm values per row).
    ``means``: the calibration mean input of each layer after the first (needed by
    ``bias_correction`` and ``offset``).
    """
    x = rows
    spread = torch.zeros(len(rows), dtype=torch.float64)
    for i, (linear, norm) in enumerate(model.blocks()):
        w, b = linear.weight, linear.bias
        if i > 0:  # the layers the bf16 kernel runs
            mean = means[i - 1] if means is not None else None
            wq = to_bf16(w) if round_weights else w
            if bias_correction:
                b = b + (w - wq) @ mean
            if round_inputs and offset:
                z = to_bf16(x - mean) @ wq.T + (b + wq @ mean)
            else:
                z = (to_bf16(x) if round_inputs else x) @ wq.T + b
        else:
            z = x @ w.T + b
        spread = z.std(dim=1, unbiased=False)
        x = torch.nn.functional.gelu(norm(z))
    return model.head(x), spread


def heldout_rows(config: TrainConfig, game: _core.Game, seed: Optional[int], label: str) -> np.ndarray:
    """The run's held-out walk (its own seed when ``seed`` is None, else that seed)."""
    if seed is not None:
        config = dataclasses.replace(config, evaluation=dataclasses.replace(config.evaluation, heldout_seed=seed))
    with Progress(label, config.evaluation.heldout_steps, "steps") as bar:
        return HeldOutSet.generate(game, config, progress=bar).rows


def measure(model: ValueMLP, rows: np.ndarray,
            calibration: np.ndarray) -> "tuple[Dict[str, Any], np.ndarray, np.ndarray]":
    """Every variant's difference from the float32 net on ``rows``: (the report's body, the
    emulated float32 outputs, the emulated bf16 outputs)."""
    model = model.double().eval()
    x = torch.from_numpy(np.asarray(rows, dtype=np.float64))
    with torch.no_grad():
        means = [h.mean(dim=0) for h in layer_inputs(model, torch.from_numpy(np.asarray(calibration, np.float64)))]
        exact, spread = emulate(model, x, round_weights=False, round_inputs=False)
        settings = {
            "weights": dict(round_weights=True, round_inputs=False),
            "activations": dict(round_weights=False, round_inputs=True),
            "both": dict(round_weights=True, round_inputs=True),
            "both+bias_correction": dict(round_weights=True, round_inputs=True, bias_correction=True),
            "both+offset": dict(round_weights=True, round_inputs=True, offset=True),
            "both+bias_correction+offset": dict(round_weights=True, round_inputs=True, bias_correction=True,
                                                offset=True),
        }
        outputs = {name: emulate(model, x, means=means, **kw)[0] for name, kw in settings.items()}
    report: Dict[str, Any] = {"variants": {}}
    for name, out in outputs.items():
        diff = (out - exact).abs()
        report["variants"][name] = {"max_abs_diff": float(diff.max()), "mean_abs_diff": float(diff.mean())}
    row_err = (outputs["both"] - exact).abs().max(dim=1).values.numpy()
    spread_np = spread.numpy()
    rank = spread_np.argsort().argsort() / max(len(spread_np) - 1, 1)  # 0 = the row that varies least
    worst = np.argsort(-row_err)[:10]
    report["largest_differences"] = {
        "rows": [{"max_abs_diff": float(row_err[r]), "pre_layer_norm_std": float(spread_np[r]),
                  "std_percentile": float(100 * rank[r])} for r in worst],
        "pre_layer_norm_std_median": float(np.median(spread_np)),
    }
    report["without_lowest_spread_rows"] = {
        f"{q}%": float(row_err[rank >= q / 100].max()) if (rank >= q / 100).any() else 0.0 for q in (5, 10, 20, 30)
    }
    return report, exact.numpy(), outputs["both"].numpy()


def fail(message: str) -> int:
    print(f"bf16_error_sources.py: {message}", file=sys.stderr)
    return 2


def main(argv: "List[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="a run directory (config.yaml and weights.bin)")
    parser.add_argument("--calibration-seed", type=int, default=54321,
                        help="held-out walk seed of the calibration set (must differ from the run's)")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run = Path(args.run_dir)
    for needed in ("config.yaml", "weights.bin"):
        if not (run / needed).is_file():
            return fail(f"{run} has no {needed}: pass a run directory")
    config = load_train_config(str(run / "config.yaml"))
    if args.calibration_seed == config.evaluation.heldout_seed:
        return fail(f"--calibration-seed {args.calibration_seed} is the run's own held-out seed; pick another")
    game = config.game.make()
    model = load_weights(run / "weights.bin")
    if model.layers < 2:
        return fail(f"the net in {run} has {model.layers} hidden layer(s): the bf16 kernel runs none of them")
    rows = heldout_rows(config, game, None, "held-out set")
    calibration = heldout_rows(config, game, args.calibration_seed, "calibration set")
    body, exact, both = measure(model, rows, calibration)
    report: Dict[str, Any] = {"run_dir": str(run), "game": game.description(), "queries": int(len(rows)),
                              "calibration_queries": int(len(calibration)), **body}
    fp32 = _core.MlpValueNet(game, str(run / "weights.bin"), precision="fp32").forward(rows).astype(np.float64)
    report["emulated_fp32_vs_native_fp32_max_abs_diff"] = float(np.abs(exact - fp32).max())
    if _core.mlp_supported_bf16_isas():
        native = _core.MlpValueNet(game, str(run / "weights.bin"), precision="bf16")
        bf16 = native.forward(rows).astype(np.float64)
        report["native_bf16_isa"] = native.isa
        report["native_bf16_vs_fp32_max_abs_diff"] = float(np.abs(bf16 - fp32).max())
        report["emulated_both_vs_native_bf16_max_abs_diff"] = float(np.abs(both - bf16).max())
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
