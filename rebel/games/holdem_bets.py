"""Bet and raise sizes of a hold'em endgame in the postflop solvers' syntax, and the amounts they
give at a decision, with b-inary/postflop-solver's rules (src/bet_size.rs, src/action_tree.rs).

Sizes are comma-separated (``"60%, e, a"``, ``"2.5x"``); case and the spaces around commas do
not matter, a trailing comma is allowed, and an empty text means no sizes:

* ``N%``: N percent of the pot. For a bet, the pot is the pot before it; for a raise, the pot
  after the raiser called, and the raise goes to the bet being raised plus N% of that pot (the
  usual "pot-sized raise" at 100%).
* ``Nx`` (raises only): N times the bet being raised (its total on this street); N > 1.
* ``Nc``: N chips (an integer); a raise of ``Nc`` raises by N. ``NcMr`` (raises only): the same,
  offered while at most M bets and raises were made on this street (M an integer 1..100).
* ``e``, ``Ne``, ``eY%``, ``NeY%``: the geometric size: the fraction f of the pot such that
  betting f x pot and being called on each of N streets puts both players all-in exactly:
  ``f = ((2 * stack / pot + 1) ** (1 / N) - 1) / 2``, with ``stack`` what is left behind after
  the call and ``pot`` as for ``N%``. N defaults to the streets left including this one (flop 3,
  turn 2, river 1, so ``e`` on the river is all-in); for a raise N is lowered by the bets and
  raises already made on this street, minus one (at least 1). ``Y%`` caps f at Y percent.
* ``a``: all-in.

Every amount is in whole chips, and "to" amounts count what a player put in on this street.
At a decision (:func:`aggressive_amounts`, in this order):

1. each size gives an amount, rounded to the nearest chip (halves away from zero);
2. the all-in is added when the all-in raises the current bet by at most
   ``add_all_in_threshold`` x pot (chips rounded; 0 disables it);
3. each amount is clamped into [min, all-in]: the minimum bet is 1 chip; the minimum raise
   raises by at least the last bet or raise increment (so a size below the min-raise becomes
   the min-raise); an amount at or above the all-in becomes the all-in;
4. an amount becomes the all-in when the stack left after it is called would be at most
   ``force_all_in_threshold`` x the pot after that call (chips rounded): the player is
   "pot-committed". With 0, only amounts equal to the all-in become it;
5. equal amounts are kept once;
6. merging (PioSOLVER's): from the largest amount down, an amount is dropped when, with X and Y
   the kept larger amount's and its own increments over the current bet as fractions of the
   pot, ``(1 + X) / (1 + Y) < 1 + merging_threshold`` (0: only equal amounts merge; a relative
   1e-12 margin keeps an amount exactly on the line);
7. a cap on the bets and raises per street (``raise_cap``, this module's addition; None: no
   cap): once that many were made on a street, only fold and call remain. A bet facing an
   all-in is never possible either.

Donk sizes: when OOP opens the turn or the river right after calling the previous street's last
bet or raise (IP was the aggressor), OOP uses the donk sizes of that street if any are given, else
its usual bet sizes.

Errors (ValueError, one line): a size that does not parse, an ``x`` size among bets, a size that
is not positive (postflop-solver also takes ``0%`` and ``0c``), a multiplier of at most 1.
"""
from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

log = logging.getLogger(__name__)

__all__ = ["BetSize", "BetSizes", "SizingRules", "aggressive_amounts", "format_bet_sizes", "parse_bet_sizes",
           "round_half_away"]

#: The kinds of size: N% of the pot, N times the previous bet, N chips, geometric, all-in.
KINDS = ("pot", "prev", "chips", "geometric", "all-in")

_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
#: Merging keeps an amount exactly on the threshold (a relative margin against rounding).
_MERGE_EPS = 1e-12
#: The "larger amount" the first merging comparison is made against (postflop-solver's i32::MAX).
_NO_LARGER = 2**31 - 1


@dataclass(frozen=True)
class BetSize:
    """One size: ``kind`` of :data:`KINDS`; ``value`` the pot fraction (``pot``), the multiplier
    (``prev``) or the chips (``chips``); ``streets`` the geometric size's streets (0: the streets
    left); ``max_pot`` its cap as a pot fraction; ``cap`` the ``NcMr`` raise cap (0: none);
    ``text`` as written."""

    kind: str
    value: float = 0.0
    streets: int = 0
    max_pot: float = math.inf
    cap: int = 0
    text: str = ""

    def __str__(self) -> str:
        return self.text


