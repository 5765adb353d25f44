"""ReBeL search: depth-limited CFR-D subgames, value-net plumbing and test-time search.

Known values: a depth-2 search on Liar's Dice 1x4f whose net always answers 0 reads about
0.61 (the original code reads 0.609); a search deeper than the game is the full-game
solver; with exact (oracle) leaf values the sampled mode (b) is close to an equilibrium.
"""
import threading
import time

import numpy as np
import pytest

import rebel
from rebel import _core as core


def liars_dice(dice: int, faces: int) -> core.Game:
    return rebel.make_game("liars_dice", {"num_dice": dice, "num_faces": faces})


KUHN = rebel.make_game("kuhn", {})
LD14 = liars_dice(1, 4)


def expl(game, tree, policy) -> float:
    return rebel.exploitability(game, tree, policy)["exploitability"]


@pytest.mark.parametrize("game", [KUHN, liars_dice(1, 3), LD14], ids=["kuhn", "1x3f", "1x4f"])
@pytest.mark.parametrize("solver", ["lcfr", "lfp"])
@pytest.mark.parametrize("off_path", core.OFF_PATH_MODES)
def test_search_deeper_than_game_is_the_full_game_solver(game, solver, off_path):
    full = rebel.build_tree(game)
    reference = rebel.SubgameSolver(game, full, solver=solver, off_path=off_path)
    reference.run(256)
    search = core.TestTimeSearch(game, None, solver, 1000, 256, off_path=off_path)
    assert search.num_search_roots == 1
    policy = search.average_policy()
    np.testing.assert_array_equal(policy, reference.average_policy())
    assert expl(game, search.full_tree, policy) == expl(game, full, reference.average_policy())


def test_zero_net_depth2_liars_dice_1x4f_reads_061():
    search = core.TestTimeSearch(LD14, core.ZeroNet(LD14), "lcfr", 2, 1024)
    assert search.num_search_roots == 128
    mode_a = expl(LD14, search.full_tree, search.average_policy())
    assert mode_a == pytest.approx(0.609, abs=0.005)
    mode_b = search.evaluate_sampled(8, threads=1, seed=3)
    assert mode_b["num_policies"] == [1, 2, 4, 8]
    for value in mode_b["exploitability"]:
        assert value == pytest.approx(0.609, abs=0.005)


def test_kuhn_oracle_sampled_mode_is_near_equilibrium():
    search = core.TestTimeSearch(KUHN, core.OracleNet(KUHN, "lcfr", 1024), "lcfr", 2, 1024)
    result = search.evaluate_sampled(256, threads=2, seed=0)
    assert result["num_policies"] == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert result["exploitability"][-1] <= 0.005
    # The averaged policy is a valid full-game policy with the reported exploitability.
    averaged = result["average_policy"]
    core.validate_policy(KUHN, search.full_tree, averaged)
    assert expl(KUHN, search.full_tree, averaged) == pytest.approx(result["exploitability"][-1], abs=1e-12)


def test_oracle_values_match_full_game_values_at_the_root():
    # At the initial PBS the oracle solves the whole game: its values are the game's.
    prior = np.full(4, 0.25)
    full = rebel.SubgameSolver(LD14, rebel.build_tree(LD14), solver="lcfr")
    full.run(2048)
    root_mean = core.net_values(core.OracleNet(LD14, "lcfr", 2048, "root_mean"), LD14, [[]], 0, prior, prior)
    np.testing.assert_array_equal(root_mean[0], full.root_values(0))
    default = core.net_values(core.OracleNet(LD14, "lcfr", 2048), LD14, [[]], 0, prior, prior)
    np.testing.assert_array_equal(default, root_mean)
    # Best-response values against DCFR's average are far closer to the game value than
    # the linear mean of the iterates' root values.
    for player, value in ((0, 1 / 16), (1, -1 / 16)):
        values = core.net_values(core.OracleNet(LD14, "dcfr", 256, "best_response"), LD14, [[]], player, prior, prior)
        assert values.shape == (1, 4)
        assert values[0].mean() == pytest.approx(value, abs=1e-3)
        assert values[0].mean() >= value - 1e-12  # best responses can only gain


def test_oracle_rejects_unknown_value_kind():
    with pytest.raises(ValueError, match="best_response"):
        core.OracleNet(LD14, "dcfr", 16, "best")


def test_depth_limited_oracle_subgame_root_value_is_close_to_game_value():
    # CFR-D's root values converge slowly (leaf values depend on the current iterate's
    # beliefs); after 1024 iterations they read -0.0493 against the exact -1/18.
    tree = rebel.build_tree(KUHN, [], 2)
    solver = rebel.SubgameSolver(KUHN, tree, solver="lcfr", net=core.OracleNet(KUHN, "lcfr", 1024))
    solver.run(1024)
    assert np.mean(solver.root_values(0)) == pytest.approx(-1 / 18, abs=1e-2)
    assert np.mean(solver.root_values(1)) == pytest.approx(1 / 18, abs=1e-2)


