"""Bad input raises clear Python exceptions (never a crash or a hang), and the CLI turns
user errors into exit status 2 with a one-line message and no traceback."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import full_tree, liars_dice, run_cli

import rebel
from rebel.games import game_from_config, make
from rebel.search.solve import solve

# -------------------------------------------------------------------------------- games

@pytest.mark.parametrize("config,error,message", [
    ({"name": "chess"}, ValueError, "unknown game 'chess'; known games: kuhn, leduc, leduc_nolimit, liars_dice"),
    ({"name": "liars_dice", "num_sides": 3}, ValueError,
     "no parameter\\(s\\) 'num_sides'; accepted: num_dice, num_faces"),
    ({"name": "kuhn", "num_dice": 1, "bet": 2}, ValueError, "'bet', 'num_dice'; accepted: \\(none\\)"),
    ({"name": "liars_dice", "num_dice": 0}, ValueError, "num_dice must be >= 1, got 0"),
    ({"name": "liars_dice", "num_faces": 1}, ValueError, "num_faces must be >= 2, got 1"),
    ({"name": "liars_dice", "num_dice": -3}, ValueError, "num_dice must be >= 1"),
    ({"name": "liars_dice", "num_dice": 1.0}, TypeError, "must be an int"),
    ({"name": "liars_dice", "num_dice": True}, TypeError, "must be an int"),
    ({"name": "liars_dice", "num_dice": 10**12}, ValueError, "out of range"),
    ({"num_dice": 1}, ValueError, "no 'name'"),
    ({"name": 3}, TypeError, "must be a string"),
])
def test_bad_game_configs(config, error, message):
    with pytest.raises(error, match=message):
        game_from_config(config)


def test_core_make_game_errors():
    with pytest.raises(ValueError, match="unknown game"):
        rebel.make_game("nope")
    with pytest.raises(ValueError, match="no parameter 'x'"):
        rebel.make_game("kuhn", {"x": 1})
    with pytest.raises(TypeError):
        make("liars_dice", num_dice="2")


def test_oversized_game_refused_before_allocating():
    g = make("liars_dice", num_dice=5, num_faces=6)
    with pytest.raises(ValueError, match="does not fit in memory"):
        rebel.build_tree(g)


def test_bad_histories():
    g = liars_dice(1, 4)
    with pytest.raises(ValueError, match="not legal"):
        rebel.build_tree(g, [8])
    with pytest.raises(ValueError, match="max_depth"):
        rebel.build_tree(g, [], 0)
    with pytest.raises(ValueError):
        g.hand_name(4)


# ------------------------------------------------------------------------------ solving

def test_bad_solve_arguments():
    g = liars_dice(1, 4)
    with pytest.raises(ValueError, match="iterations must be >= 0, got -1"):
        solve(g, "lcfr", -1, progress=False)
    with pytest.raises(TypeError, match="iterations must be an int"):
        solve(g, "lcfr", 10.5, progress=False)
    with pytest.raises(ValueError, match=r"unknown solver 'cfr\+\+'"):
        solve(g, "cfr++", 10, progress=False)
    with pytest.raises(ValueError, match="optimistic"):
        solve(g, "lcfr", 10, optimistic=True, progress=False)
    with pytest.raises(ValueError, match="dcfr_alpha must be a finite number"):
        solve(g, "dcfr", 10, dcfr_alpha=float("nan"), progress=False)
    with pytest.raises(ValueError, match="num_dice must be >= 1"):
        solve({"name": "liars_dice", "num_dice": 0}, "lcfr", 1, progress=False)


def test_core_solver_bad_arguments():
    g = liars_dice(1, 4)
    t = full_tree(g)
    with pytest.raises(ValueError, match="unknown solver"):
        rebel.SubgameSolver(g, t, solver="zz")
    s = rebel.SubgameSolver(g, t)
    with pytest.raises(ValueError, match="iterations must be >= 0"):
        s.run(-5)
    with pytest.raises(TypeError):
        s.run(1.5)
    sub = rebel.build_tree(g, [0], 2)
    with pytest.raises(ValueError, match="value net is required"):
        rebel.SubgameSolver(g, sub)


@pytest.mark.parametrize("beliefs,error,message", [
    (np.ones(3), ValueError, "beliefs0 has shape \\(3,\\), expected \\(4,\\)"),
    (np.ones((4, 1)), ValueError, "shape"),
    (np.ones(4, dtype=np.float32), TypeError, "dtype float64"),
    (np.ones(4, dtype=np.int64), TypeError, "dtype float64"),
    (np.array([-1.0, 1, 1, 1]), ValueError, "finite and non-negative"),
    (np.array([np.nan, 1, 1, 1]), ValueError, "finite and non-negative"),
    (np.zeros(4), ValueError, "zero total mass"),
    ("abc", TypeError, "float64"),
])
def test_subgame_solver_rejects_bad_beliefs(beliefs, error, message):
    g = liars_dice(1, 4)
    with pytest.raises(error, match=message):
        rebel.SubgameSolver(g, full_tree(g), beliefs0=beliefs)


@pytest.mark.parametrize("make_policy,error,message", [
    (lambda u: u[:10], ValueError, "shape \\(10, 4\\), expected \\(511, 4\\)"),
    (lambda u: u.ravel(), ValueError, "shape"),
    (lambda u: u.T, ValueError, "shape"),
    (lambda u: u.astype(np.float32), TypeError, "dtype float64"),
    (lambda u: (u * 4).astype(np.int64), TypeError, "dtype float64"),
    (lambda u: "uniform", TypeError, "float64"),
    (lambda u: np.where(np.arange(511)[:, None] == 5, np.nan, u), ValueError, "finite and non-negative"),
    (lambda u: u * 2, ValueError, "not 1"),
])
def test_exploitability_rejects_bad_policies(make_policy, error, message):
    g = liars_dice(1, 4)
    t = full_tree(g)
    policy = make_policy(rebel.uniform_policy(g, t))
    with pytest.raises(error, match=message):
        rebel.exploitability(g, t, policy)


def test_exploitability_needs_the_full_tree():
    g = liars_dice(1, 4)
    sub = rebel.build_tree(g, [0], 2)
    with pytest.raises(ValueError, match="full game tree"):
        rebel.exploitability(g, sub, rebel.uniform_policy(g, sub))


# ---------------------------------------------------------------------------------- CLI

@pytest.mark.parametrize("args,message", [
    (["--game", "chess"], "unknown game 'chess'"),
    (["--dice", "0"], "num_dice must be >= 1"),
    (["--faces", "1"], "num_faces must be >= 2"),
    (["--iters", "-3"], "--iters must be >= 1, got -3"),
    (["solver.iterations=-3"], "--iters must be >= 1, got -3 (solver.iterations)"),
    (["--solver", "cfr++"], "invalid choice: 'cfr++'"),
    (["solver.name=cfr++"], "--solver must be one of cfr, lcfr, cfr+, dcfr, fp, lfp, flop, got 'cfr++' (solver.name)"),
    (["game.num_sides=3"], "unknown config key 'game.num_sides'"),
    (["--game", "kuhn", "--dice", "2"], "--dice does not apply to kuhn (its parameters: none)"),
    (["--dice", "5", "--faces", "6"], "does not fit in memory"),
])
def test_cli_user_errors_exit_2(args, message):
    proc = run_cli("solve", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_cli_unknown_subcommand_exit_2():
    proc = run_cli("frobnicate")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("value", [10**20, 2**31, -(2**31) - 1])
def test_core_make_game_out_of_range_int(value):
    with pytest.raises(ValueError, match="out of range"):
        rebel.make_game("liars_dice", {"num_dice": value, "num_faces": 4})


@pytest.mark.parametrize("name", ["dcfr_alpha", "dcfr_beta", "dcfr_gamma"])
def test_core_solver_rejects_non_finite_dcfr_parameters(name):
    game = rebel.make_game("kuhn", {})
    with pytest.raises(ValueError, match="finite"):
        rebel.SubgameSolver(game, rebel.build_tree(game), solver="dcfr", **{name: float("nan")})
