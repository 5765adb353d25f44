"""OpenSpiel interoperability: rebel policies converted to OpenSpiel tabular policies have
the same exploitability under OpenSpiel's own evaluation, and back."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import full_tree, kuhn, liars_dice, solved

import rebel
import rebel.interop.openspiel as ros

GAMES = {"kuhn": kuhn, "1x4f": lambda: liars_dice(1, 4), "1x3f": lambda: liars_dice(1, 3),
         "2x2f": lambda: liars_dice(2, 2)}


def test_missing_openspiel_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    assert not ros.available()
    with pytest.raises(ImportError, match=r"OpenSpiel is not installed: pip install \.\[openspiel\]"):
        ros.openspiel_game(kuhn())


def test_game_strings():
    assert ros.openspiel_game_string(kuhn()) == "kuhn_poker"
    assert ros.openspiel_game_string(liars_dice(2, 3)) == "liars_dice(numdice=2,dice_sides=3)"
    assert ros.openspiel_game_string(rebel.make_game("leduc", {})) == "leduc_poker"
    assert sorted(ros.OPENSPIEL_GAMES) == ["kuhn", "leduc", "leduc_nolimit", "liars_dice"]   # the one table
    with pytest.raises(ValueError, match=r"no OpenSpiel counterpart for mnk\(.*\) \(supported: kuhn, liars_dice"):
        ros.openspiel_game_string(rebel.make_game("mnk", {}))


def _openspiel():
    pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install .[openspiel]; CI installs it)")
    from open_spiel.python.algorithms import cfr, exploitability

    return cfr, exploitability


@pytest.mark.parametrize("name", ["kuhn", "1x4f"])
@pytest.mark.parametrize("solver", ["lcfr", "cfr+"])
def test_openspiel_exploitability_of_converted_policies_equals_ours(name, solver):
    _, exploitability = _openspiel()
    game = GAMES[name]()
    ours = solved(game, solver, 256)
    os_game, table = ros.to_openspiel(game, ours.policy, full_tree(game))
    assert abs(exploitability.exploitability(os_game, table) - ours.exploitability) <= 1e-9
    back = ros.from_openspiel(game, table, full_tree(game))
    assert np.array_equal(back, ours.policy)  # one hand per information state: exact


def test_dice_orders_sharing_an_openspiel_state_are_mixed_by_reach():
    """2x2f: hands (0, 1) and (1, 0) are one OpenSpiel information state. A random policy
    that treats them differently keeps its exploitability once mixed."""
    _, exploitability = _openspiel()
    game = liars_dice(2, 2)
    tree = full_tree(game)
    rng = np.random.default_rng(0)
    policy = rng.random((len(tree), game.num_hands))
    for n in tree.decision_nodes.tolist():
        kids = slice(tree.first_child[n], tree.first_child[n] + tree.num_children[n])
        policy[kids] /= policy[kids].sum(axis=0)
    policy[0] = 0.0
    ours = rebel.exploitability(game, tree, policy)["exploitability"]
    os_game, table = ros.to_openspiel(game, policy, tree)
    assert abs(exploitability.exploitability(os_game, table) - ours) <= 1e-9
    back = ros.from_openspiel(game, table, tree)
    assert abs(rebel.exploitability(game, tree, back)["exploitability"] - ours) <= 1e-9


@pytest.mark.parametrize("name", ["kuhn", "1x3f"])
def test_openspiel_cfr_policy_scored_by_rebel(name):
    cfr, exploitability = _openspiel()
    game = GAMES[name]()
    os_game = ros.openspiel_game(game)
    solver = cfr.CFRSolver(os_game)
    for _ in range(30):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    policy = ros.from_openspiel(game, average, full_tree(game))
    ours = rebel.exploitability(game, full_tree(game), policy)["exploitability"]
    assert abs(ours - exploitability.exploitability(os_game, average)) <= 1e-9


# ------------------------------------------------------------------ RebelBot inside OpenSpiel


def _bot_returns(game, opponent, games: int, seed: int, depth: int = 2, iterations: int = 128) -> np.ndarray:
    """The rebel bot's returns over ``games`` episodes of OpenSpiel's evaluate_bots, seats
    alternating; ``opponent(seat, rng)`` makes the other bot."""
    from open_spiel.python.algorithms import evaluate_bots

    os_game = ros.openspiel_game(game)
    net = rebel.OracleNet(game, "lcfr", iterations, "root_mean")
    rng = np.random.RandomState(seed)
    ours = [ros.make_rebel_bot(game, net, seat, depth=depth, iterations=iterations, seed=seed + seat)
            for seat in (0, 1)]
    theirs = [opponent(seat, rng) for seat in (0, 1)]
    returns = []
    for i in range(games):
        seat = i % 2
        bots = [ours[0], theirs[1]] if seat == 0 else [theirs[0], ours[1]]
        returns.append(evaluate_bots.evaluate_bots(os_game.new_initial_state(), bots, rng)[seat])
    return np.array(returns)


def _interval(returns: np.ndarray) -> tuple[float, float]:
    half = 1.96 * returns.std(ddof=1) / np.sqrt(len(returns))
    return returns.mean() - half, returns.mean() + half


def test_rebel_bot_beats_the_uniform_random_bot_in_openspiel():
    _openspiel()
    import pyspiel

    returns = _bot_returns(kuhn(), lambda seat, rng: pyspiel.make_uniform_random_bot(seat, 7 + seat), 2000, seed=1)
    low, high = _interval(returns)
    assert low > 0, (returns.mean(), low, high)   # positive mean return, its 95% interval above 0


def test_rebel_bot_ties_openspiel_cfr_in_openspiel():
    """Against OpenSpiel's own CFR average policy (near-equilibrium) the bot's mean return over
    both seats is the game's, 0, within its 95% interval."""
    cfr, _ = _openspiel()
    from open_spiel.python.bots import policy as policy_bot

    game = kuhn()
    solver = cfr.CFRSolver(ros.openspiel_game(game))
    for _ in range(300):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    returns = _bot_returns(game, lambda seat, rng: policy_bot.PolicyBot(seat, rng, average), 1000, seed=2)
    low, high = _interval(returns)
    assert low <= 0.0 <= high, (returns.mean(), low, high)


