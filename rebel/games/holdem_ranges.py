"""Hold'em cards, two-card hands and ranges in the syntax solver users type (PioSOLVER's).

Cards are numbered as in the C++ core (csrc/games/holdem_cards.h): ``card = rank * 4 + suit``,
ranks ``23456789TJQKA`` = 0..12, suits ``cdhs`` = 0..3 (0 = ``2c``, 51 = ``As``). The 1,326
two-card hands are :data:`COMBOS`, pairs ``(c1, c2)`` with ``c1 < c2`` in lexicographic order
(``2c2d``, ``2c2h``, ..., ``AhAs``); :func:`combo_index` finds one. A range is a float64 array of
1,326 weights in [0, 1], one per hand, in that order.

Range text (:func:`parse_range`) follows b-inary/postflop-solver's reading of PioSOLVER's
syntax: comma-separated groups, each with an optional ``:weight``; whitespace around ``,``,
``-`` and ``:`` and at the ends is ignored, and a trailing comma is allowed.

* ``AA`` (the 6 pairs), ``AKs`` (4 suited), ``AKo`` (12 offsuit), ``AK`` (all 16);
  ``AsKh`` one explicit hand (higher rank first; a pair's suits in any order).
* ``TT+``: TT and every higher pair. ``T9s+`` (a connector): T9s, JTs, QJs, KQs, AKs (the gap
  between the ranks is kept). ``ATs+`` (a gap over 1): ATs, AJs, AQs, AKs (the top card is
  kept). The same with ``o``, with neither (``A9+``) or with explicit suits (``8s8h+``).
* ``QQ-88``: QQ down to 88. ``A9s-A6s``: same top card, the second rank from 9 down to 6.
  ``KQo-JTo``: same gap, the top rank from K down to J. Both ends must be of the same kind
  (suited, offsuit, both, or the same explicit suits) and in descending order.
* ``full``: every hand (this module's addition).
* Ranks may be written in lower case (``ak``); ``s``, ``o`` and suits are lower case.
* Weights: a number in [0, 1] (``AsKh:0.5``, ``QQ-88:.25``); 1 by default.
* A hand named by several groups takes the weight of the FIRST group that names it, as in
  postflop-solver (which applies the groups last to first): ``AA:0.5,QQ+`` gives AA 0.5 and
  KK, QQ 1.

Against a board, every hand that holds a board card gets weight 0 silently, except a group
that is one explicit hand (``AsKh``): naming a hand that holds a board card is an error there.
In a short deck (``ranks`` < 13 or ``suits`` < 4: the lowest ranks 2, 3, ... and the first
suits c, d, h, s, as OpenSpiel's universal_poker), a group naming a rank or a suit outside the
deck is an error, ``+`` runs stop at the deck's top rank, ``full`` is every hand of the deck,
and hands of a group holding a suit outside the deck are dropped (``AKs`` with two suits: 2
hands). Errors are one-line ValueErrors naming the group. A range with no positive weight
left (after the board's removals) is an error.

:func:`range_to_string` writes weights back as compact text that :func:`parse_range` reads
back exactly; :data:`GRID_LABELS` and :func:`grid_cell` give the 13 x 13 hand grid players read
(rows and columns from A down to 2; suited hands above the diagonal, offsuit below).
"""
from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Sequence
from typing import Optional, Union

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["COMBOS", "GRID_LABELS", "NUM_CARDS", "NUM_COMBOS", "RANKS", "SUITS", "card_name", "cards_name",
           "combo_index", "combo_name", "deck_cards", "grid_cell", "grid_label", "parse_card", "parse_cards",
           "parse_range", "range_to_string"]

RANKS = "23456789TJQKA"
SUITS = "cdhs"
NUM_CARDS = 52
NUM_COMBOS = NUM_CARDS * (NUM_CARDS - 1) // 2


def _all_combos() -> np.ndarray:
    pairs = [(a, b) for a in range(NUM_CARDS) for b in range(a + 1, NUM_CARDS)]
    out = np.array(pairs, dtype=np.int32)
    out.setflags(write=False)
    return out


