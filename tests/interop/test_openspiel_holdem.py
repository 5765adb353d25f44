"""The independent check of the hold'em endgame solver (issue 92): short-deck spots with
universal_poker's fold / call / pot / all-in betting, our average strategies exported to OpenSpiel,
and OpenSpiel's exact best response (it enumerates every deal) giving our exploitability to 1e-6
chips, for the uniform policy, a partly solved one (3 DCFR iterations) and a solved one.

The rule mapping is stated in rebel/interop/openspiel_holdem.py; the tests here check its parts
(card numbering, information states, the betting trees' equality) where OpenSpiel can show them.
About 25 s on one core (the 6 x 3 river and the 6 x 2 turn take about 7 s each).
"""
from __future__ import annotations

import functools
import sys

import pytest

from rebel import _core
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_ranges import card_name
from rebel.games.holdem_spot import Spot, load_spot
from rebel.games.holdem_tree import build_action_tree
from rebel.interop import openspiel_holdem as oh

#: Our exploitability and OpenSpiel's agree to this many chips (float32 strategies: about 5e-8 seen).
TOLERANCE = 1e-6

SPOTS = {
    "river-5x2": dict(board="2c4d5c6d6c", pot=10, stack=30, ranks=5, suits=2),
    "river-6x2-odd-pot": dict(board="2c3d4c5d6c", pot=9, stack=30, ranks=6, suits=2),   # OpenSpiel in half-chips
    "river-6x3": dict(board="2c3d4h5d6c", pot=10, stack=30, ranks=6, suits=3),
    "turn-5x2": dict(board="2c3d4c5d", pot=10, stack=30, ranks=5, suits=2),
    "turn-5x2-cap-1": dict(board="3c3d4c6d", pot=8, stack=20, ranks=5, suits=2, raise_cap=1),   # ACPC's maxRaises
    "turn-6x2": dict(board="2c3d4c6d", pot=10, stack=30, ranks=6, suits=2),
}
#: The policies: solver iterations of DCFR (0: the uniform policy).
POLICIES = {"uniform": 0, "partly-solved": 3, "solved": 300}


SKIP = "open-spiel is not installed (pip install .[openspiel]; CI installs it)"


def _openspiel():
    return pytest.importorskip("pyspiel", reason=SKIP)


@functools.lru_cache(maxsize=None)
def _spot(name: str) -> Spot:
    return oh.fcpa_spot(**SPOTS[name])


@functools.lru_cache(maxsize=None)
def _game(name: str) -> _core.HoldemEndgame:
    return build_endgame(_spot(name))


def _engine(name: str, iterations: int) -> _core.HoldemSolver:
    engine = _core.HoldemSolver(_game(name), "dcfr", 1)
    if iterations:
        engine.iterate(iterations)
    return engine


def test_game_strings():
    turn = _spot("turn-5x2")
    assert oh.universal_poker_game_string(turn) == (
        "universal_poker(betting=nolimit,numPlayers=2,numRounds=2,blind=5 5,stack=35 35,firstPlayer=1 1,"
        "maxRaises=255 255,numSuits=2,numRanks=5,numHoleCards=2,numBoardCards=4 1,boardCards=2c3d4c5d,"
        "bettingAbstraction=fcpa)")
    # A river: one round, its one-number lists kept as text by a trailing space; an odd pot doubled.
    river = _spot("river-6x2-odd-pot")
    assert oh.chip_scale(river) == 2
    params = oh.universal_poker_params(river)
    assert (params["numRounds"], params["firstPlayer"], params["numBoardCards"]) == (1, "1 ", "5 ")
    assert (params["blind"], params["stack"]) == ("9 9", "69 69")
    assert oh.universal_poker_params(_spot("turn-5x2-cap-1"))["maxRaises"] == "1 1"


@pytest.mark.parametrize("change, message", [
    ({"bets": {"river": {"bet": "50%, a", "raise": "100%, a"}}}, r"bets\.river\.oop\.bet is 50%, a; .*'100%, a'"),
    ({"bets": {"river": {"bet": "100%, a", "raise": "100%"}}}, r"bets\.river\.oop\.raise is 100%"),
    ({"merging_threshold": 0.1}, r"merging_threshold is 0\.1; universal_poker's fcpa has none"),
    ({"ranges": {"oop": "full", "ip": "66+"}}, r"ranges\.ip: .* must be 'full'"),
])
def test_spots_universal_poker_cannot_play_are_refused(change, message):
    data = {"board": "2c3d4c5d6c", "pot": 10, "stack": 30, "ranges": {"oop": "full", "ip": "full"},
            "bets": {"river": {"bet": "100%, a", "raise": "100%, a"}}, "ranks": 6, "suits": 2}
    assert oh.universal_poker_params(load_spot(data))["boardCards"] == "2c3d4c5d6c"
    with pytest.raises(ValueError, match=message):
        oh.universal_poker_params(load_spot({**data, **change}))


def test_donk_sizes_are_refused():
    data = {"board": "2c3d4c5d", "pot": 10, "stack": 30, "ranges": {"oop": "full", "ip": "full"}, "ranks": 6,
            "suits": 2, "bets": {s: {"bet": "100%, a", "raise": "100%, a"} for s in ("turn", "river")},
            "donk": {"river": "100%"}}
    with pytest.raises(ValueError, match="donk sizes"):
        oh.universal_poker_params(load_spot(data))


