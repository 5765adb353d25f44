"""What a player reads: the labels of a game's actions and hands, and the rule to know.

The C++ game names its actions and hands (``Game.action_name``, ``Game.hand_name``): one
fixed name per action id, whatever the state (Kuhn: ``pass``/``bet``; Leduc: ``call``/``raise``;
m,n,k: ``b2``). Policy files keep those ids (docs/policy_format.md). Where a player needs more
than the core names, the game has one entry in :data:`PRESENTATIONS`, the only per-game switch
of the player-facing text. Poker actions are named as players say them, from the public state
they are taken at (:func:`action_label` given the history): ``check`` and ``bet`` when nothing
is owed, ``fold``, ``call`` and ``raise`` facing a bet, ``all-in``; the core names stay accepted
as input.

* ``kuhn``: ``pass`` reads ``check`` (nothing owed) or ``fold`` (facing the bet), ``bet`` reads
  ``bet`` or ``call``.

* ``liars_dice``: the core numbers faces 0..F-1 (``1x0``, hand ``3``), as its action and
  hand ids do. A player reads dice faces 1..F: bids ``bid 1 x 1`` .. ``bid 2D x F``, hands
  as their dice (``2 4*``), the wild top face F marked with ``*``, and the rule note
  ``dice show faces 1..4; 4s are wild ...``. The ids are untouched; only the text is shifted.
  (The core's ``hand_name`` also runs the digits together, ``"103"``, ambiguous from 11 faces
  on; the label separates the dice.)
* ``leduc``, ``leduc_nolimit``: the core's ids (``fold``, ``call``, ``raise`` / ``bet pot``,
  ``all-in``; cards ``Ks``) read ``check`` (a call with nothing owed), ``call``, ``bet`` (a raise
  with nothing owed), ``raise``, ``fold`` and ``all-in``; no-limit's pot bet reads ``bet pot (to
  300)`` or ``raise pot (to 900)`` (to: the bettor's whole commitment afterwards, the ante
  included, as the pot note counts it). Also the rule note, and the chips: the pot and what
  each player committed (no-limit: also the stacks left), from :func:`leduc_commitments`,
  which replays the betting rules of csrc/games/leduc.cc.

Generic code (``rebel play``, :mod:`rebel.play.cards`) calls :func:`action_label`,
:func:`hand_label`, :func:`action_spellings`, :func:`rules_note` and :func:`state_note` and
never asks for a game's name.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rebel import _core
from rebel.games.registry import liars_dice_dice

__all__ = ["PRESENTATIONS", "Presentation", "action_label", "action_spellings", "hand_label", "leduc_commitments",
           "rules_note", "state_note"]

Game = _core.Game


History = Sequence[int]


def _no_spellings_at(game: Game, history: History, action: int) -> list[str]:
    return []


def _no_state(game: Game, history: History, names: Mapping[int, str]) -> str:
    return ""


def _same_at(game: Game, history: History, action: int) -> str:
    return _of(game).action(game, action)


@dataclass(frozen=True)
class Presentation:
    """The player-facing text of one game: an action's label (``action_at``: its label at the
    public state after ``history``, where a player takes it) and the other spellings a player
    may type for it (``spellings_at``: those that hold only at some public states, given the
    history), a hand's label, a rule note shown once and a note on the public state shown
    before each decision (``""``: none; ``names`` labels the seats)."""

    action: Callable[[Game, int], str]
    spellings: Callable[[Game, int], list[str]]
    hand: Callable[[Game, int], str]
    note: Callable[[Game], str]
    spellings_at: Callable[[Game, History, int], list[str]] = _no_spellings_at
    state: Callable[[Game, History, Mapping[int, str]], str] = _no_state
    action_at: Callable[[Game, History, int], str] = _same_at


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


def _decision(game: Game, history: History) -> bool:
    """Whether a player (not chance) acts after ``history``."""
    return not game.is_terminal(list(history)) and game.player_to_act(list(history)) in (0, 1)


# ----------------------------------------------------------------- Kuhn poker
_PASS, _BET = 0, 1  # csrc/games/kuhn.cc's action ids


def _kuhn_action_at(game: Game, history: History, action: int) -> str:
    if not _decision(game, history):
        return game.action_name(action)
    owes = _BET in history  # one bet at most: after it every decision faces it
    return (("fold" if owes else "check") if action == _PASS else ("call" if owes else "bet"))


def _kuhn_spellings_at(game: Game, history: History, action: int) -> list[str]:
    return [_kuhn_action_at(game, history, action)] if _decision(game, history) else []


KUHN = Presentation(action=_core_action, spellings=lambda game, action: [], hand=_core_hand, note=lambda game: "",
                    spellings_at=_kuhn_spellings_at, action_at=_kuhn_action_at)


# ----------------------------------------------------------------- Leduc hold'em
_FOLD, _CALL, _RAISE, _ALL_IN = 0, 1, 2, 3  # csrc/games/leduc.cc's action ids


def _leduc_limit(game: Game) -> bool:
    return game.name == "leduc"


def _leduc_chips(game: Game) -> tuple[int, int]:
    """(ante, stack) of a Leduc game; the limit game has no stack (its cap, 13, is never binding)."""
    if _leduc_limit(game):
        return 1, 0
    params = dict(game.params)
    return int(params.get("ante", 100)), int(params.get("stack", 1200))


def leduc_commitments(game: Game, history: History) -> tuple[int, int]:
    """The chips each player has put in so far (the ante included) after ``history`` of
    ``leduc`` or ``leduc_nolimit``, replaying csrc/games/leduc.cc's betting: a call matches the
    largest commitment; in ``leduc`` a raise matches it and adds 2 (before the board) or 4
    (after); in ``leduc_nolimit`` the pot bet raises to 3 times it and all-in to the stack; a
    fold or the board's deal puts nothing in."""
    ante, stack = _leduc_chips(game)
    spent = [ante, ante]
    dealt = False
    for i, action in enumerate(history):
        player = game.player_to_act(list(history[:i]))
        if player == _core.CHANCE_PLAYER:
            dealt = True
        elif action == _CALL:
            spent[player] = max(spent)
        elif action == _FOLD:
            pass
        elif _leduc_limit(game):
            spent[player] = max(spent) + (4 if dealt else 2)
        else:
            spent[player] = 3 * max(spent) if action == _RAISE else stack
    return spent[0], spent[1]


