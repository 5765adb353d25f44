"""The search solvers beyond CFR-D and FP: FLOP (linear FP, optimistic) and the two forms of
CFR-AVG (leaf PBSs of the average policy; csrc/solvers/subgame_solver.h, LeafBeliefs).

Known values: FLOP is bit for bit linear FP with the optimistic flag; CFR-AVG is CFR-D
wherever leaf values do not depend on beliefs (no pseudo-leaves, or a belief-blind net);
the beliefs CFR-AVG asks the net about are the average policy's, recomputed here in NumPy;
with exact (oracle) leaves its depth-limited search converges to an equilibrium of Liar's
Dice 1x3f and its root values to Kuhn's game value -1/18.
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers.reference_cfr import reach

import rebel
from rebel import _core as core
from rebel.config.train import load_train_config
from rebel.search.settings import EvalSettings
from rebel.search.solve import SEARCH_SOLVERS, SOLVERS, solve

KUHN = rebel.make_game("kuhn", {})
LD13 = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
LD14 = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})


def random_native_net(game):
    torch = pytest.importorskip("torch")
    from rebel.nets.value_mlp import ValueMLP, to_native

    torch.manual_seed(5)
    return to_native(ValueMLP.for_game(game), game)


def test_solver_names():
    assert "flop" in SOLVERS and "flop" in SEARCH_SOLVERS
    assert {"cfr-avg", "cfr-avg-modified"} <= set(SEARCH_SOLVERS) - set(SOLVERS)
    with pytest.raises(ValueError, match="choose one of cfr, lcfr, cfr\\+, dcfr, fp, lfp, flop, cfr-avg, "
                                         "cfr-avg-modified"):
        rebel.SubgameSolver(KUHN, rebel.build_tree(KUHN), solver="cfr-average")


@pytest.mark.parametrize("depth", [None, 2])
def test_flop_is_linear_fp_with_the_optimistic_flag(depth):
    tree = rebel.build_tree(LD14) if depth is None else rebel.build_tree(LD14, [], depth)
    net = None if depth is None else random_native_net(LD14)
    flop = rebel.SubgameSolver(LD14, tree, solver="flop", net=net)
    lfp = rebel.SubgameSolver(LD14, tree, solver="lfp", optimistic=True, net=net)
    flop.run(200)
    lfp.run(200)
    np.testing.assert_array_equal(flop.average_policy(), lfp.average_policy())
    for p in (0, 1):
        np.testing.assert_array_equal(flop.root_values(p), lfp.root_values(p))


def test_flop_full_game_is_optimistic_lfp():
    a = solve(LD14, "flop", 1024, progress=False)
    b = solve(LD14, "lfp", 1024, optimistic=True, progress=False)
    assert a.exploitability == b.exploitability and a.optimistic
    # Paper Table 2's full-game linear FP row on 1x4f reads 0.012; the optimistic form is not worse.
    assert a.exploitability < 0.0125


@pytest.mark.parametrize("solver", ["cfr-avg", "cfr-avg-modified"])
def test_cfr_avg_without_pseudo_leaves_is_linear_cfr(solver):
    tree = rebel.build_tree(LD14)
    a = rebel.SubgameSolver(LD14, tree, solver=solver)
    b = rebel.SubgameSolver(LD14, tree, solver="lcfr")
    a.run(300)
    b.run(300)
    np.testing.assert_array_equal(a.average_policy(), b.average_policy())


def belief_blind(game):
    """A net whose values depend on the public state and the queried player, not on beliefs."""
    F = game.feature_size
    weights = np.linspace(-1.0, 1.0, F * game.num_hands).reshape(F, game.num_hands)

    def values(rows: np.ndarray) -> np.ndarray:
        return rows[:, 2:2 + F].astype(np.float64) @ weights + (rows[:, 1:2] - 0.5)
    return core.PythonValueNet(game, values)


@pytest.mark.parametrize("solver", ["cfr-avg", "cfr-avg-modified"])
def test_cfr_avg_with_belief_blind_leaves_is_cfr_d(solver):
    """Where V does not depend on beliefs both forms give CFR-D's leaf values: the modified
    form exactly, the sound form ((t+1)/2) V - ((t-1)/2) V up to rounding."""
    tree = rebel.build_tree(LD14, [], 2)
    a = rebel.SubgameSolver(LD14, tree, solver=solver, net=belief_blind(LD14))
    b = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=belief_blind(LD14))
    a.run(200)
    b.run(200)
    if solver == "cfr-avg-modified":
        np.testing.assert_array_equal(a.average_policy(), b.average_policy())
    else:
        np.testing.assert_allclose(a.average_policy(), b.average_policy(), rtol=0, atol=1e-9)
        assert a.leaf_queries >= b.leaf_queries  # it also asks where the iterate's mass is 0


def normalised(rows: np.ndarray, H: int) -> np.ndarray:
    total = rows.sum(axis=1, keepdims=True)
    return np.where(total > 0, rows / np.where(total > 0, total, 1.0), 1.0 / H)


@pytest.mark.parametrize("solver", ["cfr-avg", "cfr-avg-modified"])
def test_cfr_avg_asks_about_the_average_policys_leaf_beliefs(solver):
    native = random_native_net(LD14)
    tree = rebel.build_tree(LD14, [], 2)
    leaves = np.asarray(tree.pseudo_leaves)
    prior = np.asarray(LD14.hand_prior)
    batches: list[np.ndarray] = []

    def recorded(queries):
        batches.append(queries.copy())
        return native.forward(queries)

    s = rebel.SubgameSolver(LD14, tree, solver=solver, net=core.PythonValueNet(LD14, recorded))
    direct = rebel.SubgameSolver(LD14, tree, solver=solver, net=native)
    features = LD14.feature_size
    for step in range(120):
        player = step % 2
        # The average after the previous update (the current iterate already folded in).
        average = np.asarray(s.average_policy())
        current = np.asarray(s.current_policy())
        avg_reach = [reach(tree, average, p, prior)[leaves] for p in (0, 1)]
        cur_mass = reach(tree, current, 1 - player, prior)[leaves].sum(axis=1)
        avg_mass = avg_reach[1 - player].sum(axis=1)
        expected = avg_mass > 0 if solver == "cfr-avg" else (avg_mass > 0) & (cur_mass > 0)
        before = len(batches)
        s.step()
        direct.step()
        if not expected.any():
            assert len(batches) == before
            continue
        rows = batches[-1]
        assert rows.shape[0] == expected.sum() and np.all(rows[:, 1] == player)
        for p in (0, 1):
            np.testing.assert_allclose(rows[:, 2 + features + 4 * p:2 + features + 4 * (p + 1)],
                                       normalised(avg_reach[p][expected], 4), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(direct.average_policy(), s.average_policy())


def test_cfr_avg_sound_form_differences_the_average_values():
    """Update t's leaf values are ((t+1)/2) V_t - ((t-1)/2) V_(t-1): with a net answering
    c_k at its k-th query of a player, the regrets of a one-leaf subgame show it."""
    tree = rebel.build_tree(KUHN, [], 1)
    assert len(tree.pseudo_leaves) > 0
    seen: list[float] = []

    def counting(rows: np.ndarray) -> np.ndarray:
        seen.append(len(seen))
        return np.full((rows.shape[0], KUHN.num_hands), float(len(seen)))
    s = rebel.SubgameSolver(KUHN, tree, solver="cfr-avg", net=core.PythonValueNet(KUHN, counting))
    # One call per update: player 0's t = 1, 2, 3 get answers 1, 3, 5 (player 1's: 2, 4, 6).
    for _ in range(6):
        s.step()
    assert len(seen) == 6
    # Player 0's leaf values: v_1 = 1, v_2 = 1.5 * 3 - 0.5 * 1 = 4, v_3 = 2 * 5 - 1 * 3 = 7; their
    # linear mean (1 * 1 + 2 * 4 + 3 * 7) / 6 = 5 is V_3, the defining property.
    # Through the root: Kuhn's first action leads to the leaves after one action, whose values
    # are the same for every hand, so the root's last value for player 0 is mass * v_3.
    last = np.asarray(s.last_root_values(0))
    assert np.allclose(last, last[0])
    # The root beliefs are normalised and player 1 does not act above the leaves, so the
    # opponent's mass at every leaf is 1.
    np.testing.assert_allclose(last, 7.0, rtol=1e-12)


def test_cfr_avg_with_exact_leaves_converges_on_liars_dice_1x3f():
    """Mode (a) of the depth-2 search with exact leaves (an oracle of 2048 DCFR iterations),
    measured: T = 256 / 1024 / 4096: lcfr 6.9e-4 / 4e-5 / 3e-6, cfr-avg 1.5e-3 / 1e-4 / 1e-5,
    cfr-avg-modified 6.2e-3 / 3.9e-4 / 2e-5."""
    oracle = core.OracleNet(LD13, "dcfr", 2048)
    results = {}
    for solver in ("cfr-avg", "cfr-avg-modified"):
        for T in (256, 1024):
            search = core.TestTimeSearch(LD13, oracle, solver, 2, T)
            results[solver, T] = rebel.exploitability(LD13, search.full_tree, search.average_policy())["exploitability"]
    assert results["cfr-avg", 1024] < 3e-4 and results["cfr-avg", 1024] < results["cfr-avg", 256] / 4
    assert results["cfr-avg-modified", 1024] < 1e-3
    assert results["cfr-avg-modified", 1024] < results["cfr-avg-modified", 256] / 4


def test_cfr_avg_modified_root_values_reach_kuhns_game_value():
    """A depth-2 subgame at Kuhn's root with exact leaves (an oracle of 2048 DCFR
    iterations), 4096 iterations: player 0's averaged root value is -0.05594 (lcfr: -0.05220),
    player 1's 0.04519 (lcfr: 0.05183), against the game value -1/18 = -0.05556."""
    tree = rebel.build_tree(KUHN, [], 2)
    s = rebel.SubgameSolver(KUHN, tree, solver="cfr-avg-modified", net=core.OracleNet(KUHN, "dcfr", 2048))
    s.run(4096)
    prior = np.asarray(KUHN.hand_prior)
    assert abs(float(prior @ np.asarray(s.root_values(0))) - (-1 / 18)) < 1e-3
    assert abs(float(prior @ np.asarray(s.root_values(1))) - 1 / 18) < 0.012