#: The 1,326 two-card hands, (c1, c2) with c1 < c2, in lexicographic order (read-only).
COMBOS: np.ndarray = _all_combos()

_INDEX = np.full((NUM_CARDS, NUM_CARDS), -1, dtype=np.int64)
_INDEX[COMBOS[:, 0], COMBOS[:, 1]] = np.arange(NUM_COMBOS)
_INDEX[COMBOS[:, 1], COMBOS[:, 0]] = np.arange(NUM_COMBOS)


def combo_index(c1: int, c2: int) -> int:
    """The index in :data:`COMBOS` of the hand of cards ``c1`` and ``c2`` (either order)."""
    for c in (c1, c2):
        if not 0 <= int(c) < NUM_CARDS:
            raise ValueError(f"card number {c} is outside 0..51")
    if int(c1) == int(c2):
        raise ValueError(f"a hand needs two different cards, got {card_name(c1)} twice")
    return int(_INDEX[int(c1), int(c2)])


# ---------------------------------------------------------------------------------------------
# Cards.


def card_name(card: int) -> str:
    """The name of card number ``card``: 51 -> ``'As'``."""
    if not 0 <= int(card) < NUM_CARDS:
        raise ValueError(f"card number {card} is outside 0..51")
    return RANKS[int(card) // 4] + SUITS[int(card) % 4]


def cards_name(cards: Iterable[int], sep: str = "") -> str:
    """Card names joined by ``sep``: ``[51, 44] -> 'AsKc'``."""
    return sep.join(card_name(c) for c in cards)


def combo_name(combo: int) -> str:
    """A hand's name, the higher card first: ``combo_name(combo_index(51, 44)) == 'AsKc'``."""
    c1, c2 = COMBOS[int(combo)]
    return card_name(int(c2)) + card_name(int(c1))


def parse_card(name: str) -> int:
    """One card's name (two characters; ranks in either case, suits in either case) to its number."""
    if len(name) != 2 or name[0].upper() not in RANKS or name[1].lower() not in SUITS:
        raise ValueError(f"malformed card {name!r}: expected a rank of {RANKS} then a suit of {SUITS}, e.g. 'As'")
    return RANKS.index(name[0].upper()) * 4 + SUITS.index(name[1].lower())


def parse_cards(text: Union[str, Sequence[Union[int, str]]]) -> list[int]:
    """Cards from text run together or separated by spaces or commas (``'Td9d6h Qc'``), or from a
    sequence of names or numbers. ValueError, naming the culprit, for a malformed card, a number
    outside 0..51 or a card given twice, as the core's ``parse_cards``."""
    cards: list[int] = []
    if isinstance(text, str):
        for word in re.split(r"[\s,]+", text.strip()):
            if len(word) % 2:
                raise ValueError(f"malformed cards {word!r} in {text!r}: cards are two characters each, e.g. 'As'")
            cards += [parse_card(word[i:i + 2]) for i in range(0, len(word), 2)]
    else:
        for item in text:
            if isinstance(item, str):
                cards.append(parse_card(item))
            elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
                if not 0 <= int(item) < NUM_CARDS:
                    raise ValueError(f"card number {item} is outside 0..51")
                cards.append(int(item))
            else:
                raise ValueError(f"a card is a name such as 'As' or a number 0..51, got {item!r}")
    seen: set[int] = set()
    for c in cards:
        if c in seen:
            raise ValueError(f"card {card_name(c)} given twice in {text!r}")
        seen.add(c)
    return cards


def deck_cards(ranks: int = 13, suits: int = 4) -> list[int]:
    """The cards of a (short) deck: the lowest ``ranks`` ranks and the first ``suits`` suits."""
    if not (1 <= ranks <= 13 and 1 <= suits <= 4):
        raise ValueError(f"a deck has 1..13 ranks and 1..4 suits, got ranks={ranks}, suits={suits}")
    return [r * 4 + s for r in range(ranks) for s in range(suits)]


# ---------------------------------------------------------------------------------------------
# Hand classes: pairs, suited and offsuit hands of two ranks, or one explicit hand.


def _class_combos(hi: int, lo: int, kind: str, suits: Optional[tuple[int, int]] = None) -> list[int]:
    """Hand indices of ranks ``hi >= lo``: ``kind`` 's' suited, 'o' offsuit, '' both (pairs: all
    six), 'x' the one hand of suits ``suits`` (of ``hi`` then ``lo``)."""
    if kind == "x":
        assert suits is not None
        return [combo_index(hi * 4 + suits[0], lo * 4 + suits[1])]
    out = []
    for s1 in range(4):
        for s2 in range(4):
            if hi == lo and s2 <= s1:
                continue
            if (kind == "s" and s1 != s2) or (kind == "o" and s1 == s2):
                continue
            out.append(combo_index(hi * 4 + s1, lo * 4 + s2))
    return out


_HAND_RE = re.compile(r"([2-9TJQKAtjqka])([2-9TJQKAtjqka])([so]?)")
_EXPLICIT_RE = re.compile(r"([2-9TJQKAtjqka])([cdhs])([2-9TJQKAtjqka])([cdhs])")
_TRIM_RE = re.compile(r"\s*([-:,])\s*")


class _Hand:
    """One hand class as written: top rank, second rank, kind ('', 's', 'o' or 'x') and suits."""

    def __init__(self, text: str, group: str, ranks: int = 13, suits: int = 4) -> None:
        m = _HAND_RE.fullmatch(text)
        e = _EXPLICIT_RE.fullmatch(text)
        if m:
            self.hi, self.lo = RANKS.index(m.group(1).upper()), RANKS.index(m.group(2).upper())
            self.kind, self.suits = m.group(3), (-1, -1)
            if self.hi == self.lo and self.kind:
                raise ValueError(f"range group {group!r}: a pair is neither suited nor offsuit ({text!r})")
        elif e:
            self.hi, self.lo = RANKS.index(e.group(1).upper()), RANKS.index(e.group(3).upper())
            self.kind, self.suits = "x", (SUITS.index(e.group(2)), SUITS.index(e.group(4)))
            if self.hi == self.lo and self.suits[0] == self.suits[1]:
                raise ValueError(f"range group {group!r}: a hand of the same card twice ({text!r})")
        else:
            raise ValueError(f"range group {group!r} does not parse: {text!r} is not a hand such as AA, AKs, AKo, "
                             "AK or AsKh")
        if self.hi < self.lo:
            raise ValueError(f"range group {group!r}: write the higher rank first ({text!r})")
        if self.hi >= ranks or max(self.suits) >= suits:
            raise ValueError(f"range group {group!r} names a card outside the deck of ranks "
                             f"{RANKS[0]}..{RANKS[ranks - 1]} and suits {SUITS[:suits]}")

    @property
    def gap(self) -> int:
        return self.hi - self.lo

    def at(self, hi: int, lo: int) -> list[int]:
        """The hands of this kind (and suits) at ranks ``hi``, ``lo``."""
        return _class_combos(hi, lo, self.kind, self.suits)


def _group_combos(body: str, group: str, ranks: int, suits: int) -> tuple[list[int], bool]:
    """The hand indices of one group's text (without its weight) and whether it is one explicit
    hand, in a deck of ``ranks`` x ``suits``."""
    if body.lower() == "full":
        return list(range(NUM_COMBOS)), False
    if body.endswith("+"):
        low = _Hand(body[:-1], group, ranks, suits)
        if low.gap <= 1:  # pairs and connectors: both ranks climb, the gap kept
            rank_pairs = [(hi, hi - low.gap) for hi in range(low.hi, ranks)]
        else:  # the top card kept, the second climbs to just below it
            rank_pairs = [(low.hi, lo) for lo in range(low.lo, low.hi)]
        return [i for hi, lo in rank_pairs for i in low.at(hi, lo)], False
    if "-" in body:
        ends = body.split("-")
        if len(ends) != 2:
            raise ValueError(f"range group {group!r} does not parse: one '-' between two hands")
        first, last = _Hand(ends[0], group, ranks, suits), _Hand(ends[1], group, ranks, suits)
        if (first.kind, first.suits) != (last.kind, last.suits):
            raise ValueError(f"range group {group!r}: both ends must be of the same kind (suited, offsuit, both or "
                             "the same suits)")
        if first.gap == last.gap:
            if first.hi <= last.hi:
                raise ValueError(f"range group {group!r}: write the higher end first")
            rank_pairs = [(hi, hi - first.gap) for hi in range(last.hi, first.hi + 1)]
        elif first.hi == last.hi:
            if first.lo <= last.lo:
                raise ValueError(f"range group {group!r}: write the higher end first")
            rank_pairs = [(first.hi, lo) for lo in range(last.lo, first.lo + 1)]
        else:
            raise ValueError(f"range group {group!r}: the ends must share their top rank (A9s-A6s) or their gap "
                             "(QQ-88, KQo-JTo)")
        return [i for hi, lo in rank_pairs for i in first.at(hi, lo)], False
    hand = _Hand(body, group, ranks, suits)
    return hand.at(hand.hi, hand.lo), hand.kind == "x"


def _parse_weight(text: str, group: str) -> float:
    try:
        weight = float(text)
    except ValueError:
        weight = math.nan
    if not math.isfinite(weight):
        raise ValueError(f"range group {group!r}: weight {text!r} is not a number")
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"range group {group!r}: weight {text} is outside [0, 1]")
    return weight