def _leduc_owes(game: Game, history: History) -> bool:
    """Whether the player to act faces a bet (a call puts chips in)."""
    spent = leduc_commitments(game, history)
    player = game.player_to_act(list(history))
    return player in (0, 1) and spent[player] < max(spent)


def _leduc_action_at(game: Game, history: History, action: int) -> str:
    if not _decision(game, history) or action not in (_CALL, _RAISE):
        return game.action_name(action)  # fold, all-in, a board card
    owes = _leduc_owes(game, history)
    if action == _CALL:
        return "call" if owes else "check"
    verb = "raise" if owes else "bet"
    if _leduc_limit(game):
        return verb
    return f"{verb} pot (to {3 * max(leduc_commitments(game, history))})"


def _leduc_spellings(game: Game, action: int) -> list[str]:
    """No-limit's spellings at every state (beside the core's names ``call``, ``bet pot``)."""
    if action == _RAISE and not _leduc_limit(game):
        return ["pot", "raise pot", "raise"]
    if action == _ALL_IN and not _leduc_limit(game):
        return ["allin", "shove"]
    return []


def _leduc_spellings_at(game: Game, history: History, action: int) -> list[str]:
    """``check`` and ``bet`` where nothing is owed (never facing a bet: checking there is no
    call), with the state's label."""
    if not _decision(game, history):
        return []
    label = [_leduc_action_at(game, history, action)]
    if _leduc_owes(game, history):
        return label
    return label + {_CALL: ["check"], _RAISE: ["bet"]}.get(action, [])


