"""An independent statement of the two Leduc hold'em rule sets (``leduc``: OpenSpiel's
``leduc_poker``; ``leduc_nolimit``: DeepStack-Leduc as OpenSpiel's ``universal_poker`` plays it
with the fcpa betting abstraction), in the source games' own bookkeeping (OpenSpiel
leduc_poker's stakes / calls / raises; the ACPC server's spent / numCalled /
numActingPlayers and raiseIsValid), and a walk of a game's public tree that checks the game
against it. Used by tests/games/test_leduc_rules.py and the conformance test.

Card c has rank c // 2 (J, Q, K) and suit c % 2; the hand is the private card.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field

from rebel.games import make

W = 36.0 / 30.0
CARDS = range(6)
CHANCE = 2  # player_to_act at a public chance node


def rank(c: int) -> int:
    return c // 2


def showdown_sign(mine: int, theirs: int, board: int) -> int:
    """+1 / 0 / -1 for the holder of `mine`: a pair with the board beats everything, else the
    two-card hand compared high card first (the board card is common, so the private rank
    decides)."""
    def key(c):
        r, b = rank(c), rank(board)
        return (1, r) if r == b else (0, max(r, b), min(r, b))
    a, b = key(mine), key(theirs)
    return (a > b) - (a < b)


# ------------------------------------------------------------------------ reference: limit

@dataclass
class LimitState:
    """OpenSpiel leduc_poker's bookkeeping: stakes, each player's contribution (its "ante"),
    raises and calls in the round, the round (1 or 2), the player to act."""
    round: int = 1
    stakes: int = 1
    contrib: list = field(default_factory=lambda: [1, 1])
    num_raises: int = 0
    num_calls: int = 0
    cur: int = 0           # 0, 1, CHANCE, or None at a terminal
    folded: int = -1
    board: int = -1


def limit_legal(s: LimitState) -> list[int]:
    if s.cur == CHANCE:
        return [3 + c for c in CARDS]
    moves = []
    if s.stakes > s.contrib[s.cur]:
        moves.append(0)  # fold only under pressure
    moves.append(1)
    if s.num_raises < 2:
        moves.append(2)
    return moves


def limit_apply(s: LimitState, a: int) -> LimitState:
    s = LimitState(s.round, s.stakes, list(s.contrib), s.num_raises, s.num_calls, s.cur, s.folded, s.board)
    if s.cur == CHANCE:
        s.board, s.round, s.num_raises, s.num_calls, s.cur = a - 3, 2, 0, 0, 0
        return s
    p = s.cur
    if a == 0:
        s.folded, s.cur = p, None
    elif a == 1:
        s.contrib[p] = s.stakes
        s.num_calls += 1
        ready = (s.num_raises == 0 and s.num_calls == 2) or (s.num_raises > 0 and s.num_calls == 1)
        if ready:
            s.cur = CHANCE if s.round == 1 else None
        else:
            s.cur = 1 - p
    else:
        s.stakes += 2 if s.round == 1 else 4
        s.contrib[p] = s.stakes
        s.num_raises += 1
        s.num_calls = 0
        s.cur = 1 - p
    return s


def limit_payoff0(s: LimitState, c0: int, c1: int) -> float:
    if s.folded >= 0:
        return float(-s.contrib[0] if s.folded == 0 else s.contrib[1])
    assert s.contrib[0] == s.contrib[1]
    return float(s.contrib[0] * showdown_sign(c0, c1, s.board))


# --------------------------------------------------------------------- reference: no-limit

@dataclass
class NoLimitState:
    """ACPC server state (project_acpc_server game.c) for two players with equal blinds: spent,
    maxSpent, minNoLimitRaiseTo, the round's actions as (player, 'c' | 'r'), folds."""
    stack: int
    blind: int
    spent: list
    max_spent: int
    min_raise_to: int
    round: int = 0
    actions: list = field(default_factory=list)
    folded: int = -1
    finished: bool = False
    board: int = -1
    cur: int = 0           # 0, 1, CHANCE, or None at a terminal


def nl_initial(stack: int, ante: int) -> NoLimitState:
    return NoLimitState(stack=stack, blind=ante, spent=[ante, ante], max_spent=ante, min_raise_to=2 * ante)


def nl_num_acting(s: NoLimitState) -> int:
    return sum(1 for p in (0, 1) if p != s.folded and s.spent[p] < s.stack)


def nl_num_called(s: NoLimitState) -> int:
    n = 0
    for p, kind in reversed(s.actions):
        if kind == "r":
            return n + (1 if s.spent[p] < s.stack else 0)
        if kind == "c" and s.spent[p] < s.stack:
            n += 1
    return n