def parse_range(text: str, board: Sequence[int] = (), ranks: int = 13, suits: int = 4) -> np.ndarray:
    """The weights (float64, 1,326, in :data:`COMBOS` order) of a range written as text (see the
    module's docstring). Hands holding a card of ``board`` and hands outside the short deck of
    ``ranks`` x ``suits`` get weight 0. ValueError, one line naming the group, for a group that
    does not parse, a weight that is not a number in [0, 1], an explicit hand holding a board
    card, a rank or suit outside the deck, or a range with no positive weight left."""
    if not isinstance(text, str):
        raise ValueError(f"a range is text such as 'QQ+,AKs', got {text!r}")
    deck = np.zeros(NUM_CARDS, dtype=bool)
    deck[deck_cards(ranks, suits)] = True
    dead = np.zeros(NUM_CARDS, dtype=bool)
    dead[list(board)] = True
    live = deck[COMBOS].all(axis=1) & ~dead[COMBOS].any(axis=1)

    cleaned = _TRIM_RE.sub(r"\1", text).strip()
    if not cleaned:
        raise ValueError("the range is empty: write groups such as 'QQ+,AKs' or 'full'")
    groups = cleaned.split(",")
    if groups[-1] == "" and len(groups) > 1:
        groups.pop()  # a trailing comma
    weights = np.zeros(NUM_COMBOS, dtype=np.float64)
    named = np.zeros(NUM_COMBOS, dtype=bool)
    for group in groups:
        if not group:
            raise ValueError(f"range {text!r} has an empty group (two commas in a row, or nothing at all)")
        body, *rest = group.split(":")
        if len(rest) > 1:
            raise ValueError(f"range group {group!r} does not parse: one ':' before the weight")
        weight = _parse_weight(rest[0], group) if rest else 1.0
        combos, explicit = _group_combos(body, group, ranks, suits)
        if explicit and not live[combos[0]]:
            raise ValueError(f"range group {group!r} holds a board card ({cards_name(board, ' ')})")
        fresh = [i for i in combos if not named[i]]  # the first group naming a hand sets its weight
        named[fresh] = True
        weights[fresh] = weight
    weights[~live] = 0.0
    if not weights.any():
        if (dead[COMBOS].any(axis=1) & named).any():
            raise ValueError(f"range {text!r} is empty after removing the hands that hold a board card "
                             f"({cards_name(board, ' ')})")
        raise ValueError(f"range {text!r} has no hand with a positive weight")
    return weights


