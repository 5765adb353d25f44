"""Nodes of a hold'em endgame (:func:`rebel.games.holdem_endgame.build_endgame`) addressed by
their line, as players write it.

A line is the actions from the root, comma-separated (``"check, bet 120, call, Qs, bet 216"``)
or as a list of steps: a betting step is the action's label in the betting tree (``check``,
``bet 120``, ``call``, ``raise 300``, ``all-in``, ``fold``; case, spaces and hyphens ignored, so
``All In`` and ``bet120`` match), a chance step is the dealt card's name (``Qs``). The empty line
(``""`` or ``[]``) is the root.

:func:`find_node` gives the one node a line names, every dealt card named; :func:`find_nodes`
also takes a line that skips the cards (``"check, check, bet 120"`` on the turn: that bet under
every river card) and gives every node it names; :func:`node_line` writes a node's line back.
A step that does not match is a one-line ValueError naming the step and the choices there.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Union

import numpy as np

from rebel import _core
from rebel.games.holdem_ranges import card_name, parse_card

__all__ = ["LineLike", "NodeRef", "action_labels", "find_node", "find_nodes", "format_line", "match_label",
           "node_line", "normal_label", "resolve_node", "split_line"]

#: A line: comma-separated text, or its steps.
LineLike = Union[str, Sequence[str]]
#: A node: its id in the expanded game, or its line.
NodeRef = Union[int, str, Sequence[str]]


def normal_label(text: str) -> str:
    """An action's label reduced for matching: lower case, no spaces, hyphens or underscores
    (``'All-In'`` and ``'all in'`` give ``'allin'``)."""
    return re.sub(r"[\s_-]+", "", text.lower())


def match_label(text: str, labels: Sequence[str]) -> int | None:
    """The index of the label in ``labels`` that ``text`` names (:func:`normal_label` equal), or None."""
    key = normal_label(text)
    for i, label in enumerate(labels):
        if normal_label(label) == key:
            return i
    return None


def split_line(line: LineLike) -> list[str]:
    """The steps of a line: text split at commas, or a sequence's items, each stripped; empty
    steps (``"check,,call"``) are an error, the empty line is ``[]``."""
    if isinstance(line, str):
        if not line.strip():
            return []
        steps = [s.strip() for s in line.split(",")]
    else:
        steps = [str(s).strip() for s in line]
    if any(not s for s in steps):
        raise ValueError(f"line {format_line(line)!r} has an empty step")
    return steps


def format_line(line: LineLike) -> str:
    """A line as text: its steps joined by ``', '`` (``'(root)'`` for the empty line)."""
    steps = [line] if isinstance(line, str) else [str(s) for s in line]
    text = ", ".join(s.strip() for s in steps).strip()
    return text or "(root)"


def action_labels(game: _core.HoldemEndgame, node: int) -> list[str]:
    """The labels of a decision node's actions, in the order of the solver's strategy rows."""
    info = game.node(node)
    if info["kind"] != "decision":
        raise ValueError(f"node {node} ({format_line(node_line(game, node))}) is a {info['kind']} node, not a decision")
    return [str(game.node(c)["label"]) for c in info["children"]]


def node_line(game: _core.HoldemEndgame, node: int) -> list[str]:
    """The line of ``node``: the labels of the actions from the root, and the name of each dealt card."""
    if not 0 <= int(node) < game.num_nodes:
        raise ValueError(f"node {node} is outside 0..{game.num_nodes - 1}")
    steps: list[str] = []
    info = game.node(int(node))
    while info["parent"] >= 0:
        parent = game.node(info["parent"])
        steps.append(card_name(info["board"][-1]) if parent["kind"] == "chance" else str(info["label"]))
        info = parent
    return steps[::-1]


def _card(step: str) -> int | None:
    try:
        return parse_card(step)
    except ValueError:
        return None


def _no_match(line: LineLike, steps: list[str], k: int, game: _core.HoldemEndgame, node: int, why: str) -> ValueError:
    """The one-line error for step ``k`` at ``node``: what is wrong and the choices there."""
    info = game.node(node)
    at = format_line(steps[:k]) if k else "the root"
    if info["kind"] == "decision":
        choices = "actions " + ", ".join(action_labels(game, node))
    elif info["kind"] == "chance":
        choices = "a dealt card: " + " ".join(card_name(game.node(c)["board"][-1]) for c in info["children"])
    else:
        choices = f"none ({info['kind']})"
    return ValueError(f"line {format_line(line)!r}: step {k + 1} {steps[k]!r} {why} after {at}; choices: {choices}")


def _step(game: _core.HoldemEndgame, line: LineLike, steps: list[str], k: int, node: int,
          skip_cards: bool) -> list[int]:
    """The nodes step ``k`` leads to from ``node`` (several when it skips a dealt card)."""
    info = game.node(node)
    step = steps[k]
    if info["kind"] == "decision":
        i = match_label(step, action_labels(game, node))
        if i is None:
            raise _no_match(line, steps, k, game, node, "is not an action")
        return [int(info["children"][i])]
    if info["kind"] != "chance":
        raise _no_match(line, steps, k, game, node, "is past the end of the hand")
    card = _card(step)
    if card is not None:
        for c in info["children"]:
            child = game.node(c)
            if child["board"][-1] == card:
                return [int(c)]
            if card in child["isomorphic"]:
                raise _no_match(line, steps, k, game, node,
                                f"shares the subtree of {card_name(child['board'][-1])} (the game merges suits by "
                                "isomorphism: name that card, or build the game with isomorphism=False)")
        why = "is on the board" if card in info["board"] else "is not a card dealt here"
        raise _no_match(line, steps, k, game, node, why)
    if not skip_cards:
        raise _no_match(line, steps, k, game, node, "is not a card (name the dealt card first)")
    out: list[int] = []
    for c in info["children"]:
        out += _step(game, line, steps, k, int(c), skip_cards)
    return out


def find_nodes(game: _core.HoldemEndgame, line: LineLike) -> list[int]:
    """Every node ``line`` names: one when each dealt card is named, else that betting node
    under every card the line skips (ValueError, one line, for a step that does not match)."""
    steps = split_line(line)
    nodes = [0]
    for k in range(len(steps)):
        nodes = [n for node in nodes for n in _step(game, line, steps, k, node, skip_cards=True)]
    return nodes


def find_node(game: _core.HoldemEndgame, line: LineLike) -> int:
    """The node ``line`` names, every dealt card named (``"check, bet 120, call, Qs, bet 216"``).
    ValueError, one line, naming the first step that does not match and the choices there."""
    steps = split_line(line)
    node = 0
    for k in range(len(steps)):
        node = _step(game, line, steps, k, node, skip_cards=False)[0]
    return node


def resolve_node(game: _core.HoldemEndgame, node: NodeRef) -> int:
    """A node given by its id or by its line (:func:`find_node`)."""
    if isinstance(node, str) or isinstance(node, Sequence):
        return find_node(game, node)
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
        raise ValueError(f"a node is an id or a line, got {node!r}")
    if not 0 <= int(node) < game.num_nodes:
        raise ValueError(f"node {node} is outside 0..{game.num_nodes - 1}")
    return int(node)
