"""Hold'em cards and hand ranks (csrc/games/holdem_cards.{h,cc}, csrc/games/hand_rank.{h,cc}):
exact class counts over every 5-, 6- and 7-card hand, the 7,462 distinct five-card ranks, the
rules on hands players argue about, and agreement with eval7 (a maintained evaluator from PyPI)
on a million random seven-card hands."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from rebel import _core

CLASSES = ["high card", "one pair", "two pair", "three of a kind", "straight", "flush", "full house",
           "four of a kind", "straight flush"]

# Over all C(52, n) hands, best five cards: the five- and seven-card counts as published (e.g.
# Wikipedia's "Poker probability"); the six-card counts from the same page, and eval7 gives the
# same nine numbers over all 20,358,520 six-card hands (checked once, 24 s in Python).
CLASS_COUNTS = {
    5: [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40],
    6: [6_612_900, 9_730_740, 2_532_816, 732_160, 361_620, 205_792, 165_984, 14_664, 1_844],
    7: [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644, 3_473_184, 224_848, 41_584],
}
TOTALS = {5: 2_598_960, 6: 20_358_520, 7: 133_784_560}


def random_hands(n: int, k: int, seed: int) -> np.ndarray:
    """n hands of k distinct cards, uniformly: the first k of a random order of the deck."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, k), dtype=np.uint8)
    for start in range(0, n, 100_000):
        rows = min(100_000, n - start)
        out[start:start + rows] = np.argsort(rng.random((rows, 52)), axis=1)[:, :k]
    return out


def rank(cards: str) -> int:
    return _core.hand_rank(cards)


# -------------------------------------------------------------------------- cards


def test_card_numbers_are_rank_times_four_plus_suit():
    assert [_core.card_name(c) for c in (0, 1, 2, 3, 4, 48, 51)] == ["2c", "2d", "2h", "2s", "3c", "Ac", "As"]
    names = [_core.card_name(c) for c in range(52)]
    assert names == [r + s for r in "23456789TJQKA" for s in "cdhs"]
    assert _core.parse_cards("".join(names)) == list(range(52))
    assert _core.parse_cards("AsKd") == [51, 45]
    assert _core.parse_cards("Td9d6h Qc") == [33, 29, 18, 40]
    assert _core.parse_cards("as, KD,tH") == [51, 45, 34]
    assert _core.parse_cards("") == []


@pytest.mark.parametrize("text, message", [
    ("A", "'A' is not a card"),
    ("Ax", "'x' is not a suit"),
    ("1s", "'1' is not a rank"),
    ("10s", "'1' is not a rank"),
    ("AsK", "'K' is not a card"),
    ("As Kd As", "As appears twice"),
    ("AsKd-Qh", "'-' is not a rank"),
])
def test_malformed_or_repeated_cards_are_value_errors(text, message):
    with pytest.raises(ValueError, match=message):
        _core.parse_cards(text)


@pytest.mark.parametrize("card", [-1, 52, 1000, 10**30, np.int64(-5)])
def test_card_numbers_outside_the_deck_are_value_errors(card):
    if abs(int(card)) < 2**31:
        with pytest.raises(ValueError, match="out of range"):
            _core.card_name(card)
    with pytest.raises(ValueError, match="out of range"):
        _core.hand_rank([card, 1, 2, 3, 4])


def test_hand_rank_checks_its_cards():
    assert rank("AsKsQsJsTs") == _core.hand_rank([51, 47, 43, 39, 35]) == _core.hand_rank(["As", "Ks", "Qs", 39, 35])
    assert _core.hand_rank(np.array([51, 47, 43, 39, 35], dtype=np.int16)) == 7462
    with pytest.raises(ValueError, match="5, 6 or 7 cards, not 4"):
        rank("AsKsQsJs")
    with pytest.raises(ValueError, match="5, 6 or 7 cards, not 8"):
        rank("AsKsQsJsTs9s8s7s")
    with pytest.raises(ValueError, match="appears twice"):
        _core.hand_rank([51, 47, 43, 39, 51])
    with pytest.raises(ValueError, match="appears twice"):
        _core.hand_rank(["As", "Ks", "Qs", "Js", 51])
    with pytest.raises(TypeError):
        _core.hand_rank([51, 47, 43, 39, 35.0])
    with pytest.raises(TypeError):
        _core.hand_rank([51, 47, 43, 39, True])
    with pytest.raises(TypeError):
        _core.hand_rank(12345)
    with pytest.raises(ValueError, match="out of range"):
        _core.hand_rank_class(0)


# -------------------------------------------------------------------------- exhaustive counts


