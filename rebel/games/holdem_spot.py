"""A hold'em endgame spot: the board, the pot, the stacks, both ranges and the bet sizes, and
its loading from YAML (docs/holdem_spots.md).

A spot starts on the flop, turn or river (a board of 3, 4 or 5 cards) with a starting pot, an
effective stack behind and one range per player; player 0 (OOP) acts first on every street,
player 1 is IP. Bet sizes are given per street and player (:mod:`rebel.games.holdem_bets`),
optionally donk sizes for the turn and river, the thresholds and a cap on bets and raises per
street. A short deck keeps the lowest ``ranks`` ranks (2, 3, ...) and the first ``suits`` suits
(c, d, h, s), as OpenSpiel's universal_poker; every board card must be in it.

A spot file (``load_spot``)::

    board: Td9d6h Qc            # or a list: [Td, 9d, 6h, Qc]
    pot: 200                    # the starting pot, whole chips
    stack: 900                  # the effective stack behind
    ranges: {oop: "66+,A8s+", ip: "QQ-22,AQs-A2s"}
    bets:                       # per street: one pair for both players ...
      turn: {bet: "60%, e, a", raise: "2.5x"}
      river: {oop: {bet: "60%, e, a", raise: "2.5x"}, ip: {bet: "75%", raise: "3x"}}  # ... or each's own
    donk: {river: "50%"}        # optional, turn and river
    add_all_in_threshold: 1.5   # optional, 0 by default (postflop-solver's meanings)
    force_all_in_threshold: 0.15
    merging_threshold: 0.1
    raise_cap: 3                # optional: bets + raises per street (null: no cap)
    ranks: 13                   # optional deck size
    suits: 4
    description: text           # optional

Loading is strict: an unknown key is a ValueError naming it and the closest valid key, and every
bad value is a one-line ValueError naming the place.
"""
from __future__ import annotations

import difflib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
from omegaconf import OmegaConf

from rebel.games.holdem_bets import BetSize, BetSizes, SizingRules, parse_bet_sizes
from rebel.games.holdem_ranges import COMBOS, cards_name, deck_cards, parse_cards, parse_range

log = logging.getLogger(__name__)

__all__ = ["PLAYERS", "Spot", "load_spot"]

STREETS = ("flop", "turn", "river")
PLAYERS = ("oop", "ip")
_NO_BETS = (BetSizes(), BetSizes())

Bets = tuple[tuple[BetSizes, BetSizes], tuple[BetSizes, BetSizes], tuple[BetSizes, BetSizes]]
Donk = tuple[Optional[tuple[BetSize, ...]], Optional[tuple[BetSize, ...]]]


