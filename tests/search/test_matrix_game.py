"""Regret matching on zero-sum matrix games (rebel._core.solve_matrix_game)."""
import numpy as np
import pytest

from rebel import _core

MODIFIED_RPS_EQ = np.array([0.4, 0.4, 0.2])
VARIANTS = [  # (algorithm, linear_avg, alternating)
    ("rm", False, False),
    ("rm", False, True),
    ("rm", True, True),
    ("rm+", False, False),
    ("rm+", True, True),
]


def test_builtin_games():
    rps = _core.matrix_game("rps")
    mod = _core.matrix_game("modified_rps")
    assert rps.dtype == np.float64 and rps.shape == (3, 3)
    np.testing.assert_array_equal(rps, -rps.T)
    np.testing.assert_array_equal(mod, -mod.T)
    # Rock loses to paper, beats scissors; every outcome involving scissors pays double.
    assert rps[0, 1] == -1 and rps[0, 2] == 1
    np.testing.assert_array_equal(mod, rps * np.array([[1, 1, 2], [1, 1, 2], [2, 2, 1]]))
    # (0.4, 0.4, 0.2) makes the opponent indifferent: an equilibrium with value 0.
    np.testing.assert_allclose(mod @ MODIFIED_RPS_EQ, 0.0, atol=1e-15)
    assert set(_core.list_matrix_games()) == {"rps", "modified_rps"}


@pytest.mark.parametrize("algorithm,linear_avg,alternating", VARIANTS)
def test_modified_rps_converges_to_equilibrium(algorithm, linear_avg, alternating):
    r = _core.solve_matrix_game(_core.matrix_game("modified_rps"), 20000, algorithm=algorithm,
                                linear_avg=linear_avg, alternating=alternating)
    np.testing.assert_allclose(r["row_strategy"], MODIFIED_RPS_EQ, atol=0.01)
    np.testing.assert_allclose(r["col_strategy"], MODIFIED_RPS_EQ, atol=0.01)
    assert abs(r["value"]) < 0.01
    assert 0.0 <= r["exploitability"] < 0.01


@pytest.mark.parametrize("algorithm,linear_avg,alternating", VARIANTS)
def test_rps_is_uniform(algorithm, linear_avg, alternating):
    r = _core.solve_matrix_game(_core.matrix_game("rps"), 1000, algorithm=algorithm,
                                linear_avg=linear_avg, alternating=alternating)
    np.testing.assert_allclose(r["row_strategy"], 1 / 3, atol=1e-9)
    np.testing.assert_allclose(r["col_strategy"], 1 / 3, atol=1e-9)
    assert abs(r["value"]) < 1e-9 and abs(r["exploitability"]) < 1e-9


def test_exploitability_decreases():
    payoff = _core.matrix_game("modified_rps")
    expl = [_core.solve_matrix_game(payoff, n)["exploitability"] for n in (100, 1000, 10000, 100000)]
    assert all(a > b for a, b in zip(expl, expl[1:])), expl
    assert expl[-1] < 0.005


def test_random_rectangular_game():
    payoff = np.random.default_rng(7).normal(size=(4, 6))
    coarse = _core.solve_matrix_game(payoff, 100, algorithm="rm+", linear_avg=True, alternating=True)
    fine = _core.solve_matrix_game(payoff, 50000, algorithm="rm+", linear_avg=True, alternating=True)
    assert fine["row_strategy"].shape == (4,) and fine["col_strategy"].shape == (6,)
    assert fine["exploitability"] < coarse["exploitability"] and fine["exploitability"] < 1e-3
    # The best-response values bracket the value: -BR_col <= x^T A y <= BR_row.
    br_row, br_col = fine["br_values"]
    assert -br_col - 1e-12 <= fine["value"] <= br_row + 1e-12
    assert fine["exploitability"] == pytest.approx((br_row + br_col) / 2)
    again = _core.evaluate_matrix_strategies(payoff, fine["row_strategy"], fine["col_strategy"])
    assert again["value"] == pytest.approx(fine["value"])
    assert again["exploitability"] == pytest.approx(fine["exploitability"])


def test_zero_iterations_give_uniform_strategies():
    r = _core.solve_matrix_game(np.ones((2, 5)), 0)
    np.testing.assert_allclose(r["row_strategy"], 0.5)
    np.testing.assert_allclose(r["col_strategy"], 0.2)


def test_nested_lists_are_accepted():
    r = _core.solve_matrix_game([[0.0, -1.0, 2.0], [1.0, 0.0, -2.0], [-2.0, 2.0, 0.0]], 100)
    assert r["row_strategy"].shape == (3,)


@pytest.mark.parametrize("payoff", [
    np.zeros((3, 3), dtype=np.int64),
    np.zeros((3, 3), dtype=np.float32),
    "not a matrix",
    None,
])
def test_bad_payoff_type(payoff):
    with pytest.raises(TypeError):
        _core.solve_matrix_game(payoff, 10)


@pytest.mark.parametrize("payoff", [
    np.zeros(3),
    np.zeros((2, 2, 2)),
    np.zeros((0, 3)),
    np.zeros((3, 0)),
    np.array([[0.0, np.nan], [1.0, 0.0]]),
    np.array([[0.0, np.inf], [1.0, 0.0]]),
])
def test_bad_payoff_value(payoff):
    with pytest.raises(ValueError):
        _core.solve_matrix_game(payoff, 10)


def test_bad_arguments():
    payoff = _core.matrix_game("rps")
    with pytest.raises(ValueError, match="iterations"):
        _core.solve_matrix_game(payoff, -1)
    with pytest.raises(ValueError, match="algorithm"):
        _core.solve_matrix_game(payoff, 10, algorithm="cfr")
    with pytest.raises(ValueError, match="unknown matrix game"):
        _core.matrix_game("chess")
    with pytest.raises(ValueError):
        _core.evaluate_matrix_strategies(payoff, np.array([0.5, 0.5, 0.5]), np.full(3, 1 / 3))
    with pytest.raises(ValueError):
        _core.evaluate_matrix_strategies(payoff, np.full(2, 0.5), np.full(3, 1 / 3))