@pytest.mark.parametrize("num_cards", [5, 6, 7])
def test_class_counts_over_every_hand(num_cards):
    counts = _core.hand_class_counts(num_cards)
    assert list(counts) == CLASSES == _core.hand_classes()
    assert list(counts.values()) == CLASS_COUNTS[num_cards]
    assert sum(counts.values()) == TOTALS[num_cards]


def test_7462_distinct_five_card_ranks_in_class_order():
    counts = _core.hand_rank_counts(5)
    assert counts.shape == (7463,) and counts[0] == 0
    assert np.count_nonzero(counts) == 7462  # every strength 1..7462 occurs
    first = _core.hand_class_first_ranks()
    assert first == [1, 1278, 4138, 4996, 5854, 5864, 7141, 7297, 7453, 7463]
    # The distinct hands of each class: high card and flush 1,277, one pair 2,860, two pair and
    # three of a kind 858, straight and straight flush 10, full house and four of a kind 156.
    assert np.diff(first).tolist() == [1277, 2860, 858, 858, 10, 1277, 156, 156, 10]
    for c, name in enumerate(CLASSES):
        assert counts[first[c]:first[c + 1]].sum() == CLASS_COUNTS[5][c]
        assert _core.hand_rank_class(first[c]) == _core.hand_rank_class(first[c + 1] - 1) == name
    # Each five-card strength is one pattern of ranks in 4 (flushes), 4^5 - 4 (high cards and
    # straights) or the suit choices of its pairs, trips and quads: e.g. 7-5-4-3-2 offsuit 1,020.
    assert counts[1] == 4**5 - 4 and counts[7462] == 4


def test_seven_card_counts_per_rank_sum_to_the_deals():
    counts = _core.hand_rank_counts(7)
    assert counts.sum() == TOTALS[7]
    # Seven cards reach 4,824 of the 7,462 strengths: with seven distinct ranks and no straight
    # the best five are at least 9-8-7-5-4, so most weak high cards never play.
    assert np.count_nonzero(counts) == 4824
    assert np.flatnonzero(counts)[0] == rank("9s8d7c5h4s3d2c")


# -------------------------------------------------------------------------- rules


def test_hands_players_argue_about():
    assert rank("AsKsQsJsTs") == 7462  # royal flush, the best hand
    assert _core.hand_class("AsKsQsJsTs") == "straight flush"
    assert rank("AsKsQsJsTs") > rank("AsAhAdAcKs") > rank("KsKhKdKcAs")  # royal > four aces > four kings
    # The wheel A-2-3-4-5 is the lowest straight (and straight flush): the ace plays low.
    assert rank("5d4c3h2sAs") == _core.hand_class_first_ranks()[4]
    assert rank("6d5d4c3h2s") > rank("5d4c3h2sAs")
    assert rank("5s4s3s2sAs") == _core.hand_class_first_ranks()[8]
    assert _core.hand_class("Ks Qd Jc Ah 2s") == "high card"  # no wrap-around straight
    # Two pair: the higher pair, then the lower pair, then the kicker decide.
    assert rank("AsAdKsKdQc") > rank("AsAdKsKdJc")
    assert rank("AsAd3s3d2c") > rank("KsKdQsQdJc")
    assert rank("AsAd4s4d2c") > rank("AsAd3s3dKc")
    # With three pairs only the best two play, and the third pair's rank can be the kicker.
    assert rank("AsAdKsKdQsQd2c") == rank("AhAcKhKcQh3d2d")
    assert rank("AsAdKsKd5s5d2c") == rank("AhAcKhKc5c3d2d")
    assert rank("AsAdKsKd5s5d6c") == rank("AhAcKhKc6h3d2d")
    # Full houses: the trips first; two trips make a full house with the lower as the pair.
    assert rank("3s3d3cKsKd") > rank("2s2d2cAsAd")
    assert rank("AsAdAcKsKdKc2c") == rank("AhAdAcKsKh5c2d")
    assert _core.hand_class("AsAdAcKsKdKc2c") == "full house"
    # Four of a kind takes the best kicker of the other three cards.
    assert rank("9s9d9c9hKsKdKc") == rank("9s9d9c9hKs2d3c")
    # A flush beats a straight; flushes compare card by card.
    assert rank("As9s7s5s3s") > rank("AdKcQhJsTs")
    assert rank("As9s7s5s3s") > rank("As9s7s5s2s") > rank("Ks Qs Js 9s 8s")
    # Ties: a board that plays for both, and suits never break ties.
    assert rank("AsKdQhJcTs 2c 3d") == rank("AsKdQhJcTs 4h 5h")
    assert rank("AhKhQhJh9h") == rank("AsKsQsJs9s")
    # The best five of six and seven cards: the flush is found among other suits.
    assert _core.hand_class("2h3h4h5h9hAsAd") == "flush"
    assert _core.hand_class("2h3h4h5h6hAsAd") == "straight flush"
    assert _core.hand_class("7h8h9hTh5c6s2d") == "straight"


