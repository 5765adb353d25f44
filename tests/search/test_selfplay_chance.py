"""Self-play through public deals (Leduc hold'em): the walk stops right after the board card,
which it draws given the walk's hands, and both beliefs take the card's chance factors; the
targets are the solve's root values; the next roots are the states test-time search starts at."""
from __future__ import annotations

import numpy as np
import pytest

import rebel
from tests.helpers.selfplay_walk import path_to, random_net

DECISION, TERMINAL, PSEUDO_LEAF, CHANCE = (int(k) for k in (rebel._core.NodeKind.DECISION,
                                                             rebel._core.NodeKind.TERMINAL,
                                                             rebel._core.NodeKind.PSEUDO_LEAF,
                                                             rebel._core.NodeKind.CHANCE))


def leaf_distribution(game, tree, iterate, b0, b1):
    """Exact probability of every walk end (a terminal, a depth leaf or a dealt card) when both
    players follow `iterate` and the deal follows P(b | h0, h1) = f_b(h0) f_b(h1)."""
    H = game.num_hands
    kinds, players = np.asarray(tree.kind), np.asarray(tree.player)
    first, count = np.asarray(tree.first_child), np.asarray(tree.num_children)
    pair = np.array([[game.hand_pair_weight(a, b) for b in range(H)] for a in range(H)])
    joint = np.outer(b0, b1) * pair
    joint /= joint.sum()
    probs = {}
    for leaf in range(len(tree)):
        if kinds[leaf] in (DECISION, CHANCE):
            continue
        weight = joint.copy()
        for parent, child in path_to(tree, leaf):
            if kinds[parent] == CHANCE:
                f = tree.chance_factors(parent)[child - first[parent]]
                weight *= np.outer(f, f)
            elif players[parent] == 0:
                weight *= iterate[child][:, None]
            else:
                weight *= iterate[child][None, :]
        probs[tuple(tree.history(leaf))] = float(weight.sum())
    assert abs(sum(probs.values()) - 1.0) < 1e-12
    assert all(count[n] > 0 for n in range(len(tree)) if kinds[n] == CHANCE)
    return probs


@pytest.fixture(scope="module")
def leduc():
    return rebel.make_game("leduc")


