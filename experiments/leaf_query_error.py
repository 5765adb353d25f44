"""A value net's error at the PBSs the search itself asks it about.

    python experiments/leaf_query_error.py --game leduc --net NET[,NET...] [--iterations 1024]
    python experiments/leaf_query_error.py --quick      # Leduc, T = 64, the pipeline only

The held-out error a training run reports is measured at PBSs of an exact self-play walk.
The search that is evaluated asks the net about other PBSs: the leaves of its root subgame
under each of its T iterates. This script runs that root search (the initial PBS, the
protocol's solver, depth and T) with the net wrapped so that every leaf query is recorded,
then labels every `--every`-th batch with exact values (an OracleNet: the rest of the game
below the leaf solved from the leaf PBS, `--oracle-iterations` LCFR iterations, the Table 2
oracle's labels) and reports:

- the belief-weighted mean |error| (the queried player's own beliefs weight its hands, as
  the held-out `heldout_weighted_mae`), the unweighted mean and the mean max over hands;
- per public leaf and queried player, over the second half of the iterations (the iterates
  mode (b) samples most, linear weights): the weighted |error| and the weighted signed error
  (net minus exact), worst first.

Leaves with the same public features (the net's input) are one leaf here: the net cannot
tell them apart. Values are in the core's convention (csrc/core/game.h, per hand given the
opponent's normalised beliefs), in the game's chips (the net's value_scale folded in).

Writes one JSON per game and net under --out (default experiments/results/leduc/studies/leaf_query_error)
and prints a table.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from rebel import _core
from rebel.games import game_from_config
from rebel.games.names import action_label
from rebel.nets.pretrained import resolve_net

log = logging.getLogger("leaf_query_error")

FORMAT = 1
ROOT = Path(__file__).resolve().parent
Batch = Tuple[np.ndarray, np.ndarray]  # the query rows [B, query_size] and the net's values [B, H]


def leaf_histories(game: _core.Game, tree: _core.PublicTree) -> Dict[Tuple[float, ...], List[int]]:
    """(acting player, public features) of each pseudo-leaf -> its history (the first one of
    leaves the features do not tell apart)."""
    leaves: Dict[Tuple[float, ...], List[int]] = {}
    for node in tree.pseudo_leaves:
        history = list(tree.history(node))
        features = np.asarray(game.public_features(history), dtype=np.float32)
        leaves.setdefault((float(game.player_to_act(history)),) + tuple(features.tolist()), history)
    return leaves


def record_root_search(game: _core.Game, forward: Callable[[np.ndarray], np.ndarray], solver: str, depth: int,
                       iterations: int) -> Tuple[_core.PublicTree, List[Batch]]:
    """Runs ``iterations`` iterations (2 x half-iterations) of ``solver`` on the root subgame
    from the initial PBS with the value function ``forward`` (query rows -> values, e.g. an
    MlpValueNet's forward) at its leaves; returns the tree and every leaf batch."""
    tree = _core.build_tree(game, [], depth, True)
    batches: List[Batch] = []

    def recording(rows: np.ndarray) -> np.ndarray:
        values = np.asarray(forward(rows), dtype=np.float64)
        batches.append((rows.copy(), values))
        return values

    solver_ = _core.SubgameSolver(game, tree, solver=solver, net=_core.PythonValueNet(game, recording, "recorded"))
    for _ in tqdm(range(2 * iterations), desc="root search", unit="half-it", disable=not sys.stderr.isatty()):
        solver_.step()
    return tree, batches


class LabelledRow(NamedTuple):
    """One recorded leaf query with its exact answer (beliefs normalised, float64)."""
    batch: int
    row: np.ndarray
    value: np.ndarray
    history: List[int]
    queried: int
    beliefs: List[np.ndarray]
    exact: np.ndarray


def labelled_rows(game: _core.Game, tree: _core.PublicTree, batches: Sequence[Batch], oracle_iterations: int,
                  every: int) -> Iterator[LabelledRow]:
    """Every ``every``-th batch's rows with the net's answer and the exact one: the rest of the
    game below the row's leaf solved by ``oracle_iterations`` LCFR iterations (an OracleNet)."""
    H, F = game.num_hands, game.feature_size
    leaves = leaf_histories(game, tree)
    oracle = _core.OracleNet(game, "lcfr", oracle_iterations)
    for index in tqdm(range(0, len(batches), every), desc="exact labels", disable=not sys.stderr.isatty()):
        rows, values = batches[index]
        for row, value in zip(rows, values):
            history = leaves[(float(row[0]),) + tuple(row[2:2 + F].tolist())]
            queried = int(row[1])
            beliefs = [row[2 + F + p * H:2 + F + (p + 1) * H].astype(np.float64) for p in range(2)]
            beliefs = [b / b.sum() for b in beliefs]
            exact = _core.net_values(oracle, game, [history], queried, beliefs[0], beliefs[1])[0]
            yield LabelledRow(index, row, value, history, queried, beliefs, exact)


def leaf_errors(game: _core.Game, tree: _core.PublicTree, batches: Sequence[Batch], oracle_iterations: int,
                every: int) -> Dict[str, Any]:
    """The net's errors against exact values at every ``every``-th batch (module docstring)."""
    weighted, plain, worst = [], [], []
    cells: Dict[Tuple[str, int], List[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # count, |err|, signed
    second_half = len(batches) // 2
    for labelled in labelled_rows(game, tree, batches, oracle_iterations, every):
        error = labelled.value - labelled.exact
        own = labelled.beliefs[labelled.queried]
        weighted.append(float(own @ np.abs(error)))
        plain.append(float(np.abs(error).mean()))
        worst.append(float(np.abs(error).max()))
        if labelled.batch >= second_half:
            cell = cells[(" ".join(action_label(game, a) for a in labelled.history), labelled.queried)]
            cell[0] += 1
            cell[1] += weighted[-1]
            cell[2] += float(own @ error)
    per_leaf = [{"leaf": name, "queried": queried, "rows": int(n), "weighted_abs": s / n, "weighted_signed": e / n}
                for (name, queried), (n, s, e) in cells.items()]
    per_leaf.sort(key=lambda c: -c["weighted_abs"])
    return {"rows_labelled": len(weighted), "weighted_mae": float(np.mean(weighted)), "mae": float(np.mean(plain)),
            "delta_mean": float(np.mean(worst)), "per_leaf_second_half": per_leaf}


def measure(game_name: str, net_spec: str, solver: str, depth: int, iterations: int, oracle_iterations: int,
            every: int) -> Dict[str, Any]:
    """The whole measurement for one game and net, as the JSON it writes."""
    game = game_from_config({"name": game_name})
    path = resolve_net(net_spec)
    net = _core.MlpValueNet(game, path, precision="fp32")
    start = time.perf_counter()
    tree, batches = record_root_search(game, net.forward, solver, depth, iterations)
    result = leaf_errors(game, tree, batches, oracle_iterations, every)
    return {"format": FORMAT, "game": game_name, "net": net_spec, "solver": solver, "depth": depth,
            "iterations": iterations, "oracle_iterations": oracle_iterations, "every": every,
            "batches": len(batches), "seconds": time.perf_counter() - start, **result}


def table(results: Sequence[Dict[str, Any]], top: int) -> str:
    lines = ["| net | T | rows labelled | weighted mean abs error | mean abs | mean max over hands |",
             "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['net']} | {r['iterations']} | {r['rows_labelled']} | {r['weighted_mae']:.4f} | "
                     f"{r['mae']:.4f} | {r['delta_mean']:.4f} |")
    for r in results:
        lines += ["", f"{r['net']}, second half of the iterations, worst leaves:", "",
                  "| leaf | queried | weighted abs | weighted signed |", "|---|---|---|---|"]
        for c in r["per_leaf_second_half"][:top]:
            lines.append(f"| {c['leaf']} | {c['queried']} | {c['weighted_abs']:.4f} | {c['weighted_signed']:+.4f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="leduc")
    parser.add_argument("--net", default="pretrained:leduc", help="weights files or pretrained:NAME, comma-separated")
    parser.add_argument("--solver", default="lcfr")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=1024)
    parser.add_argument("--oracle-iterations", type=int, default=1024)
    parser.add_argument("--every", type=int, default=7, help="label every k-th leaf batch (odd: both players)")
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="T = 64, every 5th batch: the pipeline only")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "leduc" / "studies" / "leaf_query_error")
    args = parser.parse_args(list(argv) or None)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.quick:
        args.iterations, args.oracle_iterations, args.every = 64, 64, 5
    results = []
    args.out.mkdir(parents=True, exist_ok=True)
    for index, spec in enumerate(args.net.split(",")):
        result = measure(args.game, spec, args.solver, args.depth, args.iterations, args.oracle_iterations,
                         args.every)
        log.info("%s: weighted mean |error| %.4f over %d rows (%.0f s)", spec, result["weighted_mae"],
                 result["rows_labelled"], result["seconds"])
        name = Path(resolve_net(spec)).parent.name if not spec.startswith("pretrained:") else spec.split(":")[1]
        (args.out / f"{args.game}_{index}_{name}_T{args.iterations}.json").write_text(json.dumps(result, indent=1))
        results.append(result)
    text = table(results, args.top)
    (args.out / f"{args.game}_T{args.iterations}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
