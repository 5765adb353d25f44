"""What ``rebel play``'s card-game sessions share: the prompt asked until it names an action,
and the loop of hands that ends at EOF, at q, quit or exit, or after ``--hands``, with the score."""
from __future__ import annotations

from typing import Any, Callable, Optional, TextIO

from rebel.play.cards import Score, is_quit

__all__ = ["QUIT", "ask_until", "run_hands"]

#: :func:`ask_until`'s answer to q, quit or exit (:func:`rebel.play.cards.is_quit`).
QUIT = -1


def ask_until(inp: TextIO, out: TextIO, options: str, parse: Callable[[str], Optional[int]],
              complaint: Callable[[str], str]) -> Optional[int]:
    """Writes ``your move: OPTIONS`` and a ``>`` prompt and reads lines until ``parse`` names an
    action (its answer is returned), saying ``complaint(line)`` after each that does not; None
    at EOF, :data:`QUIT` for q, quit or exit."""
    while True:
        out.write(f"your move: {options}\n> ")
        out.flush()
        line = inp.readline()
        if not line:
            return None
        if is_quit(line):
            return QUIT
        action = parse(line)
        if action is not None:
            return action
        print(complaint(line), file=out, flush=True)


def run_hands(say: Callable[[str], None], hands: int, seat: str, seat_rng: Any,
              play_hand: Callable[[int, int], Optional[str]], score: Score) -> None:
    """Plays hands until ``hands`` (0: no limit) or until ``play_hand(number, human seat)``
    says why it stopped (``"eof"`` or ``"quit"``), then says the final ``score``. ``seat``:
    ``"random"`` (drawn per hand from ``seat_rng``) or the seat's number."""
    number = 0
    try:
        while hands == 0 or number < hands:
            number += 1
            human = int(seat_rng.integers(0, 2)) if seat == "random" else int(seat)
            stopped = play_hand(number, human)
            if stopped is not None:
                say("\n(end of input)" if stopped == "eof" else "(you quit)")
                break
    finally:
        say(f"final score {score.line()}")
