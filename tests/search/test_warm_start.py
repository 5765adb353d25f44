"""Warm start of SubgameSolver from a given policy (csrc/solvers/warm_start.cc): K = 0 is the
cold solver bit for bit, an exact equilibrium stays put, the warm state's known values, FP's
faster convergence, a depth-limited subgame with the oracle net, and the input checks."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import full_tree, kuhn, liars_dice

from rebel import _core
from rebel.games import make
from rebel.search.solve import SOLVERS, solve


def _solver(game, tree, solver, warm=None, k=15, **kw):
    if warm is None:
        return _core.SubgameSolver(game, tree, solver=solver, **kw)
    return _core.SubgameSolver(game, tree, solver=solver, warm_start=warm, warm_iterations=k, **kw)


def _expl(game, tree, policy) -> float:
    return float(_core.exploitability(game, tree, policy)["exploitability"])


def _average(game, tree, solver, iterations):
    s = _solver(game, tree, solver)
    s.run(iterations)
    return s.average_policy()


@pytest.mark.parametrize("solver", SOLVERS)
def test_zero_warm_iterations_is_the_cold_solver(solver):
    g = liars_dice(1, 4)
    tree = full_tree(g)
    sigma0 = _average(g, tree, "lcfr", 64)
    cold, warm = _solver(g, tree, solver), _solver(g, tree, solver, sigma0, k=0)
    cold.run(64)
    warm.run(64)
    assert warm.warm_iterations == 0 and warm.num_steps == cold.num_steps == 64
    assert np.array_equal(warm.average_policy(), cold.average_policy())
    assert np.array_equal(warm.current_policy(), cold.current_policy())
    for p in (0, 1):
        assert np.array_equal(warm.root_values(p), cold.root_values(p))


def _pure_equilibrium(game, tree):
    """The argmax of a DCFR average on a perfect-information game: checked to be exact."""
    avg = _average(game, tree, "dcfr", 2000)
    pure = np.zeros_like(avg)
    for n in tree.decision_nodes:
        b = tree.first_child[n]
        pure[b + int(np.argmax(avg[b:b + tree.num_children[n], 0])), 0] = 1.0
    assert _expl(game, tree, pure) == 0.0
    return pure


@pytest.mark.parametrize("solver", ["cfr", "lcfr", "cfr+", "dcfr"])
def test_exact_equilibrium_stays_put(solver):
    # Its regrets are all <= 0 (exactly 0 on the actions it plays), so regret matching falls
    # back to it at every node, now and later: the iterate never moves and the average is it.
    g = make("mnk", m=2, n=3, k=3)
    tree = full_tree(g)
    sigma0 = _pure_equilibrium(g, tree)
    s = _solver(g, tree, solver, sigma0)
    s.run(64)
    assert s.num_steps == 30 + 64
    assert np.array_equal(s.current_policy(), sigma0)
    assert _expl(g, tree, s.average_policy()) == 0.0
    if solver == "lcfr":
        assert _expl(g, tree, _average(g, tree, solver, 64)) > 3e-4  # cold: 3.6e-4 measured


def test_warm_state_values():
    g = kuhn()
    tree = full_tree(g)
    sigma0 = _average(g, tree, "dcfr", 20000)
    prior = np.asarray(g.hand_prior)
    for solver in ("lcfr", "dcfr", "lfp"):
        s = _solver(g, tree, solver, sigma0, k=15)
        assert s.num_steps == 30 and s.warm_iterations == 15
        # CFR: the root values of sigma0 (each of the K updates records them); FP: BR values.
        v0, v1 = prior @ s.root_values(0), prior @ s.root_values(1)
        if solver == "lfp":
            br = _core.exploitability(g, tree, sigma0)["br_values"]
            assert v0 == pytest.approx(br[0], abs=1e-12) and v1 == pytest.approx(br[1], abs=1e-12)
        else:
            assert v0 == pytest.approx(_core.expected_value(g, tree, sigma0, 0), abs=1e-12)
            assert v0 == pytest.approx(-1 / 18, abs=1e-3) and v1 == pytest.approx(1 / 18, abs=1e-3)
    # FP's average is sigma0 itself before any update: the same exploitability.
    fp = _solver(g, tree, "lfp", sigma0)
    assert _expl(g, tree, fp.average_policy()) == pytest.approx(_expl(g, tree, sigma0), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("game,bounds", [
    # (T, warm bound, cold bound); measured warm / cold: Kuhn 0.0166 / 0.0222 at T = 64,
    # 0.0036 / 0.0064 at 256; 1x4f 0.090 / 0.162 at 64, 0.025 / 0.039 at 256 (sigma0 from
    # LCFR T = 256 on 1x4f, exploitability 0.006).
    ("kuhn", [(64, 0.019, 0.021), (256, 0.0045, 0.006)]),
    ("1x4f", [(64, 0.11, 0.15), (256, 0.03, 0.037)]),
])
def test_linear_fp_warm_start_converges_faster(game, bounds):
    g = kuhn() if game == "kuhn" else liars_dice(1, 4)
    tree = full_tree(g)
    sigma0 = _average(g, tree, "dcfr" if game == "kuhn" else "lcfr", 100000 if game == "kuhn" else 256)
    for T, warm_bound, cold_bound in bounds:
        warm = _solver(g, tree, "lfp", sigma0)
        warm.run(T)
        assert _expl(g, tree, warm.average_policy()) < warm_bound
        assert _expl(g, tree, _average(g, tree, "lfp", T)) > cold_bound


def test_depth_limited_subgame_with_oracle_net():
    # 1x4f, depth 2 from the root, exact leaf values: warm start from the full-game
    # equilibrium restricted to the subgame. Its root value is the game's, 1/16; after 64
    # iterations the averaged root value (the training target) stays near it (measured
    # 0.0609 warm, 0.0921 cold).
    g = liars_dice(1, 4)
    full = full_tree(g)
    sigma_full = _average(g, full, "dcfr", 20000)
    tree = _core.build_tree(g, [], 2)
    sigma0 = np.stack([sigma_full[full.find(tree.history(n))] for n in range(tree.size)])
    net = _core.OracleNet(g, "dcfr", 2048)
    prior = np.asarray(g.hand_prior)
    warm = _solver(g, tree, "lcfr", sigma0, net=net)
    assert prior @ warm.root_values(0) == pytest.approx(1 / 16, abs=2e-4)
    assert warm.leaf_queries > 0
    warm.run(64)
    cold = _solver(g, tree, "lcfr", net=net)
    cold.run(64)
    assert abs(prior @ warm.root_values(0) - 1 / 16) < 0.005
    assert abs(prior @ cold.root_values(0) - 1 / 16) > 0.02


def test_solve_warm_start():
    g = liars_dice(1, 4)
    sigma0 = solve(g, "lcfr", 256, progress=False).policy
    r = solve(g, "lfp", 64, warm_start=sigma0, warm_iterations=15, progress=False)
    assert r.warm_iterations == 15 and r.summary()["warm_iterations"] == 15
    assert r.exploitability < 0.11
    with pytest.raises(ValueError, match="warm_iterations needs"):
        solve(g, "lfp", 64, warm_iterations=15, progress=False)


def test_bad_warm_start_input():
    g = kuhn()
    tree = full_tree(g)
    good = _average(g, tree, "lcfr", 64)
    with pytest.raises(ValueError, match=r"warm_start has shape \(3, 3\)"):
        _solver(g, tree, "lcfr", np.ones((3, 3)))
    with pytest.raises(TypeError, match="float64"):
        _solver(g, tree, "lcfr", good.astype(np.float32))
    for value, what in ((np.nan, "finite and non-negative"), (-0.25, "finite and non-negative")):
        bad = good.copy()
        bad[tree.first_child[0], 0] = value
        with pytest.raises(ValueError, match=what):
            _solver(g, tree, "lcfr", bad)
    bad = good.copy()
    bad[tree.first_child[0], 1] += 0.01
    with pytest.raises(ValueError, match=r"node 0 \(player 0 acts\), hand .*sum to 1.01, not 1"):
        _solver(g, tree, "lcfr", bad)
    with pytest.raises(ValueError, match="warm_iterations must be >= 0"):
        _solver(g, tree, "lcfr", good, k=-1)
    for k in (True, 1.5, "15"):
        with pytest.raises(TypeError, match="warm_iterations must be an int"):
            _solver(g, tree, "lcfr", good, k=k)
    assert _solver(g, tree, "lcfr", good, k=np.int64(3)).warm_iterations == 3
    with pytest.raises(ValueError, match="warm_iterations needs a warm_start"):
        _core.SubgameSolver(g, tree, solver="lcfr", warm_iterations=15)
    with pytest.raises(ValueError, match="off_path 'skip' only"):
        _solver(g, tree, "lcfr", good, off_path="floor")


# ------------------------------------------------------------------ the regret prior (warm_prior)

def _children_rows(tree):
    return np.concatenate([np.arange(tree.first_child[n], tree.first_child[n] + tree.num_children[n])
                           for n in tree.decision_nodes])


@pytest.mark.parametrize("solver", ["cfr", "lcfr", "cfr+", "dcfr"])
def test_warm_prior_keeps_a_pure_equilibrium_exactly(solver):
    # r + lambda s sigma0 is lambda s > 0 on the played action and r <= 0 elsewhere: regret
    # matching plays sigma0 exactly, and the later updates add nothing positive elsewhere.
    g = make("mnk", m=2, n=3, k=3)
    tree = full_tree(g)
    sigma0 = _pure_equilibrium(g, tree)
    s = _solver(g, tree, solver, sigma0, warm_prior=10.0)
    assert np.array_equal(s.current_policy(), sigma0)
    s.run(64)
    assert np.array_equal(s.current_policy(), sigma0)
    assert _expl(g, tree, s.average_policy()) == 0.0


def test_warm_prior_moves_the_first_iterate_to_sigma0():
    # Kuhn, sigma0 an unconverged LCFR average: without the prior regret matching plays the
    # actions that beat sigma0; the prior pulls the iterate toward sigma0, monotonically in
    # lambda, and in the limit of a huge prior the iterate is sigma0 itself.
    g = kuhn()
    tree = full_tree(g)
    sigma0 = _average(g, tree, "lcfr", 16)
    rows = _children_rows(tree)
    distance = []
    for lam in (0.0, 0.3, 3.0, 30.0, 1e9):
        s = _solver(g, tree, "lcfr", sigma0, warm_prior=lam)
        distance.append(float(np.abs(s.current_policy()[rows] - sigma0[rows]).max()))
    assert distance[0] > 0.5  # measured: 0.855, 0.335, 0.111, 0.020, 1.5e-9
    assert all(a > b for a, b in zip(distance, distance[1:]))
    assert distance[-1] < 1e-7
    # The average is the warm start's average whatever the prior: K policies sigma0 plus the
    # iterate, so with the huge prior it is sigma0 too.
    huge = _solver(g, tree, "lcfr", sigma0, warm_prior=1e9)
    assert np.abs(huge.average_policy()[rows] - sigma0[rows]).max() < 1e-7


def test_warm_prior_still_converges():
    # The prior is a bounded shift of the regrets: linear CFR from a poor sigma0 with a strong
    # prior still reaches Kuhn's value -1/18 (measured at T = 4096: exploitability 2.75e-4 with
    # lambda = 10, 9.5e-5 without the prior, 4.4e-5 cold; root value -0.05660).
    g = kuhn()
    tree = full_tree(g)
    sigma0 = _average(g, tree, "lcfr", 4)
    s = _solver(g, tree, "lcfr", sigma0, warm_prior=10.0)
    s.run(4096)
    assert _expl(g, tree, s.average_policy()) < 6e-4
    assert float(np.asarray(g.hand_prior) @ s.root_values(0)) == pytest.approx(-1 / 18, abs=2e-3)


def test_bad_warm_prior():
    g = kuhn()
    tree = full_tree(g)
    good = _average(g, tree, "lcfr", 64)
    for value in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="warm_prior must be finite and >= 0"):
            _solver(g, tree, "lcfr", good, warm_prior=value)
    for solver in ("lfp", "fp"):
        with pytest.raises(ValueError, match="warm_prior applies to the CFR solvers' regrets"):
            _solver(g, tree, solver, good, warm_prior=1.0)
    with pytest.raises(ValueError, match="warm_prior needs a warm_start policy"):
        _core.SubgameSolver(g, tree, solver="lcfr", warm_prior=1.0)
    with pytest.raises(ValueError, match=r"warm_prior = 1\.0+ needs a warm start"):
        _core.TestTimeSearch(g, _core.ZeroNet(g), "lcfr", 2, 16, warm_prior=1.0)