def test_cfr_avg_refuses_other_off_path_modes_and_fp_and_warm_start():
    tree = rebel.build_tree(LD14, [], 2)
    net = core.ZeroNet(LD14)
    with pytest.raises(ValueError, match="cfr-avg.*supports off_path 'skip' only, got 'floor'"):
        rebel.SubgameSolver(LD14, tree, solver="cfr-avg", net=net, off_path="floor")
    with pytest.raises(ValueError, match="warm start is not defined for cfr-avg-modified"):
        rebel.SubgameSolver(LD14, tree, solver="cfr-avg-modified", net=net,
                            warm_start=core.uniform_policy(LD14, tree), warm_iterations=4)
    with pytest.raises(ValueError, match="solver cfr-avg supports off_path 'skip' only, got 'conditional'"):
        EvalSettings(solver="cfr-avg", off_path="conditional").check()
    EvalSettings(solver="cfr-avg-modified").check()
    EvalSettings(solver="flop").check()
    with pytest.raises(ValueError, match="unknown oracle_solver 'cfr-avg'"):
        EvalSettings(oracle_solver="cfr-avg").check()


def test_training_config_accepts_the_new_solvers_but_not_the_sound_cfr_avg():
    from rebel.config.common import ConfigError

    for solver in ("flop", "cfr-avg-modified"):
        assert load_train_config(None, [f"search.solver={solver}"]).search.solver == solver
    with pytest.raises(ConfigError, match="search.solver cfr-avg-modified supports search.off_path 'skip' only"):
        load_train_config(None, ["search.solver=cfr-avg-modified", "search.off_path=floor"])
    with pytest.raises(ConfigError, match="cfr-avg's averaged root values are not PBS values"):
        load_train_config(None, ["search.solver=cfr-avg"])