def _leduc_note(game: Game) -> str:
    best = "a card pairing the board wins, else the higher card (J < Q < K; equal cards split)"
    if _leduc_limit(game):
        return f"ante 1; raises of 2 before the board and 4 after, at most 2 per round; {best}"
    ante, stack = _leduc_chips(game)
    return f"ante {ante}, stacks {stack}; bet pot raises to 3x the largest bet, all-in to the stack; {best}"


def _leduc_state(game: Game, history: History, names: Mapping[int, str]) -> str:
    spent = leduc_commitments(game, history)
    seats = list(names)
    note = f"pot {sum(spent)} ({', '.join(f'{names[p]} {spent[p]}' for p in seats)})"
    if _leduc_limit(game):
        return note
    stack = _leduc_chips(game)[1]
    return note + f"; stacks: {', '.join(f'{names[p]} {stack - spent[p]}' for p in seats)}"


LEDUC = Presentation(action=_core_action, spellings=_leduc_spellings, hand=_core_hand, note=_leduc_note,
                     spellings_at=_leduc_spellings_at, state=_leduc_state, action_at=_leduc_action_at)

#: The games whose player-facing text is not their core names, by ``Game.name``.
PRESENTATIONS: dict[str, Presentation] = {"liars_dice": LIARS_DICE, "kuhn": KUHN, "leduc": LEDUC,
                                          "leduc_nolimit": LEDUC}


def _of(game: Game) -> Presentation:
    return PRESENTATIONS.get(game.name, CORE_NAMES)


def action_label(game: Game, action: int, history: History | None = None) -> str:
    """An action as a player reads it: ``bid 2 x 3`` or ``liar`` in Liar's Dice (faces 1..F),
    else the core's name (``pass``, ``b2``). Given the ``history`` where it is taken, poker
    actions read as players say them at that state: ``check``, ``bet``, ``call``, ``raise``,
    ``fold`` (Kuhn's ``pass`` and ``bet``, Leduc's ``call`` and ``raise``), no-limit Leduc's
    pot bet ``bet pot (to 300)`` or ``raise pot (to 900)``."""
    if history is None:
        return _of(game).action(game, action)
    return _of(game).action_at(game, history, action)


def action_spellings(game: Game, action: int, history: History | None = None) -> list[str]:
    """Everything a player may type for ``action``: its label first, then other spellings
    (Liar's Dice: ``2 x 3`` without ``bid``, the wild face with its ``*``; the core's name);
    given the ``history`` where it is played, its label there and the spellings of that state
    (Leduc: ``check`` for a call and ``bet`` for a raise when nothing is owed)."""
    label = action_label(game, action, history)
    more = [_of(game).action(game, action)] + _of(game).spellings(game, action)
    if history is not None:
        more = more + _of(game).spellings_at(game, history, action)
    out = [label]
    for s in more:
        if s not in out:
            out.append(s)
    return out


def hand_label(game: Game, hand: int) -> str:
    """A hand as a player reads it: Liar's Dice dice ``2 4*`` (faces 1..F in roll order, the
    wild face marked), else the core's name (``J``)."""
    return _of(game).hand(game, hand)


def rules_note(game: Game) -> str:
    """A rule of the game a player should be told once (Liar's Dice: which face is wild), or ``""``."""
    return _of(game).note(game)


def state_note(game: Game, history: History, names: Mapping[int, str] | None = None) -> str:
    """What a player should see of the public state after ``history`` before deciding, or
    ``""`` (Leduc: ``pot 600 (you 300, bot 300); stacks: you 900, bot 900``). ``names``
    labels the seats in the order shown (default ``player 0``, ``player 1``)."""
    return _of(game).state(game, history, names if names is not None else {0: "player 0", 1: "player 1"})
