"""Exact values of river public belief states (rebel/search/holdem_river_values.py): hands of
belief 0 in the core's hold'em games, per-hand values against brute force on a check-down,
their tie to the measured exploitability, and the river situations of a turn spot."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rebel
from rebel import _core
from rebel.games.holdem_bets import BetSizes
from rebel.games.holdem_endgame import build_endgame, live_hands
from rebel.games.holdem_ranges import COMBOS, NUM_COMBOS, combo_index, parse_cards
from rebel.games.holdem_spot import Spot, load_spot
from rebel.search.holdem_river_values import river_situations, river_spot, river_values

# The package's own copy: the sanitizer jobs run from a build folder without the configs/ link.
SPOTS = Path(rebel.__file__).resolve().parent / "configs" / "spots"
NO_BETS = (BetSizes(), BetSizes())


def random_river_beliefs(spot: Spot, seed: int, zero_share: float = 0.3) -> np.ndarray:
    """Beliefs on the spot's live hands, uniform random with a share of them set to 0."""
    rng = np.random.default_rng(seed)
    live = live_hands(spot)
    b = np.zeros((2, NUM_COMBOS))
    b[:, live] = rng.random((2, len(live))) * (rng.random((2, len(live))) >= zero_share)
    return b


def compatible(a: int, b: int) -> bool:
    return not set(COMBOS[a].tolist()) & set(COMBOS[b].tolist())


def test_hands_of_belief_zero_change_nothing_for_the_others() -> None:
    # The river example's ranges as positive weights, against the same ranges given as beliefs
    # over all 1,081 live hands with zeros on the rest: same solve, bit for bit in the values of
    # the hands both games hold.
    spot = load_spot(SPOTS / "river_example.yaml")
    spot = Spot(board=spot.board, pot=spot.pot, stack=spot.stack, ranges=("QQ+,AKs,T9s,65s", "JJ-88,AQs+,KQo"),
                bets=spot.bets, add_all_in_threshold=spot.add_all_in_threshold,
                force_all_in_threshold=spot.force_all_in_threshold, merging_threshold=spot.merging_threshold)
    narrow = build_endgame(spot)
    wide = build_endgame(spot, beliefs=np.stack([spot.weights(0), spot.weights(1)]))
    assert wide.num_hands(0) == wide.num_hands(1) == 1081 and narrow.num_hands(0) < 40
    assert wide.pair_mass == pytest.approx(narrow.pair_mass, rel=1e-15)
    solvers = [_core.HoldemSolver(g, "dcfr", 1, False) for g in (narrow, wide)]
    for s in solvers:
        s.iterate(30)
    assert solvers[1].exploitability() == pytest.approx(solvers[0].exploitability(), rel=1e-6)
    live = live_hands(spot)
    for player in (0, 1):
        kept = np.flatnonzero(spot.weights(player)[live] > 0)
        narrow_values = solvers[0].best_response_hand_values()[player]
        wide_values = solvers[1].best_response_hand_values()[player]
        np.testing.assert_allclose(wide_values[kept], narrow_values, rtol=1e-6, atol=1e-9)
        # A hand never reached still gets a best-response value, at least its uniform average's.
        dropped = np.flatnonzero(spot.weights(player)[live] == 0)
        average = solvers[1].average_hand_values()[player]
        assert (wide_values[dropped] >= average[dropped] - 1e-9).all()
        assert np.abs(wide_values[dropped]).max() > 0


def test_check_down_values_equal_brute_force_for_every_hand() -> None:
    board = parse_cards("Td9d6h Qc 2s")
    spot = Spot(board=tuple(board), pot=30, stack=50, ranges=("full", "full"), bets=(NO_BETS, NO_BETS, NO_BETS))
    beliefs = random_river_beliefs(spot, seed=4)
    solved = river_values(spot, beliefs)
    live = live_hands(spot)
    strength = {h: int(_core.hand_rank(list(COMBOS[h]) + board)) for h in live}
    normalised = beliefs / beliefs.sum(axis=1, keepdims=True)
    rng = np.random.default_rng(0)
    for player in (0, 1):
        for h in rng.choice(live, 60, replace=False):  # zero and positive beliefs alike
            want = sum(normalised[1 - player, o] * np.sign(strength[h] - strength[o]) * 0.5
                       for o in live if compatible(h, o))
            assert solved.values[player, h] == pytest.approx(want, abs=1e-12)
    blocked = np.setdiff1d(np.arange(NUM_COMBOS), live)
    assert (solved.values[:, blocked] == 0).all()
    assert solved.exploitability_pct == pytest.approx(0.0, abs=1e-12)