def test_missing_openspiel_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(ImportError, match=r"OpenSpiel is not installed"):
        oh.universal_poker_game(_spot("river-5x2"))


def test_deal_outcomes_are_our_cards():
    """OpenSpiel's deal outcome i is our i-th card of the short deck (numSuits < 4 included)."""
    _openspiel()
    for name in ("river-6x3", "turn-5x2"):
        spot = _spot(name)
        state = oh.universal_poker_game(spot).new_initial_state()
        outcomes = dict(state.chance_outcomes())
        cards = oh.deck_outcomes(spot)
        assert sorted(cards[i] for i in outcomes) == sorted(set(cards) - set(spot.board))
        for i in outcomes:
            assert state.action_to_string(i) == f"player=-1 move=Deal {card_name(cards[i])}"


def test_potsize_parameter_is_no_starting_pot():
    """Why the pot is posted as blinds: with universal_poker's potSize (and the 1-chip blinds it
    needs) a check lowers the checker's chips in from potSize / 2 to the blind."""
    pyspiel = _openspiel()
    game = pyspiel.load_game("universal_poker", {
        "betting": "nolimit", "numPlayers": 2, "numRounds": 1, "blind": "1 1", "stack": "35 35", "potSize": 10,
        "firstPlayer": "1", "numSuits": 2, "numRanks": 5, "numHoleCards": 2, "numBoardCards": "5",
        "boardCards": "2c4d5c6d6c", "bettingAbstraction": "fcpa"})
    state = game.new_initial_state()
    for _ in range(4):
        state.apply_action(state.legal_actions()[0])
    assert state.to_struct().player_contributions == [5, 5]
    state.apply_action(oh.CALL_ACTION)  # a check
    assert state.to_struct().player_contributions == [1, 5]


def test_exported_table_covers_every_information_state():
    """One table entry per OpenSpiel information state, and no other."""
    _openspiel()
    from open_spiel.python.algorithms import get_all_states

    for name in ("river-5x2", "turn-5x2-cap-1"):
        spot = _spot(name)
        os_game, table = oh.export_policy(spot, _game(name), _engine(name, 0))
        states = get_all_states.get_all_states(os_game, include_terminals=False, include_chance_states=False)
        assert set(table) == {s.information_state_string() for s in states.values()}


def test_a_tree_other_than_fcpa_is_an_error():
    _openspiel()
    spot = _spot("river-5x2")
    half_pot = load_spot({"board": "2c4d5c6d6c", "pot": 10, "stack": 30, "ranges": {"oop": "full", "ip": "full"},
                          "bets": {"river": {"bet": "50%, a", "raise": "100%, a"}}, "ranks": 5, "suits": 2})
    tree = build_action_tree(half_pot)
    with pytest.raises(ValueError, match=r"at the root: OpenSpiel's action player=0 move=Bet has no single counterpart "
                                         r"among ours \(check, bet 5, all-in\)"):
        oh.export_policy(spot, build_endgame(half_pot), _engine("river-5x2", 0), tree=tree)


CASES = [(spot, policy) for spot in ("river-5x2", "river-6x2-odd-pot", "turn-5x2") for policy in POLICIES]
CASES += [("turn-5x2-cap-1", "partly-solved"), ("river-6x3", "partly-solved"), ("turn-6x2", "partly-solved")]


@pytest.mark.parametrize("name, policy", CASES)
def test_openspiel_exploitability_equals_ours(name, policy):
    pyspiel = _openspiel()
    spot = _spot(name)
    engine = _engine(name, POLICIES[policy])
    ours = engine.exploitability()
    if policy != "solved":  # far from an equilibrium: the check is not of near-zeros
        assert ours > 0.05 * spot.pot
    else:
        assert ours < 0.005 * spot.pot
    os_game, table = oh.export_policy(spot, _game(name), engine)
    theirs = pyspiel.exploitability(os_game, table)  # nash_conv / 2 in OpenSpiel's chips
    assert abs(theirs / oh.chip_scale(spot) - ours) <= TOLERANCE


@pytest.mark.parametrize("name", ["river-5x2", "turn-5x2"])
def test_openspiel_best_responses_and_values_equal_ours(name):
    """Each player's best-response value and the on-policy values, not only their sum."""
    pyspiel = _openspiel()
    spot = _spot(name)
    engine = _engine(name, POLICIES["partly-solved"])
    os_game, table = oh.export_policy(spot, _game(name), engine)
    theirs = oh.openspiel_values(spot, os_game, table, detail=True)
    for mine, other in zip(engine.best_response_values(), theirs["best_response_values"]):
        assert abs(mine - other) <= TOLERANCE
    for mine, other in zip(engine.average_values(), theirs["values"]):
        assert abs(mine - other) <= TOLERANCE
    assert abs(theirs["exploitability"] - engine.exploitability()) <= TOLERANCE
    assert abs(pyspiel.nash_conv(os_game, table) / 2 - theirs["exploitability"]) <= 1e-12