def test_rebel_bot_plays_liars_dice_by_the_rules():
    _openspiel()
    import pyspiel

    returns = _bot_returns(liars_dice(1, 3), lambda seat, rng: pyspiel.make_uniform_random_bot(seat, seat), 20, seed=3)
    assert set(np.unique(returns)) <= {-1.0, 1.0}
    with pytest.raises(ValueError, match="player_id"):
        ros.make_rebel_bot(kuhn(), rebel.ZeroNet(kuhn()), 2)


@pytest.mark.parametrize("solver", ["lcfr", "lfp"])
def test_leduc_exploitability_equals_openspiel_best_response(solver):
    """Limit Leduc (public chance): a full-game solver's average policy scored by OpenSpiel's
    exact best response on ``leduc_poker`` equals our exploitability to 1e-9, and the
    conversion back is exact (one hand per information state)."""
    _, exploitability = _openspiel()
    game = rebel.make_game("leduc", {})
    ours = solved(game, solver, 256)
    os_game, table = ros.to_openspiel(game, ours.policy, full_tree(game))
    assert abs(exploitability.exploitability(os_game, table) - ours.exploitability) <= 1e-9
    back = ros.from_openspiel(game, table, full_tree(game))
    np.testing.assert_allclose(back, ours.policy, rtol=0, atol=1e-15)


def test_openspiel_cfr_policy_on_leduc_scored_by_rebel():
    cfr, exploitability = _openspiel()
    game = rebel.make_game("leduc", {})
    os_game = ros.openspiel_game(game)
    solver = cfr.CFRSolver(os_game)
    for _ in range(10):
        solver.evaluate_and_update_policy()
    policy = ros.from_openspiel(game, solver.average_policy(), full_tree(game))
    ours = rebel.exploitability(game, full_tree(game), policy)["exploitability"]
    assert abs(ours - exploitability.exploitability(os_game, solver.average_policy())) <= 1e-9


@pytest.mark.parametrize("params", [{}, {"stack": 900}])
def test_nolimit_leduc_exploitability_equals_universal_poker_best_response(params):
    """No-limit Leduc: our exploitability of a solver's average policy equals OpenSpiel's
    best response on universal_poker (DeepStack's gamedef, fcpa) to 1e-6 chips."""
    _, exploitability = _openspiel()
    game = rebel.make_game("leduc_nolimit", params)
    ours = solved(game, "lcfr", 128)
    os_game, table = ros.to_openspiel(game, ours.policy, full_tree(game))
    assert abs(exploitability.exploitability(os_game, table) - ours.exploitability) <= 1e-6
    back = ros.from_openspiel(game, table, full_tree(game))
    np.testing.assert_allclose(back, ours.policy, rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["leduc", "leduc_nolimit"])
def test_leduc_search_policy_exploitability_equals_openspiel(name):
    """The policy of a search (mode (b): the average of sampled policies of ReBeL's test-time
    search, exact leaf values at each deal) scored by OpenSpiel's best response equals ours."""
    _, exploitability = _openspiel()
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    game = rebel.make_game(name, {})
    r = evaluate(game, EvalSettings(net="oracle", depth=10, iterations=16, oracle_iterations=16, repeats=4,
                                    mode_a=False, full_game=False), progress=False)
    os_game, table = ros.to_openspiel(game, r["_mode_b_policy"], full_tree(game))
    assert abs(exploitability.exploitability(os_game, table) - r["mode_b"][-1]["exploitability"]) <= 1e-9


@pytest.mark.parametrize("name", ["leduc", "leduc_nolimit"])
def test_rebel_bot_plays_leduc_in_openspiel(name):
    """RebelBot in OpenSpiel's own loop on leduc_poker / universal_poker: the board card is read
    from the OpenSpiel history, every action it takes is legal there, and against the
    uniform-random bot it wins (limit: 100 episodes, the mean return's 95% interval above 0).
    Each episode runs a whole sampled mode-(b) search, so the searches are small."""
    _openspiel()
    import pyspiel

    game = rebel.make_game(name, {})
    episodes = 100 if name == "leduc" else 20
    returns = _bot_returns(game, lambda seat, rng: pyspiel.make_uniform_random_bot(seat, 11 + seat), episodes, seed=4,
                           depth=10, iterations=16)
    assert len(returns) == episodes
    if name == "leduc":
        low, _ = _interval(returns)
        assert low > 0, returns.mean()
