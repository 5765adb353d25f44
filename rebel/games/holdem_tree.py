"""The betting ("action") tree of a hold'em endgame spot, without cards.

:func:`build_action_tree` lays out every betting line of a :class:`~rebel.games.holdem_spot.Spot`
with b-inary/postflop-solver's rules (src/action_tree.rs; sizes as in
:mod:`rebel.games.holdem_bets`): player 0 (OOP) acts first on every street; a street ends
when a bet or raise is called or both players check; the river's end is a showdown; an all-in
that is called is followed by one chance node per street left, then a showdown. A fold ends
the hand. The node count equals postflop-solver's ``count_num_action_nodes`` for the same
configuration (tests/games/test_holdem_tree.py).

The tree is flat numpy arrays, nodes in preorder (root = node 0, each node's subtree right
after it):

* ``kind`` (int8): :data:`DECISION` 0, :data:`CHANCE` 1 (the next street's card is dealt; one
  child, the next street's subtree; also each card of an all-in run-out), :data:`FOLD` 2,
  :data:`SHOWDOWN` 3, :data:`LEAF` 4 (a depth limit: the next street's deal with betting after it,
  left to a value net or an exact solve; only in trees cut by :func:`depth_limited`).
* ``player`` (int8): who acts at a decision (0 OOP, 1 IP), who folded at a fold; -1 elsewhere.
* ``street`` (int8): 0 flop, 1 turn, 2 river: where the node sits. A chance node sits on the
  street that just ended; a showdown on the river (also after a run-out).
* ``child_start`` (int32, n + 1) and ``children`` (int32): the children of node i are
  ``children[child_start[i]:child_start[i + 1]]``, in action order: fold, check, call, then
  bets or raises by increasing amount, the all-in last.
* ``invested`` (float64, n x 2): each player's chips in the pot at the node, half the starting
  pot each included (so both are pot / 2 at the root; float64 holds the halves of an odd pot
  exactly). At a fold, the folder's chips stay as they were (the bet not called).
* ``labels``: the action that led to each node as players write it: ``check``, ``bet 120``,
  ``call``, ``raise 300`` (raise to 300 in all on this street, as solvers print it), ``fold``,
  ``all-in`` (a bet or raise of the whole stack); ``""`` at the root. A chance node is reached by
  the ``call`` or ``check`` that closed the street, and the node after a chance node (the next
  street's first decision, the next run-out card or the showdown) by ``deal``.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

from rebel.games.holdem_bets import BetSize, BetSizes, SizingRules, aggressive_amounts

if TYPE_CHECKING:  # pragma: no cover
    from rebel.games.holdem_spot import Spot

log = logging.getLogger(__name__)

__all__ = ["CHANCE", "DECISION", "FOLD", "LEAF", "SHOWDOWN", "STREETS", "ActionTree", "build_action_tree",
           "depth_limited"]

DECISION, CHANCE, FOLD, SHOWDOWN, LEAF = 0, 1, 2, 3, 4
KIND_NAMES = ("decision", "chance", "fold", "showdown", "leaf")
STREETS = ("flop", "turn", "river")


@dataclass(frozen=True, eq=False)
class ActionTree:
    """A betting tree in flat arrays (the module docstring states the conventions); read-only
    arrays, compared by identity."""

    kind: np.ndarray
    player: np.ndarray
    street: np.ndarray
    child_start: np.ndarray
    children: np.ndarray
    invested: np.ndarray
    labels: tuple[str, ...]

    def num_nodes(self) -> int:
        """The number of nodes."""
        return len(self.kind)

    def children_of(self, i: int) -> np.ndarray:
        """The children of node ``i``, in action order."""
        return self.children[self.child_start[i]:self.child_start[i + 1]]

    def parents(self) -> np.ndarray:
        """Each node's parent (-1 at the root)."""
        parent = np.full(self.num_nodes(), -1, dtype=np.int32)
        counts = np.diff(self.child_start)
        parent[self.children] = np.repeat(np.arange(self.num_nodes(), dtype=np.int32), counts)
        return parent

    def line(self, i: int) -> list[str]:
        """The labels from the root down to node ``i`` (the root's empty label left out)."""
        parent = self.parents()
        out = []
        while i > 0:
            out.append(self.labels[i])
            i = int(parent[i])
        return out[::-1]

    def counts(self) -> dict[str, dict[str, int]]:
        """Node counts per street (``'flop'``, ...) and kind (``'decision'``, ``'chance'``,
        ``'fold'``, ``'showdown'``; ``'leaf'`` in a depth-limited tree), the streets of the tree only."""
        out: dict[str, dict[str, int]] = {}
        names = KIND_NAMES if (self.kind == LEAF).any() else KIND_NAMES[:LEAF]
        for s in sorted(set(self.street.tolist())):
            on = self.street == s
            out[STREETS[s]] = {name: int((on & (self.kind == k)).sum()) for k, name in enumerate(names)}
        return out

    def describe(self) -> str:
        """A summary: the node count, then per street its decisions, chance nodes and terminals."""
        lines = [f"action tree: {self.num_nodes()} nodes"]
        for street, c in self.counts().items():
            leaves = f", {c['leaf']} leaves" if c.get("leaf") else ""
            lines.append(f"  {street}: {sum(c.values())} nodes: {c['decision']} decisions, {c['chance']} chance, "
                         f"{c['fold'] + c['showdown']} terminal ({c['fold']} fold, {c['showdown']} showdown){leaves}")
        return "\n".join(lines)


