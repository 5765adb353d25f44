"""Per-hand results of solved hold'em spots (rebel/search/holdem_results.py): the clairvoyance
game's frequencies, EVs and equities, range EVs that are the game value at the root and sum to
0 at every reached node, card removal against brute force, the grid's cells, and JSON that
round-trips through json.loads with NaN written as null."""
from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.holdem_spots import CLAIRVOYANCE, NARROW_TURN

from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_ranges import GRID_LABELS
from rebel.games.holdem_spot import load_spot
from rebel.search.holdem_results import (
    export_json,
    grid_strategy,
    hand_names,
    hand_results,
    opponent_mass,
    results_json,
    write_json,
)
from rebel.search.holdem_solve import solve_spot


@pytest.fixture(scope="module")
def clairvoyance():
    spot = load_spot(CLAIRVOYANCE)
    game = build_endgame(spot)
    engine, result = solve_spot(spot, "dcfr", 2000, game=game)
    return spot, game, engine, result


@pytest.fixture(scope="module")
def turn():
    spot = load_spot(NARROW_TURN)
    game = build_endgame(spot)
    engine, result = solve_spot(spot, "dcfr", 300, target=0.5, game=game)
    return spot, game, engine, result


def test_clairvoyance_root_frequencies_evs_and_equities(clairvoyance) -> None:
    _, game, engine, _ = clairvoyance
    r = hand_results(engine, game, 0)
    assert (r["node"], r["line"], r["kind"], r["player"]) == (0, [], "decision", "oop")
    assert r["actions"] == ["check", "bet 100"] and r["pot"] == 100.0 and r["invested"] == [50.0, 50.0]
    assert r["board"] == ["Ks", "Qd", "7h", "4c", "2s"]
    oop, ip = r["oop"], r["ip"]
    assert oop["hands"] == ["5d3h", "KdKc"] and ip["hands"] == ["AhAc"]
    np.testing.assert_allclose(oop["strategy"], [[0.5, 0.0], [0.5, 1.0]], atol=0.01)  # KK bets, 53 bluffs half
    assert r["frequencies"]["bet 100"] == pytest.approx(0.75, abs=0.01)
    np.testing.assert_allclose(oop["ev"], [-50.0, 100.0], atol=0.2)
    np.testing.assert_array_equal(oop["equity"], [0.0, 1.0])
    np.testing.assert_array_equal(oop["weight"], [1.0, 1.0])
    assert oop["range_ev"] == pytest.approx(engine.average_values()[0], abs=1e-9)
    assert oop["range_ev"] == pytest.approx(25.0, abs=0.05)
    assert ip["range_ev"] == pytest.approx(-25.0, abs=0.05) and ip["range_equity"] == pytest.approx(0.5)
    assert "strategy" not in ip


def test_clairvoyance_facing_the_bet(clairvoyance) -> None:
    _, game, engine, _ = clairvoyance
    r = hand_results(engine, game, "bet 100")
    assert r["player"] == "ip" and r["actions"] == ["fold", "call"] and r["pot"] == 200.0
    assert r["frequencies"]["call"] == pytest.approx(0.5, abs=0.02)
    np.testing.assert_allclose(r["oop"]["reach"], [0.5, 1.0], atol=0.01)  # 53 half the time, KK always
    assert r["ip"]["equity"][0] == pytest.approx(1 / 3, abs=0.01)
    assert r["ip"]["range_equity"] == pytest.approx(1 / 3, abs=0.01)
    assert r["ip"]["ev"][0] == pytest.approx(-50.0, abs=0.2)  # folding and calling both lose 50 on average
    end = hand_results(engine, game, "bet 100, call")
    assert end["player"] is None and end["actions"] == [] and end["frequencies"] == {}
    np.testing.assert_allclose(end["oop"]["ev"], [-150.0, 150.0])


def test_range_evs_are_the_game_value_at_the_root_and_zero_sum_everywhere(turn) -> None:
    _, game, engine, _ = turn
    root = hand_results(engine, game, 0)
    values = engine.average_values()
    assert root["oop"]["range_ev"] == pytest.approx(values[0], abs=1e-6)
    assert root["ip"]["range_ev"] == pytest.approx(values[1], abs=1e-6)
    for line in ("check", "bet 120", "check, check, Ks", "bet 120, call, 2c, check", "check, check, As, bet 150"):
        r = hand_results(engine, game, line)
        assert r["oop"]["range_ev"] + r["ip"]["range_ev"] == pytest.approx(0.0, abs=1e-6), line
        eq = r["oop"]["range_equity"] + r["ip"]["range_equity"]
        assert eq == pytest.approx(1.0, abs=1e-9), line