def test_sampled_evaluation_is_deterministic_across_thread_counts():
    search = core.TestTimeSearch(liars_dice(1, 3), core.ZeroNet(liars_dice(1, 3)), "lcfr", 2, 64)
    one = search.evaluate_sampled(16, threads=1, seed=7)
    two = search.evaluate_sampled(16, threads=2, seed=7)
    assert one["exploitability"] == two["exploitability"]
    np.testing.assert_array_equal(one["average_policy"], two["average_policy"])
    other_seed = search.evaluate_sampled(16, threads=2, seed=8)
    assert not np.array_equal(one["average_policy"], other_seed["average_policy"])


def test_sampled_policy_is_reproducible_and_differs_by_seed():
    game = liars_dice(1, 3)
    search = core.TestTimeSearch(game, core.ZeroNet(game), "lcfr", 2, 64)
    np.testing.assert_array_equal(search.sampled_policy(1), search.sampled_policy(1))
    core.validate_policy(game, search.full_tree, search.sampled_policy(1))


def test_sample_iteration_uses_even_iterations_with_linear_weights():
    search = core.TestTimeSearch(KUHN, None, "lcfr", 10, 8)
    # Even iterations 0, 2, 4, 6 with weights 1, 2, 3, 4 (total 10).
    assert [search.sample_iteration(u) for u in (0.0, 0.09, 0.1, 0.29, 0.3, 0.59, 0.6, 0.999)] == [
        0, 0, 2, 2, 4, 4, 6, 6]


def test_python_net_matches_builtin_zero_net_and_accepts_torch():
    torch = pytest.importorskip("torch")
    tree = rebel.build_tree(LD14, [], 2)
    calls = []

    def zeros(queries):
        calls.append(queries.shape)
        assert queries.dtype == np.float32
        return torch.zeros(queries.shape[0], 4)

    python_net = core.PythonValueNet(LD14, zeros)
    a = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=python_net)
    b = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=core.ZeroNet(LD14))
    a.run(64)
    b.run(64)
    np.testing.assert_array_equal(a.average_policy(), b.average_policy())
    # At most one batched call per iteration; the first (uniform) iterate reaches every leaf.
    assert 0 < len(calls) <= 64 and calls[0] == (len(tree.pseudo_leaves), LD14.query_size)
    assert all(shape[0] <= len(tree.pseudo_leaves) and shape[1] == LD14.query_size for shape in calls)


def test_net_is_asked_exactly_the_leaves_the_opponent_reaches():
    """Each iteration's batch holds the pseudo-leaves with positive opponent reach, in tree
    order, with their normalised beliefs; skipping the others changes nothing (their
    values are scaled by a zero mass)."""
    torch = pytest.importorskip("torch")
    from helpers.reference_cfr import reach

    from rebel.nets.value_mlp import ValueMLP, to_native

    torch.manual_seed(3)
    native = to_native(ValueMLP.for_game(LD14), LD14)
    tree = rebel.build_tree(LD14, [], 2)
    leaves = np.asarray(tree.pseudo_leaves)
    prior = np.asarray(LD14.hand_prior)
    batches = []

    def recorded(queries):
        batches.append(queries.copy())
        return native.forward(queries)

    solver = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=core.PythonValueNet(LD14, recorded))
    skipped = 0
    for step in range(200):
        player = step % 2
        current = np.asarray(solver.current_policy())
        reaches = [reach(tree, current, p, prior) for p in (0, 1)]
        mass = reaches[1 - player][leaves].sum(axis=1)
        queried = leaves[mass > 0]
        skipped += len(leaves) - len(queried)
        calls_before = len(batches)
        solver.step()
        if len(queried) == 0:
            assert len(batches) == calls_before
            continue
        rows = batches[-1]
        assert len(batches) == calls_before + 1 and rows.shape[0] == len(queried)
        assert np.all(rows[:, 1] == player)
        features = LD14.feature_size
        for p in (0, 1):
            beliefs = reaches[p][queried]
            total = beliefs.sum(axis=1, keepdims=True)
            # The traverser's own reach may be 0 (uniform beliefs then); the opponent's is not.
            expected = np.where(total > 0, beliefs / np.where(total > 0, total, 1.0), 0.25)
            np.testing.assert_allclose(rows[:, 2 + features + 4 * p:2 + features + 4 * (p + 1)], expected, rtol=1e-6)
    assert skipped > 0  # regret matching does play actions with probability exactly 0
    assert solver.leaf_queries_skipped == skipped
    assert solver.leaf_queries + skipped == 200 * len(leaves)

    direct = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=native)
    direct.run(200)
    np.testing.assert_array_equal(direct.average_policy(), solver.average_policy())
    for p in (0, 1):
        np.testing.assert_array_equal(direct.root_values(p), solver.root_values(p))


