"""Games: sizes, rules (checked against an independent Python statement of them), hand
decoding, uniform-policy exploitability and Kuhn poker's known equilibria."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import full_tree, kuhn, liars_dice

import rebel
from rebel.games import game_config, game_from_config, game_names, hand_label, liars_dice_dice, liars_dice_hand, make
from rebel.interop.policy_io import policy_from_json_dict

# ----------------------------------------------------------------------------- registry

def test_registry_lists_every_game():
    assert game_names() == ["kuhn", "leduc", "leduc_nolimit", "liars_dice", "mnk"]
    by_name = {g["name"]: g for g in rebel.games.list_games()}
    assert by_name["liars_dice"]["params"] == {"num_dice": 1, "num_faces": 4}
    assert by_name["kuhn"]["params"] == {}
    assert by_name["mnk"]["params"] == {"m": 3, "n": 3, "k": 3}
    assert by_name["leduc"]["params"] == {}
    assert by_name["leduc_nolimit"]["params"] == {"stack": 1200, "ante": 100, "fold_without_bet": 0}


def test_make_and_config_round_trip():
    g = make("liars_dice", num_dice=2, num_faces=3)
    assert game_config(g) == {"name": "liars_dice", "num_dice": 2, "num_faces": 3}
    assert game_config(game_from_config(game_config(g))) == game_config(g)
    assert game_config(make("liars_dice")) == {"name": "liars_dice", "num_dice": 1, "num_faces": 4}
    assert game_config(make("kuhn")) == {"name": "kuhn"}


# ------------------------------------------------------------------------- Liar's Dice

@pytest.mark.parametrize("D,F,nodes", [(1, 2, 31), (1, 3, 127), (1, 4, 511), (1, 5, 2047), (1, 6, 8191), (2, 3, 8191)])
def test_liars_dice_tree_sizes(D, F, nodes):
    g = liars_dice(D, F)
    t = full_tree(g)
    bids = 2 * D * F
    assert g.num_hands == F**D
    assert g.num_actions == bids + 1
    assert np.allclose(g.hand_prior, 1.0 / F**D)
    assert len(t) == nodes == 2 ** (bids + 1) - 1 == g.count_tree_nodes()
    assert len(t.decision_nodes) == 2**bids  # one per set of bids made
    assert len(t.terminal_nodes) == 2**bids - 1  # one "liar" per non-root decision node
    assert len(t.pseudo_leaves) == 0


def test_liars_dice_legal_actions_and_turns():
    D, F = 2, 3
    g = liars_dice(D, F)
    liar = 2 * D * F
    assert g.legal_actions([]) == list(range(liar))  # the first move must be a bid
    assert g.player_to_act([]) == 0
    assert g.legal_actions([4]) == list(range(5, liar)) + [liar]
    assert g.player_to_act([4]) == 1
    assert g.player_to_act([4, 7]) == 0
    assert g.legal_actions([liar - 1]) == [liar]  # after the highest bid only "liar"
    assert g.is_terminal([4, liar]) and not g.is_terminal([4])
    with pytest.raises(ValueError):
        g.legal_actions([liar])  # liar is not legal as the first move
    with pytest.raises(ValueError):
        g.legal_actions([5, 4])  # bids must increase


def _liars_dice_payoff(D: int, F: int, history: list[int], hands: tuple[int, int]) -> tuple[float, float]:
    """Independent statement of the paper's rules: payoffs (player 0, player 1) after liar."""
    bid = history[-2]
    quantity, face = bid // F + 1, bid % F
    dice = [liars_dice_dice(h, D, F) for h in hands]
    count = sum(1 for die in itertools.chain(*dice) if die == face or die == F - 1)
    bidder = (len(history) - 2) % 2
    winner = bidder if count >= quantity else 1 - bidder
    return (1.0, -1.0) if winner == 0 else (-1.0, 1.0)


