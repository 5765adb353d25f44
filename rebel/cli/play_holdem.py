"""``rebel play --game holdem_endgame --spot FILE``: hands of a hold'em endgame spot against its
solved strategy, on the terminal or from a pipe (the table: :mod:`rebel.play.holdem_table`)."""
from __future__ import annotations

import argparse
from typing import Optional, TextIO, cast

import numpy as np

from rebel import _core
from rebel.cli.common import UsageError, check_range
from rebel.cli.play_session import QUIT, ask_until, run_hands
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import load_spot
from rebel.play.cards import Score
from rebel.play.holdem_table import HoldemTable
from rebel.search.holdem_solve import parse_target, solve_spot

__all__ = ["GAME", "run_holdem"]

#: The name ``rebel play --game`` takes for a hold'em endgame spot.
GAME = "holdem_endgame"
#: The solve before play: at most this many iterations, to this target.
ITERATIONS = 1000
TARGET = "0.5%"
SEATS = {"0": 0, "1": 1, "oop": 0, "ip": 1}
NAMES = ("OOP", "IP")
#: Flags of other games that do not apply here.
FOREIGN = (("--dice", "dice"), ("--faces", "faces"), ("--m", "m"), ("--n", "n"), ("--k", "k"), ("--stack", "stack"),
           ("--ante", "ante"), ("--bot", "bot"), ("--net", "net"), ("--depth", "depth"))


def _shown(probs: dict[str, float]) -> str:
    return ", ".join(f"{a} {p:.2f}" for a, p in probs.items() if p >= 0.005)


class HoldemSession:
    """The conversation: prompts on ``out``, answers from ``inp``."""

    def __init__(self, table: HoldemTable, seat: str, explain: bool, inp: TextIO, out: TextIO) -> None:
        self.table, self.seat, self.explain, self.inp, self.out = table, seat, explain, inp, out
        self.score = Score()

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def chips(self, human: int) -> str:
        t = self.table
        owed = t.to_call(human)
        return (f"pot {t.pot:g}; you {t.behind(human):g} behind, bot {t.behind(1 - human):g} behind"
                + (f"; {owed:g} to call" if owed > 0 else ""))

    def ask(self) -> Optional[int]:
        """Your action's index, asked until it names one; None at EOF, :data:`QUIT` to quit."""
        actions = self.table.actions()
        options = "  ".join(f"[{i}] {a}" for i, a in enumerate(actions, 1))
        return ask_until(self.inp, self.out, options, self.table.parse_action,
                         lambda line: f"not an action here: {line.strip()!r}; give its number or its name "
                                      f"(e.g. {actions[-1]!r})")

    def play_hand(self, number: int, human: int) -> Optional[str]:
        """Plays one hand; None if it finished, ``"eof"`` or ``"quit"`` if not."""
        t = self.table
        t.new_hand()
        self.say(f"\n--- hand {number}: you are {NAMES[human]} ({'first' if human == 0 else 'second'} to act); "
                 f"your hand: {t.hand_name(human)}; board {' '.join(t.board)}")
        while not t.finished:
            if t.dealing:
                card = t.deal_card()
                self.say(f"dealt {card}: board {' '.join(t.board)}")
            elif t.to_act == human:
                self.say(self.chips(human))
                if self.explain:
                    self.say(f"  (the solver with your hand: {_shown(t.strategy(human))})")
                index = self.ask()
                if index is None:
                    return "eof"
                if index == QUIT:
                    return "quit"
                self.say(f"you: {t.play(index)}")
            else:
                if self.explain:
                    self.say(f"  (the bot's range here: {_shown(t.range_strategy())})")
                self.say(f"bot: {t.bot_move()}")
        payoff = t.payoff(human)
        how = "showdown" if t.info["kind"] == "showdown" else ("you fold" if t.info["player"] == human
                                                                else "the bot folds")
        self.say(f"{how}: you {t.hand_name(human)}, bot {t.hand_name(1 - human)}; board {' '.join(t.board)}; "
                 f"you {'win' if payoff > 0 else 'lose' if payoff < 0 else 'tie'} {abs(payoff):g}")
        self.score.add(payoff)
        self.say(self.score.line())
        return None

    def run(self, hands: int, seat_rng: np.random.Generator) -> None:
        if self.explain:
            self.say("explain: before your moves, the solver's strategy with your hand; before the bot's, its "
                     "strategy over its whole range there (never its own hand)")
        seat = self.seat if self.seat == "random" else str(SEATS[self.seat])
        run_hands(self.say, hands, seat, seat_rng, self.play_hand, self.score)


def run_holdem(args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    """Handler of ``rebel play --game holdem_endgame``: solve the spot, then play."""
    for flag, name in FOREIGN:
        if getattr(args, name, None) is not None:
            raise UsageError(f"{flag} does not apply to {GAME} (the spot file gives the game; the bot is its solution)")
    if args.spot is None:
        raise UsageError(f"--game {GAME} needs --spot FILE (docs/holdem_spots.md)")
    if args.hands < 0:
        raise UsageError(f"--hands must be >= 0 (0: until EOF), got {args.hands}")
    iterations = ITERATIONS if args.iters is None else args.iters
    threads = 1 if args.threads is None else args.threads
    check_range(args, "--iters", "", iterations, 1)
    check_range(args, "--threads", "", threads, 1, 256)
    try:
        spot = load_spot(args.spot)
        target = parse_target(args.target or TARGET, spot.pot)
    except ValueError as e:
        raise UsageError(str(e)) from None
    seed = args.seed if args.seed is not None else int(cast(int, np.random.SeedSequence().entropy) % 2**32)
    game = build_endgame(spot)
    print(f"rebel play: {GAME} {args.spot}: {spot.describe()}; seed {seed}", file=out, flush=True)
    print(f"solving: dcfr to {target:g} chips ({100 * target / spot.pot:g}% of the pot), at most {iterations} "
          f"iterations...", file=out, flush=True)
    engine: _core.HoldemSolver
    engine, result = solve_spot(spot, "dcfr", iterations, target=target, threads=threads, progress=True, game=game)
    print(f"solved: {result.iterations} iterations, exploitability {result.exploitability:.4g} chips "
          f"({result.exploitability_pct:.3f}% of the pot); the bot plays the average strategy", file=out, flush=True)
    table = HoldemTable(game, engine, spot.stack, seed=seed)
    try:
        HoldemSession(table, args.seat, args.explain, inp, out).run(args.hands, np.random.default_rng(seed + 1))
    except KeyboardInterrupt:
        return 130
    return 0
