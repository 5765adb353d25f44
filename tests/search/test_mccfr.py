"""Chance-sampling MCCFR (rebel._core.MccfrSolver), evaluated with exact exploitability."""
import time

import numpy as np
import pytest

import rebel
from rebel import _core

KUHN_VALUE = -1.0 / 18.0


def solve(game, iterations, seed=0):
    tree = rebel.build_tree(game)
    solver = _core.MccfrSolver(game, tree, seed=seed)
    solver.run(iterations)
    return tree, solver


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kuhn_converges(seed):
    game = rebel.make_game("kuhn")
    start = time.perf_counter()
    tree, solver = solve(game, 300_000, seed)
    assert time.perf_counter() - start < 20.0
    policy = solver.average_policy()
    _core.validate_policy(game, tree, policy)
    report = rebel.exploitability(game, tree, policy)
    assert report["exploitability"] < 0.01
    assert report["game_value"] == pytest.approx(KUHN_VALUE, abs=0.01)
    assert solver.iterations == 300_000


def test_kuhn_card_removal_equilibrium_shape():
    # In every Kuhn equilibrium player 1 always calls a bet with the king and never with the jack.
    game = rebel.make_game("kuhn")
    tree, solver = solve(game, 300_000)
    policy = solver.average_policy()
    jack, king = 0, 2
    call_after_bet = tree.find([1, 1])
    assert policy[call_after_bet, king] > 0.99
    assert policy[call_after_bet, jack] < 0.01


def test_same_seed_same_result_and_chunking_is_invisible():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    _, a = solve(game, 3000, seed=42)
    tree, b = solve(game, 1000, seed=42)
    b.run(0)
    b.run(2000)
    np.testing.assert_array_equal(a.average_policy(), b.average_policy())
    np.testing.assert_array_equal(a.current_policy(), b.current_policy())
    _, c = solve(game, 3000, seed=43)
    assert not np.array_equal(a.average_policy(), c.average_policy())
    assert a.seed == 42


@pytest.mark.parametrize("faces,checkpoints,final_bound", [
    (3, (1_000, 10_000, 100_000), 0.002),
    (4, (1_000, 10_000, 60_000), 0.02),
])
def test_liars_dice_exploitability_decreases(faces, checkpoints, final_bound):
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": faces})
    tree = rebel.build_tree(game)
    solver = _core.MccfrSolver(game, tree, seed=0)
    expl = []
    for total in checkpoints:
        solver.run(total - solver.iterations)
        expl.append(rebel.exploitability(game, tree, solver.average_policy())["exploitability"])
    assert all(a > b for a, b in zip(expl, expl[1:])), expl
    assert expl[-1] < final_bound


def test_zero_iterations_and_callback():
    game = rebel.make_game("kuhn")
    tree = rebel.build_tree(game)
    solver = _core.MccfrSolver(game, tree)
    np.testing.assert_array_equal(solver.average_policy(), rebel.uniform_policy(game, tree))
    np.testing.assert_array_equal(solver.current_policy(), rebel.uniform_policy(game, tree))
    seen = []
    solver.run(10, callback=seen.append)
    assert seen and seen[-1] == 10
    _core.validate_policy(game, tree, solver.current_policy())


def test_bad_input():
    game = rebel.make_game("kuhn")
    tree = rebel.build_tree(game)
    solver = _core.MccfrSolver(game, tree)
    with pytest.raises(ValueError, match="iterations"):
        solver.run(-1)
    with pytest.raises(ValueError, match="seed"):
        _core.MccfrSolver(game, tree, seed=-1)
    with pytest.raises(ValueError, match="full game tree"):
        _core.MccfrSolver(game, rebel.build_tree(game, [0]))
    dice = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    with pytest.raises(ValueError, match="full game tree"):
        _core.MccfrSolver(dice, rebel.build_tree(dice, max_depth=2))
    with pytest.raises(ValueError, match="does not belong"):
        _core.MccfrSolver(dice, tree)
    with pytest.raises(TypeError):
        _core.MccfrSolver(None, tree)
    with pytest.raises(TypeError):
        _core.MccfrSolver(game, tree, seed="zero")
