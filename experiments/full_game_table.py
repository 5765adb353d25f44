"""Reproduces the full-game rows of the paper's Liar's Dice table (and the other solvers).

    python experiments/full_game_table.py [--iters 1024] [--games 1x4f 1x5f 1x6f 2x3f]
                                          [--off-path skip floor conditional] [--out FILE]

For every game, solver and off-path mode it runs ``rebel.search.solve`` for ``--iters`` iterations
(counted as in the paper: alternating half-steps) and measures the exact exploitability of
the average policy and player 0's value under it. Prints a Markdown table beside the paper's
figures (and, with several off-path modes, one exploitability column per mode) and, with
``--out``, writes every number as JSON (atomically). The fictitious-play solvers ignore the
off-path mode and are run once.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from fractions import Fraction
from typing import Any

from tqdm import tqdm

import rebel
from rebel.games import make
from rebel.search.solve import DEFAULT_OFF_PATH, OFF_PATH_MODES
from rebel.util.atomic_io import atomic_write_bytes

log = logging.getLogger("full_game_table")

GAMES = {"1x4f": (1, 4), "1x5f": (1, 5), "1x6f": (1, 6), "2x3f": (2, 3)}
#: Exact values of the games for player 0 (measured by the full-game solvers to 1e-3; see the README).
GAME_VALUES = {"1x4f": Fraction(1, 16), "1x5f": Fraction(1, 125), "1x6f": Fraction(-7, 258), "2x3f": Fraction(5, 81)}
#: The paper's full-game rows at 1024 iterations (Table: Liar's Dice exploitability).
PAPER = {
    "lcfr": {"1x4f": 0.001, "1x5f": 0.001, "1x6f": 0.002, "2x3f": 0.002},
    "lfp": {"1x4f": 0.012, "1x5f": 0.024, "1x6f": 0.039, "2x3f": 0.057},
}
SOLVERS = ("lcfr", "lfp", "cfr", "cfr+", "dcfr")


FP_SOLVERS = ("fp", "lfp")


def run(games: list[str], solvers: list[str], iterations: int,
        off_paths: tuple[str, ...] = (DEFAULT_OFF_PATH,)) -> list[dict[str, Any]]:
    """One row per (game, solver, off-path mode): exploitability, value error and solve seconds.

    FP solvers ignore the off-path mode: they get one row, with off_path None."""
    rows = []
    jobs = [(g, s, m) for g in games for s in solvers
            for m in ((None,) if s in FP_SOLVERS else off_paths)]
    for name, solver, mode in tqdm(jobs, desc="solving", unit="solve", file=sys.stderr):
        dice, faces = GAMES[name]
        result = rebel.solve(make("liars_dice", num_dice=dice, num_faces=faces), solver, iterations, progress=False,
                             **({} if mode is None else {"off_path": mode}))
        rows.append({
            "game": name,
            "solver": solver,
            "off_path": mode,
            "iterations": iterations,
            "exploitability": result.exploitability,
            "paper": PAPER.get(solver, {}).get(name),
            "game_value": result.game_value,
            "exact_game_value": float(GAME_VALUES[name]),
            "value_error": abs(result.game_value - float(GAME_VALUES[name])),
            "seconds": result.seconds,
        })
        log.info("%s %s %s: exploitability %.6f", name, solver, mode or "", result.exploitability)
    return rows


def off_path_markdown(rows: list[dict[str, Any]], off_paths: tuple[str, ...]) -> str:
    """Exploitability of every CFR solver and game, one column per off-path mode."""
    lines = ["| game | solver | " + " | ".join(off_paths) + " |", "|---|---|" + "---|" * len(off_paths)]
    cells: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows:
        if r["off_path"] is not None:
            cells.setdefault((r["game"], r["solver"]), {})[r["off_path"]] = r["exploitability"]
    for (game, solver), by_mode in cells.items():
        lines.append(f"| {game} | {solver} | " + " | ".join(f"{by_mode[m]:.5f}" for m in off_paths) + " |")
    return "\n".join(lines)


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| game | solver | off-path | exploitability | paper | value error | seconds |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        paper = "" if r["paper"] is None else f"{r['paper']:.3f}"
        lines.append(f"| {r['game']} | {r['solver']} | {r['off_path'] or '-'} | {r['exploitability']:.5f} | {paper} | "
                     f"{r['value_error']:.1e} | {r['seconds']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", choices=list(GAMES), default=list(GAMES))
    p.add_argument("--solvers", nargs="+", choices=SOLVERS, default=list(SOLVERS))
    p.add_argument("--iters", type=int, default=1024, help="iterations (alternating half-steps)")
    p.add_argument("--off-path", nargs="+", choices=OFF_PATH_MODES, default=[DEFAULT_OFF_PATH],
                   help=f"off-path modes of the CFR solvers (default {DEFAULT_OFF_PATH})")
    p.add_argument("--out", help="write the rows as JSON here")
    args = p.parse_args(argv)
    if args.iters < 1:
        p.error(f"--iters must be >= 1, got {args.iters}")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    off_paths = tuple(dict.fromkeys(args.off_path))
    rows = run(args.games, args.solvers, args.iters, off_paths)
    print(markdown(rows))
    if len(off_paths) > 1:
        print()
        print(off_path_markdown(rows, off_paths))
    if args.out:
        atomic_write_bytes(args.out, (json.dumps({"rows": rows}, indent=2) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