def _whole_chips(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value):
        raise ValueError(f"{name} must be a whole number of chips, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Spot:
    """One endgame spot (see the module docstring). ``board`` may be given as text or names and
    is stored as card numbers; ``bets[street][player]`` covers the flop, turn and river (the
    streets before the board's are empty); ``donk`` holds the turn's and the river's donk sizes
    (None: OOP's bet sizes). Construction checks everything (ValueError, one line)."""

    board: tuple[int, ...]
    pot: int
    stack: int
    ranges: tuple[str, str]
    bets: Bets = (_NO_BETS, _NO_BETS, _NO_BETS)
    donk: Donk = (None, None)
    add_all_in_threshold: float = 0.0
    force_all_in_threshold: float = 0.0
    merging_threshold: float = 0.0
    raise_cap: Optional[int] = None
    ranks: int = 13
    suits: int = 4
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name in ("ranks", "suits"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
        deck = deck_cards(self.ranks, self.suits)
        board = tuple(parse_cards(self.board))  # text or names accepted too
        object.__setattr__(self, "board", board)
        if len(board) not in (3, 4, 5):
            raise ValueError(f"the board has {len(board)} cards ({cards_name(board, ' ')}); a spot starts on the "
                             "flop (3), turn (4) or river (5)")
        outside = [c for c in board if c not in deck]
        if outside:
            raise ValueError(f"board card {cards_name(outside[:1])} is not in the deck of {self.ranks} ranks and "
                             f"{self.suits} suits")
        if len(deck) < len(board) + 4:
            raise ValueError(f"the deck of {self.ranks} ranks and {self.suits} suits is too small for a board of "
                             f"{len(board)} cards and two hands")
        object.__setattr__(self, "pot", _whole_chips("pot", self.pot))
        object.__setattr__(self, "stack", _whole_chips("stack", self.stack))
        _ = self.rules  # checks the thresholds and the cap
        if len(self.ranges) != 2:
            raise ValueError(f"ranges must be two texts (oop, ip), got {self.ranges!r}")
        for player in (0, 1):
            try:
                self.weights(player)
            except ValueError as e:
                raise ValueError(f"ranges.{PLAYERS[player]}: {e}") from None
        bets = tuple(tuple(street) for street in self.bets)
        if len(bets) != 3 or any(len(street) != 2 or not all(isinstance(b, BetSizes) for b in street)
                                 for street in bets):
            raise ValueError("bets must hold BetSizes for (oop, ip) on each of the flop, turn and river")
        object.__setattr__(self, "bets", bets)
        for street in range(self.street):
            if self.bets[street] != _NO_BETS:
                raise ValueError(f"bets.{STREETS[street]}: the spot starts on the {STREETS[self.street]}")
        if len(self.donk) != 2:
            raise ValueError(f"donk must hold the turn's and the river's sizes, got {self.donk!r}")
        for street in (1, 2):
            if self.donk[street - 1] is not None and street <= self.street:
                raise ValueError(f"donk.{STREETS[street]}: donk bets follow a deal, and the spot starts on the "
                                 f"{STREETS[self.street]}")

    @property
    def street(self) -> int:
        """The street the spot starts on: 0 flop, 1 turn, 2 river."""
        return len(self.board) - 3

    @property
    def rules(self) -> SizingRules:
        """The thresholds and the cap, as :mod:`rebel.games.holdem_bets` takes them."""
        return SizingRules(self.add_all_in_threshold, self.force_all_in_threshold, self.merging_threshold,
                           self.raise_cap)

    def weights(self, player: int) -> np.ndarray:
        """The range of ``player`` (0 OOP, 1 IP): 1,326 weights in ``COMBOS`` order, 0 for hands
        holding a board card or a card outside the deck."""
        return parse_range(self.ranges[player], self.board, self.ranks, self.suits)

    def hands(self, player: int) -> tuple[np.ndarray, np.ndarray]:
        """The hands of ``player``'s range with a positive weight: cards (H, 2) int32, each hand's
        cards in increasing order, hands in ``COMBOS`` order, and their weights (H,) float64."""
        w = self.weights(player)
        keep = w > 0
        return COMBOS[keep].astype(np.int32), w[keep]

    def describe(self) -> str:
        """One line: street, board, pot, stack and the hands in each range."""
        counts = " vs ".join(str(len(self.hands(p)[1])) for p in (0, 1))
        return (f"{STREETS[self.street]} spot {cards_name(self.board, ' ')}: pot {self.pot}, stack {self.stack}, "
                f"{counts} hands")


# ---------------------------------------------------------------------------------------------
# Loading.

_TOP_KEYS = ("board", "pot", "stack", "ranges", "bets", "donk", "add_all_in_threshold", "force_all_in_threshold",
             "merging_threshold", "raise_cap", "ranks", "suits", "description")
_REQUIRED = ("board", "pot", "stack", "ranges")


def _check_keys(mapping: Any, valid: Sequence[str], where: str) -> Mapping[str, Any]:
    """``mapping`` as a mapping whose keys are all in ``valid`` (ValueError naming an unknown key
    and the closest valid one)."""
    if not isinstance(mapping, Mapping):
        raise ValueError(f"{where or 'a spot'} must be a mapping of {', '.join(valid)}, got {mapping!r}")
    prefix = f"{where}." if where else ""
    for key in mapping:
        if key not in valid:
            close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
            hint = f"did you mean '{prefix}{close[0]}'?" if close else f"the keys are {', '.join(valid)}"
            raise ValueError(f"unknown key '{prefix}{key}'; {hint}")
    return mapping


def _text(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{where} must be text, got {value!r}")
    return str(value)


def _street_bets(value: Any, where: str) -> tuple[BetSizes, BetSizes]:
    """One street's sizes: ``{bet, raise}`` for both players or ``{oop: {...}, ip: {...}}``."""
    mapping = _check_keys(value, ("bet", "raise", "oop", "ip"), where)
    shared = {"bet", "raise"} & set(mapping)
    if shared and set(mapping) & set(PLAYERS):
        raise ValueError(f"{where}: give 'bet' and 'raise' for both players, or 'oop' and 'ip', not both")
    if shared:
        one = _player_bets(mapping, where)
        return one, one
    return (_player_bets(mapping.get("oop", {}), f"{where}.oop"), _player_bets(mapping.get("ip", {}), f"{where}.ip"))


def _player_bets(value: Any, where: str) -> BetSizes:
    mapping = _check_keys(value, ("bet", "raise"), where)
    return BetSizes.from_text(_text(mapping.get("bet", ""), f"{where}.bet"),
                              _text(mapping.get("raise", ""), f"{where}.raise"), where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where} must be a number, got {value!r}")
    return float(value)


def _spot_from_mapping(data: Any) -> Spot:
    data = _check_keys(data, _TOP_KEYS, "")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ValueError(f"missing key {missing[0]!r} (a spot needs {', '.join(_REQUIRED)})")
    ranges = _check_keys(data["ranges"], PLAYERS, "ranges")
    for player in PLAYERS:
        if player not in ranges:
            raise ValueError(f"missing key 'ranges.{player}'")
    bets_map = _check_keys(data.get("bets") or {}, STREETS, "bets")
    bets = tuple(_street_bets(bets_map[s], f"bets.{s}") if bets_map.get(s) is not None else _NO_BETS
                 for s in STREETS)
    donk_map = _check_keys(data.get("donk") or {}, STREETS[1:], "donk")
    donk = tuple(None if donk_map.get(s) is None else
                 parse_bet_sizes(_text(donk_map[s], f"donk.{s}"), False, f" in donk.{s}") for s in STREETS[1:])
    raise_cap = data.get("raise_cap")
    if isinstance(raise_cap, float) and raise_cap == int(raise_cap):
        raise_cap = int(raise_cap)
    board = data["board"]
    if not isinstance(board, (str, list)):
        raise ValueError(f"board must be text such as 'Td9d6h Qc' or a list of cards, got {board!r}")
    return Spot(board=board,  # type: ignore[arg-type]  # text or names: stored as card numbers
                pot=data["pot"], stack=data["stack"],
                ranges=(_text(ranges["oop"], "ranges.oop"), _text(ranges["ip"], "ranges.ip")),
                bets=bets,  # type: ignore[arg-type]  # three streets by construction
                donk=donk,  # type: ignore[arg-type]
                add_all_in_threshold=_number(data.get("add_all_in_threshold", 0.0), "add_all_in_threshold"),
                force_all_in_threshold=_number(data.get("force_all_in_threshold", 0.0), "force_all_in_threshold"),
                merging_threshold=_number(data.get("merging_threshold", 0.0), "merging_threshold"),
                raise_cap=raise_cap, ranks=data.get("ranks", 13), suits=data.get("suits", 4),
                description=_text(data.get("description", ""), "description"))


def load_spot(source: Union[str, Path, Mapping[str, Any]]) -> Spot:
    """A spot from a YAML file's path or from a mapping of the same keys (module docstring).
    ValueError, one line, naming the file and the problem."""
    where = "spot"
    if isinstance(source, Mapping):
        data: Any = source
    else:
        path = Path(source)
        where = f"spot file {str(path)!r}"
        if not path.is_file():
            raise ValueError(f"{where} not found")
        try:
            data = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
        except Exception as e:  # yaml's errors derive from neither ValueError nor OSError
            raise ValueError(f"{where}: not valid YAML: {' '.join(str(e).split())}") from None
    try:
        spot = _spot_from_mapping(data)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    log.debug("loaded %s", spot.describe())
    return spot
