"""Fitting a value net at its own search's leaf queries: how much of the gap to the exact-leaf
level is the net's error there.

    python experiments/leaf_query_finetune.py --game leduc_nolimit --net NET --rounds 6 --out DIR
    python experiments/leaf_query_finetune.py --quick --out DIR     # Leduc, T = 32: the pipeline only

In Leduc hold'em the protocol's search asks the value net about one set of PBSs only: the
leaves of the initial PBS's subgame (the first betting round, ending at the board's deal),
under each of its T iterates. The second round is solved to the end without a net, so a net
exact at those queries plays at the oracle level. This script measures how close a trained net
gets when it is fitted there. Each round:

1. runs the protocol's root search (solver, depth, T) with the current net and records every
   leaf batch (experiments/leaf_query_error.py's recording);
2. labels every ``--every``-th batch exactly: the rest of the game below the leaf solved from
   the leaf PBS with ``--oracle-iterations`` LCFR iterations (the Table 2 oracle, and the target
   a self-play step rooted at that PBS would give, since that subgame asks no net);
3. reports the current net's error at those new labels *before* it trains on them (the
   belief-weighted mean |error| of leaf_query_error.py: an honest measure of this round's net);
4. fine-tunes the net on every label so far (Adam, the trainer's loss in the game's value unit).

The nets of every round are written as ``round_<r>.bin``; ``rounds.json`` holds the per-round
errors. Evaluate them under the protocol with ``rebel eval`` (see the results' commands). This
is a diagnostic of where the error lies, not a training recipe: the net is fitted to one
search's queries and nothing else, which in Leduc is all the protocol asks of it.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leaf_query_error import labelled_rows, record_root_search  # noqa: E402

from rebel import _core  # noqa: E402
from rebel.games import game_from_config  # noqa: E402
from rebel.games.units import value_unit  # noqa: E402
from rebel.nets.pretrained import resolve_net  # noqa: E402
from rebel.nets.value_mlp import ValueMLP, export_weights, load_weights, to_native  # noqa: E402
from rebel.train.trainer import value_loss  # noqa: E402

log = logging.getLogger("leaf_query_finetune")

FORMAT = 1
ROOT = Path(__file__).resolve().parent


def label_batches(game: _core.Game, tree: _core.PublicTree, batches: Sequence[Tuple[np.ndarray, np.ndarray]],
                  oracle_iterations: int, every: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ``every``-th batch's rows, their exact values and the net's values (float32 rows,
    float64 values)."""
    rows: List[np.ndarray] = []
    exact: List[np.ndarray] = []
    net: List[np.ndarray] = []
    for labelled in labelled_rows(game, tree, batches, oracle_iterations, every):
        rows.append(labelled.row.copy())
        exact.append(labelled.exact)
        net.append(labelled.value)
    return np.stack(rows).astype(np.float32), np.stack(exact), np.stack(net)


def weighted_mae(game: _core.Game, rows: np.ndarray, exact: np.ndarray, predicted: np.ndarray) -> float:
    """The queried player's beliefs weight its hands' |error| (leaf_query_error.py's measure)."""
    H, F = game.num_hands, game.feature_size
    queried = rows[:, 1].astype(int)
    own = np.where(queried[:, None] == 0, rows[:, 2 + F:2 + F + H], rows[:, 2 + F + H:2 + F + 2 * H])
    own = own / own.sum(axis=1, keepdims=True)
    return float(np.mean(np.sum(own * np.abs(predicted - exact), axis=1)))


def fine_tune(model: ValueMLP, rows: np.ndarray, targets: np.ndarray, epochs: int, lr: float, batch_size: int,
              unit: float, seed: int) -> float:
    """``epochs`` passes of Adam over (rows, targets) with the trainer's loss in ``unit``; the
    last epoch's mean loss."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    x, y = torch.from_numpy(rows), torch.from_numpy(targets.astype(np.float32))
    model.train()
    last = 0.0
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        losses = []
        for start in range(0, len(x), batch_size):
            pick = order[start:start + batch_size]
            optimizer.zero_grad()
            loss = value_loss(model(x[pick]) / unit, y[pick] / unit)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.item()))
        last = float(np.mean(losses))
    model.eval()
    return last


def run(args: argparse.Namespace) -> Dict[str, Any]:
    game = game_from_config({"name": args.game})
    unit = value_unit(game)
    model = load_weights(resolve_net(args.net))
    args.out.mkdir(parents=True, exist_ok=True)
    all_rows: List[np.ndarray] = []
    all_exact: List[np.ndarray] = []
    rounds: List[Dict[str, Any]] = []
    for r in range(args.rounds + 1):
        start = time.perf_counter()
        path = args.out / f"round_{r}.bin"
        export_weights(model, path)
        native = to_native(model, game, precision="fp32")
        tree, batches = record_root_search(game, native.forward, args.solver, args.depth, args.iterations)
        rows, exact, predicted = label_batches(game, tree, batches, args.oracle_iterations, args.every)
        record: Dict[str, Any] = {"round": r, "net": path.name, "batches": len(batches), "rows_labelled": len(rows),
                                  "weighted_mae": weighted_mae(game, rows, exact, predicted),
                                  "mae": float(np.mean(np.abs(predicted - exact)))}
        if r < args.rounds:  # the last round only measures the last net
            all_rows.append(rows)
            all_exact.append(exact)
            record["train_rows"] = int(sum(len(x) for x in all_rows))
            record["train_loss"] = fine_tune(model, np.concatenate(all_rows), np.concatenate(all_exact), args.epochs,
                                             args.lr, args.batch_size, unit, args.seed + r)
        record["seconds"] = time.perf_counter() - start
        log.info("round %d: leaf-query weighted |error| %.3f over %d rows (%.0f s)", r, record["weighted_mae"],
                 len(rows), record["seconds"])
        rounds.append(record)
        result = {"format": FORMAT, "game": args.game, "net": args.net, "solver": args.solver, "depth": args.depth,
                  "iterations": args.iterations, "oracle_iterations": args.oracle_iterations, "every": args.every,
                  "epochs": args.epochs, "lr": args.lr, "batch_size": args.batch_size, "rounds": rounds}
        (args.out / "rounds.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="leduc_nolimit")
    parser.add_argument("--net", default="pretrained:leduc_nolimit", help="a weights file or pretrained:NAME")
    parser.add_argument("--solver", default="lcfr")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=1024)
    parser.add_argument("--oracle-iterations", type=int, default=1024)
    parser.add_argument("--every", type=int, default=7, help="label every k-th leaf batch (odd: both players)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=20, help="Adam passes over all labels so far, per round")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="Leduc, T = 32, two rounds: the pipeline only")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "leduc" / "studies" / "leaf_query_finetune")
    args = parser.parse_args(list(argv) or None)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.quick:
        args.game, args.net = "leduc", "pretrained:leduc"
        args.iterations, args.oracle_iterations, args.every, args.rounds, args.epochs = 32, 32, 3, 2, 2
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