def nl_raise_is_valid(s: NoLimitState):
    if nl_num_acting(s) <= 1:
        return None
    lo, hi = s.min_raise_to, s.stack
    if lo > hi:
        if s.max_spent >= s.stack:
            return None
        lo = hi
    return lo, hi


def nl_legal(s: NoLimitState) -> list[int]:
    if s.cur == CHANCE:
        return [4 + c for c in CARDS]
    p = s.cur
    moves = []
    if not (s.spent[p] == s.max_spent or s.spent[p] == s.stack):
        moves.append(0)
    moves.append(1)
    sizes = nl_raise_is_valid(s)
    if sizes is not None:
        lo, hi = sizes
        # universal_poker fcpa: raise to the bet plus the pot after calling
        pot_to = sum(s.spent) + 2 * s.max_spent - s.spent[p]
        if lo <= pot_to <= hi:
            moves.append(2)
        if pot_to != hi:
            moves.append(3)
    return moves


def nl_apply(s: NoLimitState, a: int) -> NoLimitState:
    s = NoLimitState(s.stack, s.blind, list(s.spent), s.max_spent, s.min_raise_to, s.round, list(s.actions),
                     s.folded, s.finished, s.board, s.cur)
    if s.cur == CHANCE:
        s.board = a - 4
        s.cur = None if s.finished else 0  # round 2 starts with player 0 (firstPlayer = 1 1)
        return s
    p = s.cur
    if a == 0:
        s.folded, s.cur = p, None
        return s
    if a == 1:
        s.spent[p] = min(s.max_spent, s.stack)
        s.actions.append((p, "c"))
    else:
        size = sum(s.spent) + 2 * s.max_spent - s.spent[p] if a == 2 else s.stack
        s.min_raise_to = max(s.min_raise_to, 2 * size - s.max_spent)
        s.max_spent = size
        s.spent[p] = size
        s.actions.append((p, "r"))
    if nl_num_called(s) >= nl_num_acting(s):
        if nl_num_acting(s) > 1 and s.round == 0:
            s.round = 1
            s.actions = []
            s.min_raise_to = s.max_spent + s.blind
            s.cur = CHANCE
        else:
            s.finished = True
            s.cur = CHANCE if s.board < 0 else None
    else:
        s.cur = 1 - p
    return s


def nl_payoff0(s: NoLimitState, c0: int, c1: int) -> float:
    if s.folded >= 0:
        return float(-s.spent[0] if s.folded == 0 else s.spent[1])
    assert s.spent[0] == s.spent[1]
    return float(s.spent[0] * showdown_sign(c0, c1, s.board))


# ------------------------------------------------------------------------ the two games

@dataclass(frozen=True)
class Ref:
    name: str
    params: tuple
    initial: object
    legal: object
    apply: object
    payoff0: object
    chance_base: int


def ref_for(name: str, params: tuple) -> Ref:
    if name == "leduc":
        return Ref(name, params, LimitState(), limit_legal, limit_apply, limit_payoff0, 3)
    p = dict(params)
    return Ref(name, params, nl_initial(p.get("stack", 1200), p.get("ante", 100)), nl_legal, nl_apply,
               nl_payoff0, 4)


SETTINGS = [("leduc", ()), ("leduc_nolimit", ()), ("leduc_nolimit", (("stack", 900), ("ante", 100))),
            ("leduc_nolimit", (("stack", 250), ("ante", 100))), ("leduc_nolimit", (("stack", 2000), ("ante", 50)))]
IDS = [f"{n}{dict(p) or ''}" for n, p in SETTINGS]


@functools.lru_cache(maxsize=None)
def game_of(name: str, params: tuple):
    return make(name, **dict(params))


@functools.lru_cache(maxsize=None)
def walk(name: str, params: tuple):
    """Every history of the public tree (the game's own legal actions), with the reference
    state each leads to; asserts legal actions / player / terminality against the reference
    on the way."""
    g, ref = game_of(name, params), ref_for(name, params)
    out = []

    def rec(h, s):
        out.append((tuple(h), s))
        terminal = s.cur is None
        assert g.is_terminal(h) == terminal, h
        if terminal:
            assert g.legal_actions(h) == []
            return
        assert g.player_to_act(h) == s.cur, h
        legal = g.legal_actions(h)
        assert legal == ref.legal(s), h
        for a in legal:
            rec(h + [a], ref.apply(s, a))

    rec([], ref.initial)
    return out


def deals():
    """(card of player 0, card of player 1, board) with three distinct cards."""
    return [(c0, c1, b) for c0, c1, b in itertools.permutations(CARDS, 3)]
