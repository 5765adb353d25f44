"""Node locking by line (rebel/search/holdem_lock.py): locked frequencies are kept and the rest
is solved (the clairvoyance game with IP calling every bet: OOP stops bluffing and wins 50),
hand groups with `*` or the solver's strategy for the hands left, a line that skips the river
card locks that node under all 48 cards, command-line and lock-file syntax, one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.holdem_spots import CLAIRVOYANCE, NARROW_TURN

from rebel import _core
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_lines import find_node
from rebel.games.holdem_spot import load_spot
from rebel.search.holdem_lock import Lock, check_lock, load_lock_file, lock_line, parse_frequencies, parse_lock_option
from rebel.search.holdem_results import hand_results
from rebel.search.holdem_solve import solve_spot


@pytest.fixture
def clairvoyance():
    game = build_endgame(load_spot(CLAIRVOYANCE))
    return game, _core.HoldemSolver(game, "dcfr", 1)


def test_ip_locked_to_call_kills_the_bluffs_and_the_rest_is_unexploitable(clairvoyance) -> None:
    game, engine = clairvoyance
    assert lock_line(engine, game, "bet 100", "call") == [find_node(game, "bet 100")]
    engine.iterate(1000)
    assert engine.average_values()[0] == pytest.approx(50.0, abs=0.05)
    np.testing.assert_array_equal(engine.average_strategy(find_node(game, "bet 100")), [[0.0], [1.0]])
    strategy = engine.average_strategy(0)  # 53 never bluffs, KK always bets
    assert strategy[1, 0] < 0.01 and strategy[1, 1] > 0.99
    assert engine.exploitability() < 0.05


def test_hand_groups_lock_each_hand(clairvoyance) -> None:
    game, engine = clairvoyance
    lock_line(engine, game, "", {"KK": "bet 100", "53": {"check": 1.0}})
    np.testing.assert_array_equal(engine.average_strategy(0), [[1.0, 0.0], [0.0, 1.0]])  # hands: 53, KK
    engine.iterate(500)
    assert engine.average_values()[0] == pytest.approx(0.0, abs=0.05)  # IP folds to every bet
    assert hand_results(engine, game, "bet 100")["frequencies"]["fold"] > 0.99
    engine2 = _core.HoldemSolver(game, "dcfr", 1)
    lock_line(engine2, game, "", {"5d3h": "check:70%, bet 100:30%", "*": "bet 100"})
    np.testing.assert_allclose(engine2.average_strategy(0), [[0.7, 0.0], [0.3, 1.0]], atol=1e-7)


def test_hands_no_group_names_keep_the_solvers_strategy_when_locked(clairvoyance) -> None:
    game, engine = clairvoyance
    engine.iterate(1000)
    before = engine.average_strategy(0)
    lock = Lock("", {"53": "check"})
    assert not lock.complete
    lock_line(engine, game, lock.line, lock.strategy)
    after = engine.average_strategy(0)
    np.testing.assert_array_equal(after[:, 0], [1.0, 0.0])
    np.testing.assert_allclose(after[:, 1], before[:, 1] / before[:, 1].sum(), atol=1e-7)  # KK as solved
    assert Lock("", {"53": "check", "*": "bet 100"}).complete and Lock("x", "call").complete
    assert Lock("x", {"call": 1}).complete


def test_a_line_without_the_river_card_locks_that_node_under_every_card() -> None:
    spot = load_spot(NARROW_TURN)
    game = build_endgame(spot)
    engine = _core.HoldemSolver(game, "dcfr", 1)
    nodes = lock_line(engine, game, "check, check, bet 150", {"call": 0.25, "fold": 0.75})
    assert len(nodes) == 48 and sorted(engine.locked_nodes()) == sorted(nodes)
    engine, result = solve_spot(spot, "dcfr", 600, target=0.5, game=game, engine=engine)
    assert result.exploitability <= 0.5  # of the rest: the locked nodes keep their strategy
    for node in nodes:
        strategy = engine.average_strategy(node)
        np.testing.assert_allclose(strategy[0], 0.75, atol=1e-7)
        np.testing.assert_allclose(strategy[1], 0.25, atol=1e-7)
    freqs = hand_results(engine, game, "check, check, 2c")["frequencies"]
    assert freqs["bet 150"] > 0.3  # OOP bets into a range that folds 75%


def test_frequencies_and_command_line_syntax() -> None:
    actions = ["fold", "call", "raise 300"]
    np.testing.assert_allclose(parse_frequencies("call:0.7, fold:0.3", actions), [0.3, 0.7, 0.0])
    np.testing.assert_allclose(parse_frequencies("Raise300", actions), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(parse_frequencies({"call": "50%", "fold": 0.5}, actions), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(parse_frequencies("call:0.333,fold:0.333,raise 300:0.333", actions), [1 / 3] * 3)
    locks = parse_lock_option("check, bet 120=call:0.7,fold:0.3; bet 120=call ;")
    assert locks == [Lock("check, bet 120", "call:0.7,fold:0.3"), Lock("bet 120", "call")]
    assert parse_lock_option("=check") == [Lock("", "check")]


@pytest.mark.parametrize("text, message", [
    ("bet 120", "lock 'bet 120' must be LINE=ACTION:FREQ,..."),
    ("bet 120=call:abc", "frequency 'abc' is not a number or a percentage"),
    ("bet 120=call:", "frequency '' is not a number"),
    ("bet 120=call:1.5", "outside \\[0, 1\\]"),
    ("bet 120=call,,fold", "empty entry"),
    (";", "names no node"),
    ("check,,bet 120=call", "has an empty step"),
])
def test_bad_lock_options_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as e:
        parse_lock_option(text)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("line, strategy, message", [
    ("bet 100", "call:0.5", "lock 'bet 100': frequencies sum to 0.5, not 1"),
    ("bet 100", "cal", "'cal' is not an action here \\(actions: fold, call\\); did you mean 'call'\\?"),
    ("bet 100", {"AA": "call", "fold": 1}, "mixes hand groups \\('AA'\\) and actions or bad hand groups "
                                           "\\('fold': range group 'fold' does not parse"),
    ("", {"AA:0.5": "check"}, "hand group 'AA:0.5' has a weight"),
    ("", {"KQo": "check"}, "hand group 'KQo' holds none of OOP's hands"),
    ("", {"KdKc": "check", "XxYy": "check"}, "mixes hand groups"),
    ("", {"KsKd": "check"}, "hand group 'KsKd': .*board"),
    ("check, check", "call", "the line ends at a showdown node"),
    ("bet 200", "call", "step 1 'bet 200' is not an action"),
    ("bet 100", "call:0.5, call:0.5", "action 'call' given twice"),
    ("bet 100", np.ones((2, 2)), "shape \\(2, 2\\), expected \\(actions, hands\\) = \\(2, 1\\)"),
    ("bet 100", {}, "non-empty mapping"),
])
def test_bad_locks_are_one_line_errors(clairvoyance, line, strategy, message) -> None:
    game, engine = clairvoyance
    with pytest.raises(ValueError, match=message) as e:
        check_lock(game, line, strategy)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=message):
        lock_line(engine, game, line, strategy)
    assert engine.locked_nodes() == []


def test_lock_files_in_yaml_and_json(tmp_path, clairvoyance) -> None:
    game, engine = clairvoyance
    path = tmp_path / "locks.yaml"
    path.write_text("locks:\n  - line: bet 100\n    strategy: {call: 0.5, fold: 0.5}\n"
                    "  - line: [check]\n    strategy: {\"*\": check}\n")
    locks = load_lock_file(path)
    assert locks == [Lock("bet 100", {"call": 0.5, "fold": 0.5}), Lock(["check"], {"*": "check"})]
    for lock in locks:
        lock_line(engine, game, lock.line, lock.strategy)
    assert len(engine.locked_nodes()) == 2
    as_json = tmp_path / "locks.json"
    as_json.write_text(json.dumps({"locks": [{"line": "", "strategy": {"KK": "bet 100", "*": "check"}}]}))
    assert load_lock_file(as_json) == [Lock("", {"KK": "bet 100", "*": "check"})]


@pytest.mark.parametrize("text, message", [
    ("locks:\n  - line: bet 100\n    stratgy: call\n",
     "locks\\[0\\]: unknown key 'stratgy'; did you mean 'strategy'\\?"),
    ("locks:\n  - line: bet 100\n", "locks\\[0\\]: needs both line and strategy"),
    ("lock: []\n", "expected one key, locks"),
    ("locks:\n  - line: 3\n    strategy: call\n", "locks\\[0\\].line must be text or a list"),
    ("locks: [\n", "not valid YAML or JSON"),
    ("locks:\n  - line: check,,call\n    strategy: call\n", "has an empty step"),
])
def test_bad_lock_files_are_one_line_errors(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "locks.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as e:
        load_lock_file(path)
    assert "\n" not in str(e.value) and str(path) in str(e.value)
    with pytest.raises(ValueError, match="not found"):
        load_lock_file(tmp_path / "none.yaml")
