"""What a player reads: the labels of a game's actions and hands, and the rule to know.

The C++ game names its actions and hands (``Game.action_name``, ``Game.hand_name``) and
those names suffice for most games (Kuhn: ``pass``/``bet``, ``J``/``Q``/``K``; m,n,k:
``b2``). Where the table of a game needs more than its core names, the game has one entry in
:data:`PRESENTATIONS`, the only per-game switch of the player-facing text:

* ``liars_dice``: the core numbers faces 0..F-1 (``1x0``, hand ``3``), as its action and
  hand ids do. A player reads dice faces 1..F: bids ``bid 1 x 1`` .. ``bid 2D x F``, hands
  as their dice (``2 4*``), the wild top face F marked with ``*``, and the rule note
  ``dice show faces 1..4; 4s are wild ...``. The ids are untouched; only the text is shifted.
  (The core's ``hand_name`` also runs the digits together, ``"103"``, ambiguous from 11 faces
  on; the label separates the dice.)

Generic code (``rebel play``, :mod:`rebel.play.cards`) calls :func:`action_label`,
:func:`hand_label`, :func:`action_spellings` and :func:`rules_note` and never asks for a
game's name.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rebel import _core
from rebel.games.registry import liars_dice_dice

__all__ = ["PRESENTATIONS", "Presentation", "action_label", "action_spellings", "hand_label", "rules_note"]

Game = _core.Game


@dataclass(frozen=True)
class Presentation:
    """The player-facing text of one game: an action's label and the other spellings a player
    may type for it, a hand's label, and a rule note shown once (``""``: none)."""

    action: Callable[[Game, int], str]
    spellings: Callable[[Game, int], list[str]]
    hand: Callable[[Game, int], str]
    note: Callable[[Game], str]


def _core_action(game: Game, action: int) -> str:
    return game.action_name(action)


def _core_hand(game: Game, hand: int) -> str:
    return game.hand_name(hand)


CORE_NAMES = Presentation(action=_core_action, spellings=lambda game, action: [], hand=_core_hand,
                          note=lambda game: "")


# ----------------------------------------------------------------- Liar's Dice
def _faces(game: Game) -> int:
    return int(dict(game.params)["num_faces"])


def _ld_bid(game: Game, action: int) -> tuple[int, int] | None:
    """(quantity, face 1..F) of a bid from the core's name ``q x f`` (f in 0..F-1); None for liar."""
    name = game.action_name(action)
    if "x" not in name:
        return None
    quantity, face = name.split("x", 1)
    return int(quantity), int(face) + 1


def _ld_action(game: Game, action: int) -> str:
    bid = _ld_bid(game, action)
    return game.action_name(action) if bid is None else f"bid {bid[0]} x {bid[1]}"


def _ld_spellings(game: Game, action: int) -> list[str]:
    bid = _ld_bid(game, action)
    if bid is None:
        return []
    quantity, face = bid
    spellings = [f"{quantity} x {face}"]
    if face == _faces(game):  # the wild face as the hand shows it
        spellings += [f"bid {quantity} x {face}*", f"{quantity} x {face}*"]
    return spellings


def _ld_hand(game: Game, hand: int) -> str:
    p = dict(game.params)
    faces = int(p["num_faces"])
    dice = liars_dice_dice(hand, int(p["num_dice"]), faces)
    return " ".join(f"{d + 1}*" if d == faces - 1 else str(d + 1) for d in dice)


def _ld_note(game: Game) -> str:
    faces = _faces(game)
    return f"dice show faces 1..{faces}; {faces}s are wild (shown as {faces}*) and count for every face bid"


LIARS_DICE = Presentation(action=_ld_action, spellings=_ld_spellings, hand=_ld_hand, note=_ld_note)

#: The games whose player-facing text is not their core names, by ``Game.name``.
PRESENTATIONS: dict[str, Presentation] = {"liars_dice": LIARS_DICE}


def _of(game: Game) -> Presentation:
    return PRESENTATIONS.get(game.name, CORE_NAMES)


def action_label(game: Game, action: int) -> str:
    """An action as a player reads it: ``bid 2 x 3`` or ``liar`` in Liar's Dice (faces 1..F),
    else the core's name (``pass``, ``b2``)."""
    return _of(game).action(game, action)


def action_spellings(game: Game, action: int) -> list[str]:
    """Everything a player may type for ``action``: its label first, then other spellings
    (Liar's Dice: ``2 x 3`` without ``bid``, the wild face with its ``*``)."""
    label = action_label(game, action)
    return [label] + [s for s in _of(game).spellings(game, action) if s != label]


def hand_label(game: Game, hand: int) -> str:
    """A hand as a player reads it: Liar's Dice dice ``2 4*`` (faces 1..F in roll order, the
    wild face marked), else the core's name (``J``)."""
    return _of(game).hand(game, hand)


def rules_note(game: Game) -> str:
    """A rule of the game a player should be told once (Liar's Dice: which face is wild), or ``""``."""
    return _of(game).note(game)
