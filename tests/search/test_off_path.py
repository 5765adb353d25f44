"""Nodes the current iterate reaches with probability exactly 0: the off-path modes.

`skip` is the behaviour before the option existed; `floor` is the eps -> 0 limit of the
original ReBeL code's 1e-80 floors; `conditional` updates every node with values
conditional on reaching it. The modes are checked against a literal implementation with a
real eps in arbitrary-exponent arithmetic (tests/helpers/reference_offpath.py) and against the
original code's mode-(a) figures on a fixed random net.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import rebel
from rebel import _core as core
from rebel.search.solve import DEFAULT_OFF_PATH, OFF_PATH_MODES

LD14 = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
ORDER_MODES = ("floor", "conditional")


def expl(game, tree, policy) -> float:
    return rebel.exploitability(game, tree, policy)["exploitability"]


@pytest.fixture(scope="module")
def random_net():
    """A fixed random net: torch.manual_seed(1); ValueMLP.for_game(1x4f), run natively."""
    torch = pytest.importorskip("torch")
    from rebel.nets.value_mlp import ValueMLP, to_native

    torch.manual_seed(1)
    return to_native(ValueMLP.for_game(LD14), LD14)


def tanh_net(game):
    """A smooth deterministic net (no ties between actions' values), for the literal reference."""
    weights = np.random.default_rng(0).normal(size=(game.query_size, game.num_hands))
    return core.PythonValueNet(game, lambda rows: 0.7 * np.tanh(rows.astype(np.float64) @ weights))


def test_modes_and_default():
    assert OFF_PATH_MODES == ("skip", "floor", "conditional")
    assert DEFAULT_OFF_PATH in OFF_PATH_MODES
    tree = rebel.build_tree(LD14)
    assert rebel.SubgameSolver(LD14, tree).off_path == DEFAULT_OFF_PATH
    for mode in OFF_PATH_MODES:
        assert rebel.SubgameSolver(LD14, tree, off_path=mode).off_path == mode
        assert core.TestTimeSearch(LD14, core.ZeroNet(LD14), "lcfr", 2, 4, off_path=mode).off_path == mode


# Mode (a) on 1x4f, depth 2, LCFR, the random net: exploitability after T half-iterations.
SKIP_MODE_A = {2: 0.520190263, 4: 0.530090958, 8: 0.544837413, 16: 0.576087640, 64: 0.601324566}
# The original code on the same net and settings (to 1e-5; it rounds terminal probabilities to
# float, so the last digits differ from any double-precision computation).
ORIGINAL_MODE_A = {2: 0.520190243, 4: 0.530021484, 8: 0.544474448, 16: 0.574028612, 64: 0.598045707}


@pytest.mark.parametrize("iterations", sorted(SKIP_MODE_A))
def test_skip_mode_a_is_unchanged(random_net, iterations):
    search = core.TestTimeSearch(LD14, random_net, "lcfr", 2, iterations, off_path="skip")
    assert expl(LD14, search.full_tree, search.average_policy()) == pytest.approx(SKIP_MODE_A[iterations], abs=2e-9)


@pytest.mark.parametrize("iterations", sorted(ORIGINAL_MODE_A))
def test_floor_mode_a_reproduces_the_original_code(random_net, iterations):
    search = core.TestTimeSearch(LD14, random_net, "lcfr", 2, iterations, off_path="floor")
    assert expl(LD14, search.full_tree, search.average_policy()) == pytest.approx(
        ORIGINAL_MODE_A[iterations], abs=1e-5)


def test_floor_subgame_at_4_5_matches_the_literal_original(random_net):
    """The [4, 5] subgame at T = 4. Its figure, 0.492580 / 0.507420 for bid 7 / liar at
    [4, 5, 6] for every hand, is what the original code computes from the rounded,
    unnormalised beliefs *with* its float roundings: where the opponent's reach is of order
    1e-80 its float win probabilities and leaf values vanish, which makes every hand alike.
    In double precision (and from normalised beliefs, as the search passes them) the
    original's arithmetic gives what `floor` gives, and so does our search at that node."""
    from helpers.reference_offpath import LiteralCfr

    tree = rebel.build_tree(LD14, [4, 5], 2)
    node = tree.find([6])
    bid7, liar = tree.first_child[node], tree.first_child[node] + 1
    rounded_b = ([0.091585, 0.020833, 0.025776, 0.049657], [0.459843, 0.041667, 0.041667, 0.489783])

    original = LiteralCfr(LD14, tree, "lcfr", "floor", 1e-80, beliefs=rounded_b, net=random_net, float32=True).run(4)
    np.testing.assert_allclose(original.average_policy()[bid7], 0.492580, atol=1e-6)
    np.testing.assert_allclose(original.average_policy()[liar], 0.507420, atol=1e-6)

    # The PBS the search forms at [4, 5]: beliefs from the root subgame's average policy.
    search = core.TestTimeSearch(LD14, random_net, "lcfr", 2, 4, off_path="floor")
    root = rebel.SubgameSolver(LD14, rebel.build_tree(LD14, [], 2), solver="lcfr", net=random_net, off_path="floor")
    root.run(4)
    rt = root.tree
    b0 = 0.25 * root.average_policy()[rt.find([4])]
    b1 = 0.25 * root.average_policy()[rt.find([4, 5])]
    np.testing.assert_allclose(4 * b0, rounded_b[0], atol=1e-6)  # the rounded beliefs, unnormalised
    np.testing.assert_allclose(4 * b1, rounded_b[1], atol=1e-6)
    beliefs = (b0 / b0.sum(), b1 / b1.sum())
    literal = LiteralCfr(LD14, tree, "lcfr", "floor", 1e-80, beliefs=beliefs, net=random_net).run(4)
    ours = rebel.SubgameSolver(LD14, tree, *beliefs, solver="lcfr", net=random_net, off_path="floor")
    ours.run(4)
    np.testing.assert_allclose(ours.average_policy(), literal.average_policy(), atol=1e-12)
    expected = [0.263040, 0.241141, 0.680817, 0.655032]
    np.testing.assert_allclose(ours.average_policy()[bid7], expected, atol=1e-6)
    full = search.full_tree
    played = search.average_policy()[full.first_child[full.find([4, 5, 6])]]
    np.testing.assert_allclose(played, ours.average_policy()[bid7], atol=1e-12)


# (dice, faces, subgame root, depth, half-iterations, solver, beliefs or None for the prior)
LITERAL_CASES = [
    (1, 4, [], 2, 40, "lcfr", None),
    (1, 4, [], 2, 40, "cfr", None),
    (1, 4, [], 2, 40, "dcfr", None),
    (1, 4, [], 3, 24, "lcfr", None),
    (1, 4, [2, 3], 3, 32, "lcfr", ([0.5, 0.0, 0.2, 0.3], [0.1, 0.6, 0.0, 0.3])),
    (2, 2, [], 2, 24, "lcfr", None),
]


@pytest.mark.parametrize("mode", ORDER_MODES)
@pytest.mark.parametrize("case", LITERAL_CASES, ids=lambda c: f"{c[0]}x{c[1]}f{c[2]}-d{c[3]}-{c[5]}")
def test_order_modes_are_the_limit_of_a_literal_eps(mode, case):
    """`floor` equals the original's arithmetic with eps = 1e-80 and `conditional` equals
    regret matching with zero-regret actions played with probability eps = 1e-1000, both
    computed per node and hand in arbitrary-exponent floating point: the C++ modes compute
    the eps -> 0 limit exactly, without eps and without underflow."""
    from helpers.reference_offpath import LiteralCfr

    dice, faces, root, depth, steps, solver, beliefs = case
    game = rebel.make_game("liars_dice", {"num_dice": dice, "num_faces": faces})
    tree = rebel.build_tree(game, root, depth)
    net = tanh_net(game)
    rule, eps = ("floor", 1e-80) if mode == "floor" else ("tremble", "1e-1000")
    literal = LiteralCfr(game, tree, solver, rule, eps, beliefs=beliefs, net=net).run(steps)
    b = (None, None) if beliefs is None else tuple(np.array(x) for x in beliefs)
    ours = rebel.SubgameSolver(game, tree, *b, solver=solver, net=net, off_path=mode)
    ours.run(steps)
    np.testing.assert_allclose(ours.average_policy(), literal.average_policy(), atol=1e-12)
    np.testing.assert_allclose(ours.current_policy(), literal.current_policy(), atol=1e-12)
    for p in (0, 1):
        np.testing.assert_allclose(ours.root_values(p), literal.root_values(p), atol=1e-12)
    # The beliefs a search forms at each pseudo-leaf under the iterate (mode (b)).
    for leaf in tree.pseudo_leaves:
        for p in (0, 1):
            np.testing.assert_allclose(ours.iterate_beliefs(int(leaf), p),
                                       [float(x) for x in literal.normalise(literal.reach(p)[leaf])], atol=1e-12)


def test_skip_differs_from_the_literal_original():
    """The reason for the option: the original code does update off-path nodes."""
    from helpers.reference_offpath import LiteralCfr

    tree = rebel.build_tree(LD14, [], 2)
    net = tanh_net(LD14)
    literal = LiteralCfr(LD14, tree, "lcfr", "floor", 1e-80, net=net).run(40)
    skip = rebel.SubgameSolver(LD14, tree, solver="lcfr", net=net, off_path="skip")
    skip.run(40)
    assert np.abs(skip.average_policy() - literal.average_policy()).max() > 0.1


@pytest.mark.parametrize("mode", OFF_PATH_MODES)
def test_deep_full_games_stay_finite(mode):
    """2x3f: a player can take up to six zero-probability actions on a path, eps^6 = 1e-480
    in the original's arithmetic; the leading-order terms never underflow."""
    game = rebel.make_game("liars_dice", {"num_dice": 2, "num_faces": 3})
    result = rebel.solve(game, "lcfr", 256, off_path=mode, progress=False)
    assert np.all(np.isfinite(result.policy))
    core.validate_policy(game, result.tree, result.policy)
    assert result.exploitability < 0.01


@pytest.mark.parametrize("solver", ["fp", "lfp"])
def test_fictitious_play_ignores_the_mode(solver):
    tree = rebel.build_tree(LD14, [], 2)
    net = tanh_net(LD14)
    runs = []
    for mode in OFF_PATH_MODES:
        s = rebel.SubgameSolver(LD14, tree, solver=solver, net=net, off_path=mode)
        s.run(20)
        runs.append(s.average_policy())
        with pytest.raises(ValueError, match="iterate_beliefs"):
            s.iterate_beliefs(0, 0)
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0], other)