def test_values_are_tied_to_the_exploitability_and_do_not_depend_on_the_beliefs_scale() -> None:
    template = load_spot(SPOTS / "turn_two_tone.yaml")
    spot = river_spot(template, "As Ks 7h 3h 5c", 40, 90)
    beliefs = random_river_beliefs(spot, seed=7)
    solved = river_values(spot, beliefs, target_pct=0.5)
    assert 0 < solved.exploitability_pct <= 0.5 and solved.iterations % 10 == 0
    # Each player's belief-weighted values, over the pair mass, are its best-response values:
    # their mean is the exploitability.
    b = beliefs / beliefs.sum(axis=1, keepdims=True)
    live = live_hands(spot)
    pairs = np.array([[compatible(h, o) for o in live] for h in live], dtype=float)
    pair_mass = b[0, live] @ pairs @ b[1, live]
    br = [b[p] @ solved.values[p] / pair_mass for p in (0, 1)]
    assert (br[0] + br[1]) / 2 == pytest.approx(solved.exploitability_pct / 100, rel=1e-4)
    scaled = river_values(spot, beliefs * np.array([[3.0], [0.25]]), target_pct=0.5)
    np.testing.assert_allclose(scaled.values, solved.values, rtol=1e-5, atol=1e-7)
    average = river_values(spot, beliefs, target_pct=0.5, values="average")
    assert (solved.values >= average.values - 1e-7).all()  # a best response gains on every hand


def test_the_two_tone_turn_reaches_the_river_at_six_pots() -> None:
    # Pot 20, stacks 100, bets and raises of 50%, 100% and all-in, one raise: check-check (20),
    # bet 10 call (40), bet 20 call (60), bet 10 raise to 30 call (80), bet 10 raise to 50 or
    # bet 20 raise to 50 call (120), bet 20 raise to 80 call (180); all-ins leave no river.
    spot = load_spot(SPOTS / "turn_two_tone.yaml")
    assert river_situations(spot) == [(20, 100), (40, 90), (60, 80), (80, 70), (120, 50), (180, 20)]
    river = river_spot(spot, "As Ks 7h 3h 2d", 120, 50)
    assert (river.pot, river.stack, river.bets[2], river.raise_cap) == (120, 50, spot.bets[2], 2)


@pytest.mark.parametrize("beliefs,message", [
    (np.ones((2, 5)), "beliefs must have shape \\(2, 1326\\)"),
    ("negative", "beliefs of oop: hand .* has belief -1.0 \\(finite, not negative\\)"),
    ("board", "beliefs of ip: hand AsKs holds a board card or a card outside the deck but has belief 1"),
    ("empty", "beliefs of ip have no hand with a positive belief"),
])
def test_malformed_beliefs_are_one_line_errors(beliefs: object, message: str) -> None:
    spot = river_spot(load_spot(SPOTS / "turn_two_tone.yaml"), "As Ks 7h 3h 5c", 20, 100)
    if isinstance(beliefs, str):
        b = random_river_beliefs(spot, seed=1)
        if beliefs == "negative":
            b[0, live_hands(spot)[3]] = -1.0
        elif beliefs == "board":
            b[1, combo_index(*parse_cards("AsKs"))] = 1.0
        else:
            b[1] = 0.0
        beliefs = b
    with pytest.raises(ValueError, match=message):
        river_values(spot, beliefs)  # type: ignore[arg-type]


def test_river_spot_and_values_refuse_what_they_cannot_do() -> None:
    template = load_spot(SPOTS / "turn_two_tone.yaml")
    with pytest.raises(ValueError, match="a river board has 5 cards, got 4"):
        river_spot(template, "As Ks 7h 3h", 20, 100)
    with pytest.raises(ValueError, match="river_values needs a river spot"):
        river_values(template, np.ones((2, NUM_COMBOS)))
    with pytest.raises(ValueError, match="has no river deal"):
        river_situations(river_spot(template, "As Ks 7h 3h 5c", 20, 100))
    example = load_spot(SPOTS / "turn_example.yaml")
    with pytest.raises(ValueError, match="river donk sizes is not supported"):
        river_spot(example, "Td 9d 6h Qc 2s", 200, 900)
