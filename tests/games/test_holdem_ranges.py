"""Hold'em hands and range text (rebel/games/holdem_ranges.py): card numbers as the core's, the
1,326 hands, PioSOLVER's range syntax with postflop-solver's semantics, board removal, short
decks, every error, the compact writer's round trips and the 13 x 13 grid."""
from __future__ import annotations

import re

import numpy as np
import pytest

from rebel import _core
from rebel.games.holdem_ranges import (
    COMBOS,
    GRID_LABELS,
    card_name,
    combo_index,
    combo_name,
    grid_cell,
    grid_label,
    parse_card,
    parse_cards,
    parse_range,
    range_to_string,
)

TURN = parse_cards("Td9d6h Qc")
#: postflop-solver's example ranges (examples/basic.rs).
OOP = "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s"
IP = "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+"


def count(text: str, board=(), **deck) -> int:
    return int((parse_range(text, board, **deck) > 0).sum())


def same(a: str, b: str) -> bool:
    return bool(np.array_equal(parse_range(a), parse_range(b)))


def test_cards_are_numbered_as_the_core():
    assert [card_name(c) for c in range(52)] == [_core.card_name(c) for c in range(52)]
    for text in ("Td9d6h Qc", "AsKd", "2c, 3d,4h", "as KD"):
        assert parse_cards(text) == list(_core.parse_cards(text))
    assert parse_card("As") == 51 and parse_card("2c") == 0 and parse_card("td") == 33
    assert parse_cards(["As", 0, "Kd"]) == [51, 0, 45]


