"""Playing an m,n,k game against a bot (``rebel play --game mnk``): the board drawn after each
move, your move read by name (``b2``) or number, asked again with the reason when it is not
a legal move, the bot's move from any m,n,k player (``perfect``, ``mcts:N``,
``net:PATH[:SIMS]``, ``random``), and the running score over games with its 95% interval
until EOF or ``q`` (``quit``, ``exit``)."""
from __future__ import annotations

from typing import Any, Optional, TextIO

from rebel import _core
from rebel.play.cards import Score, is_quit

__all__ = ["draw_board", "parse_move", "BoardSession"]


def draw_board(board: "_core.MnkBoard") -> str:
    """The board with row numbers on the left and column letters below ('X' moves first)."""
    cells = board.cells()
    width = len(str(board.m))
    lines = []
    for r in range(board.m - 1, -1, -1):
        row = " ".join(".XO"[int(v)] for v in cells[r])
        lines.append(f"{r + 1:>{width}} {row}")
    lines.append(" " * (width + 1) + " ".join(chr(ord("a") + c) for c in range(board.n)))
    return "\n".join(lines)


def parse_move(board: "_core.MnkBoard", text: str) -> tuple[Optional[int], str]:
    """(cell, "") for a legal move given by name ('b2') or cell number, else (None, why)."""
    text = text.strip()
    if not text:
        return None, "give a cell such as a1"
    if text.isdigit():
        cell = int(text)
        if not 0 <= cell < board.m * board.n:
            return None, f"cell {cell} is off the board (0..{board.m * board.n - 1})"
    else:
        cell = board.parse_cell(text)
        if cell < 0:
            return None, (f"{text!r} is not a cell of this board "
                          f"(columns a..{chr(ord('a') + board.n - 1)}, rows 1..{board.m})")
    if not board.legal(cell):
        return None, f"{board.cell_name(cell)} is already occupied"
    return cell, ""


class BoardSession:
    """Games against ``bot`` (a player of :mod:`rebel.alphazero.players`)."""

    def __init__(self, m: int, n: int, k: int, bot: Any, seat: str, inp: TextIO, out: TextIO) -> None:
        self.m, self.n, self.k = m, n, k
        self.bot, self.seat, self.inp, self.out = bot, seat, inp, out
        self.score = Score()
        self.quit = False  # whether the session ended on q, quit or exit (else at EOF)

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, board: "_core.MnkBoard") -> Optional[int]:
        """Your move, asked until legal; None at EOF or on q, quit or exit."""
        while True:
            self.out.write("your move (e.g. b2) > ")
            self.out.flush()
            line = self.inp.readline()
            if not line or is_quit(line):
                self.quit = bool(line)
                return None
            cell, why = parse_move(board, line)
            if cell is not None:
                return cell
            self.say(f"not a legal move: {why}")

    def play_game(self, number: int, human: int) -> bool:
        """One game; False if the input ended or you quit first."""
        board = _core.MnkBoard(self.m, self.n, self.k)
        stone = "XO"[human]
        self.say(f"\n--- game {number}: you play {stone} ({'first' if human == 0 else 'second'})")
        while not board.terminal:
            if board.to_move == human:
                self.say(draw_board(board))
                cell = self.ask(board)
                if cell is None:
                    return False
            else:
                cell = self.bot.moves([board], [0])[0]  # one game at a time: the player resets its tree
                self.say(f"bot: {board.cell_name(cell)}")
            board.play(cell)
        self.say(draw_board(board))
        payoff = board.result_for(human)
        self.say("you win" if payoff > 0 else "you lose" if payoff < 0 else "a draw")
        self.score.add(float(payoff))
        self.say(self.score.line().replace("hand", "game"))
        return True

    def run(self, games: int, seat_rng: Any) -> None:
        number = 0
        try:
            while games == 0 or number < games:
                number += 1
                human = int(seat_rng.integers(0, 2)) if self.seat == "random" else int(self.seat)
                if not self.play_game(number, human):
                    self.say("(you quit)" if self.quit else "\n(end of input)")
                    break
        finally:
            self.say(f"final score {self.score.line().replace('hand', 'game')}")
