"""Training levers at a fixed budget: what a variant of a config reaches in the same wall time.

Each variant is the base config plus overrides (precision, train/generate ratio, weight
averaging, self-play iterations, ...). It trains from random initialisation for
``--budget-minutes`` of wall time with no evaluation during the run (so evaluation time is
not counted), then its final net is measured the same way for every variant:

* the paper's protocol (mode (b), the base config's depth and T, N sampled policies) under
  several evaluation seeds: mean exploitability and its spread;
* the held-out error against oracle labels, on one held-out set for all variants (the base
  config's, drawn once and cached);
* examples generated and trained, subgames/s, the final loss.

Results are cached per variant (``OUT/NAME/result.json``) and each evaluation seed as it
finishes (``OUT/NAME/eval_seedS.json``); a killed training resumes from its checkpoint;
``--force NAME`` retrains and re-evaluates one. ``levers.json`` and ``levers.md`` summarise
every variant finished in OUT (earlier calls' too); the printed table, this call's variants.

    python experiments/levers.py --config liars_dice_1x4f_paper --budget-minutes 10 \
        --variants paper-fp32,paper-bf16,bf16-r16,bf16-r16-ema --out experiments/results/levers/1x4f
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from rebel import _core
from rebel.cli.common import emit_report
from rebel.cli.train import _config_path
from rebel.config.train import load_train_config
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings
from rebel.train.evaluation import HeldOutSet
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.machine import cpu_name
from rebel.util.progress import Progress

log = logging.getLogger("levers")

#: Named variants: overrides of the base config. Names say what changes from the paper's
#: settings (fp32 net, train/generate ratio 4, no weight averaging, T = 1024 in self-play).
VARIANTS: Dict[str, List[str]] = {
    "paper-fp32": ["search.precision=fp32"],
    "paper-bf16": ["search.precision=bf16"],
    "bf16-r16": ["search.precision=bf16", "trainer.train_ratio=16"],
    "bf16-r32": ["search.precision=bf16", "trainer.train_ratio=32"],
    "bf16-r16-ema": ["search.precision=bf16", "trainer.train_ratio=16", "trainer.ema_decay=0.998"],
    "fp32-r16-ema": ["search.precision=fp32", "trainer.train_ratio=16", "trainer.ema_decay=0.998"],
    "bf16-r32-ema": ["search.precision=bf16", "trainer.train_ratio=32", "trainer.ema_decay=0.998"],
    "bf16-r16-ema-T256": ["search.precision=bf16", "trainer.train_ratio=16", "trainer.ema_decay=0.998",
                          "search.iterations=256"],
    "bf16-r16-ema-b1024": ["search.precision=bf16", "trainer.train_ratio=16", "trainer.ema_decay=0.998",
                           "trainer.batch_size=1024", "trainer.lr=6e-4"],
    # One change each from a shipped config (--config liars_dice_1x5f: its precision, ratio 16
    # and weight averaging are already in it), beside "shipped", the config as it is.
    "shipped": [],
    "shipped-b1024": ["trainer.batch_size=1024", "trainer.lr=6e-4"],  # half the steps, twice the lr
    "shipped-lr1e-3": ["trainer.lr=1e-3"],
    # The schedule counts epochs (25,600 examples trained each): the shipped halving every 400
    # epochs never happens in a 20-minute 1x5f run (about 250 epochs), halving every 100 does.
    "shipped-lr-halve100": ["trainer.lr_halving_epochs=100"],
    # T = 256 reaches epochs 400 and 800 early in wall time, and the config's 1000 epochs before
    # a 40-minute 2x3f budget ends; without any halving and with room for the budget it is T alone.
    "shipped-T256-nodecay": ["search.iterations=256", "trainer.lr_max_halvings=0", "run.epochs=5000"],
    "shipped-T256": ["search.iterations=256"],   # self-play only: the evaluation keeps the base T
    "shipped-dcfr": ["search.solver=dcfr"],      # DCFR in self-play's subgames
    "shipped-h128": ["model.hidden=128"],        # a narrower net: about a quarter of the flops
    "shipped-h512": ["model.hidden=512"],        # a wider net: 4x the flops per leaf query
    "shipped-l3": ["model.layers=3"],            # a deeper net
    "shipped-noema": ["trainer.ema_decay=0"],    # the weight-averaging pair with "shipped"
}
#: What every lever run sets: no evaluation while training (measured afterwards, identically).
RUN_OVERRIDES = ["evaluation.every=0", "evaluation.final=false", "evaluation.references=false",
                 "evaluation.heldout_steps=0"]


class Refused(Exception):
    """A results folder this script cannot continue: exit 2 with one line."""


def finished(run_dir: Path) -> bool:
    metrics = run_dir / "metrics.jsonl"
    if not metrics.is_file():
        return False
    return any(json.loads(line).get("kind") == "final" for line in metrics.read_text().splitlines() if line.strip())


def train(name: str, overrides: List[str], args: argparse.Namespace) -> Path:
    run_dir = Path(args.out) / name
    if finished(run_dir):
        return run_dir
    base = [sys.executable, "-m", "rebel", "train", "--no-progress"]
    if (run_dir / "checkpoint.pt").is_file():
        cmd = base + ["--resume", str(run_dir)]
    else:
        if run_dir.exists():
            raise Refused(f"{run_dir} exists without a checkpoint; remove it or pass --force {name}")
        cmd = base + [_config_path(args.config), *overrides, *RUN_OVERRIDES, f"run.dir={args.out}", f"run.name={name}",
                      f"run.max_minutes={args.budget_minutes}", f"selfplay.seed={args.train_seed}"]
    log.info("training %s: %s", name, " ".join(cmd[2:]))
    subprocess.run(cmd, check=True)
    return run_dir


def heldout_set(args: argparse.Namespace) -> HeldOutSet:
    """The base config's held-out set, drawn once (cached in OUT/heldout.npz)."""
    path = Path(args.out) / "heldout.npz"
    if path.is_file():
        with np.load(path) as f:
            return HeldOutSet(f["rows"], f["targets"])
    config = load_train_config(_config_path(args.config))
    with Progress("held-out set", config.evaluation.heldout_steps, "steps") as bar:
        heldout = HeldOutSet.generate(config.game.make(), config, progress=bar)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, rows=heldout.rows, targets=heldout.targets)
    os.replace(tmp, path)
    return heldout


