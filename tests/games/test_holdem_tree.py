"""The betting tree of a hold'em endgame spot (rebel/games/holdem_tree.py): small trees checked by
hand node by node, all-in run-outs, the thresholds, the raise cap, donk and geometric sizes, and
node counts cross-checked against b-inary/postflop-solver.

Where a count says "postflop-solver", it was obtained by compiling postflop-solver's
src/action_tree.rs and src/bet_size.rs (commit 9d1509f, unchanged but for the crate
scaffolding) into a scratch binary that builds ``ActionTree::new(TreeConfig {...})`` for the same
configuration (both players the same sizes, no rake) and prints ``count_num_action_nodes``; the
preorder lists of (kind, player, street, amount, action) of those trees were also compared with
this module's and were equal on 160 random configurations (flop, turn and river spots, every
kind of size, donk sizes and thresholds)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rebel.games.holdem_spot import Spot, load_spot
from rebel.games.holdem_tree import CHANCE, DECISION, FOLD, SHOWDOWN, ActionTree, build_action_tree

SPOTS = Path(__file__).resolve().parents[2] / "rebel" / "configs" / "spots"
BOARDS = {"flop": "Td9d6h", "turn": "Td9d6h Qc", "river": "Td9d6h Qc 2s"}
STREETS = ["flop", "turn", "river"]


def spot(start: str, pot: int, stack: int, bet: str, raise_: str = "", **extra) -> Spot:
    """A spot with full ranges and the same sizes for both players on every street played."""
    streets = STREETS[STREETS.index(start):]
    return load_spot({"board": BOARDS[start], "pot": pot, "stack": stack, "ranges": {"oop": "full", "ip": "full"},
                      "bets": {s: {"bet": bet, "raise": raise_} for s in streets}, **extra})


def tree_of(*args, **kwargs) -> ActionTree:
    return build_action_tree(spot(*args, **kwargs))


def rows(tree: ActionTree) -> list[tuple]:
    """(kind, player, street, invested OOP, invested IP, label, children) of every node."""
    return [(int(tree.kind[i]), int(tree.player[i]), int(tree.street[i]), float(tree.invested[i, 0]),
             float(tree.invested[i, 1]), tree.labels[i], tree.children_of(i).tolist()) for i in range(tree.num_nodes())]


def child(tree: ActionTree, node: int, label: str) -> int:
    found = [int(c) for c in tree.children_of(node) if tree.labels[c] == label]
    assert len(found) == 1, (label, [tree.labels[c] for c in tree.children_of(node)])
    return found[0]


def follow(tree: ActionTree, *labels: str) -> int:
    node = 0
    for label in labels:
        node = child(tree, node, label)
    return node


def child_labels(tree: ActionTree, node: int) -> list[str]:
    return [tree.labels[c] for c in tree.children_of(node)]


D, C, F, S = DECISION, CHANCE, FOLD, SHOWDOWN


def test_a_small_river_tree_node_by_node():
    """River, pot 100, stack 100, bets of 50% and no raises: OOP checks or bets 50; after a check IP
    checks or bets 50; facing 50, fold or call. 9 nodes (postflop-solver: 9)."""
    tree = tree_of("river", 100, 100, "50%")
    assert rows(tree) == [
        (D, 0, 2, 50.0, 50.0, "", [1, 6]),
        (D, 1, 2, 50.0, 50.0, "check", [2, 3]),
        (S, -1, 2, 50.0, 50.0, "check", []),
        (D, 0, 2, 50.0, 100.0, "bet 50", [4, 5]),
        (F, 0, 2, 50.0, 100.0, "fold", []),
        (S, -1, 2, 100.0, 100.0, "call", []),
        (D, 1, 2, 100.0, 50.0, "bet 50", [7, 8]),
        (F, 1, 2, 100.0, 50.0, "fold", []),
        (S, -1, 2, 100.0, 100.0, "call", []),
    ]
    assert tree.child_start.tolist() == [0, 2, 4, 4, 6, 6, 6, 8, 8, 8]
    assert tree.children.tolist() == [1, 6, 2, 3, 4, 5, 7, 8]
    assert tree.line(5) == ["check", "bet 50", "call"]
    assert tree.parents().tolist() == [-1, 0, 1, 1, 3, 3, 0, 6, 6]
    for name, dtype in [("kind", np.int8), ("player", np.int8), ("street", np.int8), ("child_start", np.int32),
                        ("children", np.int32), ("invested", np.float64)]:
        assert getattr(tree, name).dtype == dtype


def test_the_river_example_by_hand():
    """river_example.yaml: pot 200, stack 900, bets 60%, e, a; raises 2.5x; thresholds 1.5, 0.15,
    0.1. A first bet: 120 or, e on the river being the whole stack, all-in (all-in not added:
    900 > 1.5 x 200). Facing 120: 2.5x = 300 (the all-in, 780 more, is not within 1.5 x 440).
    Facing 300: 2.5x = 750 is forced all-in (150 would be left, under 0.15 x 1,700), and the
    all-in is added anyway (600 more <= 1.5 x 800). 27 nodes (postflop-solver: 27)."""
    tree = build_action_tree(load_spot(SPOTS / "river_example.yaml"))
    assert tree.num_nodes() == 27
    assert list(tree.labels) == [
        "", "check", "check", "bet 120", "fold", "call", "raise 300", "fold", "call", "all-in", "fold", "call",
        "all-in", "fold", "call",
        "bet 120", "fold", "call", "raise 300", "fold", "call", "all-in", "fold", "call", "all-in", "fold", "call"]
    assert child_labels(tree, 0) == ["check", "bet 120", "all-in"]
    # OOP checks, IP bets 120, OOP raises to 300, IP goes all-in: OOP to act, 100 + 300 in against 1,000
    node = follow(tree, "check", "bet 120", "raise 300", "all-in")
    assert tree.player[node] == 0 and tree.invested[node].tolist() == [400.0, 1000.0]
    assert tree.invested[child(tree, node, "call")].tolist() == [1000.0, 1000.0]
    assert tree.invested[child(tree, node, "fold")].tolist() == [400.0, 1000.0]
    assert tree.player[child(tree, node, "fold")] == 0
    assert tree.counts() == {"river": {"decision": 10, "chance": 0, "fold": 8, "showdown": 9}}
    assert tree.describe() == ("action tree: 27 nodes\n"
                               "  river: 27 nodes: 10 decisions, 0 chance, 17 terminal (8 fold, 9 showdown)")


def test_all_in_run_out_from_the_turn():
    """Turn, pot 100, stack 100, all-in the only size: a called all-in on the turn is a chance node
    (the river card), then a showdown. 20 nodes (postflop-solver: 20, 9 on the turn)."""
    tree = tree_of("turn", 100, 100, "a")
    assert [(k, p, s, a, b, label) for k, p, s, a, b, label, _ in rows(tree)] == [
        (D, 0, 1, 50.0, 50.0, ""),
        (D, 1, 1, 50.0, 50.0, "check"),
        (C, -1, 1, 50.0, 50.0, "check"),
        (D, 0, 2, 50.0, 50.0, "deal"),
        (D, 1, 2, 50.0, 50.0, "check"),
        (S, -1, 2, 50.0, 50.0, "check"),
        (D, 0, 2, 50.0, 150.0, "all-in"),
        (F, 0, 2, 50.0, 150.0, "fold"),
        (S, -1, 2, 150.0, 150.0, "call"),
        (D, 1, 2, 150.0, 50.0, "all-in"),
        (F, 1, 2, 150.0, 50.0, "fold"),
        (S, -1, 2, 150.0, 150.0, "call"),
        (D, 0, 1, 50.0, 150.0, "all-in"),
        (F, 0, 1, 50.0, 150.0, "fold"),
        (C, -1, 1, 150.0, 150.0, "call"),
        (S, -1, 2, 150.0, 150.0, "deal"),
        (D, 1, 1, 150.0, 50.0, "all-in"),
        (F, 1, 1, 150.0, 50.0, "fold"),
        (C, -1, 1, 150.0, 150.0, "call"),
        (S, -1, 2, 150.0, 150.0, "deal"),
    ]
    assert tree.counts()["turn"] == {"decision": 4, "chance": 3, "fold": 2, "showdown": 0}


def test_all_in_run_out_from_the_flop():
    """The same on the flop: a called flop all-in is followed by two chance nodes (turn, river)
    and a showdown. 33 nodes, 9 / 11 / 13 per street (postflop-solver: the same)."""
    tree = tree_of("flop", 100, 100, "a")
    assert tree.num_nodes() == 33
    assert {s: sum(c.values()) for s, c in tree.counts().items()} == {"flop": 9, "turn": 11, "river": 13}
    node = follow(tree, "all-in", "call")
    assert (tree.kind[node], tree.street[node]) == (CHANCE, 0)
    turn = int(tree.children_of(node)[0])
    river = int(tree.children_of(turn)[0])
    assert (tree.kind[turn], tree.street[turn], tree.labels[turn]) == (CHANCE, 1, "deal")
    assert (tree.kind[river], tree.street[river], tree.labels[river]) == (SHOWDOWN, 2, "deal")
    assert tree.invested[river].tolist() == [150.0, 150.0]


def test_the_turn_example_root_uses_the_geometric_size():
    """Pot 200, stack 900: 60% = 120, e over two streets = 216 (((2 x 4.5 + 1)^(1/2) - 1) / 2 x 200 =
    216.2), all-in."""
    tree = build_action_tree(load_spot(SPOTS / "turn_example.yaml"))
    assert child_labels(tree, 0) == ["check", "bet 120", "bet 216", "all-in"]
    # On the river after two checks, e (one street left) is the all-in itself.
    assert child_labels(tree, follow(tree, "check", "check", "deal")) == ["check", "bet 120", "all-in"]


def test_donk_sizes():
    """OOP's first river action after calling IP's turn bet uses the river donk size (50% of 440 =
    220); after IP called OOP's bet, or after two checks, OOP's usual sizes (60% = 264, e = all-in)."""
    tree = build_action_tree(load_spot(SPOTS / "turn_example.yaml"))
    assert child_labels(tree, follow(tree, "check", "bet 120", "call", "deal")) == ["check", "bet 220"]
    assert child_labels(tree, follow(tree, "bet 120", "call", "deal")) == ["check", "bet 264", "all-in"]
    # Once OOP checks, IP answers with its usual sizes.
    assert child_labels(tree, follow(tree, "check", "bet 120", "call", "deal", "check")) == \
        ["check", "bet 264", "all-in"]
    # Without donk sizes, OOP's usual sizes there too.
    plain = tree_of("turn", 200, 900, "60%, e, a", "2.5x", add_all_in_threshold=1.5, force_all_in_threshold=0.15,
                    merging_threshold=0.1)
    assert child_labels(plain, follow(plain, "check", "bet 120", "call", "deal")) == ["check", "bet 264", "all-in"]


def test_all_in_added_forced_and_merged():
    # added: the all-in (100) is within 1.0 x pot
    assert child_labels(tree_of("river", 100, 100, "50%", add_all_in_threshold=1.0), 0) == \
        ["check", "bet 50", "all-in"]
    assert child_labels(tree_of("river", 100, 100, "50%"), 0) == ["check", "bet 50"]
    # forced: 75 called leaves 25 behind, at most 0.1 x 250
    assert child_labels(tree_of("river", 100, 100, "75%", force_all_in_threshold=0.1), 0) == ["check", "all-in"]
    assert child_labels(tree_of("river", 100, 100, "75%"), 0) == ["check", "bet 75"]
    # merged: 50% is within 10% of 55% (in PioSOLVER's sense), 55% is not of 100%
    assert child_labels(tree_of("river", 100, 1000, "50%, 55%, 100%", merging_threshold=0.1), 0) == \
        ["check", "bet 55", "bet 100"]


def test_a_raise_below_the_min_raise():
    """Facing a bet of 10, 1.5x (15) is below the min-raise: the raise goes to 20."""
    tree = tree_of("river", 100, 1000, "10%", "1.5x")
    assert child_labels(tree, follow(tree, "bet 10")) == ["fold", "call", "raise 20"]
    # facing 20, 1.5 x 20 = 30 is exactly the min-raise (20 + 10)
    assert child_labels(tree, follow(tree, "bet 10", "raise 20")) == ["fold", "call", "raise 30"]


def test_raise_cap():
    """River, pot 100, stack 10,000, pot-sized bets and raises. With at most two bets or raises:
    check-check; check, bet 100, then fold, call or raise to 400 (100 + the 300 pot), then fold
    or call; bet 100 the same: 1 + (1 + 1 + 6) + 6 = 15 nodes. Without the cap, 33 (postflop-solver:
    33)."""
    capped = tree_of("river", 100, 10_000, "100%", "100%", raise_cap=2)
    assert capped.num_nodes() == 15
    assert child_labels(capped, follow(capped, "bet 100", "raise 400")) == ["fold", "call"]
    assert tree_of("river", 100, 10_000, "100%", "100%").num_nodes() == 33


@pytest.mark.parametrize("name, nodes, per_street", [
    ("turn_example", 203, {"turn": 51, "river": 152}),  # postflop-solver: 203 = 51 + 152
    ("turn_example_full", 203, {"turn": 51, "river": 152}),  # ranges do not change the tree
    ("river_example", 27, {"river": 27}),  # postflop-solver: 27 (and by hand above)
    ("teh", 986, {"turn": 123, "river": 863}),  # this module's (the raise cap is not postflop-solver's)
])
def test_shipped_spots(name, nodes, per_street):
    tree = build_action_tree(load_spot(SPOTS / f"{name}.yaml"))
    assert tree.num_nodes() == nodes
    assert {s: sum(c.values()) for s, c in tree.counts().items()} == per_street
    check_invariants(tree)


def test_teh_without_its_cap_matches_postflop_solver():
    """TEH's sizes with no cap on raises: postflop-solver gives 1,140 nodes (177 turn, 963 river);
    with the cap of three bets or raises, 986 (above)."""
    tree = tree_of("turn", 2000, 20_000, "50%, 100%, a", "50%, 100%, a")
    assert tree.num_nodes() == 1140
    assert {s: sum(c.values()) for s, c in tree.counts().items()} == {"turn": 177, "river": 963}
    capped = build_action_tree(load_spot(SPOTS / "teh.yaml"))
    # facing 1,000 (pot 4,000 once called): to 3,000 or 5,000; facing 3,000 (pot 8,000): to 7,000 or
    # 11,000; then the third bet or raise is made and only fold and call remain
    assert child_labels(capped, follow(capped, "bet 1000")) == ["fold", "call", "raise 3000", "raise 5000", "all-in"]
    assert child_labels(capped, follow(capped, "bet 1000", "raise 3000")) == \
        ["fold", "call", "raise 7000", "raise 11000", "all-in"]
    assert child_labels(capped, follow(capped, "bet 1000", "raise 3000", "raise 7000")) == ["fold", "call"]
    assert child_labels(capped, 0) == ["check", "bet 1000", "bet 2000", "all-in"]


@pytest.mark.parametrize("turn_donk, nodes, per_street", [
    (None, 470, [27, 139, 304]),  # postflop-solver: 470 = 27 + 139 + 304
    ("50%", 450, [27, 130, 293]),  # postflop-solver: 450 = 27 + 130 + 293
])
def test_a_flop_spot_matches_postflop_solver(turn_donk, nodes, per_street):
    """The example's sizes and thresholds from the flop (pot 200, stack 900), river donk 50%."""
    donk = {"river": "50%"} if turn_donk is None else {"turn": turn_donk, "river": "50%"}
    tree = tree_of("flop", 200, 900, "60%, e, a", "2.5x", donk=donk, add_all_in_threshold=1.5,
                   force_all_in_threshold=0.15, merging_threshold=0.1)
    assert tree.num_nodes() == nodes
    assert [sum(c.values()) for c in tree.counts().values()] == per_street
    check_invariants(tree)