@pytest.mark.parametrize("mode", ORDER_MODES)
def test_zero_net_search_is_unchanged(mode):
    """Leaf values 0 everywhere: the modes differ only off path, where nothing is at stake."""
    search = core.TestTimeSearch(LD14, core.ZeroNet(LD14), "lcfr", 2, 1024, off_path=mode)
    assert expl(LD14, search.full_tree, search.average_policy()) == pytest.approx(0.609352, abs=5e-6)
    sampled = search.evaluate_sampled(4, threads=1, seed=3)
    for value in sampled["exploitability"]:
        assert value == pytest.approx(0.609375, abs=5e-6)


@pytest.mark.parametrize("mode", ORDER_MODES)
def test_mode_b_root_trajectory_sharing_is_transparent(mode):
    """Mode (b) records the root subgame's iterates with the leaf beliefs they induce; a search
    with a non-root start (no sharing) must agree with recomputing them."""
    net = tanh_net(LD14)
    search = core.TestTimeSearch(LD14, net, "lcfr", 2, 16, off_path=mode)
    first = search.sampled_policy(7)
    again = core.TestTimeSearch(LD14, net, "lcfr", 2, 16, off_path=mode).sampled_policy(7)
    np.testing.assert_array_equal(first, again)
    results = [search.evaluate_sampled(8, threads=t, seed=1)["exploitability"] for t in (1, 2)]
    assert results[0] == results[1]


