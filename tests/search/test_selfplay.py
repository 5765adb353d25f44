"""The C++ self-play step (Algorithm 1) against its definition: leaf sampling with and
without exploration, belief propagation, targets and the oracle-labelled variant."""
from __future__ import annotations

import numpy as np
import pytest

import rebel
from tests.conftest import kuhn, liars_dice
from tests.helpers.selfplay_walk import path_to, random_net


def leaf_distribution(game, tree, iterate, b0, b1):
    """Exact probability of every subgame leaf when both players follow `iterate`."""
    H = game.num_hands
    players = np.asarray(tree.player)
    kinds = np.asarray(tree.kind)
    leaves = [n for n in range(len(tree)) if kinds[n] != 0]  # terminals and pseudo-leaves
    joint = np.outer(b0, b1)
    if not game.hands_independent:
        joint *= np.array([[0.0 if a == b else 1.0 for b in range(H)] for a in range(H)])
    joint /= joint.sum()
    probs = {}
    for leaf in leaves:
        reach = [np.ones(H), np.ones(H)]
        for parent, child in path_to(tree, leaf):
            reach[players[parent]] = reach[players[parent]] * iterate[child]
        probs[tuple(tree.history(leaf))] = float(reach[0] @ joint @ reach[1])
    return probs


@pytest.mark.parametrize("game_fn, history", [(lambda: liars_dice(1, 4), []), (lambda: liars_dice(1, 4), [1, 4]),
                                              (kuhn, [])])
def test_epsilon_zero_samples_next_roots_from_the_iterates_reach(game_fn, history):
    game = game_fn()
    net = random_net(game)
    gen = rebel.SelfPlayGenerator(game, net, depth=2, iterations=64, epsilon=0.0)
    H = game.num_hands
    rng = np.random.default_rng(7)
    b0, b1 = rng.random(H) + 0.05, rng.random(H) + 0.05
    b0, b1 = b0 / b0.sum(), b1 / b1.sum()
    t = 22
    first = gen.step(history, b0, b1, 0, iteration=t, keep_iterate=True)
    expected = leaf_distribution(game, gen.subgame(history), first.iterate, b0, b1)
    n = 3000
    counts: dict = {}
    for seed in range(n):
        step = gen.step(history, b0, b1, seed, iteration=t)
        assert step.sampled_iteration == t
        counts[tuple(step.next_history)] = counts.get(tuple(step.next_history), 0) + 1
    assert set(counts) <= {k for k, p in expected.items() if p > 0}
    for leaf, p in expected.items():
        f = counts.get(leaf, 0) / n
        assert abs(f - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-9, (leaf, f, p)


def test_epsilon_one_makes_the_exploring_players_actions_uniform():
    game = liars_dice(1, 4)
    gen = rebel.SelfPlayGenerator(game, random_net(game), depth=2, iterations=32, epsilon=1.0)
    prior = np.asarray(game.hand_prior)
    first_action = {0: [], 1: []}
    for seed in range(2000):
        step = gen.step([], prior, prior, seed)
        first_action[step.exploring_player].append(step.next_history[0])
    legal = game.legal_actions([])
    counts = np.bincount(first_action[0], minlength=len(legal))[legal]
    n = len(first_action[0])
    assert 800 < n < 1200  # the exploring player is drawn uniformly
    p = 1.0 / len(legal)
    assert np.all(np.abs(counts / n - p) <= 4.5 * np.sqrt(p * (1 - p) / n))
    # When player 1 explores, player 0's first action follows its iterate, which the
    # random net's solve makes far from uniform.
    counts1 = np.bincount(first_action[1], minlength=len(legal))[legal] / len(first_action[1])
    assert np.abs(counts1 - p).max() > 0.1


@pytest.mark.parametrize("epsilon", [0.0, 0.25, 1.0])
def test_next_beliefs_follow_the_iterate_never_the_exploration(epsilon):
    game = liars_dice(1, 4)
    gen = rebel.SelfPlayGenerator(game, random_net(game), depth=2, iterations=16, epsilon=epsilon)
    H = game.num_hands
    prior = np.asarray(game.hand_prior)
    b0 = np.array([0.1, 0.2, 0.3, 0.4])
    tree = gen.subgame([])
    players = np.asarray(tree.player)
    for seed in range(200):
        step = gen.step([], b0, prior, seed, keep_iterate=True)
        node = tree.find(step.next_history[len(tree.history(0)):])
        reach = [b0.copy(), prior.copy()]
        for parent, child in path_to(tree, node):
            reach[players[parent]] *= step.iterate[child]
        if step.next_terminal:
            assert step.next_beliefs is None
            continue
        for p in range(2):
            mass = reach[p].sum()
            want = reach[p] / mass if mass > 0 else np.full(H, 1.0 / H)
            np.testing.assert_allclose(step.next_beliefs[p], want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("off_path", ["skip", "floor", "conditional"])
def test_step_targets_are_the_averaged_root_values_of_the_same_solve(off_path):
    game = liars_dice(1, 4)
    net = random_net(game)
    gen = rebel.SelfPlayGenerator(game, net, depth=2, iterations=128, off_path=off_path)
    history = [2]
    b0 = np.array([0.4, 0.3, 0.2, 0.1])
    b1 = np.array([0.25, 0.25, 0.25, 0.25])
    step = gen.step(history, b0, b1, 11)
    solver = rebel.SubgameSolver(game, rebel.build_tree(game, history, 2), b0, b1, solver="lcfr", net=net,
                                 off_path=off_path)
    solver.run(128)
    for q in range(2):
        np.testing.assert_allclose(step.targets[q], solver.root_values(q).astype(np.float32), rtol=0, atol=0)
        row = step.rows[q]
        F = game.feature_size
        assert row[0] == game.player_to_act(history) and row[1] == q
        np.testing.assert_array_equal(row[2:2 + F], game.public_features(history))
        np.testing.assert_allclose(row[2 + F:2 + F + 4], b0, rtol=1e-7)
        np.testing.assert_allclose(row[2 + F + 4:], b1, rtol=1e-7)
    # The walk does not disturb the solve: same targets whatever the seed.
    np.testing.assert_array_equal(gen.step(history, b0, b1, 12345).targets, step.targets)


def test_full_depth_targets_are_the_oracle_values():
    game = liars_dice(1, 4)
    gen = rebel.SelfPlayGenerator(game, None, depth=2, iterations=256, full_depth=True)
    oracle = rebel.OracleNet(game, "lcfr", 256)
    history, b0, b1 = [3], np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.4, 0.3, 0.2, 0.1])
    step = gen.step(history, b0, b1, 3)
    assert len(step.next_history) - len(history) <= 2  # walks `depth` actions at most
    for q in range(2):
        want = rebel._core.net_values(oracle, game, [history], q, b0, b1)[0]
        np.testing.assert_allclose(step.targets[q], want, rtol=1e-6, atol=1e-7)


