"""OpenSpiel interoperability (optional extra: ``pip install .[openspiel]``).

Converts a rebel full-game policy (the ``(tree.size, num_hands)`` array of
:mod:`rebel.policy_io`) to an OpenSpiel ``TabularPolicy`` of the same game and back, so a
rebel policy can be evaluated with OpenSpiel's exploitability or played against OpenSpiel's
bots, and an OpenSpiel policy (e.g. the average policy of OpenSpiel's CFR) can be scored
by rebel or searched from.

Games (the rules are the same; the action ids too):

* ``kuhn`` <-> ``kuhn_poker``: cards J, Q, K are hands 0, 1, 2 and OpenSpiel's chance
  outcomes 0, 1, 2; actions 0 = pass, 1 = bet.
* ``liars_dice(num_dice=D, num_faces=F)`` <-> ``liars_dice(numdice=D,dice_sides=F)``:
  bid (quantity q, face f) is action (q-1)*F + f in both (OpenSpiel writes face f as
  f+1), "liar" is 2DF, and the highest face is wild in both. A rebel hand lists a
  player's dice in roll order; OpenSpiel sorts them, so with D >= 2 several rebel hands
  share one OpenSpiel information state. :func:`to_openspiel` then plays their
  reach-weighted mixture there (the same behaviour, so the same exploitability) and
  :func:`from_openspiel` gives each of them the state's policy.

>>> import rebel, rebel.openspiel as ros                       # doctest: +SKIP
>>> game = rebel.make_game("kuhn", {})                          # doctest: +SKIP
>>> result = rebel.solve(game, "lcfr", 1024, progress=False)    # doctest: +SKIP
>>> os_game, os_policy = ros.to_openspiel(game, result.policy)  # doctest: +SKIP
>>> from open_spiel.python.algorithms import exploitability     # doctest: +SKIP
>>> exploitability.exploitability(os_game, os_policy)           # = result.exploitability
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from rebel import _core
from rebel.games import Game
from rebel.policy_io import check_policy

__all__ = ["available", "from_openspiel", "openspiel_game", "openspiel_game_string", "to_openspiel"]


def available() -> bool:
    """Whether OpenSpiel (the ``open_spiel`` package) can be imported."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def _pyspiel() -> Any:
    try:
        import pyspiel
    except ImportError:
        raise ImportError("OpenSpiel is not installed: pip install .[openspiel] "
                          "(or bash scripts/install.sh --openspiel)") from None
    return pyspiel


def openspiel_game_string(game: Game) -> str:
    """The OpenSpiel name of ``game`` with its parameters, e.g. ``liars_dice(numdice=1,dice_sides=4)``."""
    if game.name == "kuhn":
        return "kuhn_poker"
    if game.name == "liars_dice":
        p = dict(game.params)
        return f"liars_dice(numdice={p['num_dice']},dice_sides={p['num_faces']})"
    raise ValueError(f"no OpenSpiel counterpart for {game.description()} (supported: kuhn, liars_dice)")


def openspiel_game(game: Game) -> Any:
    """The OpenSpiel game with the same rules as ``game``."""
    return _pyspiel().load_game(openspiel_game_string(game))


