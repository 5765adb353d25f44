"""Time to target: the training minutes a config needs before its net reaches an exploitability.

One run per name trains from random initialisation for ``--minutes`` of training time with no
evaluation during the run, keeping its net every ``--snapshot-every`` epochs
(``run.snapshot_every``). The snapshots are then evaluated in epoch order with the config's
own protocol (mode (b), its depth and T, N sampled policies, a float32 net): seed 0 first, and
where seed 0 reads at or below the target, the other seeds too. The time to target is the
training time (self-play and gradient steps, wall clock) of the first snapshot whose mean over
the seeds is at or below the target; its resolution is the snapshot interval. A snapshot
passed over because seed 0 read above the target is not evaluated further (the rule, fixed in
advance, so the measurement is not the best of many evaluations). A finished run whose last
epoch is not a multiple of the snapshot interval has its final net (``weights.bin``) evaluated
as one more point after the snapshots, by the same rule, so a run that misses the target ends
on its final net. ``--curve`` evaluates every snapshot with seed 0 as well (a learning curve at
no cost to the training clock).

Everything is cached: a killed training resumes from its checkpoint, each evaluation is kept
in ``OUT/NAME/time_to_target.json`` as it finishes, and ``--force NAME`` starts one again.
``OUT/time_to_target.md`` sums up every finished name. ``--from-run DIR`` measures a run
trained elsewhere with ``run.snapshot_every`` (a Table 2 cell, say) instead of training one;
its training time excludes the evaluations it ran (``training_seconds``). A larger
``--minutes`` than a run was trained with extends its training (a target not reached in the
first budget).

    python experiments/time_to_target.py --name 1x5f-paper --config liars_dice_1x5f_paper \\
        --target 0.03 --minutes 60 --snapshot-every 20 --out experiments/results/time_to_target
    python experiments/time_to_target.py --from-run experiments/results/table2/2x3f-cfr --target 0.03
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from rebel import _core
from rebel.cli.common import emit_report
from rebel.cli.train import _config_path
from rebel.config.train import ConfigError, load_train_config
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings
from rebel.train.rundir import RunDirectory
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.machine import cpu_name

log = logging.getLogger("time_to_target")

#: What every run sets: no evaluation while training (the snapshots are evaluated afterwards).
RUN_OVERRIDES = ["evaluation.every=0", "evaluation.final=false", "evaluation.references=false",
                 "evaluation.heldout_steps=0", "run.budget=training"]


class Refused(Exception):
    """A results folder this script cannot continue: exit 2 with one line."""


def read_metrics(run_dir: Path) -> List[Dict[str, Any]]:
    path = run_dir / RunDirectory.METRICS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def train(args: argparse.Namespace, run_dir: Path) -> None:
    """Trains (or resumes) the run until its final record; nothing if it is finished. A run
    that stopped at an earlier --minutes is extended to this one (its snapshots and their
    evaluations stay valid: the training continues exactly where it stopped)."""
    finals = [r for r in read_metrics(run_dir) if r.get("kind") == "final"]
    if finals:
        epochs = load_train_config(str(run_dir / RunDirectory.CONFIG)).run.epochs
        if finals[-1]["training_seconds"] >= 60 * args.minutes - 1 or finals[-1]["epoch"] >= epochs:
            return
    base = [sys.executable, "-m", "rebel", "train", "--no-progress"]
    if (run_dir / RunDirectory.CHECKPOINT).is_file():
        cmd = base + ["--resume", str(run_dir), f"run.max_minutes={args.minutes:g}"]
    else:
        if run_dir.exists():
            raise Refused(f"{run_dir} exists without a checkpoint; remove it or pass --force {args.name}")
        cmd = base + [_config_path(args.config), *args.set, *RUN_OVERRIDES, f"run.dir={run_dir.parent}",
                      f"run.name={run_dir.name}", f"run.max_minutes={args.minutes:g}",
                      f"run.snapshot_every={args.snapshot_every}", f"selfplay.seed={args.train_seed}"]
    log.info("training %s: %s", args.name, " ".join(cmd[2:]))
    subprocess.run(cmd, check=True)


def training_clock(run_dir: Path) -> Dict[int, Dict[str, float]]:
    """Per epoch: training seconds and examples generated (epoch 0: the random net, nothing yet)."""
    clock = {0: {"training_seconds": 0.0, "examples_generated": 0}}
    for r in read_metrics(run_dir):
        if r.get("kind") is None and "training_seconds" in r:
            clock[r["epoch"]] = {"training_seconds": r["training_seconds"],
                                 "examples_generated": r["examples_generated"]}
    return clock


def nets_to_evaluate(run_dir: Path) -> List[Tuple[int, Path]]:
    """The snapshots in epoch order, then the final net of a finished run where its epoch was not
    kept as a snapshot (``weights.bin`` is the net of the last epoch while the final record is the
    last line of the metrics: a run resumed past it writes epoch lines after it)."""
    nets = RunDirectory(run_dir).snapshots()
    records = read_metrics(run_dir)
    weights = run_dir / RunDirectory.WEIGHTS
    if records and records[-1].get("kind") == "final" and weights.is_file():
        final_epoch = records[-1]["epoch"]
        if all(epoch != final_epoch for epoch, _ in nets):
            nets.append((final_epoch, weights))
    return nets


def evaluate_snapshot(args: argparse.Namespace, run_dir: Path, path: Path, seed: int) -> Dict[str, Any]:
    """Mode (b) with the run's own search settings (its config.yaml) and a float32 net."""
    config = load_train_config(str(run_dir / RunDirectory.CONFIG))
    params = config.game.as_dict()
    params.pop("name")
    game = _core.make_game(config.game.name, dict(params))
    settings = EvalSettings(net=str(path), solver=config.search.solver,
                            depth=config.search.depth, iterations=args.eval_iterations or config.search.iterations,
                            repeats=args.repeats, threads=args.threads, seed=seed, off_path=config.search.off_path,
                            precision="fp32", mode_a=False, full_game=False)
    result = evaluate(game, settings, progress=args.progress)
    return {"exploitability": result["mode_b"][-1]["exploitability"], "seconds": result["seconds"]["mode_b"],
            "kernel": result["net_kernel"]}