def test_iteration_sampling_linear_and_uniform():
    game = liars_dice(1, 3)
    net = random_net(game)
    linear = rebel.SelfPlayGenerator(game, net, iterations=8, sampling="linear")
    uniform = rebel.SelfPlayGenerator(game, net, iterations=8, sampling="uniform")
    us = (np.arange(10000) + 0.5) / 10000
    lin = np.bincount([linear.sample_iteration(u) for u in us], minlength=8)
    uni = np.bincount([uniform.sample_iteration(u) for u in us], minlength=8)
    np.testing.assert_allclose(lin[[0, 2, 4, 6]] / 10000, np.array([1, 2, 3, 4]) / 10, atol=1e-3)
    np.testing.assert_allclose(uni[[0, 2, 4, 6]] / 10000, 0.25, atol=1e-3)
    assert lin[1::2].sum() == uni[1::2].sum() == 0


def test_steps_are_deterministic_per_seed_and_thread_safe():
    import concurrent.futures

    game = liars_dice(1, 4)
    gen = rebel.SelfPlayGenerator(game, random_net(game), iterations=64)
    prior = np.asarray(game.hand_prior)
    serial = [gen.step([], prior, prior, s) for s in range(16)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda s: gen.step([], prior, prior, s), range(16)))
    for a, b in zip(serial, threaded):
        assert a.next_history == b.next_history and a.sampled_iteration == b.sampled_iteration
        np.testing.assert_array_equal(a.targets, b.targets)


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 0}, "depth"), ({"iterations": 1}, "iterations"), ({"epsilon": 1.5}, "epsilon"),
    ({"epsilon": float("nan")}, "epsilon"), ({"sampling": "cubic"}, "sampling"), ({"solver": "xyz"}, "solver"),
])
def test_bad_generator_parameters_are_clear_errors(kwargs, message):
    game = liars_dice(1, 3)
    args = {"net": random_net(game), **kwargs}
    with pytest.raises(ValueError, match=message):
        rebel.SelfPlayGenerator(game, **args)


def test_bad_step_input_is_a_clear_error():
    game = liars_dice(1, 3)
    gen = rebel.SelfPlayGenerator(game, random_net(game), iterations=4)
    prior = np.asarray(game.hand_prior)
    with pytest.raises(ValueError, match="value net"):
        rebel.SelfPlayGenerator(game, None)
    with pytest.raises(ValueError, match="terminal"):
        gen.step([0, 6], prior, prior, 0)
    with pytest.raises(ValueError, match="not legal"):
        gen.step([3, 1], prior, prior, 0)
    with pytest.raises(ValueError, match="zero total mass"):
        gen.step([], np.zeros(3), prior, 0)
    with pytest.raises(TypeError, match="float64"):
        gen.step([], prior.astype(np.float32), prior, 0)
    with pytest.raises(ValueError, match="iteration"):
        gen.step([], prior, prior, 0, iteration=4)


def test_cancel_stops_steps_with_keyboard_interrupt():
    game = liars_dice(1, 4)
    gen = rebel.SelfPlayGenerator(game, random_net(game), iterations=64)
    prior = np.asarray(game.hand_prior)
    gen.cancel()
    with pytest.raises(KeyboardInterrupt):
        gen.step([], prior, prior, 0)
    gen.reset_cancel()
    gen.step([], prior, prior, 0)
