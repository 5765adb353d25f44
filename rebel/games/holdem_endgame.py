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


def build_endgame(spot: Spot, tree: ActionTree | None = None, isomorphism: bool = False) -> _core.HoldemEndgame:
    """The spot expanded over its dealt cards (the betting tree is built unless given).

    ``isomorphism``: a turn or river card whose suit the spot cannot tell from a lower suit (the
    two suits hold the same ranks on the board, and swapping them leaves the deck and both
    weighted ranges as they are) gets no subtree of its own; the solvers read its values off the
    lower suit's card with the two suits swapped. Same solution, less time and memory where a
    board leaves suits alike (``size()['isomorphic_deals']`` counts the merged deals); node
    locking then is refused, and a line must name the card that stands for the others."""
    tree = build_action_tree(spot) if tree is None else tree
    hands0, weights0 = spot.hands(0)
    hands1, weights1 = spot.hands(1)
    return _core.HoldemEndgame(list(spot.board), list(deck_cards(spot.ranks, spot.suits)), hands0, weights0, hands1,
                               weights1, tree.kind, tree.player, tree.street, tree.child_start, tree.children,
                               tree.invested, list(tree.labels), isomorphism)
