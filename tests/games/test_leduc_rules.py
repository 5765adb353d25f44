"""Leduc hold'em (``leduc``: OpenSpiel's ``leduc_poker``; ``leduc_nolimit``: DeepStack-Leduc as
OpenSpiel's ``universal_poker`` plays it with the fcpa betting abstraction) checked through the
game object's bindings against an independent statement of the rules written here, and, where
OpenSpiel is installed, against OpenSpiel itself deal by deal.

The references restate the rules in the source games' own terms (OpenSpiel leduc_poker's
stakes / calls / raises bookkeeping; the ACPC server's spent / numCalled / numActingPlayers and
raiseIsValid for the no-limit game; tests/helpers/leduc_reference.py) rather than in the C++
implementation's. The public tree is walked by recursion through ``legal_actions``, apart
from the tree builder (the conformance test checks built trees; test_leduc_solvers.py the
solvers).

Card c has rank c // 2 (J, Q, K) and suit c % 2; the hand is the private card. Terminal values
with a one-hot opponent reach e_o are ``w * u(x, o, board)`` with w = 36/30 = 1.2 (the deal
without replacement); the board's factor f_b = 1/2 is not in e_o unless a test puts it there.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers.leduc_reference import CARDS, CHANCE, IDS, SETTINGS, LimitState, W, game_of, ref_for, walk

from rebel.games import make

# ------------------------------------------------------------------------------ tests

def test_registry_and_names():
    lim, nl = make("leduc"), make("leduc_nolimit")
    assert (lim.num_hands, lim.num_actions, nl.num_hands, nl.num_actions) == (6, 9, 6, 10)
    assert dict(lim.params) == {} and dict(nl.params) == {"stack": 1200, "ante": 100}
    assert lim.has_public_chance and nl.has_public_chance
    assert not lim.hands_independent
    names = ["Js", "Jh", "Qs", "Qh", "Ks", "Kh"]
    assert [lim.hand_name(h) for h in CARDS] == names
    assert [lim.action_name(a) for a in range(9)] == ["fold", "call", "raise"] + names
    assert [nl.action_name(a) for a in range(10)] == ["fold", "call", "bet pot", "all-in"] + names
    np.testing.assert_allclose(lim.hand_prior, np.full(6, 1 / 6))
    for g in (lim, nl):
        for h, o in itertools.product(CARDS, CARDS):
            assert g.hand_pair_weight(h, o) == (0.0 if h == o else pytest.approx(1.2))


@pytest.mark.parametrize("params,match", [
    ({"stack": 100, "ante": 100}, "stack must exceed the ante"),
    ({"stack": 50, "ante": 100}, "stack must exceed the ante"),
    ({"ante": 0}, "ante must be > 0"),
    ({"ante": -5}, "ante must be > 0"),
    ({"stack": 0}, "stack must be > 0"),
    ({"fold_without_bet": 2}, "fold_without_bet must be 0 or 1"),
    ({"stack": -1200}, "stack must be > 0"),
])
def test_bad_nolimit_params_are_rejected(params, match):
    with pytest.raises(ValueError, match=match):
        make("leduc_nolimit", **params)


def test_limit_takes_no_params():
    with pytest.raises(ValueError, match="no parameter"):
        make("leduc", stack=10)


def test_limit_tree_counts():
    # Per round: 6 decision nodes ('', c, r, cr, rr, crr), 4 folds, 5 round-ending calls.
    # Round 1's 5 calls lead to chance nodes with 6 boards, each followed by a round 2.
    nodes = walk("leduc", ())
    terminal = sum(s.cur is None for _, s in nodes)
    chance = sum(s.cur == CHANCE for _, s in nodes)
    assert (len(nodes), terminal, chance) == (15 + 30 * 15, 4 + 30 * 9, 5)
    assert make("leduc").count_tree_nodes() == len(nodes)


@pytest.mark.parametrize("name,params", SETTINGS, ids=IDS)
def test_tree_follows_the_reference(name, params):
    nodes = walk(name, params)
    g = game_of(name, params)
    assert g.count_tree_nodes() == len(nodes)
    assert all(a < g.num_actions for h, _ in nodes for a in h)


def test_nolimit_tree_shape():
    walked = walk("leduc_nolimit", ())
    # 11 ways to end round 1 with a call (c c, 2 c, c 2 c, 2 2 c, c 2 2 c, 2 2 3 c, c 2 2 3 c,
    # 3 c, c 3 c, 2 3 c, c 2 3 c); the same counts come out of OpenSpiel's tree below
    assert (len(walked), sum(s.cur is None for _, s in walked), sum(s.cur == CHANCE for _, s in walked)) == \
        (627, 388, 11)
    nodes = dict(walked)
    # 100 -> pot 300 -> pot 900 -> all-in (the next pot raise, 2700, exceeds the stack).
    assert nodes[()].cur == 0 and make("leduc_nolimit").legal_actions([]) == [1, 2, 3]
    g = make("leduc_nolimit")
    assert g.legal_actions([2]) == [0, 1, 2, 3]
    assert g.legal_actions([2, 2]) == [0, 1, 3]
    assert g.legal_actions([2, 2, 3]) == [0, 1]
    # all-in called in round 1: the board is dealt, then the showdown
    assert g.player_to_act([3, 1]) == CHANCE and g.is_terminal([3, 1, 4 + 2])
    # a pot bet exactly the stack: only the pot bet is listed
    g900 = make("leduc_nolimit", stack=900)
    assert g900.legal_actions([2]) == [0, 1, 2]
    # the first pot bet over the stack: only all-in
    assert make("leduc_nolimit", stack=250).legal_actions([]) == [1, 3]
    # round 2 opens with player 0, and check-check ends it
    assert g.player_to_act([1, 1, 4]) == 0 and g.player_to_act([1, 1, 4, 1]) == 1
    assert g.is_terminal([1, 1, 4, 1, 1])


@pytest.mark.parametrize("name,params", SETTINGS, ids=IDS)
def test_terminal_values_match_reference_payoffs(name, params):
    g, ref = game_of(name, params), ref_for(name, params)
    eye = np.eye(6)
    for h, s in walk(name, params):
        if s.cur is not None:
            continue
        board = s.board
        for player in (0, 1):
            for o in CARDS:
                got = g.terminal_values(list(h), player, eye[o])
                half = g.terminal_values(list(h), player, 0.5 * eye[o])  # reach with f_b in it
                for x in CARDS:
                    if x == o or x == board or o == board:
                        assert got[x] == 0.0, (h, player, x, o)
                        continue
                    c0, c1 = (x, o) if player == 0 else (o, x)
                    u0 = ref.payoff0(s, c0, c1)
                    want = W * (u0 if player == 0 else -u0)
                    assert got[x] == pytest.approx(want, abs=1e-9), (h, player, x, o)
                    assert half[x] == pytest.approx(0.5 * want, abs=1e-9)


@pytest.mark.parametrize("name,params", SETTINGS, ids=IDS)
def test_terminal_values_are_zero_sum_and_linear(name, params):
    g = game_of(name, params)
    rng = np.random.default_rng(7)
    eye = np.eye(6)
    for h, s in walk(name, params):
        if s.cur is not None:
            continue
        v0 = np.array([g.terminal_values(list(h), 0, eye[o]) for o in CARDS])  # [o, x]
        v1 = np.array([g.terminal_values(list(h), 1, eye[o]) for o in CARDS])
        np.testing.assert_allclose(v0, -v1.T, atol=1e-9)  # player 0 with x vs o, player 1 with o vs x
        r = rng.random(6)
        np.testing.assert_allclose(g.terminal_values(list(h), 0, r), r @ v0, atol=1e-9)


@pytest.mark.parametrize("name,params", SETTINGS[:2], ids=IDS[:2])
def test_chance_factors(name, params):
    g = game_of(name, params)
    base = 3 if name == "leduc" else 4
    chance_nodes = [h for h, s in walk(name, params) if s.cur == CHANCE]
    assert chance_nodes
    for h in chance_nodes:
        assert g.legal_actions(list(h)) == [base + c for c in CARDS]
        f = np.array([g.chance_factors(list(h), base + b) for b in CARDS])  # [b, hand]
        np.testing.assert_allclose(f, 0.5 * (1 - np.eye(6)))
        # P(b | h, h') = f_b(h) f_b(h') sums to 1 over the boards for every possible pair
        joint = np.einsum("bh,bo->ho", f, f)
        for x, o in itertools.product(CARDS, CARDS):
            if x != o:
                assert joint[x, o] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        g.chance_factors([], base)


@pytest.mark.parametrize("name,params", SETTINGS[:2], ids=IDS[:2])
def test_public_features_tell_states_apart(name, params):
    g = game_of(name, params)
    seen = {}
    for h, s in walk(name, params):
        feats = g.public_features(list(h))
        assert feats.shape == (g.feature_size,)
        # the state from here on: round, board, spent, who acts, whether a call would end the
        # round (limit: and how many raises are left); terminals: the payoffs' inputs
        if isinstance(s, LimitState):
            progress = (s.num_raises, s.num_calls > 0 or s.num_raises > 0) if s.cur in (0, 1) else ()
            key = (s.round, s.board, tuple(s.contrib), s.cur, progress, s.folded)
        else:
            progress = bool(s.actions) if s.cur in (0, 1) else ()
            key = (s.round, s.board, tuple(s.spent), s.cur, progress, s.folded)
        prev = seen.setdefault(feats.tobytes(), key)
        assert prev == key, (h, prev, key)


def test_expected_values_under_the_convention():
    """sum_h P(h) v(h) is player 0's expected payoff (game.h): below a board the opponent's
    reach is prior * f_b and the chance node's value sums f_b(h) v_b(h)."""
    prior = np.full(6, 1 / 6)
    for name, ante in (("leduc", 1), ("leduc_nolimit", 100)):
        g = make(name)
        base = 3 if name == "leduc" else 4
        # raise, fold before the board: player 0 wins the ante for sure
        assert float(prior @ g.terminal_values([2, 0], 0, prior)) == pytest.approx(ante)
        # check down: every deal is a showdown at the ante, symmetric between the players, so 0
        ev = 0.0
        for b in CARDS:
            f = 0.5 * (np.arange(6) != b)
            ev += float(prior @ (f * g.terminal_values([1, 1, base + b, 1, 1], 0, prior * f)))
        assert ev == pytest.approx(0.0, abs=1e-12)
        # player 0 holds a king, player 1 a jack, the board is a queen: +ante * w * P(board)
        v = g.terminal_values([1, 1, base + 2, 1, 1], 0, np.eye(6)[0] * 0.5)
        assert v[4] == pytest.approx(ante * W * 0.5)