@pytest.mark.parametrize("solver", ["flop", "cfr-avg", "cfr-avg-modified", "cfr-avg-play-avg",
                                    "cfr-avg-modified-play-avg"])
def test_self_play_and_mode_b_run_with_the_new_solvers(solver):
    net = random_native_net(KUHN)
    gen = core.SelfPlayGenerator(KUHN, net, solver, 2, 64)
    step = gen.step([], KUHN.hand_prior, KUHN.hand_prior, 7)
    assert np.all(np.isfinite(np.asarray(step.targets))) and np.asarray(step.targets).shape[0] == 2
    search = core.TestTimeSearch(KUHN, core.OracleNet(KUHN, "lcfr", 512), solver, 2, 256)
    e = search.evaluate_sampled(16, 1, 0)["exploitability"][-1]
    # Kuhn, depth 2, T = 256, exact leaves: lcfr reads about 0.003 with N = 256, FLOP 0.019,
    # cfr-avg 0.050, cfr-avg-modified 0.010; a zero net reads far above these.
    assert 0.0 <= e < 0.2


@pytest.mark.parametrize("solver", ["lcfr", "lfp", "cfr-avg", "cfr-avg-modified", "cfr-avg-play-avg",
                                    "cfr-avg-modified-play-avg"])
def test_played_policy_is_the_average_only_for_the_play_avg_solvers(solver):
    tree = rebel.build_tree(LD13, [], 2)
    s = rebel.SubgameSolver(LD13, tree, solver=solver, net=core.OracleNet(LD13, "lcfr", 64))
    s.run(7)
    expected = s.average_policy() if solver.endswith("-play-avg") else s.current_policy()
    np.testing.assert_array_equal(s.played_policy(), expected)
    if solver.startswith("cfr-avg"):  # the played policy differs from the iterate here
        assert np.abs(s.average_policy() - s.current_policy()).max() > 1e-3