def _write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (a crash leaves the old file or the new one, never half of one)."""
    atomic_write_bytes(path, (json.dumps(obj, indent=2) + "\n").encode())


def measure(name: str, overrides: List[str], run_dir: Path, heldout: HeldOutSet,
            args: argparse.Namespace) -> Dict[str, Any]:
    base = load_train_config(_config_path(args.config))
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    epochs = [r for r in rows if "epoch" in r and r.get("kind") is None]
    last = epochs[-1]
    weights = str(run_dir / "weights.bin")
    game = base.game.make()
    net = _core.MlpValueNet(game, weights, precision="fp32")
    evaluations = []
    # Each seed's evaluation is minutes on the larger games: kept on disk as it finishes, so a
    # killed measurement resumes at the next seed (only for the same net and protocol).
    key = {"weights_sha256": hashlib.sha256(Path(weights).read_bytes()).hexdigest(), "config": args.config,
           "repeats": args.repeats, "precision": args.eval_precision, "threads": args.threads}
    for seed in args.seeds:
        seed_file = run_dir / f"eval_seed{seed}.json"
        if seed_file.is_file():
            saved = json.loads(seed_file.read_text())
            if saved.get("key") == key:
                evaluations.append(saved["evaluation"])
                continue
        # The paper's protocol with the base config's solver, depth and T (the variant may
        # change the self-play search, never the evaluation's).
        params = base.game.as_dict()
        params.pop("name")
        game = _core.make_game(base.game.name, dict(params))
        settings = EvalSettings(net=weights, solver=base.search.solver,
                                depth=base.search.depth, iterations=base.search.iterations, repeats=args.repeats,
                                threads=args.threads, seed=seed, off_path=base.search.off_path,
                                precision=args.eval_precision, mode_a=False, full_game=False)
        result = evaluate(game, settings, progress=True)
        evaluation = {"seed": seed, "exploitability": result["mode_b"][-1]["exploitability"],
                      "kernel": result["net_kernel"], "seconds": result["seconds"]["mode_b"]}
        _write_json(seed_file, {"key": key, "evaluation": evaluation})
        evaluations.append(evaluation)
    expl = [e["exploitability"] for e in evaluations]
    return {
        "variant": name,
        "overrides": overrides,
        "budget_minutes": args.budget_minutes,
        "train_wall_seconds": last["wall_seconds"],
        "epochs": last["epoch"],
        "examples_generated": last["examples_generated"],
        "examples_trained": last["examples_trained"],
        "subgames_per_s": last["examples_generated"] / 2 / last["wall_seconds"],
        "final_loss": last["loss"],
        "net_kernel": {"precision": last.get("net_precision"), "isa": last.get("net_isa")},
        "heldout": heldout.error(lambda x: net.forward(np.ascontiguousarray(x, dtype=np.float32))),
        "evaluation": {"protocol": f"mode (b), depth {base.search.depth}, T = {base.search.iterations}, "
                                   f"N = {args.repeats}, precision {args.eval_precision}",
                       "runs": evaluations, "mean": statistics.mean(expl), "min": min(expl), "max": max(expl)},
    }


def table(results: List[Dict[str, Any]]) -> str:
    lines = ["| variant | overrides | train min | examples generated | examples trained | subgames/s | "
             "held-out MAE | held-out mean max err | exploitability mean [min, max] |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        e = r["evaluation"]
        lines.append(f"| {r['variant']} | {' '.join(r['overrides'])} | {r['train_wall_seconds'] / 60:.1f} | "
                     f"{r['examples_generated']:,} | {r['examples_trained']:,} | {r['subgames_per_s']:.0f} | "
                     f"{r['heldout']['heldout_mae']:.4f} | {r['heldout']['heldout_delta_mean']:.4f} | "
                     f"{e['mean']:.4f} [{e['min']:.4f}, {e['max']:.4f}] |")
    return "\n".join(lines) + "\n"


def finished_results(out: Path, names: List[str]) -> List[Dict[str, Any]]:
    """Every measured variant in OUT, not only this call's: the rows of the previous summary
    first (its order), then this call's names, then any other variant with a result.json."""
    summary = out / "levers.json"
    order = [v["variant"] for v in json.loads(summary.read_text())["variants"]] if summary.is_file() else []
    order += [n for n in names if n not in order]
    order += [n for n in VARIANTS if n not in order]
    return [json.loads((out / n / "result.json").read_text()) for n in order if (out / n / "result.json").is_file()]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="liars_dice_1x4f_paper",
                        help="base config (a file or a name in configs/); "
                             "the variants change it from the paper's settings")
    parser.add_argument("--variants", default="paper-fp32,paper-bf16,bf16-r16,bf16-r16-ema",
                        help=f"comma-separated, from: {', '.join(VARIANTS)}")
    parser.add_argument("--budget-minutes", type=float, default=10.0, help="training wall time per variant")
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="evaluation seeds")
    parser.add_argument("--repeats", type=int, default=1024, help="N sampled policies of mode (b)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--eval-precision", default="fp32", choices=("fp32", "bf16", "auto"),
                        help="the evaluation's net precision (the same for every variant)")
    parser.add_argument("--force", action="append", default=[], metavar="NAME", help="retrain and re-evaluate NAME")
    parser.add_argument("--out", default="experiments/results/levers/1x4f")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names + args.force if n not in VARIANTS]
    if unknown:
        print(f"levers.py: unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.force:
        shutil.rmtree(out / name, ignore_errors=True)
    heldout = heldout_set(args)
    results = []
    for name in names:
        cached = out / name / "result.json"
        if cached.is_file():
            results.append(json.loads(cached.read_text()))
            continue
        start = time.perf_counter()
        try:
            run_dir = train(name, VARIANTS[name], args)
        except Refused as e:
            print(f"levers.py: {e}", file=sys.stderr)
            return 2
        result = measure(name, VARIANTS[name], run_dir, heldout, args)
        result["command"] = (f"python experiments/levers.py --config {args.config} --variants {name} "
                             f"--budget-minutes {args.budget_minutes:g} --out {args.out}")
        result["seconds_total"] = time.perf_counter() - start
        _write_json(cached, result)
        results.append(result)
        log.info("%s: exploitability %.4f (mean of %d seeds)", name, result["evaluation"]["mean"], len(args.seeds))
    every = finished_results(out, names)
    summary = {"config": args.config, "budget_minutes": args.budget_minutes, "cpu": cpu_name(), "variants": every}
    _write_json(out / "levers.json", summary)
    (out / "levers.md").write_text(table(every))
    emit_report({"table": table(results)}, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
