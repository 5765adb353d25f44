"""ReBeL on tic-tac-toe: the trained net beside the references of the same protocol.

Reads a finished `rebel train rebel_tictactoe` run and measures, with the run's search
(depth 2, T = 1024 linear CFR-D, mode (b) evaluated exactly in the limit of infinitely many
sampled policies; rebel._core.PerfectInfoSearch):

* the run's final net (weights.bin);
* exact leaf values: the same search with the game-theoretic value of every leaf from the
  exact m,n,k solver: the level no net can beat under this protocol;
* the zero net, and full-game linear CFR with the same iteration count (no search);
* from the run's metrics, the first evaluation at or below the target and the wall minutes
  and examples it took, and whether every later evaluation stayed there.

    python experiments/rebel_tictactoe.py experiments/results/mnk/rebel_tictactoe [--target 0.01]

Writes RUN_DIR/summary.json and prints it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from rebel import _core
from rebel.config.train import load_train_config
from rebel.search.solve import solve


def exact_leaf_net(game: _core.Game, m: int, n: int, k: int) -> _core.ValueNet:
    """A value net answering every query with the position's exact value (for the queried player)."""
    solver = _core.MnkSolver(m, n, k, 10**7)
    cells = m * n
    values: dict[bytes, int] = {}

    def position_value(row: np.ndarray) -> int:
        key = row[2:2 + 2 * cells].tobytes()
        if key not in values:
            first = [c for c in range(cells) if row[2 + c]]
            second = [c for c in range(cells) if row[2 + cells + c]]
            board = _core.MnkBoard(m, n, k)
            for i in range(len(first)):  # stones alternate, player 0's first; order does not matter for the value
                board.play(first[i])
                if i < len(second):
                    board.play(second[i])
            values[key] = int(solver.value(board))  # for the player to move
        return values[key]

    def answer(rows: np.ndarray) -> np.ndarray:
        out = np.zeros((len(rows), 1))
        for i, row in enumerate(rows):
            mover = 0 if row[2:2 + cells].sum() == row[2 + cells:2 + 2 * cells].sum() else 1
            value = position_value(row)
            out[i, 0] = value if int(row[1]) == mover else -value
        return out

    return _core.PythonValueNet(game, answer, name="exact")


def target_analysis(run_dir: Path, target: float) -> dict[str, Any]:
    """When the run's evaluations first reached ``target``, and from when on they stayed there."""
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    evaluations = [e for e in rows if "exploitability" in e and "epoch" in e and e.get("kind") != "references"]
    out: dict[str, Any] = {"target": {"exploitability": target, "evaluations": len(evaluations)}}

    def at(e: dict[str, Any]) -> dict[str, Any]:
        return {"epoch": e["epoch"], "wall_minutes": e["wall_seconds"] / 60, "examples": e["examples_generated"],
                "exploitability": e["exploitability"]}

    hit = next((i for i, e in enumerate(evaluations) if e["exploitability"] <= target), None)
    if hit is not None:
        out["target"]["first"] = at(evaluations[hit])
        above = [i for i, e in enumerate(evaluations) if e["exploitability"] > target]
        stable = above[-1] + 1 if above else 0
        if stable < len(evaluations):
            out["target"]["stayed_below_from"] = at(evaluations[stable])
    if evaluations:
        out["last_evaluation"] = at(evaluations[-1])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--target", type=float, default=0.01)
    args = parser.parse_args()
    config = load_train_config(str(args.run_dir / "config.yaml"))
    game = config.game.make()
    if game.name != "mnk":
        print(f"{args.run_dir}: not an m,n,k run ({game.description()})", file=sys.stderr)
        return 2
    s = config.search
    params = game.params

    def limit(net: _core.ValueNet) -> dict[str, Any]:
        start = time.perf_counter()
        result = _core.PerfectInfoSearch(game, net, s.solver, s.depth, s.iterations,
                                         off_path=s.off_path).evaluate(threads=2)
        return {"exploitability": result["exploitability"], "br_values": list(result["br_values"]),
                "seconds": time.perf_counter() - start}

    summary: dict[str, Any] = {
        "game": game.description(),
        "protocol": {"solver": s.solver, "depth": s.depth, "iterations": s.iterations, "off_path": s.off_path,
                     "mode": "b, N -> infinity (exact)"},
        "final_net": limit(_core.MlpValueNet(game, str(args.run_dir / "weights.bin"), precision="fp32")),
        "exact_leaf_values": limit(exact_leaf_net(game, params["m"], params["n"], params["k"])),
        "zero_net": limit(_core.ZeroNet(game)),
    }
    full = solve(game, s.solver, s.iterations, off_path=s.off_path, progress=False)
    summary["full_game"] = {"solver": s.solver, "iterations": s.iterations, "exploitability": full.exploitability}

    summary.update(target_analysis(args.run_dir, args.target))
    (args.run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
