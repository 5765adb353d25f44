"""``rebel play``: play hands against the search bot on the terminal (or from a pipe)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Optional, TextIO, cast

from rebel.cli.common import UsageError, add_subcommand, int_arg
from rebel.cli.play_holdem import GAME as HOLDEM
from rebel.cli.play_holdem import ITERATIONS as HOLDEM_ITERATIONS
from rebel.cli.play_holdem import TARGET as HOLDEM_TARGET
from rebel.cli.play_session import QUIT

DESCRIPTION = """\
Plays hands of a game against the bot: the paper's test-time search (depth-limited CFR-D at
every public state with the value net at the leaves, each subgame stopped at a random
iteration whose policy is played and propagates the beliefs). Each hand shows your hand and
the public actions, lists the legal actions by name and number, reads yours (a number, or a
name such as `bid 2 x 3` or `liar`), plays the bot's, reveals both hands and keeps the
running score (with its 95% interval from 10 hands on: Student's t; fewer hands are too few
for one). End with q, quit or exit, EOF (Ctrl-D) or Ctrl-C; the final score follows. On a
terminal a line says when the bot is thinking (the first hand's search can take 20 s with
--net oracle). Liar's Dice dice show faces 1..F and the top face F is wild (shown as F*,
e.g. 4*): it counts for every face bid. Poker actions (Kuhn, Leduc) read as players say
them: check or bet when nothing is owed, fold, call or raise facing a bet, all-in; the
game's own names (Kuhn's pass and bet, Leduc's call and raise) are accepted too. In Leduc
hold'em (leduc, leduc_nolimit) the table deals the board card between the rounds and shows
it, shows the pot (no-limit: also both stacks; --stack and --ante set them) before each of
your decisions, names no-limit's pot bet with the commitment it makes (bet pot (to 300),
raise pot (to 900)), and each subgame is a whole betting round (--depth 10). With --explain,
the bot's belief about your hand and its strategy (its probabilities over the hands it may
hold, and hand by hand in small games) are shown from the public actions alone, never
revealing its own hand; an action of yours that the bot's strategy never takes is named as
such, with the belief the bot's search falls back to (every hand equally likely).