def measure(args: argparse.Namespace, run_dir: Path, state: Dict[str, Any], save: Any) -> None:
    """Evaluates the snapshots by the rule in the module docstring, saving after each evaluation."""
    clock = training_clock(run_dir)
    evals: Dict[str, Dict[str, Any]] = state.setdefault("evaluations", {})
    state["reached"] = None
    for epoch, path in nets_to_evaluate(run_dir):
        if epoch not in clock:
            continue  # kept by a run that was killed before this epoch's metrics line
        entry = evals.setdefault(str(epoch), {"epoch": epoch, **clock[epoch], "seeds": {}})
        seeds = entry["seeds"]
        for seed in args.seeds if state["reached"] is None else args.seeds[:1] if args.curve else []:
            if str(seed) not in seeds:
                seeds[str(seed)] = evaluate_snapshot(args, run_dir, path, seed)
                log.info("%s epoch %d (%.1f training min) seed %d: %.4f", args.name, epoch,
                         entry["training_seconds"] / 60, seed, seeds[str(seed)]["exploitability"])
                save()
            if seed == args.seeds[0] and seeds[str(seed)]["exploitability"] > args.target:
                break  # seed 0 reads above the target: on to the next snapshot (the other seeds only count in the mean)
        if state["reached"] is None and all(str(s) in seeds for s in args.seeds):
            mean = statistics.mean(seeds[str(s)]["exploitability"] for s in args.seeds)
            entry["mean"] = mean
            if mean <= args.target:
                state["reached"] = {"epoch": epoch, "training_minutes": entry["training_seconds"] / 60,
                                    "examples_generated": entry["examples_generated"], "mean": mean}
                save()
                if not args.curve:
                    break