# ---------------------------------------------------------------------------------------------
# Writing ranges back.

_MIXED = -1.0  # a class whose live hands have different weights: written hand by hand
_DEAD = -2.0  # a class without live hands: joins any run


def _class_weight(weights: np.ndarray, live: np.ndarray, combos: list[int]) -> float:
    values = {float(weights[i]) for i in combos if live[i]}
    if not values:
        return _DEAD
    return values.pop() if len(values) == 1 else _MIXED


def _weight_suffix(w: float) -> str:
    return "" if w == 1.0 else f":{float(w)!r}"


def _runs(values: list[float]) -> list[tuple[int, int, float]]:
    """Maximal runs ``(start, end, weight)`` (inclusive, positions in ``values``) of one positive
    weight, where dead entries join a run but neither start nor end one."""
    runs: list[tuple[int, int, float]] = []
    i = 0
    while i < len(values):
        w = values[i]
        if w <= 0.0:
            i += 1
            continue
        end = i
        j = i + 1
        while j < len(values) and (values[j] == w or values[j] == _DEAD):
            if values[j] == w:
                end = j
            j += 1
        runs.append((i, end, w))
        i = end + 1
    return runs


def range_to_string(weights: np.ndarray, board: Sequence[int] = ()) -> str:
    """Compact range text for ``weights`` (1,326) that :func:`parse_range` reads back to the same
    weights (with the same ``board``): pairs first (``TT+``, ``QQ-88:0.5``), then each top
    rank's suited and offsuit hands (``ATs+``, ``A5o-A2o``, or ``A9+`` when suited and offsuit
    agree), then hands whose class has mixed weights one by one (``AsKh:0.25``). Hands that hold
    a card of ``board`` are ignored (they read back as 0 whatever the text says)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (NUM_COMBOS,):
        raise ValueError(f"weights must have shape ({NUM_COMBOS},), got {w.shape}")
    if ((w < 0) | (w > 1) | ~np.isfinite(w)).any():
        raise ValueError("weights must lie in [0, 1]")
    dead = np.zeros(NUM_CARDS, dtype=bool)
    dead[list(board)] = True
    live = ~dead[COMBOS].any(axis=1)
    live_values = np.unique(w[live])
    if len(live_values) == 1 and live_values[0] > 0:
        return "full" + _weight_suffix(float(live_values[0]))
    groups: list[str] = []
    explicit: list[int] = []

    def note_mixed(combos: list[int]) -> None:
        explicit.extend(i for i in combos if live[i] and w[i] > 0)

    pair_values = []
    for r in range(12, -1, -1):
        cw = _class_weight(w, live, _class_combos(r, r, ""))
        pair_values.append(cw)
        if cw == _MIXED:
            note_mixed(_class_combos(r, r, ""))
    groups += _pair_groups(pair_values)
    for hi in range(12, 0, -1):
        suited = [_class_weight(w, live, _class_combos(hi, lo, "s")) for lo in range(hi - 1, -1, -1)]
        offsuit = [_class_weight(w, live, _class_combos(hi, lo, "o")) for lo in range(hi - 1, -1, -1)]
        both = [_merge_classes(s, o) for s, o in zip(suited, offsuit)]
        combined = all(b is not None for b in both)
        if combined:
            groups += _second_rank_groups(hi, "", [float(b) for b in both if b is not None])
        for kind, values in (("s", suited), ("o", offsuit)):
            if not combined:
                groups += _second_rank_groups(hi, kind, values)
            for k, v in enumerate(values):
                if v == _MIXED:
                    note_mixed(_class_combos(hi, hi - 1 - k, kind))
    groups += [combo_name(i) + _weight_suffix(float(w[i])) for i in sorted(explicit, key=_explicit_order)]
    return ",".join(groups)


def _explicit_order(i: int) -> tuple[int, int]:
    c1, c2 = COMBOS[i]
    return (-int(c2), -int(c1))


def _merge_classes(suited: float, offsuit: float) -> Optional[float]:
    """The weight of a suited and an offsuit class written together (``AK``): their common
    weight (a dead class agrees with any), ``_MIXED`` where the hands must be written one by one
    (a mixed class beside a class of weight 0 or another mixed one), None where they cannot be
    written together."""
    if suited == _MIXED or offsuit == _MIXED:
        other = offsuit if suited == _MIXED else suited
        return _MIXED if other in (_MIXED, _DEAD, 0.0) else None
    if suited == _DEAD:
        return offsuit
    if offsuit == _DEAD or suited == offsuit:
        return suited
    return None


def _pair_groups(values: list[float]) -> list[str]:
    out = []
    for start, end, w in _runs(values):
        hi, lo = 12 - start, 12 - end
        if hi == lo:
            text = RANKS[hi] * 2
        elif hi == 12:
            text = RANKS[lo] * 2 + "+"
        else:
            text = RANKS[hi] * 2 + "-" + RANKS[lo] * 2
        out.append(text + _weight_suffix(w))
    return out


def _second_rank_groups(hi: int, kind: str, values: list[float]) -> list[str]:
    """Groups of one top rank ``hi``; ``values[k]`` is the class with second rank ``hi - 1 - k``."""
    out = []
    top = RANKS[hi]
    for start, end, w in _runs(values):
        a, b = hi - 1 - start, hi - 1 - end
        if a == b:
            text = f"{top}{RANKS[a]}{kind}"
        elif start == 0:  # from just below the top card down: ATs+ (the gap is over 1 here)
            text = f"{top}{RANKS[b]}{kind}+"
        else:
            text = f"{top}{RANKS[a]}{kind}-{top}{RANKS[b]}{kind}"
        out.append(text + _weight_suffix(w))
    return out


# ---------------------------------------------------------------------------------------------
# The 13 x 13 grid.


def _grid_labels() -> tuple[tuple[str, ...], ...]:
    rows = []
    for row in range(13):
        cells = []
        for col in range(13):
            r1, r2 = 12 - row, 12 - col
            if row == col:
                cells.append(RANKS[r1] * 2)
            elif row < col:
                cells.append(RANKS[r1] + RANKS[r2] + "s")
            else:
                cells.append(RANKS[r2] + RANKS[r1] + "o")
        rows.append(tuple(cells))
    return tuple(rows)


#: The hand grid as players read it: ``GRID_LABELS[row][col]``, rows and columns ranked A (0)
#: down to 2 (12); pairs on the diagonal, suited hands above it (``GRID_LABELS[0][1] == 'AKs'``),
#: offsuit hands below (``GRID_LABELS[1][0] == 'AKo'``).
GRID_LABELS: tuple[tuple[str, ...], ...] = _grid_labels()


def _combo_cards(combo: Union[int, Sequence[int]]) -> tuple[int, int]:
    if isinstance(combo, (int, np.integer)):
        c1, c2 = COMBOS[int(combo)]
        return int(c1), int(c2)
    a, b = (int(c) for c in combo)
    combo_index(a, b)  # checks the cards
    return min(a, b), max(a, b)


def grid_cell(combo: Union[int, Sequence[int]]) -> tuple[int, int]:
    """The (row, col) of :data:`GRID_LABELS` of a hand, given as its index in :data:`COMBOS`
    or as its two cards."""
    c1, c2 = _combo_cards(combo)
    hi, lo = c2 // 4, c1 // 4
    if c1 % 4 == c2 % 4 and hi != lo:
        return 12 - hi, 12 - lo
    return 12 - lo, 12 - hi


def grid_label(combo: Union[int, Sequence[int]]) -> str:
    """The grid class of a hand (an index in :data:`COMBOS` or two cards): ``'AKs'``, ``'AKo'``,
    ``'AA'``."""
    row, col = grid_cell(combo)
    return GRID_LABELS[row][col]