class _Builder:
    """Appends nodes in preorder while walking the betting lines."""

    def __init__(self, pot: int, stack: int, bets: Sequence[Sequence[BetSizes]],
                 donk: Sequence[Optional[tuple[BetSize, ...]]], rules: SizingRules) -> None:
        self.pot, self.stack, self.bets, self.donk, self.rules = pot, stack, bets, donk, rules
        self.kind: list[int] = []
        self.player: list[int] = []
        self.street: list[int] = []
        self.invested: list[tuple[int, int]] = []
        self.labels: list[str] = []
        self.kids: list[list[int]] = []

    def add(self, kind: int, player: int, street: int, chips: tuple[int, int], label: str) -> int:
        self.kind.append(kind)
        self.player.append(player)
        self.street.append(street)
        self.invested.append(chips)
        self.labels.append(label)
        self.kids.append([])
        return len(self.kind) - 1

    def street_over(self, street: int, chips: tuple[int, int], label: str, all_in: bool, oop_called: bool) -> int:
        """The node after the call or check that ends ``street``: a showdown on the river, else
        a chance node and the next street (or, all-in, the run-out)."""
        if street == 2:
            return self.add(SHOWDOWN, -1, street, chips, label)
        node = self.add(CHANCE, -1, street, chips, label)
        if all_in:
            child = self.street_over(street + 1, chips, "deal", True, oop_called)
        else:
            child = self.decision(street + 1, 0, chips, "deal", current_bet=0, bets_made=0, all_in=False,
                                  after_deal=True, oop_called=oop_called)
        self.kids[node].append(child)
        return node

    def decision(self, street: int, player: int, chips: tuple[int, int], label: str, *, current_bet: int,
                 bets_made: int, all_in: bool, after_deal: bool, oop_called: bool) -> int:
        """A decision of ``player`` and its subtree. ``chips``: each player's chips beyond half
        the starting pot; ``current_bet``: the street total of the bet faced (0: none)."""
        node = self.add(DECISION, player, street, chips, label)
        other = 1 - player
        to_call = chips[other] - chips[player]
        street_start = chips[other] - current_bet
        sizes = self.bets[street][player]
        donk = self.donk[street - 1] if street > 0 else None
        facing = to_call > 0
        kids = self.kids[node]
        if facing:
            kids.append(self.add(FOLD, player, street, chips, "fold"))
            called = (chips[other], chips[other])
            kids.append(self.street_over(street, called, "call", all_in, oop_called=player == 0))
            if all_in:  # facing an all-in: fold or call only
                return node
            options: tuple[BetSize, ...] = sizes.raise_
        else:
            if player == 0:
                kids.append(self.decision(street, 1, chips, "check", current_bet=0, bets_made=0, all_in=False,
                                          after_deal=False, oop_called=False))
            else:
                kids.append(self.street_over(street, chips, "check", False, oop_called=False))
            options = donk if (donk is not None and after_deal and oop_called) else sizes.bet
        amounts = aggressive_amounts(options, self.rules, pot=self.pot + 2 * chips[other], current_bet=current_bet,
                                     to_call=to_call, stack=self.stack - chips[other], bets_made=bets_made,
                                     streets_left=3 - street)
        for amount, is_all_in in amounts:
            after = list(chips)
            after[player] = street_start + amount
            text = "all-in" if is_all_in else f"{'raise' if facing else 'bet'} {amount}"
            kids.append(self.decision(street, other, (after[0], after[1]), text, current_bet=amount,
                                      bets_made=bets_made + 1, all_in=is_all_in, after_deal=False,
                                      oop_called=oop_called))
        return node

    def tree(self) -> ActionTree:
        n = len(self.kind)
        child_start = np.zeros(n + 1, dtype=np.int32)
        child_start[1:] = np.cumsum([len(k) for k in self.kids])
        children = np.array([c for k in self.kids for c in k], dtype=np.int32)
        invested = np.asarray(self.invested, dtype=np.float64).reshape(n, 2) + self.pot / 2.0
        kind, player, street = (np.array(v, dtype=np.int8) for v in (self.kind, self.player, self.street))
        for a in (kind, player, street, child_start, children, invested):
            a.setflags(write=False)
        return ActionTree(kind, player, street, child_start, children, invested, tuple(self.labels))


