"""Snapshot averaging: the uniform average of a run's last nets, measured against its final net.

A net trained by self-play oscillates from epoch to epoch (consecutive evaluations of one run
move by more than one net's evaluation seeds do), and a moving average of the weights during
training (``trainer.ema_decay``) damps that only over its own horizon. This script tries the
coarser average after the fact: the run's snapshots (``run.snapshot_every``, each the net that
played, that is the moving average where one was kept) from the last ``--fraction`` of its
epochs (epoch >= (1 - fraction) x the final epoch; a quarter by default, the rule fixed before
any averaged net was evaluated), averaged parameter by parameter with equal weights
(:func:`rebel.nets.weights_io.average_weights`). The averaged net is evaluated with exactly the
protocol and seeds the run's final net was evaluated with in ``RUN/eval.json`` (the Table 2
protocol: mode (b), depth, T, N, solver and net precision as recorded there), and where the
run kept its held-out set (``RUN/heldout.npz``) the held-out error of both nets is reported.

Writes ``RUN/weights_avg.bin`` and ``RUN/eval_avg.json`` (each seed kept as it finishes in
``RUN/eval_avg.partial.json``: a killed evaluation resumes at the seed it was on; a finished
one is not computed again unless ``--force``).

    python experiments/snapshot_average.py experiments/results/table2/2x3f-cfr
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from rebel.nets.weights_io import average_weights
from rebel.train.rundir import RunDirectory
from rebel.util.atomic_io import atomic_write_bytes

log = logging.getLogger("snapshot_average")

FORMAT = 1
WEIGHTS = "weights_avg.bin"
RESULT = "eval_avg.json"
PARTIAL = "eval_avg.partial.json"


class Refused(Exception):
    """Input this script cannot work with: exit 2 with one line."""


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise Refused(f"{path}: unreadable {what} ({e})") from None


def final_epoch(run_dir: Path) -> int:
    """The epoch of the run's final net: its last metrics record with an epoch."""
    path = run_dir / RunDirectory.METRICS
    if not path.is_file():
        raise Refused(f"{run_dir}: no {RunDirectory.METRICS} (not a training run directory)")
    epochs = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a killed run
        if isinstance(record, dict) and isinstance(record.get("epoch"), int):
            epochs.append(record["epoch"])
    if not epochs:
        raise Refused(f"{path}: no epoch recorded")
    return max(epochs)


def chosen_snapshots(run_dir: Path, fraction: float) -> Tuple[int, List[Tuple[int, Path]]]:
    """The final epoch and the snapshots the rule averages (at least two)."""
    last = final_epoch(run_dir)
    start = (1.0 - fraction) * last
    kept = RunDirectory(run_dir).snapshots()
    chosen = [(epoch, path) for epoch, path in kept if start <= epoch <= last]
    if len(chosen) < 2:
        raise Refused(f"{run_dir}: {len(chosen)} snapshot(s) from epoch {start:g} to {last} (the last "
                      f"{fraction:g} of training; {len(kept)} kept in all), at least 2 are needed to average; "
                      f"train with run.snapshot_every")
    return last, chosen


def final_net_evaluation(run_dir: Path) -> Dict[str, Any]:
    """The final net's evaluation (``eval.json``, as Table 2 writes it): protocol and seeds."""
    path = run_dir / "eval.json"
    if not path.is_file():
        raise Refused(f"{run_dir}: no eval.json; evaluate the run's final net first (experiments/table2.py)")
    doc = read_json(path, "evaluation")
    protocol, runs = doc.get("protocol"), doc.get("runs")
    if not isinstance(protocol, dict) or protocol.get("mode") != "b" or not runs:
        raise Refused(f"{path}: not a mode-(b) evaluation with per-seed runs")
    return doc


def heldout_errors(run_dir: Path, nets: Dict[str, bytes]) -> Optional[Dict[str, Dict[str, float]]]:
    """Held-out error of each net (float32 kernel) where the run kept its held-out set."""
    from rebel import _core
    from rebel.config.train import load_train_config
    from rebel.train.evaluation import HeldOutSet

    cached = RunDirectory(run_dir).load_heldout()
    if cached is None:
        return None
    heldout = HeldOutSet(*cached)
    config = load_train_config(str(run_dir / RunDirectory.CONFIG))
    params = config.game.as_dict()
    game = _core.make_game(params.pop("name"), params)
    out = {}
    for name, weights in nets.items():
        net = _core.MlpValueNet(game, weights, precision="fp32")
        out[name] = heldout.error(lambda x, net=net: net.forward(np.ascontiguousarray(x, dtype=np.float32)))
    return out


