"""Bet-size syntax and the amounts at a decision (rebel/games/holdem_bets.py), with
b-inary/postflop-solver's rules: rounding, the geometric size, the all-in added or forced,
merging, the min-raise, and this module's cap on bets and raises."""
from __future__ import annotations

import math
import re

import pytest

from rebel.games.holdem_bets import (
    BetSize,
    BetSizes,
    SizingRules,
    aggressive_amounts,
    format_bet_sizes,
    parse_bet_sizes,
    round_half_away,
)

EXAMPLE = SizingRules(1.5, 0.15, 0.1)  # postflop-solver's example thresholds
NONE = SizingRules()


def sizes(text: str, raises: bool = False) -> tuple[BetSize, ...]:
    return parse_bet_sizes(text, raises)


@pytest.mark.parametrize("text, kind, value, streets, max_pot, cap", [
    # The sizes postflop-solver's tests parse (src/bet_size.rs), but for its 0% and 0c.
    ("75%", "pot", 0.75, 0, math.inf, 0),
    ("112.5%", "pot", 1.125, 0, math.inf, 0),
    ("1.001x", "prev", 1.001, 0, math.inf, 0),
    ("3.5X", "prev", 3.5, 0, math.inf, 0),
    ("123C", "chips", 123, 0, math.inf, 0),
    ("1c1r", "chips", 1, 0, math.inf, 1),
    ("100C100R", "chips", 100, 0, math.inf, 100),
    ("e", "geometric", 0, 0, math.inf, 0),
    ("E", "geometric", 0, 0, math.inf, 0),
    ("2e", "geometric", 0, 2, math.inf, 0),
    ("E37.5%", "geometric", 0, 0, 0.375, 0),
    ("100e.5%", "geometric", 0, 100, 0.005, 0),
    ("a", "all-in", 0, 0, math.inf, 0),
    ("A", "all-in", 0, 0, math.inf, 0),
])
def test_parse_one_size(text, kind, value, streets, max_pot, cap):
    (size,) = sizes(text, raises=True)
    assert (size.kind, size.value, size.streets, size.max_pot, size.cap, size.text) == \
        (kind, value, streets, max_pot, cap, text)


def test_parse_lists():
    assert [s.text for s in sizes("60%, e, a")] == ["60%", "e", "a"]
    assert sizes("") == () and sizes("40%, 70%,") == sizes("40%,70%")
    assert format_bet_sizes(sizes(" 60% ,e,  a ")) == "60%, e, a"
    pair = BetSizes.from_text("60%, e, a", "2.5x")
    assert [s.kind for s in pair.bet] == ["pot", "geometric", "all-in"] and pair.raise_[0].value == 2.5