def test_bad_mode_is_rejected():
    tree = rebel.build_tree(LD14)
    with pytest.raises(ValueError, match="off-path mode 'sometimes'"):
        rebel.SubgameSolver(LD14, tree, off_path="sometimes")
    with pytest.raises(ValueError, match="off-path mode"):
        core.TestTimeSearch(LD14, core.ZeroNet(LD14), "lcfr", 2, 4, off_path="Floor")
    with pytest.raises(ValueError, match="off-path mode"):
        core.OracleNet(LD14, "lcfr", 16, off_path="")
    with pytest.raises(ValueError, match="unknown off_path"):
        rebel.solve(LD14, "lcfr", 4, off_path="none", progress=False)


def test_solve_cli_and_config(tmp_path):
    from rebel.config.solve import ConfigError, load_solve_config

    assert load_solve_config(None, ["solver.off_path=floor"]).solver.off_path == "floor"
    with pytest.raises(ConfigError, match="off_path"):
        load_solve_config(None, ["solver.off_path=never"])
    run = [sys.executable, "-m", "rebel", "solve", "--iters", "64", "--json", "--off-path", "conditional"]
    report = json.loads(subprocess.run(run, check=True, capture_output=True, text=True).stdout)
    assert report["off_path"] == "conditional"
    direct = rebel.solve(LD14, "lcfr", 64, off_path="conditional", progress=False)
    assert report["exploitability"] == direct.exploitability
    bad = subprocess.run(run[:-1] + ["maybe"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--off-path" in bad.stderr


def test_eval_cli_passes_the_mode(tmp_path):
    run = [sys.executable, "-m", "rebel", "eval", "--faces", "3", "--iters", "16", "--repeats", "2",
           "--threads", "1", "--json", "--off-path", "floor"]
    report = json.loads(subprocess.run(run, check=True, capture_output=True, text=True).stdout)
    assert report["off_path"] == "floor"
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    search = core.TestTimeSearch(game, core.ZeroNet(game), "lcfr", 2, 16, off_path="floor")
    assert report["mode_a"]["exploitability"] == expl(game, search.full_tree, search.average_policy())