def test_query_rows_carry_player_features_and_normalised_beliefs():
    seen = []
    net = core.PythonValueNet(LD14, lambda q: (seen.append(q.copy()), np.zeros((q.shape[0], 4)))[1])
    b0 = np.array([1.0, 2.0, 3.0, 4.0])
    b1 = np.array([0.0, 0.0, 1.0, 1.0])
    core.net_values(net, LD14, [[3]], 1, b0, b1)
    row = seen[0][0]
    features = LD14.feature_size
    assert row[0] == 1  # player 1 acts after one bid
    assert row[1] == 1  # queried player
    np.testing.assert_allclose(row[2 + features:2 + features + 4], b0 / b0.sum(), rtol=1e-6)
    np.testing.assert_allclose(row[2 + features + 4:], b1 / b1.sum(), rtol=1e-6)


def test_bayes_update():
    posterior = core.bayes_update(np.array([0.25, 0.25, 0.5]), np.array([1.0, 0.0, 0.5]))
    np.testing.assert_allclose(posterior, [0.5, 0.0, 0.5])


@pytest.mark.parametrize("depth", [0, -1])
def test_depth_below_one_is_rejected(depth):
    with pytest.raises(ValueError, match="depth"):
        core.TestTimeSearch(LD14, core.ZeroNet(LD14), "lcfr", depth, 16)


def test_depth_limited_search_without_net_is_rejected():
    with pytest.raises(ValueError, match="value net"):
        core.TestTimeSearch(LD14, None, "lcfr", 2, 16)


@pytest.mark.parametrize(
    "beliefs, message",
    [
        (np.array([np.nan, 0.2, 0.3, 0.4]), "finite"),
        (np.array([-0.1, 0.5, 0.3, 0.3]), "negative"),
        (np.array([0.5, 0.5]), "shape"),
        (np.zeros(4), "zero total mass"),
    ],
)
def test_bad_beliefs_are_rejected(beliefs, message):
    tree = rebel.build_tree(LD14, [], 2)
    with pytest.raises(ValueError, match=message):
        rebel.SubgameSolver(LD14, tree, beliefs0=beliefs, solver="lcfr", net=core.ZeroNet(LD14))


def test_wrong_belief_dtype_is_a_type_error():
    tree = rebel.build_tree(LD14, [], 2)
    with pytest.raises(TypeError, match="float64"):
        rebel.SubgameSolver(LD14, tree, beliefs0=np.ones(4, dtype=np.int64), solver="lcfr", net=core.ZeroNet(LD14))


@pytest.mark.parametrize("output", [np.zeros((1, 4)), np.zeros(4), np.full((99, 4), np.nan), "nonsense"])
def test_python_net_returning_garbage_is_a_clear_error(output):
    tree = rebel.build_tree(LD14, [], 2)

    def bad(queries):
        if isinstance(output, np.ndarray) and output.shape == (99, 4):
            return np.full((queries.shape[0], 4), np.nan)
        return output

    solver = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=core.PythonValueNet(LD14, bad))
    with pytest.raises(ValueError, match="python value net"):
        solver.run(2)


def test_python_net_exception_propagates():
    def boom(queries):
        raise RuntimeError("net exploded")

    tree = rebel.build_tree(LD14, [], 2)
    solver = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=core.PythonValueNet(LD14, boom))
    with pytest.raises(RuntimeError, match="net exploded"):
        solver.run(1)


def test_sampled_evaluation_releases_the_gil():
    search = core.TestTimeSearch(LD14, core.OracleNet(LD14, "lcfr", 64), "lcfr", 2, 64)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        search.evaluate_sampled(4, threads=1, seed=0)
    finally:
        done.set()
        counter.join()
    assert len(ticks) > 10


def test_pbs_normalises_and_updates_the_acting_player():
    pbs = core.Pbs(LD14, [], np.array([1.0, 1.0, 2.0, 4.0]), None)
    np.testing.assert_allclose(pbs.beliefs0, [0.125, 0.125, 0.25, 0.5])
    np.testing.assert_allclose(pbs.beliefs1, [0.25] * 4)
    after = pbs.after(LD14, 3, np.array([1.0, 0.0, 0.5, 0.25]))
    assert after.history == [3]
    np.testing.assert_allclose(after.beliefs0, [0.125, 0.0, 0.125, 0.125] / np.float64(0.375))
    np.testing.assert_allclose(after.beliefs1, pbs.beliefs1)
    # Player 1 acts next: its beliefs change, player 0's do not.
    later = after.after(LD14, 5, np.array([0.0, 1.0, 1.0, 0.0]))
    np.testing.assert_allclose(later.beliefs1, [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(later.beliefs0, after.beliefs0)


@pytest.mark.parametrize("history, message", [([3, 2], "not legal"), ([0, 8, 1], "terminal"), ([99], "not legal")])
def test_pbs_rejects_bad_histories(history, message):
    with pytest.raises(ValueError, match=message):
        core.Pbs(LD14, history)


def test_pbs_rejects_impossible_actions_and_bad_probabilities():
    pbs = core.Pbs(LD14)
    with pytest.raises(ValueError, match="probability 0"):
        pbs.after(LD14, 0, np.zeros(4))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        pbs.after(LD14, 0, np.array([np.nan, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="shape"):
        pbs.after(LD14, 0, np.ones(3))
    with pytest.raises(ValueError, match="negative"):
        core.Pbs(LD14, [], np.array([-1.0, 1.0, 1.0, 1.0]))
