"""A Leduc value net made exactly suit-symmetric at evaluation time, under the paper's protocol.

    python experiments/suit_symmetry.py --game leduc_nolimit --net NET --seeds 0,1,2 --out DIR

In Leduc hold'em the two suits are strategically identical: swapping spades and hearts in the
board and in both players' hands changes no value. A trained net does not know that, and its
errors at a king-of-spades board differ from those at a king-of-hearts board; exact leaf
values (the oracle) are symmetric. This script wraps the net so that it answers the mean of
its own answer and the suit-swapped query's answer swapped back:

    f_sym(x) = (f(x) + P f(P x)) / 2,   P: card c <-> c ^ 1 (Js <-> Jh, Qs <-> Qh, Ks <-> Kh)

applied to the board's one-hot features, both beliefs and the output hands. That removes the
part of the net's error that breaks the symmetry and keeps the rest. It then runs the protocol
(mode (b), LCFR T = 1024, N = 1024, depth 10, fp32 net) on the wrapped net, one JSON per seed,
in the layout `rebel eval --json` writes.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Sequence

import numpy as np

from rebel import _core
from rebel.games import game_from_config
from rebel.nets.pretrained import resolve_net
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings

log = logging.getLogger("suit_symmetry")

#: Leduc's public features: the board card's one-hot starts here (csrc/games/leduc.cc).
BOARD_FEATURE = 2


def suit_swap(game: _core.Game) -> np.ndarray:
    """The permutation of hands (cards) that swaps the two suits: c <-> c ^ 1."""
    if game.num_hands != 6 or [game.hand_name(h) for h in range(6)] != ["Js", "Jh", "Qs", "Qh", "Ks", "Kh"]:
        raise ValueError(f"suit_symmetry.py needs a Leduc game (hands Js Jh Qs Qh Ks Kh), got {game.description()}")
    return np.arange(6) ^ 1


def symmetric(game: _core.Game, forward: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], np.ndarray]:
    """``forward`` (query rows -> values per hand) averaged with its suit-swapped self."""
    perm, H, F = suit_swap(game), game.num_hands, game.feature_size
    columns = np.arange(2 + F + 2 * H)  # a query row: actor, queried player, features, both beliefs
    board = 2 + BOARD_FEATURE
    columns[board:board + H] = board + perm
    for p in range(2):
        start = 2 + F + p * H
        columns[start:start + H] = start + perm

    def answer(rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.float32)
        plain = np.asarray(forward(rows), dtype=np.float64)
        swapped = np.asarray(forward(np.ascontiguousarray(rows[:, columns])), dtype=np.float64)
        return 0.5 * (plain + swapped[:, perm])

    return answer


def run(args: argparse.Namespace) -> Dict[int, float]:
    game = game_from_config({"name": args.game})
    base = _core.MlpValueNet(game, resolve_net(args.net), precision="fp32")
    wrapped = _core.PythonValueNet(game, symmetric(game, base.forward), "suit-symmetric")
    args.out.mkdir(parents=True, exist_ok=True)
    figures = {}
    for seed in args.seeds:
        settings = EvalSettings(net=args.net, solver="lcfr", depth=args.depth, iterations=1024, repeats=args.repeats,
                                threads=2, seed=seed, mode_a=False, full_game=False, precision="fp32")
        result = evaluate(game, settings, value_net=wrapped)  # the protocol's code path, the wrapped net
        result["net"] = f"suit-symmetric {args.net}"
        (args.out / f"symmetric_lcfr_T1024_d{args.depth}_N{args.repeats}_seed{seed}.json").write_text(
            json.dumps({k: v for k, v in result.items() if not k.startswith("_")}, indent=1))
        figures[seed] = result["mode_b"][-1]["exploitability"]
        log.info("seed %d: %.4f", seed, figures[seed])
    return figures


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="leduc_nolimit")
    parser.add_argument("--net", default="pretrained:leduc_nolimit")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=1024)
    parser.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "leduc" / "studies" / "suit_symmetry")
    args = parser.parse_args(list(argv) or None)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