@pytest.mark.parametrize("depth", [10, 2])
def test_walk_ends_after_the_deal_with_the_exact_distribution(leduc, depth):
    net = random_net(leduc)
    gen = rebel.SelfPlayGenerator(leduc, net, depth=depth, iterations=32, epsilon=0.0)
    H = leduc.num_hands
    rng = np.random.default_rng(3)
    b0, b1 = rng.random(H) + 0.05, rng.random(H) + 0.05
    b0, b1 = b0 / b0.sum(), b1 / b1.sum()
    t = 10
    tree = gen.subgame([])
    # The subgame ends with the round: every leaf that is not terminal is a dealt card.
    kinds = np.asarray(tree.kind)
    for leaf in np.flatnonzero(kinds == PSEUDO_LEAF):
        parent = tree.parent[leaf]
        assert kinds[parent] == CHANCE or tree.depth[leaf] == depth
    first = gen.step([], b0, b1, 0, iteration=t, keep_iterate=True)
    expected = leaf_distribution(leduc, tree, first.iterate, b0, b1)
    n = 4000
    counts: dict = {}
    for seed in range(n):
        step = gen.step([], b0, b1, seed, iteration=t)
        end = tuple(step.next_history)
        counts[end] = counts.get(end, 0) + 1
        if len(end) and not step.next_terminal and leduc.player_to_act(list(end[:-1])) == 2:
            board = end[-1] - 3  # limit Leduc's board card c is the outcome 3 + c
            assert board not in step.hands  # the card is dealt from the cards no hand holds
    assert set(counts) <= {k for k, p in expected.items() if p > 0}
    for end, p in expected.items():
        f = counts.get(end, 0) / n
        assert abs(f - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-9, (end, f, p)


def test_beliefs_after_the_deal_are_bayes_rule_for_the_card(leduc):
    gen = rebel.SelfPlayGenerator(leduc, random_net(leduc), depth=10, iterations=16, epsilon=0.25)
    H = leduc.num_hands
    b0 = np.array([0.3, 0.1, 0.2, 0.1, 0.2, 0.1])
    b1 = np.full(H, 1.0 / H)
    tree = gen.subgame([])
    kinds, players = np.asarray(tree.kind), np.asarray(tree.player)
    first = np.asarray(tree.first_child)
    dealt = 0
    for seed in range(300):
        step = gen.step([], b0, b1, seed, keep_iterate=True)
        if step.next_terminal:
            assert step.next_beliefs is None
            continue
        node = tree.find(step.next_history)
        reach = [b0.copy(), b1.copy()]
        pbs = rebel.Pbs(leduc, [], b0, b1)
        on_policy = True  # Pbs.after refuses an action the beliefs never take (an exploration)
        for parent, child in path_to(tree, node):
            if kinds[parent] == CHANCE:
                f = tree.chance_factors(parent)[child - first[parent]]
                reach = [r * f for r in reach]
                pbs = pbs.after(leduc, int(tree.action[child])) if on_policy else pbs
            else:
                reach[players[parent]] *= step.iterate[child]
                on_policy = on_policy and reach[players[parent]].sum() > 0
                pbs = pbs.after(leduc, int(tree.action[child]), step.iterate[child]) if on_policy else pbs
        assert kinds[tree.parent[node]] == CHANCE  # a round-one walk only ends at a terminal or a deal
        dealt += 1
        board = step.next_history[-1] - 3
        for p in range(2):
            possible = np.arange(H) != board
            want = reach[p] / reach[p].sum() if reach[p].sum() > 0 else possible / possible.sum()
            np.testing.assert_allclose(step.next_beliefs[p], want, rtol=1e-12, atol=1e-15)
            assert step.next_beliefs[p][board] == 0.0
        if not on_policy:
            continue
        np.testing.assert_allclose(pbs.beliefs0, step.next_beliefs[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(pbs.beliefs1, step.next_beliefs[1], rtol=1e-12, atol=1e-15)
    assert dealt > 100


def test_round_two_roots_have_exact_oracle_targets(leduc):
    gen = rebel.SelfPlayGenerator(leduc, None, depth=10, iterations=256, full_depth=True)
    oracle = rebel.OracleNet(leduc, "lcfr", 256)
    history = [1, 1, 3 + 4]  # check, check, board Ks
    b0 = np.array([0.2, 0.3, 0.1, 0.4, 0.0, 0.0])
    b1 = np.array([0.1, 0.2, 0.3, 0.2, 0.0, 0.2])
    step = gen.step(history, b0, b1, 5)
    assert step.next_terminal  # no deal is left: the walk plays round two to its end
    for q in range(2):
        want = rebel._core.net_values(oracle, leduc, [history], q, b0, b1)[0]
        np.testing.assert_allclose(step.targets[q], want, rtol=1e-6, atol=1e-7)


def test_a_first_round_episode_reaches_round_two_and_ends(leduc):
    gen = rebel.SelfPlayGenerator(leduc, random_net(leduc), depth=10, iterations=16, epsilon=0.25)
    reached_round_two = 0
    for seed in range(20):
        history, beliefs = [], (leduc.hand_prior, leduc.hand_prior)
        for _ in range(4):
            step = gen.step(history, beliefs[0], beliefs[1], seed)
            if step.next_terminal:
                break
            history, beliefs = step.next_history, step.next_beliefs
            reached_round_two += 1
            assert leduc.player_to_act(history[:-1]) == 2  # the next root follows a deal
        assert step.next_terminal
    assert reached_round_two > 0


def test_pbs_after_a_chance_outcome_and_its_errors(leduc):
    pbs = rebel.Pbs(leduc, [1, 1])
    after = pbs.after(leduc, 3 + 0)  # board Js
    want = np.array([0.0, 1, 1, 1, 1, 1]) / 5
    np.testing.assert_allclose(after.beliefs0, want, rtol=1e-14)
    np.testing.assert_allclose(after.beliefs1, want, rtol=1e-14)
    with pytest.raises(ValueError, match="chance factors"):
        pbs.after(leduc, 3, np.full(6, 1.0))
    with pytest.raises(ValueError, match="action_probs are required"):
        rebel.Pbs(leduc, []).after(leduc, 1)
    with pytest.raises(ValueError, match="impossible under the beliefs of player 0"):
        rebel.Pbs(leduc, [1, 1], np.array([1.0, 0, 0, 0, 0, 0])).after(leduc, 3 + 0)


def test_an_end_no_deal_fits_ends_the_episode(leduc):
    """Player 1 surely holds Js, so player 0's Js is impossible: its regrets stay 0 and it plays
    uniformly, while Jh plays what it learnt. An exploring action Jh never takes leaves player
    0's beliefs on Js alone: no deal fits, and the episode ends there instead of failing at the
    next step."""
    gen = rebel.SelfPlayGenerator(leduc, random_net(leduc), depth=1, iterations=64, epsilon=1.0)
    b0 = np.array([0.5, 0.5, 0, 0, 0, 0])
    b1 = np.array([1.0, 0, 0, 0, 0, 0])
    pair = np.array([[leduc.hand_pair_weight(a, b) for b in range(6)] for a in range(6)])
    ends = {True: 0, False: 0}
    for seed in range(300):
        step = gen.step([], b0, b1, seed, keep_iterate=True)
        ends[step.next_no_deal] += 1
        if step.next_no_deal:
            assert step.next_terminal and step.next_beliefs is None
            reach = b0 * step.iterate[gen.subgame([]).find(step.next_history)]
            assert reach[1] == 0 and reach[0] > 0 and (np.outer(reach, b1) * pair).sum() == 0
        elif not step.next_terminal:
            nb0, nb1 = step.next_beliefs
            assert (np.outer(nb0, nb1) * pair).sum() > 0
    assert ends[True] > 0 and ends[False] > 0
    with pytest.raises(ValueError, match="no possible deal"):
        gen.step([], b1, b1, 0)