@pytest.mark.parametrize("D,F", [(1, 4), (2, 3)])
def test_liars_dice_terminal_values_follow_the_rules(D, F):
    g = liars_dice(D, F)
    t = full_tree(g)
    H = g.num_hands
    rng = np.random.default_rng(0)
    terminals = rng.choice(np.asarray(t.terminal_nodes), size=40, replace=False)
    for n in terminals:
        hist = t.history(int(n))
        for player in (0, 1):
            opp = rng.random(H)
            got = g.terminal_values(hist, player, opp)
            want = np.zeros(H)
            for h, o in itertools.product(range(H), range(H)):
                hands = (h, o) if player == 0 else (o, h)
                want[h] += opp[o] * _liars_dice_payoff(D, F, hist, hands)[player]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_liars_dice_hand_decoding():
    for D, F in [(1, 4), (2, 3), (3, 5)]:
        for h in range(F**D):
            dice = liars_dice_dice(h, D, F)
            assert all(dice[i] == (h // F**i) % F for i in range(D))
            assert liars_dice_hand(dice, F) == h
            assert "".join(map(str, dice)) == make("liars_dice", num_dice=D, num_faces=F).hand_name(h)
    assert liars_dice_dice(5, 2, 3) == (2, 1)  # 5 = 2 + 1*3: die 0 shows 2, die 1 shows 1
    assert hand_label(liars_dice(2, 3), 5) == "3* 2"  # what a player reads: faces 1..F, the wild F marked
    with pytest.raises(ValueError):
        liars_dice_dice(9, 2, 3)
    with pytest.raises(ValueError):
        liars_dice_hand([3], 3)


@pytest.mark.parametrize("D,F,expected", [(1, 4, 0.655059523810), (1, 5, 0.720870899471), (2, 3, 0.738995932527)])
def test_uniform_policy_exploitability(D, F, expected):
    g = liars_dice(D, F)
    t = full_tree(g)
    r = rebel.exploitability(g, t, rebel.uniform_policy(g, t))
    assert abs(r["exploitability"] - expected) < 1e-9
    assert r["exploitability"] == pytest.approx(sum(r["br_values"]) / 2, abs=1e-15)


# ---------------------------------------------------------------------------------- Kuhn

def test_kuhn_basics():
    g = kuhn()
    t = full_tree(g)
    assert (g.num_hands, g.num_actions, len(t)) == (3, 2, 9)
    assert [g.hand_name(h) for h in range(3)] == ["J", "Q", "K"]
    assert not g.hands_independent  # cards are dealt without replacement
    assert [t.history(n) for n in t.decision_nodes] == [[], [0], [1], [0, 1]]
    assert sorted(map(tuple, (t.history(n) for n in t.terminal_nodes))) == [(0, 0), (0, 1, 0), (0, 1, 1), (1, 0),
                                                                            (1, 1)]
    # Check-check showdown with the opponent's reach = its prior: each hand's expected
    # payoff given the cards left (card removal): J always loses the ante, K always wins.
    np.testing.assert_allclose(g.terminal_values([0, 0], 0, g.hand_prior), [-1.0, 0.0, 1.0], atol=1e-12)
    # Bet-call: the pot is 2 per player.
    np.testing.assert_allclose(g.terminal_values([1, 1], 1, g.hand_prior), [-2.0, 0.0, 2.0], atol=1e-12)
    # Holding K, the opponent cannot hold K: its reach on K is ignored.
    assert g.terminal_values([0, 0], 0, np.array([0.0, 0.0, 1.0]))[2] == 0.0


def _kuhn_equilibrium(alpha: float) -> dict:
    """Kuhn's equilibrium family: player 0 bets J with alpha, K with 3 alpha, calls Q with alpha + 1/3."""
    return {"game": {"name": "kuhn"}, "policy": {
        "0|": [1 - alpha, alpha], "1|": [1.0, 0.0], "2|": [1 - 3 * alpha, 3 * alpha],
        "0|0": [2 / 3, 1 / 3], "1|0": [1.0, 0.0], "2|0": [0.0, 1.0],
        "0|1": [1.0, 0.0], "1|1": [2 / 3, 1 / 3], "2|1": [0.0, 1.0],
        "0|0,1": [1.0, 0.0], "1|0,1": [2 / 3 - alpha, 1 / 3 + alpha], "2|0,1": [0.0, 1.0],
    }}


@pytest.mark.parametrize("alpha", [0.0, 1 / 6, 1 / 3])
def test_kuhn_known_equilibria_are_unexploitable(alpha):
    loaded = policy_from_json_dict(_kuhn_equilibrium(alpha))
    r = rebel.exploitability(loaded.game, loaded.tree, loaded.policy)
    assert abs(r["exploitability"]) < 1e-12
    assert r["game_value"] == pytest.approx(-1 / 18, abs=1e-12)
    assert r["br_values"][0] == pytest.approx(-1 / 18, abs=1e-12)
    assert r["br_values"][1] == pytest.approx(1 / 18, abs=1e-12)