def test_play_avg_makes_mode_b_of_cfr_avg_modified_converge_with_exact_leaves():
    """Liar's Dice 1x3f, depth 2, T = 1024, exact leaves (1024 LCFR iterations), N = 16, seed 0.
    Measured: playing the sampled iteration's iterate, cfr-avg-modified stays at 0.0556 at every
    N (its iterates settle on a profile whose average, not itself, the leaves were solved for);
    playing its average (cfr-avg-modified-play-avg), 0.0021 (seed 1: 0.0010)."""
    results = {}
    for solver in ("cfr-avg-modified", "cfr-avg-modified-play-avg"):
        search = core.TestTimeSearch(LD13, core.OracleNet(LD13, "lcfr", 1024), solver, 2, 1024)
        results[solver] = search.evaluate_sampled(16, 2, 0)["exploitability"][-1]
    assert results["cfr-avg-modified-play-avg"] < 0.005
    assert results["cfr-avg-modified"] > 0.05


def test_play_avg_is_refused_outside_cfr_avg_and_by_training_for_the_sound_form():
    from rebel.config.common import ConfigError

    with pytest.raises(ValueError, match="unknown solver 'lcfr-play-avg'"):
        rebel.SubgameSolver(LD13, rebel.build_tree(LD13), solver="lcfr-play-avg")
    with pytest.raises(ValueError, match="warm start is not defined for cfr-avg-modified-play-avg"):
        tree = rebel.build_tree(LD14, [], 2)
        rebel.SubgameSolver(LD14, tree, solver="cfr-avg-modified-play-avg", net=core.ZeroNet(LD14),
                            warm_start=core.uniform_policy(LD14, tree), warm_iterations=4)
    with pytest.raises(ConfigError, match="search.solver cfr-avg-play-avg cannot train a value net"):
        load_train_config(None, ["search.solver=cfr-avg-play-avg"])
    cfg = load_train_config(None, ["search.solver=cfr-avg-modified-play-avg"])
    assert cfg.search.solver == "cfr-avg-modified-play-avg"
    EvalSettings(solver="cfr-avg-play-avg").check()
