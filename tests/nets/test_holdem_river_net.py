"""The river value net's input rows, its suit permutations (checked against the exact solver)
and its live-hand mask (rebel/nets/holdem_river_net.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import REPO_ROOT

from rebel.games.holdem_ranges import NUM_COMBOS, combo_index, parse_cards
from rebel.games.holdem_spot import load_spot
from rebel.nets.holdem_river_net import RIVER_INPUT_SIZE, SUIT_PERMUTATIONS, RiverValueNet, permute_suits, river_inputs
from rebel.search.holdem_river_values import river_spot, river_values
from rebel.train.holdem_river_data import live_mask, random_beliefs

TWO_TONE = REPO_ROOT / "configs" / "spots" / "turn_two_tone.yaml"


def test_permuting_the_suits_of_a_river_pbs_permutes_its_exact_values() -> None:
    template = load_spot(TWO_TONE)
    board = np.array([parse_cards("As Ks 7h 3h 5c")])
    rng = np.random.default_rng(2)
    beliefs = np.stack([random_beliefs(list(board[0]), rng) for _ in (0, 1)])[None]
    solved = river_values(river_spot(template, list(board[0]), 60, 80), beliefs[0], target_pct=0.05)
    which = np.array([SUIT_PERMUTATIONS.index((3, 0, 2, 1))])  # c->s, d->c, h->h, s->d
    new_board, new_beliefs, new_values = permute_suits(board, beliefs, solved.values[None], which)
    assert list(new_board[0]) == parse_cards("Ad Kd 7h 3h 5s")
    hand = combo_index(*parse_cards("Qc Jh"))
    assert new_beliefs[0, 1, combo_index(*parse_cards("Qs Jh"))] == beliefs[0, 1, hand]
    permuted = river_values(river_spot(template, list(new_board[0]), 60, 80), new_beliefs[0], target_pct=0.05)
    assert permuted.iterations == solved.iterations
    assert new_values is not None
    np.testing.assert_allclose(permuted.values, new_values[0], atol=1e-5)


def test_input_rows_and_the_live_mask() -> None:
    board = np.array([parse_cards("As Ks 7h 3h 5c"), parse_cards("2c 2d 2h 3c 4c")])
    beliefs = np.stack([live_mask(board)] * 2, axis=1).astype(np.float64) * 3.0
    x = river_inputs(board, np.array([20, 40]), np.array([100, 10]), beliefs)
    assert x.shape == (2, RIVER_INPUT_SIZE) and x.dtype == np.float32
    assert x[0, :52].sum() == 5 and x[0, 51] == 1 and x[1, 0] == 1
    np.testing.assert_allclose(x[:, 52], np.log1p([5.0, 0.25]), rtol=1e-6)
    np.testing.assert_allclose(x[:, 53], [1 / 6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(x[:, 54:].reshape(2, 2, NUM_COMBOS).sum(axis=2), 1.0, rtol=1e-6)
    net = RiverValueNet(hidden=16, layers=1)
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
    blocked = ~live_mask(board)
    assert out.shape == (2, 2, NUM_COMBOS)
    assert (out[0][:, blocked[0]] == 0).all() and (out[0][:, ~blocked[0]] != 0).all()
    assert blocked[1, combo_index(*parse_cards("2s 4c"))] and not blocked[1, combo_index(*parse_cards("2s 3d"))]
    assert blocked.sum(axis=1).tolist() == [NUM_COMBOS - 1081] * 2
    with pytest.raises(ValueError, match="river net input must have shape"):
        net(torch.zeros(2, 10))
