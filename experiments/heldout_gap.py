"""Where a trained net's held-out error comes from: the net, or the self-play targets?

The held-out labels of a training run are full-depth solves (what ``OracleNet`` answers).
Self-play trains on something else: the root-value means of depth-limited CFR-D. This
script takes a sample of the run's held-out PBSs (regenerated from its config, exactly as
the run drew them) and compares, per value and hand:

* CFR-D's root-value mean with exact leaf values (``OracleNet``, T = search.iterations)
  against the label: the error the ideal self-play target itself carries;
* the trained net against the label, and against that ideal target;
* the same search with the trained net at its leaves (what self-play trains on once the
  net is this one) against the label and against the net: whether the net's own
  bootstrapped targets, or its fit to them, keep it from the labels.

``--walk-solver lfp`` adds the other side of the question: the run's held-out PBSs are drawn
by a walk with the oracle's solver (linear CFR) whatever the run's solver was. This draws
the same number of PBSs by the same walk with another solver (e.g. the FP run's own, so that
the beliefs are those its self-play met), labels them exactly as the held-out set is
labelled (full-depth linear CFR, the same iterations) and reports the net's error there:
whether the net's held-out error is a misfit everywhere or a shift between the beliefs it
was trained on and the held-out ones.

    python experiments/heldout_gap.py experiments/results/training_curve/1x4f-60min --samples 40
    python experiments/heldout_gap.py experiments/results/table2/1x5f-fp --samples 40 --walk-solver lfp
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

import rebel
from rebel import _core
from rebel.cli.common import emit_report
from rebel.config.train import load_train_config
from rebel.nets.value_mlp import load_weights, to_native
from rebel.train.evaluation import ORACLE_SOLVER, heldout_walk


def heldout_pbs(config: Any) -> list[tuple[list[int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(history, beliefs0, beliefs1, labels, rows) of every held-out PBS, as the run drew them."""
    return [(list(history), beliefs[0].copy(), beliefs[1].copy(), step.targets.copy(), step.rows.copy())
            for history, beliefs, step in heldout_walk(config.game.make(), config)]


def root_values(game: Any, history: list[int], b0: np.ndarray, b1: np.ndarray, search: Any, leaves: Any) -> np.ndarray:
    """Both players' root-value means of the run's depth-limited search with ``leaves`` at its leaves."""
    solver = rebel.SubgameSolver(game, rebel.build_tree(game, history, search.depth), b0, b1, solver=search.solver,
                                 net=leaves, off_path=search.off_path)
    solver.run(search.iterations)
    return np.array([solver.root_values(0), solver.root_values(1)])


def walk_error(config: Any, model: torch.nn.Module, walk_solver: str) -> dict[str, Any]:
    """The net's error on PBSs drawn by the held-out walk run with ``walk_solver`` instead of
    the oracle's solver, each labelled as the held-out set is (full-depth ORACLE_SOLVER)."""
    game, s = config.game.make(), config.search
    labeller = _core.SelfPlayGenerator(game, None, solver=ORACLE_SOLVER, depth=s.depth, iterations=s.iterations,
                                       epsilon=s.epsilon, sampling=s.iteration_sampling, full_depth=True,
                                       off_path=s.off_path)
    rows, labels = [], []
    for history, beliefs, _step in heldout_walk(game, config, oracle_solver=walk_solver):
        labelled = labeller.step(list(history), beliefs[0], beliefs[1], 0)
        rows.append(labelled.rows)
        labels.append(labelled.targets)
    rows_array, labels_array = np.concatenate(rows), np.concatenate(labels).astype(np.float64)
    with torch.no_grad():
        prediction = model(torch.from_numpy(rows_array)).numpy().astype(np.float64)
    err = np.abs(prediction - labels_array)
    queried = rows_array[:, 1].astype(int)
    return {"walk_solver": walk_solver, "pbs": len(rows), "mean_abs_net_minus_label": float(err.mean()),
            "by_queried_player": [float(err[queried == q].mean()) for q in (0, 1)]}


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="a run directory (config.yaml and weights.bin)")
    parser.add_argument("--samples", type=int, default=40, help="held-out PBSs to solve with CFR-D")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--walk-solver", help="also measure the net on PBSs drawn by this solver's walk (lfp, lcfr...)")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args(argv)
    run = Path(args.run_dir)
    config = load_train_config(str(run / "config.yaml"))
    game, s = config.game.make(), config.search
    pbs = heldout_pbs(config)
    model = load_weights(run / "weights.bin").eval()
    oracle = _core.OracleNet(game, "lcfr", s.iterations, off_path=s.off_path)
    native = to_native(model, game, precision="fp32")
    chosen = np.random.default_rng(args.seed).choice(len(pbs), min(args.samples, len(pbs)), replace=False)
    target_gap, net_error, net_vs_target, net_target_gap, net_vs_net_target = [], [], [], [], []
    start = time.perf_counter()
    for k in chosen:
        history, b0, b1, labels, rows = pbs[k]
        target, bootstrapped = (root_values(game, history, b0, b1, s, leaves) for leaves in (oracle, native))
        with torch.no_grad():
            prediction = model(torch.from_numpy(rows)).numpy().astype(np.float64)
        target_gap.append(np.abs(target - labels).mean())
        net_error.append(np.abs(prediction - labels).mean())
        net_vs_target.append(np.abs(prediction - target).mean())
        net_target_gap.append(np.abs(bootstrapped - labels).mean())
        net_vs_net_target.append(np.abs(prediction - bootstrapped).mean())
    queried = np.concatenate([p[4][:, 1] for p in pbs]).astype(int)
    all_rows = np.concatenate([p[4] for p in pbs])
    all_labels = np.concatenate([p[3] for p in pbs]).astype(np.float64)
    with torch.no_grad():
        heldout_err = np.abs(model(torch.from_numpy(all_rows)).numpy().astype(np.float64) - all_labels)
    other_walk = walk_error(config, model, args.walk_solver) if args.walk_solver else None
    emit_report({
        "run_dir": str(run), "heldout_pbs": len(pbs), "samples": len(chosen),
        "heldout_net_error_by_queried_player": [float(heldout_err[queried == q].mean()) for q in (0, 1)],
        **({"other_walk": other_walk} if other_walk else {}),
        "mean_abs_cfrd_oracle_leaves_target_minus_label": float(np.mean(target_gap)),
        "mean_abs_net_minus_label": float(np.mean(net_error)),
        "mean_abs_net_minus_cfrd_target": float(np.mean(net_vs_target)),
        "mean_abs_net_leaves_target_minus_label": float(np.mean(net_target_gap)),
        "mean_abs_net_minus_net_leaves_target": float(np.mean(net_vs_net_target)),
        "seconds": time.perf_counter() - start,
    }, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
