"""A hold'em endgame spot as the core's expanded game (csrc/games/holdem_endgame.h).

``build_endgame(spot)`` builds the spot's betting tree (:mod:`rebel.games.holdem_tree`) and
hands it, with each player's own hands and weights and the deck, to the C++ core, which expands
it over the turn and river cards. The result's ``size()`` gives the tree's size and the bytes the
solver will allocate, before anything is allocated (:mod:`rebel.search.holdem_solve` solves it).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from rebel import _core
from rebel.games.holdem_ranges import COMBOS, NUM_COMBOS, combo_name, deck_cards
from rebel.games.holdem_spot import PLAYERS, Spot
from rebel.games.holdem_tree import ActionTree, build_action_tree

__all__ = ["build_endgame", "check_beliefs", "live_hands"]


def live_hands(spot: Spot) -> np.ndarray:
    """Indices in ``COMBOS`` of the hands the spot's deck and board leave possible (1,081 on a
    river board of the full deck)."""
    deck = np.zeros(52, dtype=bool)
    deck[deck_cards(spot.ranks, spot.suits)] = True
    deck[list(spot.board)] = False
    return np.flatnonzero(deck[COMBOS].all(axis=1))


def _belief_hands(spot: Spot, beliefs: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
    """Every live hand with its belief (zeros kept), after checking one player's 1,326 beliefs."""
    b = np.asarray(beliefs[player], dtype=np.float64)
    who = PLAYERS[player]
    if not np.isfinite(b).all() or (b < 0).any():
        bad = int(np.flatnonzero(~np.isfinite(b) | (b < 0))[0])
        raise ValueError(f"beliefs of {who}: hand {combo_name(bad)} has belief {float(b[bad])!r} "
                         "(finite, not negative)")
    live = live_hands(spot)
    dead = np.ones(NUM_COMBOS, dtype=bool)
    dead[live] = False
    if (b[dead] > 0).any():
        bad = int(np.flatnonzero(dead & (b > 0))[0])
        raise ValueError(f"beliefs of {who}: hand {combo_name(bad)} holds a board card or a card outside the deck "
                         f"but has belief {b[bad]:g}")
    if not (b > 0).any():
        raise ValueError(f"beliefs of {who} have no hand with a positive belief")
    return COMBOS[live].astype(np.int32), b[live]


def check_beliefs(spot: Spot, beliefs: np.ndarray) -> None:
    """ValueError, one line, unless ``beliefs`` are (2, 1,326) finite, non-negative weights, zero
    on the hands the spot's board or deck rules out and positive somewhere for each player."""
    beliefs = np.asarray(beliefs)
    if beliefs.shape != (2, NUM_COMBOS):
        raise ValueError(f"beliefs must have shape (2, {NUM_COMBOS}), got {beliefs.shape}")
    for player in (0, 1):
        _belief_hands(spot, beliefs, player)


def build_endgame(spot: Spot, tree: ActionTree | None = None, isomorphism: bool = False,
                  beliefs: Optional[np.ndarray] = None) -> _core.HoldemEndgame:
    """The spot expanded over its dealt cards (the betting tree is built unless given).

    ``isomorphism``: a turn or river card whose suit the spot cannot tell from a lower suit (the
    two suits hold the same ranks on the board, and swapping them leaves the deck and both
    weighted ranges as they are) gets no subtree of its own; the solvers read its values off the
    lower suit's card with the two suits swapped. Same solution, less time and memory where a
    board leaves suits alike (``size()['isomorphic_deals']`` counts the merged deals); node
    locking then is refused, and a line must name the card that stands for the others.

    ``beliefs``: (2, 1,326) weights in ``COMBOS`` order that replace the spot's ranges (a public
    belief state). Then each player's hands are all the live hands (:func:`live_hands`), those of
    belief 0 included, so that the solver's per-hand values cover them too; ValueError for a
    wrong shape, a negative or non-finite belief, a positive belief on a dead hand, or a player
    with no positive belief."""
    tree = build_action_tree(spot) if tree is None else tree
    if beliefs is None:
        hands0, weights0 = spot.hands(0)
        hands1, weights1 = spot.hands(1)
    else:
        beliefs = np.asarray(beliefs)
        check_beliefs(spot, beliefs)
        hands0, weights0 = _belief_hands(spot, beliefs, 0)
        hands1, weights1 = _belief_hands(spot, beliefs, 1)
    return _core.HoldemEndgame(list(spot.board), list(deck_cards(spot.ranks, spot.suits)), hands0, weights0, hands1,
                               weights1, tree.kind, tree.player, tree.street, tree.child_start, tree.children,
                               tree.invested, list(tree.labels), isomorphism)