class _Layout:
    """How the two games' histories and hands correspond."""

    def __init__(self, game: Game) -> None:
        self.game = game
        if game.name == "kuhn":
            self.dice = 1
            self.faces = 3
        else:
            p = dict(game.params)
            self.dice, self.faces = p["num_dice"], p["num_faces"]
        self.chance_actions = 2 * self.dice  # OpenSpiel's chance moves before the first bid

    def hand_dice(self, hand: int) -> list[int]:
        """A rebel hand as OpenSpiel chance outcomes (Kuhn: the card; dice in roll order)."""
        return [(hand // self.faces**i) % self.faces for i in range(self.dice)]

    def hands_of(self, outcomes: Sequence[int]) -> list[int]:
        """The rebel hands a player's chance outcomes (in any order) stand for."""
        if self.game.name == "kuhn":
            return [int(outcomes[0])]
        wanted = sorted(outcomes)
        return [sum(d * self.faces**i for i, d in enumerate(order))
                for order in sorted(set(itertools.permutations(wanted)))]

    def state(self, os_game: Any, player: int, hand: int, bids: Sequence[int]) -> Any:
        """An OpenSpiel state where ``player`` holds ``hand`` and ``bids`` were played."""
        mine = self.hand_dice(hand)
        other = [(mine[0] + 1) % 3] if self.game.name == "kuhn" else [0] * self.dice
        state = os_game.new_initial_state()
        for outcome in (mine + other if player == 0 else other + mine):
            state.apply_action(outcome)
        for action in bids:
            state.apply_action(int(action))
        return state


def _node_index(tree: _core.PublicTree) -> dict[tuple[int, ...], int]:
    return {tuple(tree.history(int(n))): int(n) for n in tree.decision_nodes}


def _own_reach(game: Game, tree: _core.PublicTree, policy: np.ndarray) -> np.ndarray:
    """reach[q, n, h]: the probability that player q, holding h, plays the actions to node n."""
    parent, player = tree.parent.tolist(), tree.player.tolist()
    reach = np.ones((2, len(tree), game.num_hands))
    for n in range(1, len(tree)):
        p = parent[n]
        reach[:, n] = reach[:, p]
        reach[player[p], n] *= policy[n]
    return reach


def to_openspiel(game: Game, policy: np.ndarray, tree: Optional[_core.PublicTree] = None) -> tuple[Any, Any]:
    """A rebel full-game policy as ``(openspiel_game, TabularPolicy)``.

    Raises ImportError without OpenSpiel and ValueError for an invalid policy or a game
    without an OpenSpiel counterpart.
    """
    from open_spiel.python import policy as os_policy

    tree = tree if tree is not None else _core.build_tree(game)
    check_policy(game, tree, policy)
    os_game = openspiel_game(game)
    layout = _Layout(game)
    nodes = _node_index(tree)
    reach = _own_reach(game, tree, policy)
    first, count, action = tree.first_child, tree.num_children, tree.action
    table = os_policy.TabularPolicy(os_game)
    table.action_probability_array[:] = 0.0
    for row, state in enumerate(table.states):
        player = state.current_player()
        history = state.history()
        outcomes = history[player * layout.dice:(player + 1) * layout.dice]
        node = nodes[tuple(history[layout.chance_actions:])]
        hands = layout.hands_of(outcomes)
        kids = slice(first[node], first[node] + count[node])
        weights = reach[player, node, hands]
        if weights.sum() <= 0.0:  # unreached with every such hand: the plain mean
            weights = np.ones(len(hands))
        mixed = policy[kids][:, hands] @ (weights / weights.sum())
        table.action_probability_array[row, action[kids]] = mixed
    return os_game, table


def from_openspiel(game: Game, os_policy: Any, tree: Optional[_core.PublicTree] = None) -> np.ndarray:
    """An OpenSpiel policy of the same game (anything with ``action_probabilities(state)``,
    e.g. a ``TabularPolicy`` or OpenSpiel CFR's average policy) as a rebel policy array."""
    tree = tree if tree is not None else _core.build_tree(game)
    os_game = openspiel_game(game)
    layout = _Layout(game)
    first, count, action = tree.first_child, tree.num_children, tree.action
    policy = np.zeros((len(tree), game.num_hands))
    for node in tree.decision_nodes.tolist():
        bids = tree.history(node)
        player = int(tree.player[node])
        kids = range(first[node], first[node] + count[node])
        for hand in range(game.num_hands):
            probs = os_policy.action_probabilities(layout.state(os_game, player, hand, bids))
            for c in kids:
                policy[c, hand] = probs.get(int(action[c]), 0.0)
    return check_policy(game, tree, policy)
