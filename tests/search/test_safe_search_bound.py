"""Leaf values with a known error (PerturbedNet) and the safe-search bound experiment."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import run_cli
from helpers.scripts import load

import rebel
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings

GAME = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
H = GAME.num_hands
# Non-terminal public states at several depths (1x4f: bids are actions 0..7, "liar" is 8).
HISTORIES = [[], [0], [2], [0, 3], [1, 5, 7], [6]]


def beliefs(seed: int) -> np.ndarray:
    b = np.random.default_rng(seed).random(H) + 0.05
    return b / b.sum()


@pytest.fixture(scope="module")
def oracle():
    return rebel.OracleNet(GAME, "lcfr", 64)


@pytest.mark.parametrize("kind", ["random", "bias", "noise"])
@pytest.mark.parametrize("delta", [1e-4, 0.01, 0.3])
def test_error_has_max_norm_delta_on_every_query(oracle, kind, delta):
    net = rebel.PerturbedNet(GAME, oracle, delta, kind, seed=7)
    for player in (0, 1):
        for seed in range(3):
            b0, b1 = beliefs(seed), beliefs(100 + seed)
            exact = rebel.net_values(oracle, GAME, HISTORIES, player, b0, b1)
            error = rebel.net_values(net, GAME, HISTORIES, player, b0, b1) - exact
            # per query: the largest error over hands is delta (to the rounding of one addition)
            np.testing.assert_allclose(np.abs(error).max(axis=1), delta, rtol=1e-9, atol=1e-15)
            if kind == "bias":  # favours player 0: +delta on its values, -delta on player 1's
                np.testing.assert_allclose(error, delta if player == 0 else -delta, rtol=1e-9, atol=1e-15)


def test_error_is_a_fixed_function_of_the_query(oracle):
    b0, b1 = beliefs(1), beliefs(2)
    first = rebel.PerturbedNet(GAME, oracle, 0.05, "random", seed=3)
    again = rebel.PerturbedNet(GAME, oracle, 0.05, "random", seed=3)
    other_seed = rebel.PerturbedNet(GAME, oracle, 0.05, "random", seed=4)
    values = rebel.net_values(first, GAME, HISTORIES, 0, b0, b1)
    np.testing.assert_array_equal(values, rebel.net_values(first, GAME, HISTORIES, 0, b0, b1))
    np.testing.assert_array_equal(values, rebel.net_values(again, GAME, HISTORIES, 0, b0, b1))
    assert not np.allclose(values, rebel.net_values(other_seed, GAME, HISTORIES, 0, b0, b1))
    # 'random' does not depend on the beliefs (a fixed imperfect net per public state); it
    # differs between public states and between the queried players.
    err = lambda net, b, p: (rebel.net_values(net, GAME, HISTORIES, p, b, b1)  # noqa: E731
                             - rebel.net_values(oracle, GAME, HISTORIES, p, b, b1))
    np.testing.assert_allclose(err(first, b0, 0), err(first, beliefs(9), 0), atol=1e-12)
    assert not np.allclose(err(first, b0, 0), err(first, b0, 1))
    assert len({tuple(np.round(row, 12)) for row in err(first, b0, 0)}) == len(HISTORIES)
    # 'noise' changes with the beliefs, but the same query still gets the same answer.
    noise = rebel.PerturbedNet(GAME, oracle, 0.05, "noise", seed=3)
    assert not np.allclose(err(noise, b0, 0), err(noise, beliefs(9), 0))
    np.testing.assert_array_equal(err(noise, b0, 0), err(noise, b0, 0))


def test_delta_zero_is_bit_identical_to_the_base_net(oracle):
    net = rebel.PerturbedNet(GAME, oracle, 0.0, "random")
    b0, b1 = beliefs(4), beliefs(5)
    np.testing.assert_array_equal(rebel.net_values(net, GAME, HISTORIES, 1, b0, b1),
                                  rebel.net_values(oracle, GAME, HISTORIES, 1, b0, b1))
    tree = rebel.build_tree(GAME, [], 2)
    solvers = [rebel.SubgameSolver(GAME, tree, None, None, "lcfr", n) for n in (oracle, net)]
    for s in solvers:
        s.run(64)
    np.testing.assert_array_equal(solvers[0].average_policy(), solvers[1].average_policy())
    np.testing.assert_array_equal(solvers[0].root_values(0), solvers[1].root_values(0))


@pytest.mark.parametrize("delta, kind, message", [
    (-0.1, "random", "delta"), (math.nan, "random", "delta"), (math.inf, "bias", "delta"),
    (0.1, "gaussian", "kind"),
])
def test_bad_perturbation_is_refused(oracle, delta, kind, message):
    with pytest.raises(ValueError, match=message):
        rebel.PerturbedNet(GAME, oracle, delta, kind)


def test_eval_takes_a_leaf_error():
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    common = dict(net="oracle", depth=2, iterations=32,
                  oracle_iterations=64, repeats=4, threads=1, full_game=False)
    exact = evaluate(game, EvalSettings(**common))
    same = evaluate(game, EvalSettings(**common, leaf_error=0.0))
    biased = evaluate(game, EvalSettings(**common, leaf_error=0.2, leaf_error_kind="bias"))
    assert exact["mode_a"] == same["mode_a"] and exact["mode_b"] == same["mode_b"]
    assert biased["leaf_error"] == {"delta": 0.2, "kind": "bias", "seed": 0}
    assert biased["mode_a"]["exploitability"] > exact["mode_a"]["exploitability"] + 0.01


@pytest.mark.parametrize("flags, message", [
    (["--leaf-error", "-0.5"], "--leaf-error must be finite and >= 0"),
    (["--leaf-error", "nan"], "--leaf-error must be finite and >= 0"),
    (["--leaf-error", "inf"], "--leaf-error must be finite and >= 0"),
    (["--leaf-error-kind", "gaussian"], "invalid choice"),
    (["search.leaf_error_kind=gaussian"], "--leaf-error-kind must be one of random, bias, noise"),
])
def test_eval_refuses_a_bad_leaf_error(flags, message):
    proc = run_cli("eval", "--net", "oracle", "--iters", "8", "--repeats", "1", *flags)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------------------
# experiments/safe_search_bound.py


@pytest.fixture(scope="module")
def bound():
    return load("safe_search_bound")


def test_fit_recovers_known_constants(bound):
    deltas, iters = [0.0, 0.003, 0.01, 0.03, 0.1], [64, 256, 1024, 4096]
    d, t = np.array([(a, b) for a in deltas for b in iters]).T
    exact = 0.7 * d + 0.2 / np.sqrt(t) + 0.004
    fit = bound.fit_bound(d, t, exact)
    assert (fit["a"], fit["b"], fit["c"]) == pytest.approx((0.7, 0.2, 0.004), rel=1e-9)
    assert fit["r2_log"] == pytest.approx(1.0) and fit["misses"] == []
    # 2% multiplicative noise: constants within a few percent
    noisy = exact * np.exp(np.random.default_rng(0).normal(0, 0.02, exact.shape))
    fit = bound.fit_bound(d, t, noisy)
    assert (fit["a"], fit["b"], fit["c"]) == pytest.approx((0.7, 0.2, 0.004), rel=0.1)
    # other rates: the free-exponent fit finds them, the bound's form misses cells
    other = 0.5 * d ** 1.5 + 3.0 / t + 0.001
    free = bound.fit_free_rates(d, t, other)
    assert (free["delta_power"], free["t_power"]) == (1.5, 1.0)
    assert (free["a"], free["b"], free["c"]) == pytest.approx((0.5, 3.0, 0.001), rel=1e-6)
    assert bound.fit_bound(d, t, other)["misses"]
    # no constant needed -> c = 0 (the fit is constrained to a, b, c >= 0)
    assert bound.fit_bound(d, t, 0.3 * d + 0.1 / np.sqrt(t))["c"] == pytest.approx(0.0, abs=1e-12)
    assert bound.log_slope([1, 4, 16], [1.0, 0.5, 0.25]) == pytest.approx(-0.5)


def test_quick_sweep(bound, tmp_path, capsys):
    args = ["--quick", "--jobs", "1", "--out-dir", str(tmp_path), "--full-protocol", "8", "--full-iters", "32"]
    assert bound.main(args) == 0
    report = json.loads((tmp_path / "safe_search_bound.json").read_text())
    assert {p.rsplit("/", 1)[-1] for p in report["plots"]} == {
        "exploitability_vs_T.png", "exploitability_vs_delta.png", "mode_a_vs_mode_b.png"}
    assert (tmp_path / "exploitability_vs_T.png").stat().st_size > 10_000
    cells = {(c["solver"], c["kind"], c["delta"], c["T"]): c for c in report["cells"]}
    assert len(cells) == 2 * 2 * 3 * 3
    # delta = 0 is cfrd_rate.py's exact root-only mode (b), bit for bit
    rate = load("cfrd_rate")
    tools = rate.FullTreeTools(rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3}))
    oracle = rebel.OracleNet(tools.game, "lcfr", 256)
    for solver in ("lcfr", "lfp"):
        expected = rate.root_only_expectation(tools, oracle, 2, 64, 256, solver, _NoBar())["exploitability"]
        assert cells[(solver, "random", 0.0, 64)]["mode_b"]["exploitability"] == expected
    # the known value on main (cfrd_rate: 1x3f converges at the unlimited rate, ~0.0006 at T = 256)
    assert cells[("lcfr", "random", 0.0, 256)]["mode_b"]["exploitability"] == pytest.approx(0.00062, abs=5e-5)
    # a bias favouring player 0 costs exploitability at every T, more with a larger delta
    for solver in ("lcfr", "lfp"):
        for t in (16, 64, 256):
            e = [cells[(solver, "bias", d, t)]["mode_b"]["exploitability"] for d in (0.0, 0.01, 0.1)]
            assert e[0] < e[2] and e[1] < e[2], (solver, t, e)
    assert set(report["fits"]) == {"lcfr/random", "lcfr/bias", "lfp/random", "lfp/bias"}
    assert len(report["no_depth_limit"]) == 2 * 3
    # the full recursive protocol (rebel eval) per kind and delta: a bias costs mode (a) too
    full = {(f["kind"], f["delta"]): f for f in report["full_protocol"]}
    assert set(full) == {("none", 0.0), ("random", 0.01), ("random", 0.1), ("bias", 0.01), ("bias", 0.1)}
    assert list(full[("bias", 0.1)]["mode_b"]) == ["1", "2", "4", "8"]
    assert full[("bias", 0.1)]["mode_a"] > full[("none", 0.0)]["mode_a"]
    out = capsys.readouterr().out
    assert "| lcfr | bias | 0.1 |" in out and "mode (b) ≈" in out and "full protocol" in out

    # Resumable: every finished cell is in cells.jsonl; a rerun reuses them all (a line cut
    # short by a crash is ignored) and reports the same figures.
    lines = (tmp_path / "cells.jsonl").read_text().splitlines()
    assert len(lines) == 12 + 5
    (tmp_path / "cells.jsonl").write_text("\n".join(lines) + "\n" + lines[0][: len(lines[0]) // 2])
    assert bound.main(args + ["--no-plots"]) == 0
    again = json.loads((tmp_path / "safe_search_bound.json").read_text())
    assert again["cells"] == report["cells"] and again["full_protocol"] == report["full_protocol"]
    assert again["seconds"] < 30


class _NoBar:
    def update(self, n: int) -> None:
        pass


def test_delta_zero_reproduces_the_1x4f_figure_on_main(bound):
    """README (cfrd_rate.py): depth 2, oracle leaf values, T = 256 -> 0.0251."""
    settings = bound.Settings(iters=(256,), solvers=("lcfr",), kinds=("random",))
    cell = bound.run_cell(settings, bound.Cell("lcfr", 0.0, "none"), _NoBar())
    assert cell["rows"][0]["mode_b"]["exploitability"] == pytest.approx(0.02507, abs=5e-6)


@pytest.mark.parametrize("flags, message", [
    (["--deltas", "-0.1"], "finite and >= 0"),
    (["--deltas", "nan"], "finite and >= 0"),
    (["--iters", "1"], "T must be >= 2"),
    (["--kinds", "gaussian"], "unknown error kind"),
    (["--solvers", "cfr+"], "unknown solver"),
    (["--deltas"], "expected at least one argument"),
    (["--checkpoint", "/no/such/run"], "no config.yaml"),
])
def test_sweep_refuses_bad_grids(bound, flags, message, capsys):
    with pytest.raises(SystemExit) as e:
        bound.main(["--quick", *flags])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_settings_check_refuses_an_empty_grid(bound):
    with pytest.raises(ValueError, match="empty"):
        bound.Settings(deltas=()).check()


def test_refit_of_the_committed_1x4f_sweep_gives_the_readme_constants(bound, tmp_path, capsys):
    committed = bound.Path(__file__).resolve().parents[2] / bound.DEFAULT_OUT / "safe_search_bound.json"
    assert bound.main(["--refit", str(committed), "--out-dir", str(tmp_path), "--no-plots"]) == 0
    fits = json.loads((tmp_path / "safe_search_bound.json").read_text())["fits"]
    random_b, bias_b = fits["lcfr/random"]["mode_b"], fits["lcfr/bias"]["mode_b"]
    assert (random_b["a"], random_b["b"], random_b["c"]) == pytest.approx((0.331, 0.334, 0.0), abs=5e-4)
    assert random_b["r2_log"] == pytest.approx(0.956, abs=5e-4)
    assert (bias_b["a"], bias_b["b"]) == pytest.approx((0.087, 0.310), abs=5e-4)
    cells = {(c["solver"], c["kind"], c["delta"], c["T"]): c["mode_b"]["exploitability"]
             for c in json.loads(committed.read_text())["cells"]}
    # delta = 0 is cfrd_rate.py's README row
    assert [round(cells[("lcfr", "random", 0.0, t)], 4) for t in (256, 1024, 4096)] == [0.0251, 0.0116, 0.0049]