def evaluate_seed(run_dir: Path, weights: Path, protocol: Dict[str, Any], seed: int, threads: int,
                  progress: bool) -> Dict[str, Any]:
    """Mode (b) on ``weights`` with the recorded protocol and the run's game and off-path setting."""
    from rebel import _core
    from rebel.config.train import load_train_config
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    config = load_train_config(str(run_dir / RunDirectory.CONFIG))
    params = config.game.as_dict()
    name = params.pop("name")
    game = _core.make_game(name, dict(params))
    settings = EvalSettings(net=str(weights), solver=protocol["solver"],
                            depth=protocol["depth"], iterations=protocol["iterations"], repeats=protocol["repeats"],
                            threads=threads, seed=seed, off_path=config.search.off_path,
                            precision=protocol.get("precision", "fp32"), mode_a=False, full_game=False)
    result = evaluate(game, settings, progress=progress)
    return {"seed": seed, "exploitability": result["mode_b"][-1]["exploitability"],
            "br_values": result["mode_b"][-1]["br_values"], "seconds": result["seconds"]["mode_b"],
            "net_kernel": result.get("net_kernel")}


def _spread(runs: List[Dict[str, Any]]) -> Dict[str, float]:
    values = [r["exploitability"] for r in runs]
    return {"mean": statistics.mean(values), "min": min(values), "max": max(values)}


def measure(run_dir: Path, fraction: float, threads: int, progress: bool, force: bool) -> Dict[str, Any]:
    result_path, partial_path, weights_path = run_dir / RESULT, run_dir / PARTIAL, run_dir / WEIGHTS
    if result_path.is_file() and not force:
        return read_json(result_path, "result")
    final = final_net_evaluation(run_dir)
    last, chosen = chosen_snapshots(run_dir, fraction)
    average = average_weights([path.read_bytes() for _, path in chosen])
    if force:
        partial_path.unlink(missing_ok=True)
    # Seeds already evaluated are kept only for the same net (same snapshots) and protocol.
    key = {"format": FORMAT, "fraction": fraction, "snapshots": [epoch for epoch, _ in chosen],
           "protocol": final["protocol"]}
    done: Dict[int, Dict[str, Any]] = {}
    if partial_path.is_file():
        partial = read_json(partial_path, "partial evaluation")
        if {k: partial.get(k) for k in key} == key and weights_path.is_file() \
                and weights_path.read_bytes() == average:
            done = {r["seed"]: r for r in partial.get("runs", [])}
        else:
            log.info("%s: of another rule, snapshot set or protocol; starting again", partial_path)
    atomic_write_bytes(weights_path, average)
    log.info("averaged %d snapshots (epochs %s) of %d epochs into %s", len(chosen),
             ", ".join(str(e) for e, _ in chosen), last, weights_path)
    runs: List[Dict[str, Any]] = []
    for seed in [r["seed"] for r in final["runs"]]:
        if seed in done:
            runs.append(done[seed])
            continue
        runs.append(evaluate_seed(run_dir, weights_path, final["protocol"], seed, threads, progress))
        log.info("averaged net, seed %d: exploitability %.5f (final net: %.5f)", seed, runs[-1]["exploitability"],
                 next(r["exploitability"] for r in final["runs"] if r["seed"] == seed))
        atomic_write_bytes(partial_path, (json.dumps({**key, "runs": runs}, indent=2) + "\n").encode())
    out = {**key, "run": str(run_dir), "final_epoch": last,
           "averaged": {"runs": runs, **_spread(runs)},
           "final_net": {"runs": final["runs"], **_spread(final["runs"])},
           "heldout": heldout_errors(run_dir, {"averaged": average,
                                               "final_net": (run_dir / RunDirectory.WEIGHTS).read_bytes()})}
    atomic_write_bytes(result_path, (json.dumps(out, indent=2) + "\n").encode())
    partial_path.unlink(missing_ok=True)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a training run directory with snapshots/ and eval.json")
    parser.add_argument("--fraction", type=float, default=0.25,
                        help="average the snapshots of this last fraction of the epochs (default 0.25)")
    parser.add_argument("--threads", type=int, default=2, help="evaluation threads (default 2)")
    parser.add_argument("--force", action="store_true", help="average and evaluate again even if done")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if not 0.0 < args.fraction <= 1.0:
            raise Refused(f"--fraction must be in (0, 1], got {args.fraction}")
        if args.threads < 1:
            raise Refused(f"--threads must be >= 1, got {args.threads}")
        if not args.run.is_dir():
            raise Refused(f"{args.run}: no such run directory")
        out = measure(args.run, args.fraction, args.threads, args.progress, args.force)
    except (Refused, ValueError) as e:
        print(f"snapshot_average: {e}", file=sys.stderr)
        return 2
    avg, fin = out["averaged"], out["final_net"]
    print(f"averaged net ({len(out['snapshots'])} snapshots, epochs {out['snapshots'][0]}-{out['snapshots'][-1]}): "
          f"{avg['mean']:.4f} [{avg['min']:.4f}, {avg['max']:.4f}]; final net: "
          f"{fin['mean']:.4f} [{fin['min']:.4f}, {fin['max']:.4f}]")
    if out["heldout"]:
        for name, err in out["heldout"].items():
            print(f"held-out {name}: MAE {err['heldout_mae']:.4f}, mean max {err['heldout_delta_mean']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
