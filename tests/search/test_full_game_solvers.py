"""Full-game solvers: the paper's Table 2 rows, exact game values, a plain NumPy reference
implementation of linear CFR, and determinism."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import PAPER_GAMES, full_tree, kuhn, liars_dice, solved
from helpers import reference_cfr

import rebel
from rebel.search.solve import SOLVERS, solve

EXACT_VALUES = {(1, 4): 1 / 16, (1, 5): 1 / 125, (1, 6): -7 / 258, (2, 3): 5 / 81}
# Paper Table 2, full-game rows at 1024 iterations. LCFR: the bound that rounds to the row.
LCFR_BOUND = {(1, 4): 0.0015, (1, 5): 0.0015, (1, 6): 0.0025, (2, 3): 0.0025}
LFP_PAPER = {(1, 4): 0.012, (1, 5): 0.024, (1, 6): 0.039, (2, 3): 0.057}


@pytest.mark.parametrize("game", PAPER_GAMES, ids=lambda g: f"{g[0]}x{g[1]}f")
def test_linear_cfr_matches_paper_row(game):
    r = solved(liars_dice(*game), "lcfr", 1024)
    assert r.exploitability < LCFR_BOUND[game]
    assert abs(r.game_value - EXACT_VALUES[game]) < 1e-3
    assert r.br_values[0] >= EXACT_VALUES[game] - 1e-12 >= -r.br_values[1] - 2e-12  # BRs bracket the value


@pytest.mark.parametrize("game", PAPER_GAMES, ids=lambda g: f"{g[0]}x{g[1]}f")
def test_linear_fp_matches_paper_row(game):
    r = solved(liars_dice(*game), "lfp", 1024)
    assert r.exploitability <= LFP_PAPER[game] * 1.05


@pytest.mark.parametrize("solver", ["cfr+", "dcfr"])
@pytest.mark.parametrize("game", PAPER_GAMES, ids=lambda g: f"{g[0]}x{g[1]}f")
def test_cfr_plus_and_dcfr_converge(game, solver):
    r = solved(liars_dice(*game), solver, 1024)
    assert r.exploitability < 1e-3
    assert abs(r.game_value - EXACT_VALUES[game]) < 1e-3


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_improves_with_iterations(solver):
    g = liars_dice(1, 4)
    early, late = solved(g, solver, 64), solved(g, solver, 1024)
    assert late.exploitability < early.exploitability < 0.655059523810
    assert late.exploitability < 0.02


def test_optimistic_fp_runs_and_converges():
    g = liars_dice(1, 4)
    r = solved(g, "lfp", 1024, optimistic=True)
    assert r.exploitability < 0.015


@pytest.mark.parametrize("solver", SOLVERS)
def test_kuhn_value(solver):
    r = solved(kuhn(), solver, 4096)
    assert r.exploitability < (0.01 if solver in ("fp", "lfp") else 2e-3)
    if solver not in ("fp", "lfp"):
        assert abs(r.game_value - (-1 / 18)) < 1e-3


@pytest.mark.parametrize("game", [("kuhn",), ("liars_dice", 1, 2), ("liars_dice", 1, 3)], ids=str)
def test_linear_cfr_matches_numpy_reference(game):
    g = kuhn() if game[0] == "kuhn" else liars_dice(*game[1:])
    t = full_tree(g)
    steps = 25
    ref_current, ref_average = reference_cfr.linear_cfr(g, t, steps)
    s = rebel.SubgameSolver(g, t, solver="lcfr")
    s.run(steps)
    np.testing.assert_allclose(s.current_policy(), ref_current, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.average_policy(), ref_average, rtol=0, atol=1e-12)


@pytest.mark.parametrize("solver", SOLVERS)
def test_solvers_are_deterministic(solver):
    g = liars_dice(1, 4)
    a = solve(g, solver, 300, progress=False)
    b = solve(g, solver, 300, progress=False)
    assert np.array_equal(a.policy, b.policy)
    assert (a.exploitability, a.br_values, a.game_value) == (b.exploitability, b.br_values, b.game_value)


def test_chunked_run_equals_single_steps_and_counts_half_iterations():
    g = liars_dice(1, 3)
    t = full_tree(g)
    a = rebel.SubgameSolver(g, t, solver="dcfr")
    seen: list[int] = []
    a.run(101, seen.append)
    b = rebel.SubgameSolver(g, t, solver="dcfr")
    for _ in range(101):
        b.step()
    assert a.num_steps == b.num_steps == 101
    assert seen and seen[-1] == 101
    assert np.array_equal(a.average_policy(), b.average_policy())


def test_zero_iterations_gives_the_uniform_policy():
    g = liars_dice(1, 4)
    r = solve(g, "lcfr", 0, progress=False)
    assert np.array_equal(r.policy, rebel.uniform_policy(g, r.tree))
    assert abs(r.exploitability - 0.655059523810) < 1e-9


def test_solve_result_summary_is_json_ready():
    import json

    r = solved(liars_dice(1, 4), "lcfr", 1024)
    s = r.summary()
    assert json.loads(json.dumps(s)) == s
    assert {"game", "solver", "iterations", "exploitability", "br_values", "game_value", "seconds"} <= set(s)
    assert s["game"] == {"name": "liars_dice", "num_dice": 1, "num_faces": 4}
    assert r.seconds > 0


def test_progress_bar_appears_for_long_runs(capsys):
    g = liars_dice(1, 4)
    r = solve(g, "lcfr", 2000, progress=True, progress_after=0.0)
    err = capsys.readouterr().err
    assert "lcfr liars_dice" in err and "2000" in err
    assert np.array_equal(r.policy, solve(g, "lcfr", 2000, progress=False).policy)  # the bar changes nothing