def check_invariants(tree: ActionTree) -> None:
    """Preorder, one child per chance node, none at terminals, alternating players, chips that
    only grow along a line, equal at showdowns and chance nodes, labels that match the kinds."""
    n = tree.num_nodes()
    parent = tree.parents()
    assert parent[0] == -1 and (parent[1:] < np.arange(1, n)).all()
    # preorder: a node's subtree is the block right after it
    size = np.ones(n, dtype=np.int64)
    for i in range(n - 1, 0, -1):
        size[parent[i]] += size[i]
    for i in range(n):
        kids = tree.children_of(i)
        if len(kids):
            assert kids[0] == i + 1
            assert (np.diff(np.append(kids, i + size[i])) == size[kids]).all()
    for i in range(1, n):
        p = parent[i]
        assert (tree.invested[i] >= tree.invested[p]).all()
        assert tree.street[i] in (tree.street[p], tree.street[p] + 1)
        assert (tree.street[i] == tree.street[p] + 1) == (tree.kind[p] == CHANCE)
        if tree.kind[p] == CHANCE:
            assert tree.labels[i] == "deal"
    kinds = tree.kind
    assert (np.diff(tree.child_start)[kinds == CHANCE] == 1).all()
    assert (np.diff(tree.child_start)[(kinds == FOLD) | (kinds == SHOWDOWN)] == 0).all()
    assert (np.diff(tree.child_start)[kinds == DECISION] >= 2).all()
    even = (kinds == SHOWDOWN) | (kinds == CHANCE)
    assert (tree.invested[even, 0] == tree.invested[even, 1]).all()
    assert ((tree.player >= 0) == ((kinds == DECISION) | (kinds == FOLD))).all()
    for i in np.flatnonzero(kinds == FOLD):
        folder = tree.player[i]
        assert tree.labels[i] == "fold" and tree.player[parent[i]] == folder
        assert tree.invested[i, folder] < tree.invested[i, 1 - folder]
    for i in np.flatnonzero(kinds == DECISION):
        if i > 0 and tree.kind[parent[i]] == DECISION:
            assert tree.player[i] == 1 - tree.player[parent[i]]
    assert tree.street[kinds == SHOWDOWN].tolist() == [2] * int((kinds == SHOWDOWN).sum())