@pytest.mark.parametrize("text", [
    # postflop-solver's own list of sizes that do not parse
    "0", "1.23", "%", "+42%", "-30%", "x", "0x", "1x", "c", "12.3c", "10c10", "42cr", "c3r", "0c0r", "123c101r",
    "1c2r3", "12c3.4r", "0e", "2.7e", "101e", "3e7", "E%", "1e2e3", "bet", "1a", "a1",
    # and this module's: sizes that are not positive
    "0%", "0c", "0.0%", "e0%",
])
def test_bad_sizes(text):
    with pytest.raises(ValueError, match=re.escape(f"bet size {text!r}")) as info:
        parse_bet_sizes(text, raises=True)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("2.5x", "bet size '2.5x': an 'x' size (times the previous bet) is for raises only"),
    ("20c3r", "bet size '20c3r': a raise cap ('r') is for raises only"),
    ("0%", "bet size '0%' is not positive"),
    ("-5%", "bet size '-5%' does not parse: expected N%, Nx (raises), Nc, e, Ne or a"),
    ("50%,,a", "bet sizes '50%,,a' have an empty size (two commas in a row)"),
    (",", "bet sizes ',' have an empty size"),
])
def test_bad_bet_sizes_messages(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_bet_sizes(text)
    with pytest.raises(ValueError, match=re.escape("in bets.turn.oop.bet")):
        BetSizes.from_text(text, "", where="bets.turn.oop")


def test_bad_raise_sizes_messages():
    with pytest.raises(ValueError, match=re.escape("bet size '1x': the multiplier must be greater than 1")):
        parse_bet_sizes("1x", raises=True)
    with pytest.raises(ValueError, match=re.escape("the raise cap must be a whole number 1..100")):
        parse_bet_sizes("20c0r", raises=True)


def test_round_half_away():
    assert [round_half_away(x) for x in (0.5, 1.5, 2.5, 2.4999, -0.5, -2.5, 37.5, 0.0)] == [1, 2, 3, 2, -1, -3, 38, 0]


def amounts(text, rules=NONE, raises=False, **state):
    return aggressive_amounts(parse_bet_sizes(text, raises), rules, **state)


def test_the_example_turn_root():
    """Pot 200, stack 900 on the turn: 60% = 120; e over 2 streets: ((2*4.5+1)^(1/2)-1)/2 of the pot =
    1.0811 x 200 = 216.2 -> 216; a = 900. Not added: 900 > 1.5 x 200. Not forced: 216 called leaves
    684 behind, above 0.15 x 632 = 95. Not merged: 0.6 < (1.081 - 0.1) / 1.1."""
    state = dict(pot=200, current_bet=0, to_call=0, stack=900, bets_made=0)
    assert amounts("60%, e, a", EXAMPLE, streets_left=2, **state) == [(120, False), (216, False), (900, True)]
    # On the river, e (one street left) is the all-in.
    assert amounts("60%, e, a", EXAMPLE, streets_left=1, **state) == [(120, False), (900, True)]
    assert amounts("2e", EXAMPLE, streets_left=1, **state) == [(216, False)]
    assert amounts("e50%", EXAMPLE, streets_left=2, **state) == [(100, False)]


def test_raises_in_the_example():
    # IP faces 120 on the river (pot 200, stack 900): the pot once called is 440; 2.5 x 120 = 300.
    # The all-in (780 more than 120) is not added: 1.5 x 440 = 660.
    assert amounts("2.5x", EXAMPLE, True, pot=440, current_bet=120, to_call=120, stack=780, bets_made=1,
                   streets_left=1) == [(300, False)]
    # OOP faces the raise to 300: 2.5 x 300 = 750 is forced all-in (called, 150 would be left
    # behind, under 0.15 x 1,700 = 255), and the all-in is added (600 more <= 1.5 x 800).
    assert amounts("2.5x", EXAMPLE, True, pot=800, current_bet=300, to_call=180, stack=600, bets_made=2,
                   streets_left=1) == [(900, True)]


def test_a_raise_below_the_min_raise_becomes_the_min_raise():
    # Facing a bet of 10 into 100: 1.5x is 15, but a raise must add at least 10: to 20.
    assert amounts("1.5x", NONE, True, pot=120, current_bet=10, to_call=10, stack=990, bets_made=1,
                   streets_left=1) == [(20, False)]
    # Facing a raise from 10 to 40: the next raise adds at least 30, to 70 (3c would be 43).
    assert amounts("3c", NONE, True, pot=180, current_bet=40, to_call=30, stack=960, bets_made=2,
                   streets_left=1) == [(70, False)]


def test_pot_sized_raises_and_chips():
    state = dict(pot=400, current_bet=100, to_call=100, stack=800, bets_made=1, streets_left=2)
    assert amounts("100%, 50%", NONE, True, **state) == [(300, False), (500, False)]
    assert amounts("100c", NONE, True, **state) == [(200, False)]
    assert amounts("100c1r", NONE, True, **state) == [(200, False)]
    assert amounts("100c1r", NONE, True, **{**state, "bets_made": 2}) == []
    assert amounts("250c", NONE, False, pot=200, current_bet=0, to_call=0, stack=900, bets_made=0,
                   streets_left=2) == [(250, False)]


def test_geometric_raises_count_the_bets_made():
    """Facing a bet of 100 on the turn (pot 400 once called, 800 behind): the first raise's e spans
    2 - 1 + 1 = 2 streets, ((2*2+1)^(1/2)-1)/2 = 0.618 of 400 = 247.2 -> raise to 347; facing a
    raise (2 made) it spans 1 street: the whole stack."""
    state = dict(pot=400, current_bet=100, to_call=100, stack=800, streets_left=2)
    assert amounts("e", NONE, True, bets_made=1, **state) == [(347, False)]
    assert amounts("e", NONE, True, bets_made=2, **state) == [(900, True)]


def test_all_in_added():
    state = dict(pot=100, current_bet=0, to_call=0, stack=100, bets_made=0, streets_left=1)
    assert amounts("50%", SizingRules(add_all_in_threshold=1.0), **state) == [(50, False), (100, True)]
    assert amounts("50%", SizingRules(add_all_in_threshold=0.99), **state) == [(50, False)]
    # 0.5 x 101 = 50.5 rounds away from zero to 51 (Python's round would give 50).
    assert amounts("", SizingRules(add_all_in_threshold=0.5), pot=101, current_bet=0, to_call=0, stack=51,
                   bets_made=0, streets_left=1) == [(51, True)]


def test_all_in_forced():
    state = dict(pot=100, current_bet=0, to_call=0, stack=100, bets_made=0, streets_left=1)
    # 75 called: 25 behind, pot 250; 0.1 x 250 = 25 -> forced; 0.09 x 250 = 22.5 -> 23: not.
    assert amounts("75%", SizingRules(force_all_in_threshold=0.1), **state) == [(100, True)]
    assert amounts("75%", SizingRules(force_all_in_threshold=0.09), **state) == [(75, False)]
    # a size at or above the stack is the all-in, once
    assert amounts("100%, 150%, a", NONE, **state) == [(100, True)]


def test_merging():
    """From the top: 100 (X = 1) is kept; 55 (Y = 0.55) stays, as 0.55 < (1 - 0.1) / 1.1 = 0.818;
    50 goes, as 0.5 >= (0.55 - 0.1) / 1.1 = 0.409."""
    state = dict(pot=100, current_bet=0, to_call=0, stack=1000, bets_made=0, streets_left=1)
    assert amounts("50%, 55%, 100%", SizingRules(merging_threshold=0.1), **state) == [(55, False), (100, False)]
    assert amounts("50%, 55%, 100%", NONE, **state) == [(50, False), (55, False), (100, False)]
    assert amounts("50%, 50%, 50c", NONE, **state) == [(50, False)]


def test_raise_cap():
    state = dict(pot=300, current_bet=100, to_call=100, stack=900, streets_left=1)
    assert amounts("100%, a", SizingRules(raise_cap=2), True, bets_made=1, **state) == [(400, False), (1000, True)]
    assert amounts("100%, a", SizingRules(raise_cap=2), True, bets_made=2, **state) == []
    assert amounts("a", SizingRules(add_all_in_threshold=10.0, raise_cap=1), True, bets_made=1, **state) == []


@pytest.mark.parametrize("kwargs, message", [
    ({"add_all_in_threshold": -1.0}, "add_all_in_threshold must be a number >= 0, got -1.0"),
    ({"merging_threshold": math.nan}, "merging_threshold must be a number >= 0, got nan"),
    ({"raise_cap": 0}, "raise_cap must be a whole number >= 1"),
    ({"raise_cap": 2.5}, "raise_cap must be a whole number >= 1"),
])
def test_bad_rules(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        SizingRules(**kwargs)
