"""SelfPlayGenerator(reuse_initial_solve=True): every episode starts at the initial PBS, so
its solve (every iterate the walk may draw and the root values) is kept while the beliefs and
the net's weights stay the same. Steps that reuse it are bit for bit those of a fresh solve;
new weights, other beliefs and nets that promise nothing are solved again. Torch-free (the
nets come from numpy weights), so that the sanitizer builds run it (scripts/sanitize.sh)."""
from __future__ import annotations

import numpy as np
import pytest
from helpers.mlp_arrays import random_weights

import rebel
from rebel import _core


def random_net(game, seed=1):
    """A native 2 x 32 MLP with seeded random weights."""
    return _core.MlpValueNet(game, random_weights(int(game.query_size), int(game.num_hands), seed=seed))


@pytest.fixture(scope="module")
def leduc():
    return rebel.make_game("leduc")


def same_step(a, b):
    """Every output of two steps, bit for bit."""
    fields = ("rows", "targets", "iterate", "policy_rows", "policy_targets", "policy_weights", "policy_legal")
    for name in fields:
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name
    assert (a.sampled_iteration, a.exploring_player, list(a.hands), list(a.next_history), a.next_terminal) == \
        (b.sampled_iteration, b.exploring_player, list(b.hands), list(b.next_history), b.next_terminal)
    if not a.next_terminal:
        assert all(np.array_equal(x, y) for x, y in zip(a.next_beliefs, b.next_beliefs))


def generators(game, net, **kw):
    return (rebel.SelfPlayGenerator(game, net, reuse_initial_solve=False, **kw),
            rebel.SelfPlayGenerator(game, net, reuse_initial_solve=True, **kw))


@pytest.mark.parametrize("name, params, depth", [
    ("leduc_nolimit", {}, 10),                         # public chance: the walk stops after the deal
    ("liars_dice", {"num_dice": 1, "num_faces": 4}, 2),  # depth-limited leaves
])
@pytest.mark.parametrize("collect_policy", [False, True])
def test_reused_initial_solve_gives_the_same_steps(name, params, depth, collect_policy):
    game = _core.make_game(name, params)
    prior = np.asarray(game.hand_prior, dtype=np.float64)
    plain, reusing = generators(game, random_net(game), depth=depth, iterations=64, collect_policy=collect_policy)
    for seed in range(30):
        same_step(plain.step([], prior, prior, seed, keep_iterate=True),
                  reusing.step([], prior, prior, seed, keep_iterate=True))
    assert (reusing.initial_solves_computed, reusing.initial_solves_reused) == (1, 29)
    assert (plain.initial_solves_computed, plain.initial_solves_reused) == (0, 0)
    # Other beliefs at the initial public state: solved again and kept instead.
    other = np.random.default_rng(0).random(game.num_hands) + 0.1
    same_step(plain.step([], other, prior, 7), reusing.step([], other, prior, 7))
    assert reusing.initial_solves_computed == 2


def test_new_weights_are_solved_again(leduc):
    """The kept solve belongs to the net's weights: installing new ones (as the trainer does
    every epoch) makes the next step solve again, with the new weights."""
    prior = np.asarray(leduc.hand_prior, dtype=np.float64)
    other = random_weights(int(leduc.query_size), int(leduc.num_hands), seed=4)
    net = random_net(leduc)
    reusing = rebel.SelfPlayGenerator(leduc, net, depth=10, iterations=32)
    reusing.step([], prior, prior, 1)
    reusing.step([], prior, prior, 2)
    net.set_weights_bytes(other)
    fresh = rebel.SelfPlayGenerator(leduc, _core.MlpValueNet(leduc, other), depth=10, iterations=32,
                                    reuse_initial_solve=False)
    same_step(reusing.step([], prior, prior, 3), fresh.step([], prior, prior, 3))
    assert (reusing.initial_solves_computed, reusing.initial_solves_reused) == (2, 1)