def test_hands_holding_the_dealt_card_are_unreached_and_written_null(turn) -> None:
    spot, game, engine, result = turn
    r = hand_results(engine, game, "check, check, As")
    held = [i for i, name in enumerate(r["oop"]["hands"]) if "As" in name]
    assert held and all(r["oop"]["reach"][i] == 0 and np.isnan(r["oop"]["ev"][i]) for i in held)
    doc = json.loads(json.dumps(results_json(r), allow_nan=False))
    assert all(doc["oop"]["ev"][i] is None and doc["oop"]["equity"][i] is None for i in held)
    assert doc["line"] == ["check", "check", "As"] and doc["line_text"] == "check, check, As"


def test_opponent_mass_is_the_disjoint_reach_by_brute_force(turn) -> None:
    _, game, _, _ = turn
    rng = np.random.default_rng(0)
    reach = rng.random(game.num_hands(1))
    mine, theirs = game.hands(0), game.hands(1)
    brute = [sum(r for t, r in zip(theirs.tolist(), reach) if not set(t) & set(h)) for h in mine.tolist()]
    np.testing.assert_allclose(opponent_mass(game, 0, reach), brute, rtol=1e-12)
    same = build_endgame(load_spot({**NARROW_TURN, "ranges": {"oop": "QQ,AKs", "ip": "QQ,AKs"}}))
    reach = np.ones(same.num_hands(1))
    brute = [sum(1.0 for t in same.hands(1).tolist() if not set(t) & set(h)) for h in same.hands(0).tolist()]
    np.testing.assert_allclose(opponent_mass(same, 0, reach), brute)  # identical hands in both ranges


def test_the_grid_folds_the_actor_strategy_onto_its_cells(clairvoyance) -> None:
    _, game, engine, _ = clairvoyance
    grid = grid_strategy(hand_results(engine, game, 0))
    cell = {label: (row, col) for row, labels in enumerate(GRID_LABELS) for col, label in enumerate(labels)}
    kk, five_three = cell["KK"], cell["53o"]
    assert five_three[0] > five_three[1]  # offsuit below the diagonal
    assert grid.actions == ["check", "bet 100"] and grid.player == "oop"
    np.testing.assert_allclose(grid.frequencies[kk], [0.0, 1.0], atol=0.01)
    np.testing.assert_allclose(grid.frequencies[five_three], [0.5, 0.5], atol=0.01)
    assert grid.combos[kk] == 1.0 and grid.combos.sum() == 2.0
    assert grid.share[kk] == pytest.approx(1 / 3)  # one of the 3 KK combos the Ks leaves
    assert grid.share[five_three] == pytest.approx(1 / 12)
    assert np.isnan(grid.frequencies[cell["AA"]]).all() and grid.share[cell["AA"]] == 0
    with pytest.raises(ValueError, match="is a showdown node: nobody acts there"):
        grid_strategy(hand_results(engine, game, "check, check"))


def test_export_json_round_trips(clairvoyance, tmp_path) -> None:
    spot, game, engine, result = clairvoyance
    nodes = [0] + game.node(0)["children"]
    doc = export_json(engine, game, spot, nodes, result)
    path = tmp_path / "out.json"
    write_json(path, doc)
    back = json.loads(path.read_text())
    assert back == json.loads(json.dumps(doc))
    assert back["spot"] == {"description": "clairvoyance game", "street": "river",
                            "board": ["Ks", "Qd", "7h", "4c", "2s"], "pot": 100, "stack": 1000,
                            "ranges": {"oop": "KdKc, 5d3h", "ip": "AhAc"}}
    assert back["solve"]["iterations"] == 2000 and back["locked"] == []
    assert [n["line_text"] for n in back["nodes"]] == ["(root)", "check", "bet 100"]
    root = back["nodes"][0]
    assert root["actions"] == ["check", "bet 100"] and root["oop"]["hands"] == ["5d3h", "KdKc"]
    assert root["oop"]["strategy"]["bet 100"][1] == pytest.approx(1.0, abs=1e-4)
    assert set(root["ip"]) == {"hands", "weight", "reach", "ev", "equity", "range_ev", "range_equity"}
    assert back["nodes"][2]["ip"]["strategy"]["call"][0] == pytest.approx(0.5, abs=0.02)
    assert hand_names(game, 1) == ["AhAc"]