def build_action_tree(spot: "Spot") -> ActionTree:
    """The betting tree of ``spot`` (see the module docstring)."""
    builder = _Builder(spot.pot, spot.stack, spot.bets, spot.donk, spot.rules)
    builder.decision(spot.street, 0, (0, 0), "", current_bet=0, bets_made=0, all_in=False, after_deal=False,
                     oop_called=False)
    tree = builder.tree()
    log.info("%s", tree.describe().replace("\n", ";"))
    return tree


def depth_limited(tree: ActionTree, street: int = 2) -> ActionTree:
    """The subgame of a search: ``tree`` cut at the deal of ``street`` (2: the river). Each chance
    node that deals it with betting still to come becomes a :data:`LEAF` without children, its
    subtree dropped; the deals of an all-in's run-out stay (their showdowns are exact).
    ValueError unless the tree deals ``street`` somewhere."""
    if street not in (1, 2):
        raise ValueError(f"a depth limit is the deal of the turn (1) or the river (2), got {street}")
    kind: list[int] = []
    player: list[int] = []
    streets: list[int] = []
    invested: list[np.ndarray] = []
    labels: list[str] = []
    kids: list[list[int]] = []
    cut = 0

    def copy(i: int) -> int:
        nonlocal cut
        node = len(kind)
        children = tree.children_of(i)
        leaf = (tree.kind[i] == CHANCE and tree.street[i] == street - 1 and tree.kind[children[0]] == DECISION)
        cut += leaf
        kind.append(LEAF if leaf else int(tree.kind[i]))
        player.append(int(tree.player[i]))
        streets.append(int(tree.street[i]))
        invested.append(tree.invested[i])
        labels.append(tree.labels[i])
        kids.append([])
        if not leaf:
            kids[node] = [copy(int(c)) for c in children]
        return node

    copy(0)
    if not cut:
        raise ValueError(f"the tree has no deal of the {STREETS[street]} with betting after it to cut at")
    n = len(kind)
    child_start = np.zeros(n + 1, dtype=np.int32)
    child_start[1:] = np.cumsum([len(k) for k in kids])
    arrays = (np.array(kind, dtype=np.int8), np.array(player, dtype=np.int8), np.array(streets, dtype=np.int8),
              child_start, np.array([c for k in kids for c in k], dtype=np.int32), np.array(invested).reshape(n, 2))
    for a in arrays:
        a.setflags(write=False)
    return ActionTree(*arrays, tuple(labels))
