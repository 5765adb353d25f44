"""A hold'em endgame spot as the core's expanded game (csrc/games/holdem_endgame.h).

``build_endgame(spot)`` builds the spot's betting tree (:mod:`rebel.games.holdem_tree`) and
hands it, with each player's own hands and weights and the deck, to the C++ core, which expands
it over the turn and river cards. The result's ``size()`` gives the tree's size and the bytes the
solver will allocate, before anything is allocated (:mod:`rebel.search.holdem_solve` solves it).
"""
from __future__ import annotations

from rebel import _core
from rebel.games.holdem_ranges import deck_cards
from rebel.games.holdem_spot import Spot
from rebel.games.holdem_tree import ActionTree, build_action_tree

__all__ = ["build_endgame"]


def build_endgame(spot: Spot, tree: ActionTree | None = None) -> _core.HoldemEndgame:
    """The spot expanded over its dealt cards (the betting tree is built unless given)."""
    tree = build_action_tree(spot) if tree is None else tree
    hands0, weights0 = spot.hands(0)
    hands1, weights1 = spot.hands(1)
    return _core.HoldemEndgame(list(spot.board), list(deck_cards(spot.ranks, spot.suits)), hands0, weights0, hands1,
                               weights1, tree.kind, tree.player, tree.street, tree.child_start, tree.children,
                               tree.invested, list(tree.labels))
