"""Theorem 1 of ReBeL on exact subgame solutions (experiments/theorem1.py): the per-hand values
are a supergradient of the PBS value, so finite differences along e_h - beta equal v(h) - V."""
from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.scripts import load

from rebel import _core
from rebel.games import make

pytest.importorskip("scipy")
theorem1 = load("theorem1")

KUHN = make("kuhn")
LD14 = make("liars_dice", num_dice=1, num_faces=4)


def _form(game: _core.Game, history: list[int]) -> "theorem1.SequenceForm":
    return theorem1.SequenceForm(game, _core.build_tree(game, history))


def test_lp_gives_the_known_game_values():
    # Kuhn poker's value is -1/18 for the first player; in the core's counterfactual units the
    # card-removal weight 3/2 times the joint mass 2/3 of the prior is 1, so V is the same.
    kuhn = _form(KUHN, [])
    prior = [np.asarray(KUHN.hand_prior)] * 2
    value, v = kuhn.hand_values(0, prior)
    assert value == pytest.approx(-1 / 18, abs=1e-12)
    assert kuhn.value(0, prior) == pytest.approx(-1 / 18, abs=1e-12)
    assert kuhn.hand_values(1, prior)[0] == pytest.approx(1 / 18, abs=1e-12)
    # The first player's values of the jack, queen and king: -1, -1/3 and 7/6 (unique: they are
    # best responses to the second player's equilibrium, which is unique in Kuhn poker).
    np.testing.assert_allclose(v, [-1, -1 / 3, 7 / 6], atol=1e-12)
    # 1x4f: the LP agrees with 4096 iterations of linear CFR on the full game.
    ld = _form(LD14, [])
    prior4 = [np.asarray(LD14.hand_prior)] * 2
    solved = _core.SubgameSolver(LD14, _core.build_tree(LD14), solver="dcfr")
    solved.run(4096)
    report = _core.exploitability(LD14, _core.build_tree(LD14), solved.average_policy())
    assert ld.hand_values(0, prior4)[0] == pytest.approx(report["game_value"], abs=1e-4)


@pytest.mark.parametrize("game", [KUHN, LD14], ids=["kuhn", "1x4f"])
def test_finite_differences_equal_the_hand_values(game):
    rng = np.random.default_rng(7)
    full = _core.build_tree(game)
    for i in range(3):
        pbs = theorem1.random_pbs(game, full, rng, root=i == 0)
        row = theorem1.check_pbs(game, pbs, eps=1e-3, eps_large=0.1, dcfr_iterations=256, dcfr_fd=False)
        for player in row["players"]:
            assert player["max_fd_error"] <= 1e-6
            assert player["sum_check"] <= 1e-9
            assert player["concavity_violation"] <= 1e-9
            assert player["concavity_violation_large"] <= 1e-9
            values = np.asarray(player["hand_values"])
            assert float(pbs.beliefs[player["player"]] @ values) == pytest.approx(player["value"], abs=1e-12)
        # Zero sum: the two players' PBS values are opposite.
        assert row["players"][0]["value"] == pytest.approx(-row["players"][1]["value"], abs=1e-9)


def test_supergradient_inequality_at_a_large_step():
    # V is concave: for eps = 0.5 the chord lies below the tangent V + eps (v(h) - V), strictly
    # where the segment crosses a kink: for this Kuhn PBS along the king's direction, by 0.0225.
    game, beliefs = KUHN, [np.array([0.2, 0.5, 0.3]), np.array([0.6, 0.1, 0.3])]
    form = _form(game, [])
    value, v = form.hand_values(0, beliefs)
    slack = []
    for h in range(3):
        moved = form.hand_values(0, theorem1.perturbed(beliefs, 0, h, 0.5))[0]
        slack.append(value + 0.5 * (v[h] - value) - moved)
    assert min(slack) >= -1e-9
    assert slack[0] == pytest.approx(0, abs=1e-12) and slack[1] == pytest.approx(0, abs=1e-12)
    assert slack[2] == pytest.approx(0.0225, abs=1e-12)


def test_lp_values_match_the_solver_root_values():
    # DCFR's root values on a Kuhn PBS approach the LP's exact ones (-0.6, 0.15, 1.2 and
    # -1.2, -0.15, 1.4); after 20000 half-iterations its exploitability is still 1.1e-5.
    beliefs = [np.array([0.2, 0.5, 0.3]), np.array([0.6, 0.1, 0.3])]
    tree = _core.build_tree(KUHN, [])
    solver, exploitability = theorem1.dcfr_solve(KUHN, tree, beliefs, 20000)
    assert 1e-6 < exploitability < 2e-5
    exact = [[-0.6, 0.15, 1.2], [-1.2, -0.15, 1.4]]
    for p in (0, 1):
        np.testing.assert_allclose(_form(KUHN, []).hand_values(p, beliefs)[1], exact[p], atol=1e-12)
        np.testing.assert_allclose(solver.root_values(p), exact[p], atol=3e-4)


@pytest.mark.slow
def test_quick_run(tmp_path):
    """experiments/theorem1.py --quick (about 10 s): Kuhn and 1x4f, the kuhn and 1x4f nets."""
    out = tmp_path / "theorem1"
    assert theorem1.main(["--quick", "--out", str(out)]) == 0
    report = json.loads((out / "theorem1.json").read_text())
    assert list(report["exact"]) == ["kuhn", "1x4f"]
    for game in report["exact"].values():
        s = game["summary"]
        assert s["pbs"] == 3 and s["meets_target"] and s["max_fd_error"] <= 1e-6 and s["max_sum_check"] <= 1e-9
    assert [n["net"] for n in report["nets"]] == ["1x4f", "kuhn"]
    for n in report["nets"]:
        for kind in ("random", "heldout"):
            assert n[kind]["pbs"] == 4 and 0 < n[kind]["gap_mean"] <= n[kind]["gap_max"]
    assert "| kuhn | 3 |" in (out / "theorem1.md").read_text()