def _number(text: str) -> Optional[float]:
    return float(text) if _NUMBER.fullmatch(text) else None


def _whole(text: str, lo: int, hi: int) -> Optional[int]:
    value = _number(text)
    if value is None or value != int(value) or not lo <= value <= hi:
        return None
    return int(value)


def _parse_one(size: str, raises: bool, where: str) -> BetSize:
    s = size.lower()
    bad = f"bet size {size!r}{where} does not parse: expected N%, Nx (raises), Nc, e, Ne or a"
    if s.endswith("x"):
        if not raises:
            raise ValueError(f"bet size {size!r}{where}: an 'x' size (times the previous bet) is for raises only")
        value = _number(s[:-1])
        if value is None:
            raise ValueError(bad)
        if value <= 1.0:
            raise ValueError(f"bet size {size!r}{where}: the multiplier must be greater than 1")
        return BetSize("prev", value, text=size)
    if "c" in s:
        chips_text, _, cap_text = s.partition("c")
        chips = _number(chips_text)
        if chips is None:
            raise ValueError(bad)
        if chips != int(chips):
            raise ValueError(f"bet size {size!r}{where}: chips must be a whole number")
        cap = 0
        if cap_text:
            if not raises:
                raise ValueError(f"bet size {size!r}{where}: a raise cap ('r') is for raises only")
            if not cap_text.endswith("r") or (parsed := _whole(cap_text[:-1], 1, 100)) is None:
                raise ValueError(f"bet size {size!r}{where}: the raise cap must be a whole number 1..100, as in 20c3r")
            cap = parsed
        if chips <= 0:
            raise ValueError(f"bet size {size!r}{where} is not positive")
        return BetSize("chips", float(chips), cap=cap, text=size)
    if "e" in s:
        streets_text, _, max_text = s.partition("e")
        streets = 0
        if streets_text:
            parsed = _whole(streets_text, 1, 100)
            if parsed is None:
                raise ValueError(f"bet size {size!r}{where}: the streets before 'e' must be a whole number 1..100")
            streets = parsed
        max_pot = math.inf
        if max_text:
            value = _number(max_text[:-1]) if max_text.endswith("%") else None
            if value is None:
                raise ValueError(bad)
            if value <= 0:
                raise ValueError(f"bet size {size!r}{where}: the geometric size's cap is not positive")
            max_pot = value / 100.0
        return BetSize("geometric", streets=streets, max_pot=max_pot, text=size)
    if s.endswith("%"):
        value = _number(s[:-1])
        if value is None:
            raise ValueError(bad)
        if value <= 0:
            raise ValueError(f"bet size {size!r}{where} is not positive")
        return BetSize("pot", value / 100.0, text=size)
    if s == "a":
        return BetSize("all-in", text=size)
    raise ValueError(bad)


def parse_bet_sizes(text: str, raises: bool = False, where: str = "") -> tuple[BetSize, ...]:
    """The sizes of comma-separated text (module docstring), in the order written. ``raises``:
    sizes of raises (``Nx`` and ``NcMr`` allowed). ``where`` is added to error messages (e.g.
    ``" in bets.turn.oop.raise"``). ValueError, one line naming the size, on bad input."""
    if not isinstance(text, str):
        raise ValueError(f"bet sizes{where} must be text such as '60%, e, a', got {text!r}")
    parts = [p.strip() for p in text.split(",")]
    if parts[-1] == "":
        parts.pop()  # a trailing comma, or no sizes at all
    if "" in parts:
        raise ValueError(f"bet sizes {text!r}{where} have an empty size (two commas in a row)")
    return tuple(_parse_one(p, raises, where) for p in parts)


def format_bet_sizes(sizes: Sequence[BetSize]) -> str:
    """Sizes as comma-separated text (as written): ``'60%, e, a'``."""
    return ", ".join(s.text for s in sizes)


@dataclass(frozen=True)
class BetSizes:
    """One player's sizes on one street: opening bets and raises."""

    bet: tuple[BetSize, ...] = ()
    raise_: tuple[BetSize, ...] = ()

    @classmethod
    def from_text(cls, bet: str = "", raise_: str = "", where: str = "") -> "BetSizes":
        """Both lists from their texts; ``where`` (e.g. ``"bets.turn.oop"``) is the place errors
        name (``... in bets.turn.oop.raise``)."""
        return cls(parse_bet_sizes(bet, False, f" in {where}.bet" if where else ""),
                   parse_bet_sizes(raise_, True, f" in {where}.raise" if where else ""))