@pytest.mark.parametrize("text, fragment", [
    ("AsAs", "card As given twice"),
    ("Xs", "malformed card 'Xs'"),
    ("Asx", "malformed cards 'Asx'"),
    ("1c", "malformed card '1c'"),
])
def test_bad_cards(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_cards(text)
    with pytest.raises(ValueError):
        _core.parse_cards(text)  # the core refuses them too


def test_combos_are_the_1326_hands_in_lexicographic_order():
    assert COMBOS.shape == (1326, 2)
    assert COMBOS[0].tolist() == [0, 1] and COMBOS[1].tolist() == [0, 2] and COMBOS[-1].tolist() == [50, 51]
    assert (COMBOS[:, 0] < COMBOS[:, 1]).all()
    keys = COMBOS[:, 0] * 52 + COMBOS[:, 1]
    assert (np.diff(keys) > 0).all()
    assert combo_index(51, 50) == combo_index(50, 51) == 1325
    assert combo_index(0, 1) == 0
    assert all(combo_index(int(a), int(b)) == i for i, (a, b) in enumerate(COMBOS))
    assert combo_name(combo_index(44, 51)) == "AsKc"
    with pytest.raises(ValueError, match="two different cards"):
        combo_index(3, 3)


@pytest.mark.parametrize("text, n", [
    ("AA", 6), ("AKs", 4), ("AKo", 12), ("AK", 16), ("AsKh", 1), ("full", 1326), ("22+", 78),
    ("TT+", 30), ("QQ-88", 30), ("ATs+", 16), ("ATo+", 48), ("A9+", 80), ("T9s+", 20), ("A9s-A6s", 16),
    ("A5o-A2o", 48), ("KQo-JTo", 36), ("8s8h+", 7), ("AK+", 16), ("ak", 16), ("AA,AKs,AKo", 22),
])
def test_combo_counts(text, n):
    assert count(text) == n


def test_board_removal():
    assert count("full", parse_cards("Td9d6h")) == 1176  # C(49, 2)
    assert count("full", TURN) == 1128  # C(48, 2)
    assert count("full", parse_cards("Td9d6h Qc 2s")) == 1081  # C(47, 2)
    assert count("QQ", TURN) == 3 and count("TT", TURN) == 3 and count("AA", TURN) == 6
    assert count("QcQh+", TURN) == 2  # QcQh, KcKh, AcAh: explicit hands of a run holding a board card drop
    assert count(OOP, TURN) == 167 and count(IP, TURN) == 250  # the counts postflop-solver's example gives
    # Without a board, group by group: 54+24+8+36+16+12+8+4+12+12+8+4+4 and
    # 66+44+48+32+24+16+12+12+12+8+8+8+8.
    assert count(OOP) == 202 and count(IP) == 298


def test_syntax_equivalences():
    """The equivalences postflop-solver's own tests state (src/range.rs)."""
    assert same("88+", "AA,KK,QQ,JJ,TT,99,88")
    assert same("8s8h+", "AhAs,KhKs,QhQs,JhJs,ThTs,9h9s,8h8s")
    assert same("98s+", "AKs,KQs,QJs,JTs,T9s,98s")
    assert same("A8o+", "AKo,AQo,AJo,ATo,A9o,A8o")
    assert same("88-55", "88,77,66,55")
    assert same("98s-65s", "98s,87s,76s,65s")
    assert same("AQo-86o", "AQo,KJo,QTo,J9o,T8o,97o,86o")
    assert same("K5-K2", "K5,K4,K3,K2")
    assert same("AhAs-QhQs,JJ", "JJ,AhAs,KhKs,QhQs")
    assert same("AK,", "AK")
    assert same(" AA : 0.5 , QQ - 88 : .25 ", "AA:0.5,QQ-88:0.25")


def test_weights():
    w = parse_range("AsKh:0.5,QQ-88:0.25,AA:1.")
    assert w[combo_index(parse_card("As"), parse_card("Kh"))] == 0.5
    assert w[combo_index(parse_card("Qs"), parse_card("Qd"))] == 0.25
    assert w[combo_index(parse_card("8c"), parse_card("8d"))] == 0.25
    assert w[combo_index(parse_card("Ac"), parse_card("Ad"))] == 1.0
    assert w.sum() == pytest.approx(0.5 + 30 * 0.25 + 6)
    assert w.dtype == np.float64 and w.shape == (1326,)


def test_the_first_group_naming_a_hand_sets_its_weight():
    """postflop-solver applies the groups last to first, so the first one wins."""
    aa = combo_index(48, 49)
    assert parse_range("AA:0.5,QQ+")[aa] == 0.5
    assert parse_range("QQ+,AA:0.5")[aa] == 1.0
    w = parse_range("AA:0,full")
    assert w[aa] == 0.0 and (w > 0).sum() == 1320


def test_short_deck():
    six = {"ranks": 6, "suits": 4}  # 2..7
    assert count("full", **six) == 276  # C(24, 2)
    assert count("22+", **six) == 36
    assert count("76s+", **six) == 4
    assert count("AKs", ranks=13, suits=2) == 2
    assert count("full", parse_cards("2c 3c 4c"), **six) == 210  # C(21, 2)
    with pytest.raises(ValueError, match="range group 'AA' names a card outside the deck of ranks 2..7"):
        parse_range("22,AA", **six)
    with pytest.raises(ValueError, match="names a card outside the deck"):
        parse_range("2c2s", ranks=13, suits=3)


@pytest.mark.parametrize("text, board, message", [
    ("AKQ", (), "range group 'AKQ' does not parse: 'AKQ' is not a hand such as AA, AKs, AKo, AK or AsKh"),
    ("AK,,KK", (), "range 'AK,,KK' has an empty group"),
    ("", (), "the range is empty"),
    ("AAo", (), "range group 'AAo': a pair is neither suited nor offsuit"),
    ("89", (), "range group '89': write the higher rank first"),
    ("KhAs", (), "range group 'KhAs': write the higher rank first"),
    ("AsAs", (), "range group 'AsAs': a hand of the same card twice"),
    ("AQo:1.1", (), "range group 'AQo:1.1': weight 1.1 is outside [0, 1]"),
    ("AA:-0.5", (), "range group 'AA:-0.5': weight -0.5 is outside [0, 1]"),
    ("AQo:x", (), "range group 'AQo:x': weight 'x' is not a number"),
    ("AQo:nan", (), "weight 'nan' is not a number"),
    ("AQo:0.5:1", (), "one ':' before the weight"),
    ("AQo-AQo", (), "range group 'AQo-AQo': write the higher end first"),
    ("K2-K5", (), "range group 'K2-K5': write the higher end first"),
    ("AQo-86s", (), "both ends must be of the same kind"),
    ("AhAs-QsQh", (), "both ends must be of the same kind"),
    ("AQo-KQo", (), "the ends must share their top rank"),
    ("AQ-KJ-QT", (), "one '-' between two hands"),
    ("AsKh", parse_cards("Kh 2c 3c"), "range group 'AsKh' holds a board card (Kh 2c 3c)"),
    ("QcQh", TURN, "range group 'QcQh' holds a board card (Td 9d 6h Qc)"),
    ("AA:0", (), "range 'AA:0' has no hand with a positive weight"),
    ("AA", parse_cards("Ac Ad Ah 2c"), "range 'AA' is empty after removing the hands that hold a board card"),
])
def test_bad_ranges(text, board, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        parse_range(text, board)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, expected", [
    # postflop-solver's writer gives the same texts (src/range.rs, range_to_string).
    ("AA,KK", "KK+"),
    ("KK,QQ", "KK-QQ"),
    ("66-22,TT+", "TT+,66-22"),
    ("AA:0.5, KK:1.0, QQ:1.0, JJ:0.5", "AA:0.5,KK-QQ,JJ:0.5"),
    ("AA,AK,AQ", "AA,AQ+"),
    ("AK,AQ,AJs", "AJs+,AQo+"),
    ("KQ,KT,K9,K8,K6,K5", "KQ,KT-K8,K6-K5"),
    ("AhAs-QhQs,JJ", "JJ,AsAh,KsKh,QsQh"),
    ("KJs+,KQo,KsJh", "KJs+,KQo,KsJh"),
    ("KcQh,KJ", "KJ,KcQh"),
    # this module's: the whole deck in one word
    ("full", "full"),
    ("full:0.3", "full:0.3"),
    ("A9s-A6s:0.25,A5o-A2o", "A9s-A6s:0.25,A5o-A2o"),
])
def test_range_to_string(text, expected):
    assert range_to_string(parse_range(text)) == expected


