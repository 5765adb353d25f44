"""Hold'em endgame spots (rebel/games/holdem_spot.py): the shipped spot files, hands and weights,
short decks, and a one-line error naming the problem for every kind of bad input."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rebel.games.holdem_bets import BetSizes
from rebel.games.holdem_ranges import card_name, parse_cards
from rebel.games.holdem_spot import Spot, load_spot

SPOTS = Path(__file__).resolve().parents[2] / "rebel" / "configs" / "spots"
OOP = "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s"
IP = "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+"


def base(**changes) -> dict:
    data = {"board": "Td9d6h Qc", "pot": 200, "stack": 900, "ranges": {"oop": "full", "ip": "full"},
            "bets": {"turn": {"bet": "60%, e, a", "raise": "2.5x"}, "river": {"bet": "60%, e, a", "raise": "2.5x"}}}
    data.update(changes)
    return data


def test_the_turn_example():
    spot = load_spot(SPOTS / "turn_example.yaml")
    assert spot.board == tuple(parse_cards("Td9d6h Qc")) and spot.street == 1
    assert (spot.pot, spot.stack) == (200, 900)
    assert spot.ranges == (OOP, IP)
    assert (spot.add_all_in_threshold, spot.force_all_in_threshold, spot.merging_threshold) == (1.5, 0.15, 0.1)
    assert spot.raise_cap is None and (spot.ranks, spot.suits) == (13, 4)
    assert spot.bets[0] == (BetSizes(), BetSizes())
    assert spot.bets[1][0] == spot.bets[1][1] == spot.bets[2][0] == BetSizes.from_text("60%, e, a", "2.5x")
    assert spot.donk[0] is None and [s.text for s in spot.donk[1] or ()] == ["50%"]
    cards, weights = spot.hands(0)
    assert cards.shape == (167, 2) and cards.dtype == np.int32 and weights.tolist() == [1.0] * 167
    assert len(spot.hands(1)[1]) == 250  # the counts, and postflop-solver's for its example
    # postflop-solver's example lists OOP's first ten hands in the same order (high card first there)
    names = [card_name(b) + card_name(a) for a, b in cards[:10]]
    assert names == ["5c4c", "Ac4c", "5d4d", "Ad4d", "5h4h", "Ah4h", "5s4s", "As4s", "6c5c", "7c5c"]
    board = set(spot.board)
    assert not any(c in board for c in cards.ravel())
    assert spot.describe() == "turn spot Td 9d 6h Qc: pot 200, stack 900, 167 vs 250 hands"


@pytest.mark.parametrize("name, street, pot, stack, hands, raise_cap", [
    ("turn_example_full", 1, 200, 900, 1128, None),
    ("river_example", 2, 200, 900, 1081, None),
    ("teh", 1, 2000, 20000, 1128, 3),
])
def test_shipped_spots(name, street, pot, stack, hands, raise_cap):
    spot = load_spot(SPOTS / f"{name}.yaml")
    assert (spot.street, spot.pot, spot.stack, spot.raise_cap) == (street, pot, stack, raise_cap)
    assert [len(spot.hands(p)[1]) for p in (0, 1)] == [hands, hands]
    assert spot.weights(0).shape == (1326,) and spot.weights(0).sum() == hands


def test_teh():
    spot = load_spot(SPOTS / "teh.yaml")
    assert spot.board == tuple(parse_cards("Td9d6h 2c"))
    sizes = BetSizes.from_text("50%, 100%, a", "50%, 100%, a")
    assert spot.bets[1] == (sizes, sizes) and spot.bets[2] == (sizes, sizes)
    assert (spot.add_all_in_threshold, spot.force_all_in_threshold, spot.merging_threshold) == (0, 0, 0)


def test_spot_from_a_mapping_and_per_player_sizes():
    spot = load_spot(base(board=["Td", "9d", "6h", "Qc"], ranges={"oop": "AA,AsKh:0.5", "ip": "QQ+"},
                          bets={"turn": {"oop": {"bet": "50%"}, "ip": {"bet": "75%", "raise": "3x"}}},
                          donk={"river": "33%"}, raise_cap=2, description="a test"))
    assert spot.bets[1] == (BetSizes.from_text("50%"), BetSizes.from_text("75%", "3x"))
    assert spot.bets[2] == (BetSizes(), BetSizes())
    cards, weights = spot.hands(0)
    assert len(cards) == 7 and sorted(weights.tolist()) == [0.5] + [1.0] * 6
    assert len(spot.hands(1)[1]) == 3 + 6 + 6  # QQ without Qc, KK, AA
    assert spot.raise_cap == 2 and spot.description == "a test"
    # A Spot also takes its board as text directly.
    direct = Spot(board="Td9d6hQc", pot=200, stack=900, ranges=("full", "full"))  # type: ignore[arg-type]
    assert direct.board == spot.board and direct.bets[1] == (BetSizes(), BetSizes())


def test_short_deck():
    spot = load_spot(base(board="2c3d4h", ranks=6, suits=4, bets={}))
    assert [len(spot.hands(p)[1]) for p in (0, 1)] == [210, 210]  # C(24 - 3, 2)
    assert set(spot.hands(0)[0].ravel().tolist()) <= set(range(24))
    spot = load_spot(base(board="2c3d4c", ranks=13, suits=2, bets={}))
    assert len(spot.hands(0)[1]) == 253  # C(26 - 3, 2)


@pytest.mark.parametrize("changes, message", [
    ({"board": "Td9x6h"}, "malformed card '9x'"),
    ({"board": "TdTd6h"}, "card Td given twice"),
    ({"board": "Td9d"}, "the board has 2 cards (Td 9d); a spot starts on the flop (3), turn (4) or river (5)"),
    ({"board": "Td9d6hQc2s3s"}, "the board has 6 cards"),
    ({"board": 5}, "board must be text such as 'Td9d6h Qc' or a list of cards, got 5"),
    ({"board": "2c3d4h As", "ranks": 6}, "board card As is not in the deck of 6 ranks and 4 suits"),
    ({"board": "2c3d4c", "ranks": 3, "suits": 2}, "the deck of 3 ranks and 2 suits is too small"),
    ({"ranks": 14}, "a deck has 1..13 ranks and 1..4 suits, got ranks=14, suits=4"),
    ({"ranges": {"oop": "AKQ", "ip": "full"}}, "ranges.oop: range group 'AKQ' does not parse"),
    ({"ranges": {"oop": "full", "ip": "AA:-0.5"}}, "ranges.ip: range group 'AA:-0.5': weight -0.5 is outside [0, 1]"),
    ({"board": "QcQdQh 2c", "ranges": {"oop": "full", "ip": "QQ"}},
     "ranges.ip: range 'QQ' is empty after removing the hands that hold a board card (Qc Qd Qh 2c)"),
    ({"ranges": {"oop": "QcQh", "ip": "full"}}, "ranges.oop: range group 'QcQh' holds a board card"),
    ({"board": "2c3d4h", "ranks": 6, "ranges": {"oop": "AA", "ip": "full"}},
     "ranges.oop: range group 'AA' names a card outside the deck of ranks 2..7 and suits cdhs"),
    ({"ranges": {"oop": "full"}}, "missing key 'ranges.ip'"),
    ({"bets": {"turn": {"bet": "60"}}}, "bet size '60' in bets.turn.bet does not parse"),
    ({"bets": {"turn": {"bet": "0%"}}}, "bet size '0%' in bets.turn.bet is not positive"),
    ({"bets": {"river": {"ip": {"raise": "-1x"}}}}, "bet size '-1x' in bets.river.ip.raise does not parse"),
    ({"bets": {"turn": {"bet": "2x"}}}, "bet size '2x' in bets.turn.bet: an 'x' size"),
    ({"bets": {"flop": {"bet": "50%"}}}, "bets.flop: the spot starts on the turn"),
    ({"bets": {"turn": {"bet": "50%", "oop": {"bet": "50%"}}}},
     "bets.turn: give 'bet' and 'raise' for both players, or 'oop' and 'ip', not both"),
    ({"donk": {"turn": "50%"}}, "donk.turn: donk bets follow a deal, and the spot starts on the turn"),
    ({"donk": {"river": "2x"}}, "bet size '2x' in donk.river: an 'x' size"),
    ({"stack": 0}, "stack must be positive, got 0"),
    ({"pot": -10}, "pot must be positive, got -10"),
    ({"pot": 100.5}, "pot must be a whole number of chips, got 100.5"),
    ({"stack": "lots"}, "stack must be a whole number of chips, got 'lots'"),
    ({"add_all_in_threshold": -1}, "add_all_in_threshold must be a number >= 0, got -1.0"),
    ({"merging_threshold": "x"}, "merging_threshold must be a number, got 'x'"),
    ({"raise_cap": 0}, "raise_cap must be a whole number >= 1 (bets and raises per street) or null, got 0"),
    ({"stak": 900}, "unknown key 'stak'; did you mean 'stack'?"),
    ({"zzz": 1}, "unknown key 'zzz'; the keys are board, pot, stack, ranges, bets"),
    ({"ranges": {"opp": "full", "ip": "full"}}, "unknown key 'ranges.opp'; did you mean 'ranges.oop'?"),
    ({"bets": {"trun": {"bet": "50%"}}}, "unknown key 'bets.trun'; did you mean 'bets.turn'?"),
    ({"bets": {"turn": {"oop": {"raises": "3x"}}}},
     "unknown key 'bets.turn.oop.raises'; did you mean 'bets.turn.oop.raise'?"),
    ({"donk": {"flop": "50%"}}, "unknown key 'donk.flop'"),
])
def test_bad_spots(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        load_spot(base(**changes))
    assert str(info.value).startswith("spot: ") and "\n" not in str(info.value)


def test_missing_keys_and_bad_files(tmp_path):
    with pytest.raises(ValueError, match=re.escape("spot: missing key 'ranges' (a spot needs board, pot, stack, "
                                                   "ranges)")):
        load_spot({"board": "Td9d6h", "pot": 1, "stack": 1})
    with pytest.raises(ValueError, match=re.escape(f"spot file {str(tmp_path / 'no.yaml')!r} not found")):
        load_spot(tmp_path / "no.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("board: [Td, 9d\npot: 1\n")
    with pytest.raises(ValueError, match="spot file .*bad.yaml': not valid YAML") as info:
        load_spot(bad)
    assert "\n" not in str(info.value)
    listed = tmp_path / "list.yaml"
    listed.write_text("- board\n- pot\n")
    with pytest.raises(ValueError, match="a spot must be a mapping of board, pot"):
        load_spot(str(listed))
    typo = tmp_path / "typo.yaml"
    typo.write_text((SPOTS / "turn_example.yaml").read_text().replace("merging_threshold", "merge_threshold"))
    with pytest.raises(ValueError, match=re.escape("typo.yaml': unknown key 'merge_threshold'; did you mean "
                                                   "'merging_threshold'?")):
        load_spot(typo)