def test_seven_and_six_cards_are_the_best_of_their_fives():
    for k in (6, 7):
        hands = random_hands(30_000, k, seed=k)
        best = np.zeros(len(hands), dtype=np.int32)
        for five in itertools.combinations(range(k), 5):
            best = np.maximum(best, _core.hand_ranks(np.ascontiguousarray(hands[:, five])))
        np.testing.assert_array_equal(_core.hand_ranks(hands), best)


# -------------------------------------------------------------------------- the array call


def test_hand_ranks_is_hand_rank_row_by_row_for_every_integer_type():
    hands = random_hands(2_000, 7, seed=1)
    expected = np.array([_core.hand_rank(row.tolist()) for row in hands], dtype=np.int32)
    for dtype in (np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        got = _core.hand_ranks(hands.astype(dtype))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(_core.hand_ranks(np.asfortranarray(hands)), expected)  # any layout
    np.testing.assert_array_equal(_core.hand_ranks(hands[::-1]), expected[::-1])
    np.testing.assert_array_equal(_core.hand_ranks(hands.tolist()), expected)
    assert _core.hand_ranks(np.zeros((0, 5), dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.int16])
def test_hand_ranks_names_the_first_bad_hand(dtype):
    hands = random_hands(100, 7, seed=2).astype(np.int64)
    bad = hands.copy()
    bad[37, 3] = bad[37, 5]
    bad[60, 0] = 52
    with pytest.raises(ValueError, match=r"hand 37: card \w\w \(\d+\) appears twice"):
        _core.hand_ranks(bad.astype(dtype))
    bad = hands.copy()
    bad[12, 6] = 52 if dtype == np.uint8 else -1
    with pytest.raises(ValueError, match=r"hand 12: card (52|-1) is out of range"):
        _core.hand_ranks(bad.astype(dtype))
    if np.iinfo(dtype).max > 300:
        bad = hands.copy()
        bad[5, 0] = 256 + int(hands[5, 0])  # its low byte is a valid card
        with pytest.raises(ValueError, match="hand 5: card 2.. is out of range"):
            _core.hand_ranks(bad.astype(dtype))


def test_hand_ranks_refuses_other_types_and_shapes():
    with pytest.raises(TypeError, match="integer dtype"):
        _core.hand_ranks(np.zeros((3, 7), dtype=np.float64))
    with pytest.raises(TypeError, match="integer dtype"):
        _core.hand_ranks(np.zeros((3, 7), dtype=bool))
    with pytest.raises(ValueError, match=r"shape \(3, 4\)"):
        _core.hand_ranks(np.zeros((3, 4), dtype=np.int64))
    with pytest.raises(ValueError, match=r"shape \(7,\)"):
        _core.hand_ranks(np.arange(7))
    with pytest.raises(TypeError):
        _core.hand_ranks("AsKsQsJsTs")
    with pytest.raises(ValueError, match="5, 6 or 7 cards"):
        _core.hand_class_counts(4)


# -------------------------------------------------------------------------- against eval7


def same_order(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Both evaluators order every pair of hands alike: sorted by ours (ties by theirs), theirs
    never decreases, and it rises exactly where ours rises."""
    order = np.lexsort((theirs, ours))
    a, b = np.diff(ours[order].astype(np.int64)), np.diff(theirs[order].astype(np.int64))
    assert (b >= 0).all(), "a hand ours ranks higher eval7 ranks lower"
    np.testing.assert_array_equal(a > 0, b > 0)


EVAL7_CLASSES = {"High Card": "high card", "Pair": "one pair", "Two Pair": "two pair", "Trips": "three of a kind",
                 "Straight": "straight", "Flush": "flush", "Full House": "full house", "Quads": "four of a kind",
                 "Straight Flush": "straight flush"}


@pytest.mark.parametrize("k, n", [(7, 1_000_000), (6, 200_000), (5, 200_000)])
def test_agrees_with_eval7_on_random_hands(k, n):
    eval7 = pytest.importorskip("eval7", reason="eval7 (a test dependency: scripts/install.sh) is not installed")
    deck = [eval7.Card(_core.card_name(c)) for c in range(52)]
    hands = random_hands(n, k, seed=100 + k)
    ours = _core.hand_ranks(hands)
    evaluate = eval7.evaluate
    theirs = np.fromiter((evaluate([deck[c] for c in row]) for row in hands.tolist()), dtype=np.int64, count=n)
    same_order(ours, theirs)
    # The classes agree too (checked once per distinct strength).
    _, first = np.unique(ours, return_index=True)
    for i in first:
        assert _core.hand_rank_class(int(ours[i])) == EVAL7_CLASSES[eval7.handtype(int(theirs[i]))]