--game holdem_endgame --spot FILE plays a hold'em endgame spot (docs/holdem_spots.md): the spot
is solved on start (dcfr to --target, 0.5% of the pot by default, at most --iters iterations),
hands are dealt from the two ranges (card removal), the turn and river cards as public chance,
and the bot samples the solution's average strategy with its hand. Actions read as players
write them (check, bet 120, call, raise 300, all-in, fold, or the menu number); the pot, the
chips behind and the amount to call are shown before each of your moves. With --explain, the
solver's strategy with your hand before your moves, the bot's strategy over its whole range
before its own (never its hand)."""

EXAMPLES = """\
  rebel play --game kuhn --net oracle
  rebel play --dice 1 --faces 4 --net runs/my-run/weights.bin --hands 20 --explain
  printf '1\\n2\\n' | rebel play --game kuhn --net oracle --hands 1 --seed 3
  rebel play --game leduc --net oracle --iters 256 --explain
  rebel play --game leduc_nolimit --net oracle --iters 64          (no-limit: pot bets and all-in)
  rebel play --game leduc_nolimit --stack 900 --ante 100 --net oracle --iters 64
  rebel play --game holdem_endgame --spot configs/spots/river_example.yaml --seat ip --explain
  printf 'check\\nfold\\n' | rebel play --spot configs/spots/river_example.yaml --hands 1 --seed 3 --seat oop
  rebel play --game mnk --bot perfect                       (tic-tac-toe; moves by name, e.g. b2)
  rebel play --game mnk --m 6 --n 6 --k 4 --bot net:runs/RUN/net.pt:400"""

NETS = "zero, oracle, pretrained:NAME (see `rebel pretrained`) or a weights file"

#: --depth's default in games with public chance: a whole betting round (Leduc's longest
#: round has 5 actions; 10 reaches every round's end, as configs/leduc.yaml trains).
ROUND_DEPTH = 10
#: --depth's default otherwise (actions per subgame).
DEPTH = 2
#: --iters' default when the net's file records none (the paper's T).
ITERATIONS = 1024
#: --explain shows the bot's strategy hand by hand where it may hold at most this many hands.
BY_HAND = 6


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def register(subparsers: Any) -> None:
    """Adds the ``play`` subcommand."""
    p = add_subcommand(subparsers, "play", "play against the search bot", DESCRIPTION, EXAMPLES)
    p.add_argument("--game", help="game name, see `rebel games` (default liars_dice, or a pretrained net's game)")
    p.add_argument("--dice", type=int_arg, metavar="D", help="Liar's Dice: dice per player (default 1)")
    p.add_argument("--faces", type=int_arg, metavar="F", help="Liar's Dice: faces per die (default 4)")
    p.add_argument("--m", type=int_arg, metavar="M", help="m,n,k game: rows (default 3)")
    p.add_argument("--n", type=int_arg, metavar="N", help="m,n,k game: columns (default 3)")
    p.add_argument("--k", type=int_arg, metavar="K", help="m,n,k game: stones in a row to win (default 3)")
    p.add_argument("--stack", type=int_arg, metavar="S",
                   help="no-limit Leduc: chips each player starts with (default 1200)")
    p.add_argument("--ante", type=int_arg, metavar="A", help="no-limit Leduc: each player's ante (default 100)")
    p.add_argument("--bot", metavar="PLAYER",
                   help="m,n,k game: the bot, net:PATH[:SIMS], rebel:PATH[:ITERS], mcts:N, perfect or random "
                        "(default perfect up to 16 cells, mcts:2000 on larger boards)")
    p.add_argument("--net", default=None, metavar="NET",
                   help=f"the bot's value net: {NETS} (default oracle: exact leaf values, small games)")
    p.add_argument("--seat", choices=("0", "1", "oop", "ip", "random"), default="random",
                   help="your seat: 0 acts first (hold'em: oop = 0, ip = 1; default random, drawn per hand)")
    p.add_argument("--hands", type=int_arg, metavar="N", default=0, help="hands to play (default 0: until EOF)")
    p.add_argument("--seed", type=int_arg, metavar="S", default=None,
                   help="seed of the deals and the bot's draws (default: a fresh one)")
    p.add_argument("--iters", type=int_arg, metavar="T", default=None,
                   help=f"CFR-D iterations per subgame (default: the net's, recorded in its file; else "
                        f"{ITERATIONS}, the paper's); {HOLDEM}: the solve's iterations at most (default "
                        f"{HOLDEM_ITERATIONS})")
    p.add_argument("--depth", type=int_arg, metavar="N", default=None,
                   help=f"actions per subgame (default: the net's, recorded in its file; else {ROUND_DEPTH}, a "
                        f"whole betting round, in games with public chance such as leduc, {DEPTH} otherwise)")
    h = p.add_argument_group(f"hold'em endgame spots (--game {HOLDEM}, docs/holdem_spots.md)")
    h.add_argument("--spot", metavar="FILE", help=f"the spot to play (implies --game {HOLDEM}); the bot plays its "
                   "solution, solved on start")
    h.add_argument("--target", metavar="T", help=f"--spot: solve to this exploitability, chips or percent of the pot "
                   f"(default {HOLDEM_TARGET.replace('%', '%%')})")
    h.add_argument("--threads", type=int_arg, metavar="N", help="--spot: the solve's threads (default 1)")
    p.add_argument("--explain", action="store_true",
                   help="show the bot's belief about your hand and its strategy, from the public actions alone "
                        "(never revealing its own hand; default off)")
    p.set_defaults(handler=run)


def _game(args: argparse.Namespace) -> Any:
    """The game asked: the net's own (its file names it) unless --game says otherwise; the game
    flags change it, and a net of another game than the result is refused. Leaves the net's
    recorded search settings in ``args.net_search`` and the resolved file in ``args.net``."""
    from rebel.cli.common import adopt_net_game, apply_game_flags, check_net_game, read_net_file_metadata
    from rebel.config.common import ConfigError, GameSection
    from rebel.nets.pretrained import resolve_net

    section = GameSection(name=args.game or "liars_dice")
    args.net_label = args.net
    try:
        args.net = resolve_net(args.net)
    except ValueError as e:
        raise UsageError(f"--net: {e}") from None
    meta = read_net_file_metadata("--net", args.net) if os.path.isfile(args.net) else None
    adopt_net_game(section, meta, game_given=args.game is not None)
    args.net_search = {} if meta is None else dict(meta.get("search", {}))
    try:
        apply_game_flags(section, args)
        check_net_game("--net", args.net_label, meta, section)
        return section.make()
    except (ConfigError, ValueError) as e:
        raise UsageError(str(e)) from None


def _search(args: argparse.Namespace, game: Any) -> dict[str, Any]:
    """The bot's search: --depth and --iters, else what the net's file records, else the
    defaults (a whole betting round in games with public chance)."""
    recorded = args.net_search
    search = {"solver": recorded.get("solver", "lcfr"), "chance_leaves": recorded.get("chance_leaves", "after_deal"),
              "depth": args.depth if args.depth is not None else recorded.get(
                  "depth", ROUND_DEPTH if game.has_public_chance else DEPTH),
              "iterations": args.iters if args.iters is not None else recorded.get("iterations", ITERATIONS)}
    if search["depth"] < 1 or search["iterations"] < 2:
        raise UsageError("--depth must be >= 1 and --iters >= 2")
    return search


def _net(game: Any, spec: str) -> Any:
    from rebel import _core

    if spec == "zero":
        return _core.ZeroNet(game)
    if spec == "oracle":
        if game.count_tree_nodes() > 200_000:
            raise UsageError(f"--net oracle solves below every leaf: too slow for {game.description()}; "
                             "give a trained net (--net PATH)")
        return _core.OracleNet(game, "lcfr", 256, "root_mean")
    if not os.path.isfile(spec):
        raise UsageError(f"--net must be {NETS}; {spec!r} is not a file")
    try:
        return _core.MlpValueNet(game, spec, precision="auto")
    except ValueError as e:
        raise UsageError(f"--net {spec}: {e}") from None


class _Session:
    """The conversation: prompts on ``out``, answers from ``inp``."""

    def __init__(self, table: Any, seat: str, explain: bool, inp: TextIO, out: TextIO) -> None:
        self.table, self.seat, self.explain, self.inp, self.out = table, seat, explain, inp, out
        self.game = table.game

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def hand_name(self, hand: int) -> str:
        from rebel.games.names import hand_label

        return hand_label(self.game, hand)

    def explain_belief(self, human: int) -> None:
        """The bot's belief about the human's hand; after an action its policy never takes, one
        line saying so and what the bot assumes instead."""
        from rebel.play.cards import display_action

        t = self.table
        b = t.belief(human)

        def shown(probs: Any) -> str:
            return ", ".join(f"{self.hand_name(h)}: {p:.2f}" for h, p in enumerate(probs) if p > 0.005)

        yours = [i for i in range(len(t.history)) if self.game.player_to_act(t.history[:i]) == human]
        if b.off_path and (b.off_path[-1] == yours[-1] or not b.restarted):  # your last action, or no belief yet
            at = b.off_path[-1]
            move = display_action(self.game, t.history[at], t.history[:at])
            which = "this move" if b.off_path[-1] == yours[-1] else "your move"
            never = f"the bot's strategy never makes {which} ({move}) with any hand"
            if not b.restarted:
                fallback = ("every hand equally likely" if t.search.off_path == "skip"
                            else f"the hands needing the fewest such moves (off_path={t.search.off_path})")
                self.say(f"  ({never}; it has no belief about your hand until its next search, which starts "
                         f"from {fallback})")
            elif t.search.off_path == "skip":
                self.say(f"  ({never}; its search restarted from every hand equally likely, so it assumes "
                         f"instead: {shown(b.public)})")
            else:
                self.say(f"  ({never}; its search goes on from the hands needing the fewest such moves "
                         f"(off_path={t.search.off_path}), so it assumes instead: {shown(b.public)})")
        elif not b.public.any():
            self.say("  (the bot has no belief about your hand here)")
        else:
            self.say(f"  (the bot's belief about your hand: {shown(b.public)})")

    def explain_strategy(self) -> None:
        """The bot's strategy at this public state, from the public actions alone: its action
        probabilities averaged over the hands it may hold and, in games with at most
        :data:`BY_HAND` such hands, each hand's; neither depends on the hand it holds."""
        from rebel.play.cards import display_action

        t = self.table
        history = list(t.history)

        def shown(probs: dict[int, float], sep: str) -> str:
            return ", ".join(f"{display_action(self.game, a, history)}{sep}{p:.2f}" for a, p in probs.items()
                             if p > 0.005)

        self.say(f"  (the bot's probabilities over the hands it may hold: {shown(t.public_action_probs(), ': ')})")
        by_hand = t.strategy_by_hand()
        if 1 < len(by_hand) <= BY_HAND:
            groups: dict[str, list[str]] = {}  # hands whose shown strategy is the same, together
            for h, probs in by_hand.items():
                groups.setdefault(shown(probs, " "), []).append(self.hand_name(h))
            hands = "; ".join(f"{', '.join(names)}: {strategy}" for strategy, names in groups.items())
            self.say(f"  (its strategy by hand: {hands})")

    def ask(self, legal: list[int]) -> Optional[int]:
        """Your action, asked until legal; None at EOF, :data:`rebel.cli.play_session.QUIT` for q, quit or
        exit."""
        from rebel.cli.play_session import ask_until
        from rebel.play.cards import display_action, parse_action

        history = list(self.table.history)
        options = "  ".join(f"[{i}] {display_action(self.game, a, history)}" for i, a in enumerate(legal, 1))
        return ask_until(self.inp, self.out, options, lambda line: parse_action(self.game, legal, line, history),
                         lambda line: f"not a legal action here: {line.strip()!r}; give its number or its name")

    def board(self) -> str:
        from rebel.play.cards import display_action

        return " ".join(display_action(self.game, b) for b in self.table.board)

    def new_hand(self) -> tuple[int, int]:
        """Deals a hand and draws the bot's policy for it (the search: 17-20 s at the first hand of
        no-limit Leduc with exact leaves), saying so on a terminal meanwhile."""
        thinking = _isatty(self.out)
        if thinking:
            self.out.write("(the bot is thinking: solving its search subgames...)")
            self.out.flush()
        try:
            return self.table.new_hand()
        finally:
            if thinking:
                self.out.write("\r\x1b[K")  # erase the line
                self.out.flush()

    def play_hand(self, number: int, human: int) -> Optional[str]:
        """Plays one hand; None if it finished, else why not: ``"eof"`` if the input ended
        first, ``"quit"`` if you quit."""
        from rebel import _core
        from rebel.games.names import state_note
        from rebel.play.cards import display_action

        t = self.table
        hands = self.new_hand()
        self.say(f"\n--- hand {number}: you are player {human} ({'first' if human == 0 else 'second'} to act); "
                 f"your hand: {self.hand_name(hands[human])}")
        seats = {human: "you", 1 - human: "bot"}
        while not t.finished:
            who = t.to_act
            if who == _core.CHANCE_PLAYER:
                t.deal_public()
                self.say(f"board: {self.board()}")
            elif who == human:
                note = state_note(self.game, t.history, seats)
                if note:
                    self.say(note)
                if self.explain and t.history:
                    self.explain_belief(human)
                action = self.ask(t.legal())
                if action is None:
                    return "eof"
                if action == QUIT:
                    return "quit"
                label = display_action(self.game, action, t.history)
                t.play(action)
                self.say(f"you: {label}")
            else:
                if self.explain:
                    self.explain_strategy()
                before = list(t.history)
                action = t.bot_move()
                self.say(f"bot: {display_action(self.game, action, before)}")
        payoff = t.payoff(human)
        board = f"; board {self.board()}" if t.board else ""
        self.say(f"hands: you {self.hand_name(hands[human])}, bot {self.hand_name(hands[1 - human])}{board}; "
                 f"you {'win' if payoff > 0 else 'lose' if payoff < 0 else 'tie'} {abs(payoff):g}")
        self.score.add(payoff)
        self.say(self.score.line())
        return None

    def run(self, hands: int, seat_rng: Any) -> None:
        from rebel.cli.play_session import run_hands
        from rebel.play.cards import Score

        self.score = Score()
        if self.explain:
            self.say("explain: the bot's belief about your hand and its strategy are shown from the public actions "
                     "alone, as its search carries them: they never depend on the hand the bot holds")
        run_hands(self.say, hands, self.seat, seat_rng, self.play_hand, self.score)


