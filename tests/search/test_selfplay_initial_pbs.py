"""selfplay.initial_pbs_keep: the initial PBS's examples repeat in every episode and no
search queries that PBS, so a run may record them for only a fraction of the episodes. The
quota counts recorded examples, the choice draws from the loop's own seeded generator (so a
resumed loop continues exactly), and keep = 1 leaves the random stream untouched."""
from __future__ import annotations

import numpy as np
import pytest

import rebel
from rebel import _core
from rebel.config.train import ConfigError, load_train_config
from rebel.search.selfplay import GenerationPool, SelfPlayLoop
from tests.helpers.selfplay_walk import random_net


def initial_rows(game):
    """The two query rows of the initial PBS (queried player 0 and 1) as self-play writes them."""
    prior = np.asarray(game.hand_prior, dtype=np.float64)
    gen = rebel.SelfPlayGenerator(game, random_net(game), depth=10, iterations=4, epsilon=0.25)
    return np.asarray(gen.step([], prior, prior, 0).rows, dtype=np.float32)


def generate(game, keep, examples, seed=3, loops=1):
    gen = rebel.SelfPlayGenerator(game, random_net(game), depth=10, iterations=8, epsilon=0.25)
    made = [SelfPlayLoop(game, gen, np.random.SeedSequence([seed, i]), keep) for i in range(loops)]
    rows, targets = [], []
    pool = GenerationPool(made, lambda r, t: (rows.append(np.asarray(r)), targets.append(np.asarray(t))))
    pool.start(0)
    try:
        pool.allow(examples)
        assert pool.wait_generated(examples, timeout=120)
        pool.wait_idle()
    finally:
        pool.stop(cancel_running=True)
    return np.concatenate(rows), made, pool


def count_initial(rows, initial):
    return int(sum(np.array_equal(r, initial[0]) or np.array_equal(r, initial[1]) for r in rows))


@pytest.fixture(scope="module")
def leduc():
    return rebel.make_game("leduc")


def test_keep_one_records_every_initial_pbs_and_keeps_the_random_stream(leduc):
    initial = initial_rows(leduc)
    rows, (loop,), pool = generate(leduc, 1.0, 200)
    assert rows.shape[0] == pool.generated() == 200
    # Leduc's episodes are one or two subgames: every episode's first step is the initial PBS.
    n = count_initial(rows, initial)
    assert n % 2 == 0 and n // 2 >= loop.stats.episodes and n > rows.shape[0] // 3
    # The stream of a keep = 1 loop is the one a loop without the option draws.
    plain = SelfPlayLoop(leduc, rebel.SelfPlayGenerator(leduc, random_net(leduc), depth=10, iterations=8,
                                                        epsilon=0.25), np.random.SeedSequence([3, 0]))
    again = SelfPlayLoop(leduc, rebel.SelfPlayGenerator(leduc, random_net(leduc), depth=10, iterations=8,
                                                        epsilon=0.25), np.random.SeedSequence([3, 0]), 1.0)
    for _ in range(6):
        a, b = plain.step(), again.step()
        assert np.array_equal(np.asarray(a.rows), np.asarray(b.rows)) and again.last_step_recorded


def test_keep_zero_records_no_initial_pbs_and_fills_the_quota(leduc):
    initial = initial_rows(leduc)
    rows, (loop,), pool = generate(leduc, 0.0, 200)
    assert rows.shape[0] == pool.generated() == 200
    assert count_initial(rows, initial) == 0
    # Round-two roots only: the board is dealt in every recorded row (features [2, 4) are the round).
    assert np.all(rows[:, 2 + 1] == 1.0)
    # Every episode still solved its initial PBS: more steps than recorded pairs.
    assert loop.stats.steps >= 100 + loop.stats.episodes


def test_keep_fraction_is_deterministic_and_resumes_exactly(leduc):
    initial = initial_rows(leduc)
    rows, _, _ = generate(leduc, 0.5, 240, seed=5)
    again, _, _ = generate(leduc, 0.5, 240, seed=5)
    assert np.array_equal(rows, again)
    share = count_initial(rows, initial) / rows.shape[0]
    everything, _, _ = generate(leduc, 1.0, 240, seed=5)
    assert 0.0 < share < count_initial(everything, initial) / everything.shape[0]

    # A loop's state (its generator included) carries the keep draws: stop after a few steps,
    # load the state into a new loop, and the steps continue as the uninterrupted loop's.
    def make():
        gen = rebel.SelfPlayGenerator(leduc, random_net(leduc), depth=10, iterations=8, epsilon=0.25)
        return SelfPlayLoop(leduc, gen, np.random.SeedSequence([9, 0]), 0.5)

    straight = make()
    reference = [(straight.step().rows, straight.last_step_recorded) for _ in range(12)]
    first = make()
    for _ in range(5):
        first.step()
    resumed = make()
    resumed.load_state(first.state())
    for rows_ref, kept_ref in reference[5:]:
        step = resumed.step()
        assert np.array_equal(np.asarray(step.rows), np.asarray(rows_ref)) and resumed.last_step_recorded == kept_ref


def test_bad_initial_pbs_keep_is_named():
    with pytest.raises(ConfigError, match="selfplay.initial_pbs_keep must lie in"):
        load_train_config(None, ["selfplay.initial_pbs_keep=1.5"])
    with pytest.raises(ValueError, match="initial_keep must be in"):
        game = _core.make_game("kuhn", {})
        SelfPlayLoop(game, rebel.SelfPlayGenerator(game, random_net(game)), 0, -0.1)
    # Kuhn at depth 10: the first subgame is the whole game, so keep = 0 would record nothing.
    with pytest.raises(ConfigError, match="would drop every example"):
        load_train_config(None, ["game.name=kuhn", "search.depth=10", "selfplay.initial_pbs_keep=0"])
    load_train_config(None, ["game.name=kuhn", "search.depth=10", "selfplay.initial_pbs_keep=0.5"])
    load_train_config(None, ["game.name=kuhn", "search.depth=1", "selfplay.initial_pbs_keep=0"])


def test_ray_worker_drops_like_the_local_pool(leduc):
    """The Ray actor's generate() (called here in-process, its weights already in place) runs
    the loops with the run's initial_pbs_keep: the examples of a local pool from the same loop
    state, bit for bit."""
    from rebel.distributed.worker import RebelWorker

    search = {"solver": "lcfr", "depth": 10, "iterations": 8, "epsilon": 0.25, "iteration_sampling": "linear",
              "off_path": "skip", "initial_pbs_keep": 0.0}
    worker = RebelWorker("leduc", {}, search, "fp32")
    worker._native, worker._weights_version = random_net(leduc), 0
    state = SelfPlayLoop.initial_state(leduc, np.random.SeedSequence([2, 0]))
    payload, (after,) = worker.generate([state], 60, 0, [None])
    assert payload["rows"].shape[0] == 60 and count_initial(payload["rows"], initial_rows(leduc)) == 0

    rows, (loop,), _ = generate(leduc, 0.0, 60, seed=2)
    assert np.array_equal(payload["rows"], rows)
    assert after["steps"] == loop.stats.steps and list(after["history"]) == loop.history