def summary_table(out: Path) -> str:
    lines = ["| name | config or run | overrides | target | time to target (training min) | examples generated | "
             "mean over seeds there | snapshots every | trained for |", "|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(out.glob("*/time_to_target.json")):
        s = json.loads(path.read_text())
        r = s.get("reached")
        reached = (f"**{r['training_minutes']:.1f}** (epoch {r['epoch']}) | {r['examples_generated']:,} | "
                   f"{r['mean']:.4f}"
                   if r else f"not reached in {s['trained_minutes']:.1f} | | ")
        lines.append(f"| {s['name']} | {s.get('run') or s['config']} | {' '.join(s['overrides']) or '-'} | "
                     f"{s['target']} | "
                     f"{reached} | "
                     f"{s['snapshot_every']} epochs | {s['trained_minutes']:.1f} min |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", help="the run's folder under --out (default with --from-run: that run's name)")
    parser.add_argument("--config", help="a YAML file or the name of one in configs/")
    parser.add_argument("--from-run", type=Path, help="measure this run's snapshots instead of training one")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override")
    parser.add_argument("--target", type=float, default=0.03)
    parser.add_argument("--minutes", type=float, default=60.0, help="training time of the run")
    parser.add_argument("--snapshot-every", type=int, default=20, help="epochs between the snapshots evaluated")
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="evaluation seeds")
    parser.add_argument("--repeats", type=int, default=1024, help="N sampled policies of mode (b)")
    parser.add_argument("--eval-iterations", type=int, default=0,
                        help="T of the evaluation's search (default: the config's search.iterations)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--curve", action="store_true", help="also evaluate every snapshot with the first seed")
    parser.add_argument("--force", action="store_true", help="delete this name's run and evaluations first")
    parser.add_argument("--no-progress", dest="progress", action="store_false")
    parser.add_argument("--out", default="experiments/results/time_to_target")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    def refuse(message: str) -> int:
        print(f"time_to_target.py: {message}", file=sys.stderr)
        return 2

    if args.from_run is not None:
        if args.config or args.set:
            return refuse("--from-run measures a trained run: --config and --set do not apply")
        if not (args.from_run / RunDirectory.CONFIG).is_file():
            return refuse(f"{args.from_run} is not a training run (no {RunDirectory.CONFIG})")
        if not RunDirectory(args.from_run).snapshots():
            return refuse(f"{args.from_run} kept no snapshots (train it with run.snapshot_every=K)")
        args.name = args.name or args.from_run.resolve().name
    elif not args.config:
        return refuse("give --config (and --name) to train a run, or --from-run DIR")
    if not args.name or "/" in args.name or args.name in (".", ".."):
        return refuse(f"--name must be a plain folder name, got {args.name!r}")
    if args.snapshot_every < 1 or args.minutes <= 0 or args.target <= 0:
        return refuse("--snapshot-every, --minutes and --target must be > 0")
    try:
        if args.from_run is not None:
            run_config = load_train_config(str(args.from_run / RunDirectory.CONFIG))
        else:
            load_train_config(_config_path(args.config), args.set)
    except (ConfigError, FileNotFoundError) as e:
        return refuse(str(e))
    out = Path(args.out)
    result_dir = out / args.name
    run_dir = args.from_run if args.from_run is not None else result_dir
    if args.force:
        if args.from_run is None:
            shutil.rmtree(result_dir, ignore_errors=True)
        else:
            (result_dir / "time_to_target.json").unlink(missing_ok=True)
    result_path = result_dir / "time_to_target.json"
    if args.from_run is not None:
        identity: Dict[str, Any] = {"name": args.name, "run": str(args.from_run), "config": None, "overrides": [],
                                    "snapshot_every": run_config.run.snapshot_every}
    else:
        identity = {"name": args.name, "config": args.config, "overrides": args.set, "train_seed": args.train_seed,
                    "minutes": args.minutes, "snapshot_every": args.snapshot_every}
    protocol = {"target": args.target, "seeds": args.seeds, "repeats": args.repeats,
                "eval_iterations": args.eval_iterations}
    state: Dict[str, Any] = json.loads(result_path.read_text()) if result_path.is_file() else {}
    for key, value in {**identity, **protocol}.items():
        if key == "minutes" and key in state and value > state[key]:
            continue  # a longer run: the training is extended, the evaluations kept
        if key in state and state[key] != value:
            return refuse(f"{run_dir} was measured with {key}={state[key]!r}, not {value!r}; "
                          "pass --force to start again")
    state.update(identity)
    state.update(protocol)
    if args.from_run is None:
        try:
            train(args, run_dir)
        except Refused as e:
            return refuse(str(e))
        except subprocess.CalledProcessError as e:
            return refuse(f"training {args.name} failed (exit {e.returncode})")
    result_dir.mkdir(parents=True, exist_ok=True)
    epochs = [r for r in read_metrics(run_dir) if r.get("kind") is None and "training_seconds" in r]
    last = epochs[-1] if epochs else {"training_seconds": 0.0, "epoch": 0, "examples_generated": 0}
    state.update({"trained_minutes": last["training_seconds"] / 60, "epochs": last["epoch"],
                  "examples_generated": last["examples_generated"], "cpu": cpu_name(),
                  "command": " ".join(["python experiments/time_to_target.py", *sys.argv[1:]] if argv is None else
                                      ["python experiments/time_to_target.py", *argv])})

    def save() -> None:
        atomic_write_bytes(result_path, (json.dumps(state, indent=2) + "\n").encode())

    measure(args, run_dir, state, save)
    save()
    table = summary_table(out)
    atomic_write_bytes(out / "time_to_target.md", table.encode())
    emit_report({"table": table}, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