def test_range_to_string_ignores_the_board_cards():
    assert range_to_string(parse_range(OOP, TURN), TURN) == OOP
    assert range_to_string(parse_range(IP, TURN), TURN) == IP
    assert range_to_string(parse_range("full", TURN), TURN) == "full"
    # without the board, the pairs and hands the board broke are written hand by hand
    text = range_to_string(parse_range("QQ+", TURN))
    assert text == "KK+,QsQh,QsQd,QhQd"
    assert np.array_equal(parse_range(text), parse_range("QQ+", TURN))


def test_range_to_string_round_trips_random_ranges():
    rng = np.random.default_rng(7)
    for trial in range(150):
        w = np.where(rng.random(1326) < 0.3, rng.choice([0.1, 0.25, 0.5, 1.0], 1326), 0.0)
        if trial % 3 == 0:  # sparse ranges: mostly single hands
            w = np.zeros(1326)
            w[rng.choice(1326, 5)] = 0.5
        assert np.array_equal(parse_range(range_to_string(w)), w)
        board = [int(c) for c in rng.choice(52, 3 + trial % 3, replace=False)]
        wb = w * (parse_range("full", board) > 0)
        assert np.array_equal(parse_range(range_to_string(wb, board), board), wb)


def test_grid():
    assert GRID_LABELS[0][0] == "AA" and GRID_LABELS[12][12] == "22"
    assert GRID_LABELS[0][1] == "AKs" and GRID_LABELS[1][0] == "AKo"
    assert GRID_LABELS[0][12] == "A2s" and GRID_LABELS[12][0] == "A2o"
    assert GRID_LABELS[3][4] == "JTs" and GRID_LABELS[4][3] == "JTo"
    as_, ks, kh = parse_card("As"), parse_card("Ks"), parse_card("Kh")
    assert grid_label((as_, ks)) == "AKs" and grid_cell((ks, as_)) == (0, 1)
    assert grid_label(combo_index(as_, kh)) == "AKo" and grid_cell((as_, kh)) == (1, 0)
    assert grid_label((kh, ks)) == "KK"
    cells: dict[str, int] = {}
    for i in range(1326):
        label = grid_label(i)
        cells[label] = cells.get(label, 0) + 1
    assert len(cells) == 169
    assert {n for label, n in cells.items() if len(label) == 2} == {6}
    assert {n for label, n in cells.items() if label.endswith("s")} == {4}
    assert {n for label, n in cells.items() if label.endswith("o")} == {12}
    assert all(count(label) == n for label, n in cells.items())  # the labels parse as ranges of their hands