def _play_board(game: Any, args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    """``rebel play`` on an m,n,k game: the bot is an m,n,k player (``--bot``)."""
    import numpy as np

    from rebel.alphazero.players import make_player
    from rebel.play.boards import BoardSession

    params = dict(game.params)
    m, n, k = params["m"], params["n"], params["k"]
    spec = args.bot or ("perfect" if m * n <= 16 else "mcts:2000")
    seed = args.seed if args.seed is not None else int(cast(int, np.random.SeedSequence().entropy) % 2**32)
    try:
        bot = make_player(spec, m, n, k, seed=seed)
    except ValueError as e:
        raise UsageError(f"--bot: {e}") from None
    print(f"rebel play: {game.description()}, bot {spec}, seed {seed}; X moves first", file=out, flush=True)
    try:
        BoardSession(m, n, k, bot, args.seat, inp, out).run(args.hands, np.random.default_rng(seed + 1))
    except KeyboardInterrupt:
        return 130
    return 0


def run(args: argparse.Namespace, inp: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    """Handler of ``rebel play``."""
    import numpy as np

    from rebel.play.cards import Table

    if args.game == HOLDEM or (args.game is None and args.spot is not None):
        from rebel.cli.play_holdem import run_holdem

        return run_holdem(args, inp, out)
    for flag, value in (("--spot", args.spot), ("--target", args.target), ("--threads", args.threads)):
        if value is not None:
            raise UsageError(f"{flag} applies to --game {HOLDEM} only")
    if args.seat in ("oop", "ip"):
        raise UsageError(f"--seat {args.seat} applies to --game {HOLDEM}; seats here are 0 and 1")
    if args.net is None:
        args.net = "oracle"
    game = _game(args)
    if args.hands < 0:
        raise UsageError(f"--hands must be >= 0 (0: until EOF), got {args.hands}")
    if game.name == "mnk":
        return _play_board(game, args, inp, out)
    if args.bot is not None:
        raise UsageError("--bot is for m,n,k games; this game's bot is the search with --net")
    search = _search(args, game)
    net = _net(game, args.net)
    seed = args.seed if args.seed is not None else int(cast(int, np.random.SeedSequence().entropy) % 2**32)
    table = Table(game, net, seed=seed, **search)
    session = _Session(table, args.seat, args.explain, inp, out)
    solver = "" if search["solver"] == "lcfr" else f" ({search['solver']})"
    print(f"rebel play: {game.description()}, bot = depth-{search['depth']} search{solver}, "
          f"T = {search['iterations']}, net {args.net_label}, seed {seed}", file=out, flush=True)
    if args.net_search:
        print("the net's file names its game and search (depth, T); --game, --depth and --iters override them",
              file=out, flush=True)
    from rebel.games.names import rules_note

    if rules_note(game):
        print(f"rules: {rules_note(game)}", file=out, flush=True)
    try:
        session.run(args.hands, np.random.default_rng(seed + 1))
    except KeyboardInterrupt:
        return 130
    return 0