@dataclass(frozen=True)
class SizingRules:
    """The thresholds of the module docstring (0 disables each) and the cap on bets and raises
    per street (None: no cap)."""

    add_all_in_threshold: float = 0.0
    force_all_in_threshold: float = 0.0
    merging_threshold: float = 0.0
    raise_cap: Optional[int] = None

    def __post_init__(self) -> None:
        for name in ("add_all_in_threshold", "force_all_in_threshold", "merging_threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < 0:
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        cap = self.raise_cap
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ValueError(f"raise_cap must be a whole number >= 1 (bets and raises per street) or null, got {cap!r}")


def round_half_away(x: float) -> int:
    """``x`` rounded to the nearest integer, halves away from zero (Rust's ``f64::round``)."""
    whole = math.floor(abs(x))
    if abs(x) - whole >= 0.5:
        whole += 1
    return int(math.copysign(whole, x)) if whole else 0


def _geometric_fraction(streets: int, stack: int, pot: int) -> float:
    return ((2.0 * (stack / pot) + 1.0) ** (1.0 / streets) - 1.0) / 2.0


def aggressive_amounts(sizes: Sequence[BetSize], rules: SizingRules, *, pot: int, current_bet: int, to_call: int,
                       stack: int, bets_made: int, streets_left: int) -> list[tuple[int, bool]]:
    """The bets or raises a player may make, as ``(amount, is_all_in)`` in increasing amount,
    the all-in last; ``amount`` is the player's total on this street after it.

    ``sizes``: the bet sizes (``current_bet == 0``) or the raise sizes. ``pot``: the pot once the
    player has called (both players' chips, the starting pot included). ``current_bet``: the
    street total of the bet being raised (0: none). ``to_call``: what the player owes.
    ``stack``: what the player has behind once called. ``bets_made``: bets and raises made on
    this street. ``streets_left``: this street and the ones after it (flop 3, turn 2, river 1)."""
    if rules.raise_cap is not None and bets_made >= rules.raise_cap:
        return []
    raising = current_bet > 0
    all_in = current_bet + stack
    smallest = min(max(current_bet + to_call, 1), all_in)
    amounts: list[tuple[int, bool]] = []
    for size in sizes:
        if size.kind == "all-in":
            amounts.append((all_in, True))
            continue
        if size.kind == "pot":
            amount = current_bet + round_half_away(pot * size.value)
        elif size.kind == "prev":
            amount = round_half_away(current_bet * size.value)
        elif size.kind == "chips":
            if raising and size.cap and bets_made > size.cap:
                continue
            amount = current_bet + int(size.value)
        else:
            streets = size.streets or streets_left
            if raising:
                streets = max(streets - bets_made + 1, 1)
            fraction = min(_geometric_fraction(streets, stack, pot), size.max_pot)
            amount = current_bet + round_half_away(pot * fraction)
        amounts.append((amount, False))
    if all_in - current_bet <= round_half_away(pot * rules.add_all_in_threshold):
        amounts.append((all_in, True))

    final: set[tuple[int, bool]] = set()
    for amount, is_all_in in amounts:
        if not is_all_in:
            amount = min(max(amount, smallest), all_in)
            pot_called = pot + 2 * (amount - current_bet)
            is_all_in = all_in <= amount + round_half_away(pot_called * rules.force_all_in_threshold)
            if is_all_in:
                amount = all_in
        final.add((amount, is_all_in))
    return _merge(sorted(final), pot, current_bet, rules.merging_threshold)


def _merge(amounts: list[tuple[int, bool]], pot: int, current_bet: int, threshold: float) -> list[tuple[int, bool]]:
    """Drops amounts too close to a larger kept one (step 6 of the module docstring)."""
    kept: list[tuple[int, bool]] = []
    larger = _NO_LARGER
    for amount, is_all_in in reversed(amounts):
        fraction = (amount - current_bet) / pot
        larger_fraction = (larger - current_bet) / pot
        if fraction < (larger_fraction - threshold) / (1.0 + threshold) * (1.0 - _MERGE_EPS):
            kept.append((amount, is_all_in))
            larger = amount
        else:
            log.debug("merged %d into %d (pot %d)", amount, larger, pot)
    return kept[::-1]