def test_steps_the_cache_does_not_apply_to(leduc):
    prior = np.asarray(leduc.hand_prior, dtype=np.float64)
    net = random_net(leduc)
    plain, reusing = generators(leduc, net, depth=10, iterations=32)
    # An odd forced iteration (only even iterates are kept) and a later PBS solve as before.
    same_step(plain.step([], prior, prior, 0, iteration=5), reusing.step([], prior, prior, 0, iteration=5))
    step = plain.step([], prior, prior, 1)
    while step.next_terminal:
        step = plain.step([], prior, prior, step.sampled_iteration + 2)
    later = (list(step.next_history), step.next_beliefs[0], step.next_beliefs[1])
    same_step(plain.step(*later, 9), reusing.step(*later, 9))
    assert (reusing.initial_solves_computed, reusing.initial_solves_reused) == (0, 0)
    # A net that promises nothing about its values (a Python callable) is never reused.
    python_net = _core.PythonValueNet(leduc, lambda rows: np.zeros((rows.shape[0], leduc.num_hands), np.float32))
    gen = rebel.SelfPlayGenerator(leduc, python_net, depth=10, iterations=16)
    for seed in range(3):
        gen.step([], prior, prior, seed)
    assert (gen.initial_solves_computed, gen.initial_solves_reused) == (0, 0)
    # The full-depth (oracle) solve asks no net: always the same function, reused.
    oracle = rebel.SelfPlayGenerator(leduc, None, depth=10, iterations=16, full_depth=True)
    oracle_plain = rebel.SelfPlayGenerator(leduc, None, depth=10, iterations=16, full_depth=True,
                                           reuse_initial_solve=False)
    for seed in range(3):
        same_step(oracle.step([], prior, prior, seed), oracle_plain.step([], prior, prior, seed))
    assert (oracle.initial_solves_computed, oracle.initial_solves_reused) == (1, 2)


def test_threads_share_the_kept_solve(leduc):
    """Loops in threads step the initial PBS at once; each step is the one a generator
    without the cache gives for its seed, and the PBS is solved once."""
    import threading

    prior = np.asarray(leduc.hand_prior, dtype=np.float64)
    plain, reusing = generators(leduc, random_net(leduc), depth=10, iterations=64)
    got: dict[int, object] = {}

    def work(seeds):
        for seed in seeds:
            got[seed] = reusing.step([], prior, prior, seed, keep_iterate=True)

    threads = [threading.Thread(target=work, args=(range(k, 40, 4),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed in range(40):
        same_step(got[seed], plain.step([], prior, prior, seed, keep_iterate=True))
    assert (reusing.initial_solves_computed, reusing.initial_solves_reused) == (1, 39)


def random_policy_net(game, seed=2):
    """A native 2 x 32 MLP policy net with seeded random weights."""
    outputs = int(game.num_hands) * int(game.num_actions)
    return _core.MlpPolicyNet(game, random_weights(int(game.query_size), outputs, seed=seed))


@pytest.mark.parametrize("name, params, depth", [
    ("leduc_nolimit", {}, 10),
    ("liars_dice", {"num_dice": 1, "num_faces": 4}, 2),
])
def test_warm_started_initial_solve_is_reused(name, params, depth):
    """Algorithm 1's self-play: each solve starts from the policy net (warm_iterations K).
    The kept solve is keyed by both nets' weights; its steps are bit for bit a fresh
    warm-started solve's, and new policy-net weights are solved again."""
    game = _core.make_game(name, params)
    prior = np.asarray(game.hand_prior, dtype=np.float64)
    policy_net = random_policy_net(game)
    kw = dict(depth=depth, iterations=32, policy_net=policy_net, warm_iterations=8, collect_policy=True)
    plain, reusing = generators(game, random_net(game), **kw)
    for seed in range(12):
        same_step(plain.step([], prior, prior, seed, keep_iterate=True),
                  reusing.step([], prior, prior, seed, keep_iterate=True))
    assert (reusing.initial_solves_computed, reusing.initial_solves_reused) == (1, 11)
    # The warm start matters: a cold start from the same value net gives other iterates.
    cold = rebel.SelfPlayGenerator(game, random_net(game), depth=depth, iterations=32, collect_policy=True)
    differs = [not np.array_equal(np.asarray(cold.step([], prior, prior, s, keep_iterate=True).iterate),
                                  np.asarray(reusing.step([], prior, prior, s, keep_iterate=True).iterate))
               for s in range(4)]
    assert any(differs)
    # New policy-net weights (the trainer pushes them every epoch): solved again, and the
    # steps are those of a generator built on the new weights.
    other = random_weights(int(game.query_size), int(game.num_hands) * int(game.num_actions), seed=5)
    policy_net.set_weights_bytes(other)
    fresh = rebel.SelfPlayGenerator(game, random_net(game), reuse_initial_solve=False,
                                    **{**kw, "policy_net": _core.MlpPolicyNet(game, other)})
    computed = reusing.initial_solves_computed
    for seed in (20, 21):
        same_step(reusing.step([], prior, prior, seed), fresh.step([], prior, prior, seed))
    assert reusing.initial_solves_computed == computed + 1
