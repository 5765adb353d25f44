"""Thread safety of the shared value net.

Several solver threads share one MlpValueNet while another thread swaps its weights. The
design (csrc/nets/mlp.h) promises that every batch runs entirely with the weights snapshot
it started with, and that a solver's results depend only on the weights each of its
batches saw. The tests check both, deterministically:

* batches of identical rows evaluated while weights alternate between two nets with
  different outputs must come back as all-A or all-B rows, never a mixture;
* CFR-D on a depth-1 subgame whose net reads only inputs that stay fixed (the queried
  player and player 1's untouched beliefs) has, every iteration, root values exactly equal
  to one net's output; a batch mixing versions would give a value equal to neither;
* solvers and self-play generators in threads that swap weights at barriers reproduce,
  bit for bit, a single-threaded run with the same weights sequence;
* the Python-callable net and the threaded exact evaluation agree with single-threaded runs.

These tests are torch-free so that the ThreadSanitizer job (scripts/sanitize.sh) runs them.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable, Dict, List

import numpy as np
import pytest
from helpers.mlp_arrays import random_weights

import rebel
from rebel import _core

#: Under a sanitizer everything is 5-20x slower: fewer repetitions, same checks.
UNDER_SANITIZER = bool(os.environ.get("REBEL_SANITIZER"))
NUM_THREADS = 4
NUM_SWAPS = 20 if UNDER_SANITIZER else 100
WAIT_S = 120.0


@pytest.fixture(scope="module")
def game() -> rebel.Game:
    return rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})


def run_threads(target: Callable[[int], None], count: int) -> None:
    """Runs target(i) in `count` threads; re-raises the first exception of any of them."""
    errors: List[BaseException] = []

    def wrapped(i: int) -> None:
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported to the test thread
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
        assert not t.is_alive(), "a worker thread hung"
    if errors:
        raise errors[0]


class Swapper:
    """Alternates a net between weights A and B `swaps` times; after each swap it waits until
    a worker has reported a batch computed with the new version, so both versions are used
    (deterministically) while other batches are still running across the swap."""

    def __init__(self, net: _core.MlpValueNet, weights: Dict[str, bytes], swaps: int) -> None:
        self.net, self.weights, self.swaps = net, weights, swaps
        self.current = "A"
        self.seen = threading.Condition()
        self.last_seen = ""
        self.done = threading.Event()

    def report(self, version: str) -> None:
        with self.seen:
            self.last_seen = version
            self.seen.notify_all()

    def run(self) -> None:
        try:
            for _ in range(self.swaps):
                self.current = "B" if self.current == "A" else "A"
                self.net.set_weights_bytes(self.weights[self.current])
                with self.seen:
                    assert self.seen.wait_for(lambda: self.last_seen == self.current, WAIT_S), "no batch saw the swap"
        finally:
            self.done.set()


def two_nets(game: rebel.Game, **kwargs) -> Dict[str, bytes]:
    return {"A": random_weights(game.query_size, game.num_hands, seed=1, **kwargs),
            "B": random_weights(game.query_size, game.num_hands, seed=2, **kwargs)}


def test_every_forward_batch_uses_one_weights_version(game):
    weights = two_nets(game, hidden=64, layers=2)
    net = _core.MlpValueNet(game, weights["A"])
    row = np.random.default_rng(3).standard_normal(game.query_size).astype(np.float32)
    batch = np.tile(row, (512, 1))  # 32 row blocks of 16: a batch spans many kernel calls
    expected = {v: _core.MlpValueNet(game, w).forward(row[None, :])[0] for v, w in weights.items()}
    assert not np.array_equal(expected["A"], expected["B"])
    swapper = Swapper(net, weights, NUM_SWAPS)
    counts = {"A": 0, "B": 0}
    lock = threading.Lock()

    def evaluate(_: int) -> None:
        while not swapper.done.is_set():
            out = net.forward(batch)
            matches = [v for v, e in expected.items() if np.array_equal(out, np.broadcast_to(e, out.shape))]
            assert len(matches) == 1, "a batch mixed two weights versions"
            with lock:
                counts[matches[0]] += 1
            swapper.report(matches[0])

    swap_thread = threading.Thread(target=swapper.run)
    swap_thread.start()
    run_threads(evaluate, NUM_THREADS)
    swap_thread.join()
    assert counts["A"] >= NUM_SWAPS // 2 and counts["B"] >= NUM_SWAPS // 2


def test_cfr_d_threads_sharing_a_net_see_one_version_per_iteration(game):
    # The net reads only the queried player (column 1) and player 1's beliefs, which are the
    # prior everywhere in the depth-1 subgame at the root (player 1 has not acted). All 8
    # leaves then get the same values, regrets stay exactly 0, the policy stays uniform
    # (1/8, exact) and each iteration's root values are exactly the net's output.
    F, H = game.feature_size, game.num_hands
    columns = [1] + list(range(2 + F + H, 2 + F + 2 * H))
    weights = two_nets(game, hidden=256, layers=2, input_columns=columns)
    tree = rebel.build_tree(game, [], 1)
    prior = np.asarray(game.hand_prior)
    expected = {v: [_core.net_values(_core.MlpValueNet(game, w), game, [[0]], p, prior, prior)[0] for p in (0, 1)]
                for v, w in weights.items()}
    assert not np.array_equal(expected["A"][0], expected["B"][0])

    # Single-threaded, one version: the root values are the net's output at every iteration.
    solver = rebel.SubgameSolver(game, tree, net=_core.MlpValueNet(game, weights["A"]))
    for step in range(6):
        solver.step()
        np.testing.assert_array_equal(solver.last_root_values(step % 2), expected["A"][step % 2])

    net = _core.MlpValueNet(game, weights["A"])
    swapper = Swapper(net, weights, NUM_SWAPS)

    def solve(_: int) -> None:
        s = rebel.SubgameSolver(game, tree, net=net)
        while not swapper.done.is_set():
            s.step()
            p = (s.num_steps - 1) % 2
            values = s.last_root_values(p)
            matches = [v for v in expected if np.array_equal(values, expected[v][p])]
            assert len(matches) == 1, f"iteration {s.num_steps}: root values {values} mix weights versions"
            swapper.report(matches[0])

    swap_thread = threading.Thread(target=swapper.run)
    swap_thread.start()
    run_threads(solve, NUM_THREADS)
    swap_thread.join()


def test_threads_swapping_at_barriers_equal_a_single_threaded_run(game):
    # Each thread solves its own depth-2 CFR-D subgame in rounds of 16 iterations; between
    # rounds (all threads at a barrier) the shared net moves to the next of three weights.
    versions = [random_weights(game.query_size, game.num_hands, seed=s) for s in (11, 12, 13)]
    roots: List[List[int]] = [[], [0], [3], [0, 5]]
    rounds, per_round = (4, 8) if UNDER_SANITIZER else (9, 16)
    schedule = [versions[r % len(versions)] for r in range(rounds)]

    def results(solver: rebel.SubgameSolver) -> np.ndarray:
        return np.concatenate([solver.average_policy().ravel(), solver.root_values(0), solver.root_values(1)])

    serial = []
    for root in roots:
        net = _core.MlpValueNet(game, schedule[0])
        solver = rebel.SubgameSolver(game, rebel.build_tree(game, root, 2), net=net)
        for w in schedule:
            net.set_weights_bytes(w)
            solver.run(per_round)
        serial.append(results(solver))

    shared = _core.MlpValueNet(game, schedule[0])
    solvers = [rebel.SubgameSolver(game, rebel.build_tree(game, root, 2), net=shared) for root in roots]

    def swap() -> None:  # runs once per round, by one thread, while all others wait
        shared.set_weights_bytes(schedule[min(swap.round, rounds - 1)])
        swap.round += 1

    swap.round = 1
    barrier = threading.Barrier(len(roots), action=swap, timeout=WAIT_S)

    def solve(i: int) -> None:
        for _ in range(rounds):
            solvers[i].run(per_round)
            barrier.wait()

    run_threads(solve, len(roots))
    for i, root in enumerate(roots):
        assert solvers[i].num_steps == rounds * per_round
        np.testing.assert_array_equal(results(solvers[i]), serial[i], err_msg=f"root {root}")


def test_selfplay_threads_swapping_at_barriers_equal_a_single_threaded_run():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    versions = [random_weights(game.query_size, game.num_hands, seed=s) for s in (21, 22)]
    prior = np.asarray(game.hand_prior)
    rounds = 3 if UNDER_SANITIZER else 6
    iterations = 32 if UNDER_SANITIZER else 64

    def record(step: _core.SelfPlayStep) -> tuple:
        return step.next_history, step.sampled_iteration, step.targets.tobytes(), step.rows.tobytes()

    net = _core.MlpValueNet(game, versions[0])
    generator = rebel.SelfPlayGenerator(game, net, iterations=iterations)
    serial = {}
    for r in range(rounds):
        net.set_weights_bytes(versions[r % 2])
        for i in range(NUM_THREADS):
            serial[r, i] = record(generator.step([], prior, prior, 100 * r + i))

    net.set_weights_bytes(versions[0])
    threaded = {}
    state = {"round": 0}

    def swap() -> None:
        state["round"] += 1
        net.set_weights_bytes(versions[state["round"] % 2])

    barrier = threading.Barrier(NUM_THREADS, action=swap, timeout=WAIT_S)

    def play(i: int) -> None:
        for r in range(rounds):
            threaded[r, i] = record(generator.step([], prior, prior, 100 * r + i))
            barrier.wait()

    run_threads(play, NUM_THREADS)
    assert threaded == serial
    assert len({serial[r, 0][2] for r in range(rounds)}) > 1  # the versions give different targets


def test_python_callable_net_from_several_threads(game):
    F, H = game.feature_size, game.num_hands
    calls = {"count": 0}
    lock = threading.Lock()

    def values(queries: np.ndarray) -> np.ndarray:  # runs with the GIL held
        with lock:
            calls["count"] += 1
        beliefs = queries[:, 2 + F: 2 + F + 2 * H].astype(np.float64)
        return np.sin(3.0 * beliefs[:, :H] - beliefs[:, H:] + queries[:, 1:2])

    roots: List[List[int]] = [[], [1], [2], [0, 4]]
    iterations = 16 if UNDER_SANITIZER else 64

    def solve_one(root: List[int], net) -> np.ndarray:
        solver = rebel.SubgameSolver(game, rebel.build_tree(game, root, 2), net=net)
        solver.run(iterations)
        return np.concatenate([solver.average_policy().ravel(), solver.root_values(0), solver.root_values(1)])

    shared = _core.PythonValueNet(game, values)
    serial = [solve_one(root, shared) for root in roots]
    serial_calls = calls["count"]
    threaded: Dict[int, np.ndarray] = {}
    run_threads(lambda i: threaded.__setitem__(i, solve_one(roots[i], shared)), len(roots))
    assert calls["count"] == 2 * serial_calls
    for i in range(len(roots)):
        np.testing.assert_array_equal(threaded[i], serial[i])

    # A callable that raises in every thread: each thread gets the exception, nothing hangs.
    def broken(queries: np.ndarray) -> np.ndarray:
        raise RuntimeError("value net failed")

    failures: List[str] = []

    def solve_broken(i: int) -> None:
        try:
            solve_one(roots[i], _core.PythonValueNet(game, broken))
        except RuntimeError as e:
            failures.append(str(e))

    run_threads(solve_broken, len(roots))
    assert failures == ["value net failed"] * len(roots)


def test_threaded_exact_evaluation_with_a_shared_mlp_net():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    net = _core.MlpValueNet(game, random_weights(game.query_size, game.num_hands, seed=31))
    iterations = 32 if UNDER_SANITIZER else 128
    search = _core.TestTimeSearch(game, net, "lcfr", 2, iterations)
    one = search.evaluate_sampled(4, threads=1, seed=5)
    two = search.evaluate_sampled(4, threads=3, seed=5)
    assert one["exploitability"] == two["exploitability"]
    np.testing.assert_array_equal(one["average_policy"], two["average_policy"])
    assert len(one["exploitability"]) == 3 and all(0.0 < e < 1.0 for e in one["exploitability"])


def test_swapping_from_many_threads_while_solving(game):
    # Weights replaced from several threads at once while solvers run: no crash, no torn
    # snapshot (the solvers' values stay finite and the net ends on one of the versions).
    weights = two_nets(game)
    net = _core.MlpValueNet(game, weights["A"])
    tree = rebel.build_tree(game, [], 2)
    stop = threading.Event()

    def work(i: int) -> None:
        if i < 2:
            for k in range(NUM_SWAPS):
                net.set_weights_bytes(weights["AB"[(i + k) % 2]])
            stop.set()
        else:
            solver = rebel.SubgameSolver(game, tree, net=net)
            while not stop.is_set() or solver.num_steps < 8:
                solver.run(2)
            assert np.all(np.isfinite(solver.root_values(0))) and np.all(np.isfinite(solver.root_values(1)))

    started = time.monotonic()
    run_threads(work, 4)
    assert time.monotonic() - started < WAIT_S
    row = np.zeros((1, game.query_size), dtype=np.float32)
    out = net.forward(row)
    assert any(np.array_equal(out, _core.MlpValueNet(game, w).forward(row)) for w in weights.values())