# ------------------------------------------------------------------------ against OpenSpiel

def _pyspiel():
    try:
        import pyspiel
    except ImportError:
        return None
    return pyspiel


pyspiel = _pyspiel()
needs_pyspiel = pytest.mark.skipif(pyspiel is None, reason="OpenSpiel (pyspiel) is not installed")


def _openspiel_game(name: str, params: tuple):
    if name == "leduc":
        return pyspiel.load_game("leduc_poker")
    p = dict(params)
    stack, ante = p.get("stack", 1200), p.get("ante", 100)
    # The gamedef OpenSpiel uses for DeepStack's Leduc (universal_poker.h, acpc_game_test.cc).
    return pyspiel.load_game("universal_poker", {
        "betting": "nolimit", "numPlayers": 2, "numRounds": 2, "stack": f"{stack} {stack}",
        "blind": f"{ante} {ante}", "firstPlayer": "1 1", "numSuits": 2, "numRanks": 3, "numHoleCards": 1,
        "numBoardCards": "0 1", "bettingAbstraction": "fcpa"})


@needs_pyspiel
@pytest.mark.parametrize("name,params", SETTINGS, ids=IDS)
def test_matches_openspiel_for_every_deal(name, params):
    g = game_of(name, params)
    os_game = _openspiel_game(name, params)
    base = 3 if name == "leduc" else 4
    eye = np.eye(6)
    states = 0

    def rec(h, st, c0, c1):
        nonlocal states
        states += 1
        if st.is_terminal():
            assert g.is_terminal(h), h
            returns = st.returns()
            for player in (0, 1):
                mine, theirs = (c0, c1) if player == 0 else (c1, c0)
                v = g.terminal_values(h, player, eye[theirs])[mine]
                assert v / W == pytest.approx(returns[player], abs=1e-9), (h, c0, c1, player)
            return
        assert not g.is_terminal(h), h
        if st.is_chance_node():
            assert g.player_to_act(h) == CHANCE, h
            outcomes = dict(st.chance_outcomes())
            assert sorted(outcomes) == [c for c in CARDS if c not in (c0, c1)]
            assert g.legal_actions(h) == [base + c for c in CARDS]
            for b, prob in outcomes.items():
                f = g.chance_factors(h, base + b)
                assert f[c0] * f[c1] == pytest.approx(prob)
                rec(h + [base + b], st.child(b), c0, c1)
            return
        assert g.player_to_act(h) == st.current_player(), h
        legal = st.legal_actions()
        assert g.legal_actions(h) == legal, h
        for a in legal:
            rec(h + [a], st.child(a), c0, c1)

    for c0, c1 in itertools.permutations(CARDS, 2):
        st = os_game.new_initial_state()
        st.apply_action(c0)
        st.apply_action(c1)
        rec([], st, c0, c1)
    # every public history was visited once per deal its board cards allow
    allowed = sum(1 for c0, c1 in itertools.permutations(CARDS, 2) for h, _ in walk(name, params)
                  if base + c0 not in h and base + c1 not in h)
    assert states == allowed
