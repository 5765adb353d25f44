"""Nodes of a hold'em endgame by their line (rebel/games/holdem_lines.py): a line finds its node
and reads back from it for every node, spelling variants match, a line that skips the dealt
card names that betting node under every card, and a step that does not match is a one-line
error naming it and the choices there."""
from __future__ import annotations

import pytest
from helpers.holdem_spots import CLAIRVOYANCE, NARROW_TURN

from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_lines import (
    action_labels,
    find_node,
    find_nodes,
    format_line,
    node_line,
    resolve_node,
    split_line,
)
from rebel.games.holdem_ranges import parse_card
from rebel.games.holdem_spot import load_spot


@pytest.fixture(scope="module")
def turn():
    return build_endgame(load_spot(NARROW_TURN))


def test_a_line_with_a_dealt_card_finds_its_node_and_reads_back(turn) -> None:
    node = find_node(turn, "check, bet 120, call, Qs, bet 330")
    info = turn.node(node)
    assert info["kind"] == "decision" and info["player"] == 1 and info["label"] == "bet 330"
    assert info["board"][-1] == parse_card("Qs")
    assert info["invested"] == [100.0 + 120 + 330, 100.0 + 120]
    assert node_line(turn, node) == ["check", "bet 120", "call", "Qs", "bet 330"]
    assert find_node(turn, ["check", "bet 120", "call", "Qs", "bet 330"]) == node
    assert find_node(turn, "CHECK,Bet120 , call,qs, BET 330") == node  # case, spaces, lower-case rank
    assert resolve_node(turn, node) == node and resolve_node(turn, "check, bet 120, call, Qs, bet 330") == node
    assert find_node(turn, "") == find_node(turn, []) == 0 and node_line(turn, 0) == []
    assert action_labels(turn, node) == ["fold", "call"]
    assert find_node(turn, "check, check, 2c, all in") == find_node(turn, "check, check, 2c, All-In")


def test_every_node_reads_back_to_itself(turn) -> None:
    for node in range(0, turn.num_nodes, 7):
        assert find_node(turn, node_line(turn, node)) == node
        assert find_node(turn, format_line(node_line(turn, node)) if node else "") == node


def test_a_line_that_skips_the_card_names_the_node_under_every_card(turn) -> None:
    nodes = find_nodes(turn, "check, check, bet 150")
    action = turn.node(nodes[0])["action"]
    assert nodes == [i for i in range(turn.num_nodes) if turn.node(i)["action"] == action]
    assert len(nodes) == 48  # every river card: 52 - 4 on the board
    assert sorted(turn.node(n)["board"][-1] for n in nodes) == sorted(set(range(52)) - set(turn.node(0)["board"]))
    assert find_nodes(turn, "check, check, 7c, bet 150") == [find_node(turn, "check, check, 7c, bet 150")]
    assert find_nodes(turn, "check") == [find_node(turn, "check")]


@pytest.mark.parametrize("line, message", [
    ("check, bet 999", "line 'check, bet 999': step 2 'bet 999' is not an action after check; choices: actions "
                       "check, bet 120"),
    ("bet 120, call, Qc", "step 3 'Qc' is on the board after bet 120, call; choices: a dealt card: 2c 2d"),
    ("bet 120, call, Zz", "step 3 'Zz' is not a card \\(name the dealt card first\\) after bet 120, call"),
    ("bet 120, call, bet 330", "step 3 'bet 330' is not a card"),
    ("bet 120, fold, call", "step 3 'call' is past the end of the hand after bet 120, fold; choices: none \\(fold\\)"),
    ("check,,call", "has an empty step"),
    ("raise 300", "step 1 'raise 300' is not an action after the root; choices: actions check, bet 120"),
])
def test_a_step_that_does_not_match_is_a_one_line_error(turn, line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as e:
        find_node(turn, line)
    assert "\n" not in str(e.value)


def test_bad_node_references() -> None:
    game = build_endgame(load_spot(CLAIRVOYANCE))
    with pytest.raises(ValueError, match="outside 0..8"):
        resolve_node(game, 9)
    with pytest.raises(ValueError, match="an id or a line"):
        resolve_node(game, True)
    with pytest.raises(ValueError, match="is a showdown node, not a decision"):
        action_labels(game, find_node(game, "check, check"))
    assert split_line(" check , bet 100 ") == ["check", "bet 100"] and split_line("  ") == []
    assert format_line([]) == "(root)"
