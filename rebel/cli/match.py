"""``rebel match``: two m,n,k players against each other, colours alternating, the score with
its 95% interval."""
from __future__ import annotations

import argparse
from typing import Any

from rebel.cli.common import UsageError, add_subcommand, int_arg, print_json

EPILOG = """players:
  net:PATH[:SIMS]  MCTS with an AlphaZero net (SIMS simulations per move, default 400)
  rebel:PATH[:IT]  ReBeL's search with its value net (weights.bin; depth 2, IT CFR-D iterations,
                   default 1024; as its evaluation plays)
  mcts:N           pure MCTS with N random-rollout simulations per move
  perfect          the exact solver (boards of at most 64 cells)
  random           uniformly random legal moves

examples:
  rebel match perfect random --game mnk --games 100
  rebel match rebel:experiments/results/mnk/rebel_tictactoe/weights.bin \\
              net:experiments/results/mnk/alphazero_tictactoe/net.pt:50
  rebel match mcts:1000 mcts:200 --game mnk --m 6 --n 6 --k 4 --games 20 --json"""


def register(subparsers: Any) -> None:
    """Adds the ``match`` subcommand."""
    p = add_subcommand(subparsers, "match", "play two m,n,k players against each other",
                       "Plays GAMES games of A against B on an m,n,k board, A moving first in every other "
                       "game, and reports A's score (win 1, draw 1/2) with its 95% interval.", EPILOG)
    p.add_argument("player_a", metavar="A", help="the first player (see below)")
    p.add_argument("player_b", metavar="B", help="the second player")
    p.add_argument("--game", default="mnk", help="the game (mnk; default mnk)")
    p.add_argument("--m", type=int_arg, default=3, help="rows (default 3)")
    p.add_argument("--n", type=int_arg, default=3, help="columns (default 3)")
    p.add_argument("--k", type=int_arg, default=3, help="stones in a row to win (default 3)")
    p.add_argument("--games", type=int_arg, default=100, help="games to play (default 100)")
    p.add_argument("--seed", type=int_arg, default=0, help="random seed of both players (default 0)")
    p.add_argument("--inference", choices=("native", "torch"), default="native",
                   help="what evaluates a net: player's leaves (default native: the C++ core)")
    p.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                   help="the native net's precision (default auto: bf16 where this CPU runs it faster)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel match``."""
    from rebel import _core
    from rebel.alphazero.match import play_match
    from rebel.alphazero.players import make_player
    from rebel.util.progress import Progress, progress_callback

    if args.game != "mnk":
        raise UsageError(f"--game {args.game}: matches are played on m,n,k games only (--game mnk)")
    if args.games < 1:
        raise UsageError(f"--games must be >= 1, got {args.games}")
    try:
        _core.MnkBoard(args.m, args.n, args.k)
        a, b = (make_player(spec, args.m, args.n, args.k, seed=args.seed + i, inference=args.inference,
                            precision=args.precision) for i, spec in enumerate((args.player_a, args.player_b)))
    except ValueError as e:
        raise UsageError(str(e)) from None
    with Progress("match", args.games, "games") as bar:
        result = play_match(a, b, args.m, args.n, args.k, args.games, on_game_end=progress_callback(bar))
    report = result.as_dict()
    # The net players' leaf evaluators (bf16 and fp32 can pick different moves on close calls).
    report["inference"] = {"a": getattr(a, "inference", None), "b": getattr(b, "inference", None)}
    if args.json:
        print_json(report)
        return 0
    low, high = result.interval()
    print(f"game    {report['game']}, {result.games} games, colours alternating")
    for label, name, player in (("A", result.player_a, a), ("B", result.player_b, b)):
        leaves = getattr(player, "inference", None)
        print(f"{label}       {name}" + (f" (leaves: {leaves})" if leaves else ""))
    print(f"A: {result.wins} wins, {result.draws} draws, {result.losses} losses; score {result.score:.3f} "
          f"(95% interval {low:.3f} .. {high:.3f})")
    for label, rec in (("A first", result.as_first), ("A second", result.as_second)):
        print(f"  {label:<9} {rec['wins']} wins, {rec['draws']} draws, {rec['losses']} losses")
    return 0
