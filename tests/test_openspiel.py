"""OpenSpiel interoperability: rebel policies converted to OpenSpiel tabular policies have
the same exploitability under OpenSpiel's own evaluation, and back."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import full_tree, kuhn, liars_dice, solved

import rebel
import rebel.openspiel as ros

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
