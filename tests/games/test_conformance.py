"""Conformance: the same checks for every registered game (the pattern of OpenSpiel's
playthrough / game tests), parametrised over the registry so that a game registered later
is covered without editing the checks.

Per game setting (the defaults, plus the small settings in ``CONFORMANCE``):

- the full public tree is consistent (breadth-first, parents/children/depth/history agree,
  every non-terminal node has >= 1 legal action, action ids lie in ``[0, num_actions)``)
  and its size matches the game's own node counter and the known counts;
- legal actions, turns, terminal states and payoffs follow an independent statement of the
  game's rules written here;
- terminal values are zero-sum for every terminal and every hand pair, linear in the
  opponent's reach, and 0 for impossible hand pairs;
- the hand prior is a distribution; the joint hand weights are symmetric and their joint
  distribution has the prior as both marginals;
- full-game linear CFR's exploitability decreases and falls below a measured bound, and where
  the game value is known the result brackets it within a tolerance derived from the measured
  exploitability (see ``test_linear_cfr_converges``).

Every registered game must have an entry in ``CONFORMANCE``
(``test_every_registered_game_has_a_conformance_entry``); until it has one, its defaults still
go through the generic checks.

Only the top-level API is used (``rebel.list_games``, ``rebel.game_from_config``,
``rebel.build_tree``, ``rebel.SubgameSolver``, ``rebel.exploitability``), so that the checks
survive the package being reorganised.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pytest
from helpers import leduc_reference

import rebel

#: name -> accepted parameters with their defaults, as the registry reports them.
REGISTERED: dict[str, dict[str, int]] = {g["name"]: dict(g["params"]) for g in rebel.list_games()}

DECISION = int(rebel._core.NodeKind.DECISION)
TERMINAL = int(rebel._core.NodeKind.TERMINAL)
CHANCE = int(rebel._core.NodeKind.CHANCE)

#: Above this many nodes (or terminal x hand-pair evaluations) the fast tests check a seeded
#: random sample plus every node of depth <= 2; a test marked slow then checks everything.
FULL_CHECK_NODES = 20_000
FULL_CHECK_TERMINAL_CALLS = 100_000
SAMPLE = 3_000


# ------------------------------------------------------------------------- the games

@dataclass(frozen=True)
class Setting:
    """One parameter setting of a game and what is known about it.

    ``value``: player 0's exact game value, with ``value_source`` saying where it comes from.
    ``lcfr_iterations`` / ``lcfr_bound``: linear CFR runs that many half-iterations (as
    :func:`rebel.solve` counts them) and must end with an exploitability below the bound,
    which is the exploitability measured when this table was written times a margin (the
    measured number is in the comment beside each entry). ``slow_solve``: the solve takes
    longer than this file's budget and is marked slow.
    """

    params: tuple[tuple[str, int], ...] = ()
    value: Optional[float] = None
    value_source: str = ""
    lcfr_iterations: int = 1024
    lcfr_bound: Optional[float] = None
    slow_solve: bool = False

    def config(self, name: str) -> dict:
        return {"name": name, **dict(self.params)}


@dataclass(frozen=True)
class GameEntry:
    """A game's settings, its known tree counts and its independent rules check.

    ``counts(params) -> dict`` returns known counts of the full public tree (any of
    ``nodes``, ``decision``, ``terminal``, ``nodes_by_depth``, ``terminal_by_depth``), or
    None when nothing is known. ``rules(game, tree, nodes)`` asserts that the game's legal
    actions, turns, terminal states and payoffs at the given node ids follow the rules as
    stated independently here.
    """

    settings: tuple[Setting, ...]
    counts: Callable[[dict], Optional[dict]]
    rules: Callable[[rebel.Game, rebel.PublicTree, np.ndarray], None]


# ---- Kuhn poker --------------------------------------------------------------------------

KUHN_PASS, KUHN_BET = 0, 1
#: Terminal histories and player 0's payoff as a function of (card0, card1): showdowns pay
#: the stake to the higher card, a fold pays the ante to the bettor.
KUHN_TERMINALS = {
    (0, 0): ("showdown", 1),   # check, check
    (1, 1): ("showdown", 2),   # bet, call
    (0, 1, 1): ("showdown", 2),  # check, bet, call
    (1, 0): ("fold", +1),      # bet, fold: player 0 wins the ante
    (0, 1, 0): ("fold", -1),   # check, bet, fold: player 1 wins the ante
}


def _kuhn_payoff0(history: tuple[int, ...], c0: int, c1: int) -> float:
    kind, x = KUHN_TERMINALS[history]
    if kind == "fold":
        return float(x)
    return float(x if c0 > c1 else -x)


def kuhn_counts(params: dict) -> dict:
    # root; p, b; pp, pb, bp, bb; pbp, pbb
    return {"nodes": 9, "decision": 4, "terminal": 5, "nodes_by_depth": [1, 2, 4, 2],
            "terminal_by_depth": [0, 0, 3, 2]}


def kuhn_rules(game: rebel.Game, tree: rebel.PublicTree, nodes: np.ndarray) -> None:
    assert (game.num_hands, game.num_actions) == (3, 2)
    terminal_seen = set()
    for n in nodes:
        h = tuple(tree.history(int(n)))
        if h in KUHN_TERMINALS:
            terminal_seen.add(h)
            assert game.is_terminal(list(h))
            for player in (0, 1):
                for c in range(3):
                    got = game.terminal_values(list(h), player, np.eye(3)[c])
                    for mine in range(3):
                        if mine == c:
                            assert got[mine] == 0.0  # the opponent cannot hold my card
                            continue
                        c0, c1 = (mine, c) if player == 0 else (c, mine)
                        u0 = _kuhn_payoff0(h, c0, c1)
                        # w = P(h, h') / (P(h) P(h')) = (1/6) / (1/9) = 3/2 without replacement
                        assert got[mine] == pytest.approx(1.5 * (u0 if player == 0 else -u0), abs=1e-12)
        else:
            assert not game.is_terminal(list(h))
            assert game.player_to_act(list(h)) == len(h) % 2
            assert game.legal_actions(list(h)) == [KUHN_PASS, KUHN_BET]
    assert terminal_seen == set(KUHN_TERMINALS) or len(nodes) < len(tree)


# ---- Liar's Dice -------------------------------------------------------------------------

def liars_dice_counts(params: dict) -> dict:
    """A public state is the set of bids made (they increase), plus 'liar' after any
    non-empty set: C(2DF, d) decision nodes and C(2DF, d-1) terminals at depth d."""
    bids = 2 * params["num_dice"] * params["num_faces"]
    decision = [math.comb(bids, d) for d in range(bids + 2)]
    terminal = [0, 0] + [math.comb(bids, d - 1) for d in range(2, bids + 2)]
    return {"nodes": 2 ** (bids + 1) - 1, "decision": 2**bids, "terminal": 2**bids - 1,
            "nodes_by_depth": [a + b for a, b in zip(decision, terminal)], "terminal_by_depth": terminal}


def _liars_dice_payoff0(D: int, F: int, history: list[int], h0: int, h1: int) -> float:
    bid = history[-2]
    quantity, face = bid // F + 1, bid % F
    dice = [(h // F**i) % F for h in (h0, h1) for i in range(D)]
    count = sum(1 for die in dice if die == face or die == F - 1)  # face F-1 is wild
    bidder = (len(history) - 2) % 2
    winner = bidder if count >= quantity else 1 - bidder
    return 1.0 if winner == 0 else -1.0


def liars_dice_rules(game: rebel.Game, tree: rebel.PublicTree, nodes: np.ndarray) -> None:
    p = dict(game.params)
    D, F = p["num_dice"], p["num_faces"]
    bids = 2 * D * F
    liar = bids
    assert game.num_hands == F**D and game.num_actions == bids + 1
    rng = np.random.default_rng(1)
    payoff_checks = 0
    for n in nodes:
        h = tree.history(int(n))
        if h and h[-1] == liar:
            assert game.is_terminal(h)
            if payoff_checks < 40:  # payoffs of every hand pair at a few terminals
                payoff_checks += 1
                H = game.num_hands
                for player in (0, 1):
                    opp = rng.random(H)
                    got = game.terminal_values(h, player, opp)
                    want = np.zeros(H)
                    for mine, o in itertools.product(range(H), range(H)):
                        u0 = _liars_dice_payoff0(D, F, h, *((mine, o) if player == 0 else (o, mine)))
                        want[mine] += opp[o] * (u0 if player == 0 else -u0)
                    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
            continue
        assert not game.is_terminal(h)
        assert game.player_to_act(h) == len(h) % 2  # player 0 first, then alternating
        if not h:
            assert game.legal_actions(h) == list(range(bids))  # the first move must be a bid
        else:
            # a strictly larger bid, or liar
            assert game.legal_actions(h) == list(range(h[-1] + 1, bids)) + [liar]


# ---- m,n,k games -------------------------------------------------------------------------

def _mnk_state(m: int, n: int, k: int, history: list[int]) -> tuple[list[int], Optional[int]]:
    """Independent statement of the rules: (legal cells, player 0's result or None).

    Cells are row * n + column; players alternate from player 0; k (or more) in a row,
    column or diagonal through the last stone wins; a full board without a line is a draw.
    """
    board = [0] * (m * n)
    result: Optional[int] = None
    for i, cell in enumerate(history):
        assert result is None and board[cell] == 0, "the test walked an illegal history"
        stone = i % 2 + 1
        board[cell] = stone
        r0, c0 = divmod(cell, n)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < m and 0 <= c < n and board[r * n + c] == stone:
                    run += 1
                    r, c = r + sign * dr, c + sign * dc
            if run >= k:
                result = 1 if stone == 1 else -1
        if result is None and all(board):
            result = 0
    if result is not None:
        return [], result
    return [c for c in range(m * n) if board[c] == 0], None


@functools.lru_cache(maxsize=None)
def _mnk_enumerate(m: int, n: int, k: int) -> dict:
    """Counts and negamax value of a small board by brute force over the rules above."""
    by_depth: list[int] = []
    terminal_by_depth: list[int] = []

    def visit(history: list[int]) -> int:
        d = len(history)
        while len(by_depth) <= d:
            by_depth.append(0)
            terminal_by_depth.append(0)
        by_depth[d] += 1
        legal, result = _mnk_state(m, n, k, history)
        if result is not None:
            terminal_by_depth[d] += 1
            return result
        values = [visit(history + [c]) for c in legal]
        return max(values) if d % 2 == 0 else min(values)

    value = visit([])
    return {"nodes": sum(by_depth), "terminal": sum(terminal_by_depth),
            "decision": sum(by_depth) - sum(terminal_by_depth),
            "nodes_by_depth": by_depth, "terminal_by_depth": terminal_by_depth, "value": value}


#: Tic-tac-toe's game tree (well known; e.g. Wikipedia "Tic-tac-toe", and derivable by hand
#: since nobody can win before the 5th move: 9*8*7*6*5 = 15120 positions at depth 5, of which
#: 1440 are won; (15120-1440)*4 at depth 6, ...): positions per depth and games ending there.
TIC_TAC_TOE = {
    "nodes": 549_946, "terminal": 255_168, "decision": 294_778,
    "nodes_by_depth": [1, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872],
    "terminal_by_depth": [0, 0, 0, 0, 0, 1440, 5328, 47952, 72576, 127872],
    # Outcomes of the 255,168 games: 131,184 won by X, 77,904 by O, 46,080 drawn.
    "results": {1: 131_184, -1: 77_904, 0: 46_080},
}


def mnk_counts(params: dict) -> Optional[dict]:
    m, n, k = params["m"], params["n"], params["k"]
    if (m, n, k) == (3, 3, 3):
        return TIC_TAC_TOE
    if m * n <= 8:  # brute force in well under a second
        return _mnk_enumerate(m, n, k)
    return None


def mnk_rules(game: rebel.Game, tree: rebel.PublicTree, nodes: np.ndarray) -> None:
    p = dict(game.params)
    m, n, k = p["m"], p["n"], p["k"]
    assert game.num_hands == 1 and game.num_actions == m * n
    np.testing.assert_array_equal(game.hand_prior, [1.0])
    one = np.ones(1)
    for node in nodes:
        h = tree.history(int(node))
        legal, result = _mnk_state(m, n, k, h)
        assert game.is_terminal(h) == (result is not None)
        if result is None:
            assert game.player_to_act(h) == len(h) % 2
            assert game.legal_actions(h) == legal  # the empty cells
        else:
            assert game.terminal_values(h, 0, one)[0] == result
            assert game.terminal_values(h, 1, one)[0] == -result


LEDUC_NOLIMIT_BOUND = 2.4  # chips; measured 1.627 at 1024 linear-CFR iterations
LEDUC_SMALL_BOUND = 0.048  # stack 250 (75 nodes); measured 0.0323 at 256


def leduc_counts(params: dict) -> Optional[dict]:
    # Limit: per round 6 decision nodes, 4 folds and 5 round-ending calls; round 1's calls
    # lead to 5 chance nodes of 6 boards, each followed by a round 2 (tests/games/
    # test_leduc_rules.py derives it). No-limit (defaults): OpenSpiel's universal_poker tree
    # with the fcpa abstraction has the same counts (test_leduc_rules.py walks it).
    known = {(): (465, 274, 5), (("ante", 100), ("stack", 1200)): (627, 388, 11),
             (("ante", 100), ("stack", 250)): (75, 44, 3)}
    key = tuple(sorted(params.items()))
    if key not in known:
        return None
    nodes, terminal, chance = known[key]
    return {"nodes": nodes, "decision": nodes - terminal - chance, "terminal": terminal, "chance": chance}


def leduc_rules(game: rebel.Game, tree: rebel.PublicTree, nodes: np.ndarray) -> None:
    """The built tree's nodes are the reference's histories, with its payoffs for every deal."""
    params = tuple(dict(game.params).items())
    ref = leduc_reference.ref_for(game.name, params)
    states = dict(leduc_reference.walk(game.name, params))
    eye = np.eye(game.num_hands)
    for node in nodes:
        h = tuple(tree.history(int(node)))
        state = states[h]  # KeyError: a history the reference does not have
        if not game.is_terminal(list(h)):
            continue
        board = [a - ref.chance_base for a in h if a >= ref.chance_base]
        for c0, c1 in itertools.permutations(range(6), 2):
            if set(board) & {c0, c1}:
                continue
            got = game.terminal_values(list(h), 0, eye[c1])[c0]
            assert got == pytest.approx(leduc_reference.W * ref.payoff0(state, c0, c1), abs=1e-12), (h, c0, c1)


def _p(**kw: int) -> tuple[tuple[str, int], ...]:
    return tuple(kw.items())


#: Every registered game with the settings checked. Values: docs in /work/shared/REBEL_NOTES.md
#: section 2 (sequence-form LP, cross-checked with long CFR runs); Kuhn's -1/18 is Kuhn's
#: 1950 analysis (also tests/test_games.py's equilibrium family); the m,n,k values are the
#: brute-force negamax above, tic-tac-toe's draw is well known.
#: lcfr_bound = measured exploitability after lcfr_iterations (in the comment) times ~1.5.
CONFORMANCE: dict[str, GameEntry] = {
    "kuhn": GameEntry(
        settings=(
            Setting((), value=-1 / 18, value_source="Kuhn (1950)", lcfr_iterations=4096,
                    lcfr_bound=7e-5),  # measured 4.39e-5
        ),
        counts=kuhn_counts, rules=kuhn_rules),
    "liars_dice": GameEntry(
        settings=(
            Setting(_p(num_dice=1, num_faces=2), lcfr_iterations=256, lcfr_bound=2.5e-4),  # 1.67e-4
            Setting(_p(num_dice=1, num_faces=3), lcfr_iterations=1024, lcfr_bound=8e-5),  # 5.34e-5
            Setting((), value=1 / 16, value_source="REBEL_NOTES 2 (1x4f)", lcfr_iterations=4096,
                    lcfr_bound=3e-4),  # 2.05e-4 (8.53e-4 at 1024; paper Table 2: 0.001)
            Setting(_p(num_dice=1, num_faces=5), value=1 / 125, value_source="REBEL_NOTES 2 (1x5f)",
                    lcfr_iterations=4096, lcfr_bound=4.2e-4),  # 2.82e-4 (1.10e-3 at 1024; paper: 0.001)
            Setting(_p(num_dice=2, num_faces=2), lcfr_iterations=256, lcfr_bound=2.5e-4),  # 1.56e-4
            Setting(_p(num_dice=2, num_faces=3), value=5 / 81, value_source="REBEL_NOTES 2 (2x3f)",
                    lcfr_iterations=2048, lcfr_bound=1.7e-3),  # 1.11e-3 (1.63e-3 at 1024; paper: 0.002)
        ),
        counts=liars_dice_counts, rules=liars_dice_rules),
    "mnk": GameEntry(
        settings=(
            Setting((), value=0.0, value_source="tic-tac-toe is a draw", lcfr_iterations=256,
                    lcfr_bound=2e-3, slow_solve=True),  # 1.34e-3; about 90 s
            Setting(_p(m=2, n=2, k=2), value=1.0, value_source="negamax here (the 2nd stone makes a line)",
                    lcfr_iterations=64, lcfr_bound=1e-12),  # 0: no choice matters
            Setting(_p(m=1, n=5, k=3), value=0.0, value_source="negamax here", lcfr_iterations=256,
                    lcfr_bound=7e-5),  # 4.47e-5
            Setting(_p(m=2, n=3, k=3), value=0.0, value_source="negamax here", lcfr_iterations=256,
                    lcfr_bound=4e-5),  # 2.39e-5
            Setting(_p(m=2, n=3, k=2), value=1.0, value_source="negamax here", lcfr_iterations=256,
                    lcfr_bound=6e-5),  # 3.98e-5
        ),
        counts=mnk_counts, rules=mnk_rules),
    "leduc": GameEntry(
        settings=(
            Setting((), value=-0.085606424078, value_source="sequence-form LP (OpenSpiel's sequence_form_lp_test)",
                    lcfr_iterations=1024, lcfr_bound=0.0135),  # 8.99e-3
        ),
        counts=leduc_counts, rules=leduc_rules),
    "leduc_nolimit": GameEntry(
        settings=(
            Setting((), lcfr_iterations=1024, lcfr_bound=LEDUC_NOLIMIT_BOUND),
            Setting(_p(stack=250), lcfr_iterations=256, lcfr_bound=LEDUC_SMALL_BOUND),
        ),
        counts=leduc_counts, rules=leduc_rules),
}


# ------------------------------------------------------------------------- parametrisation

@dataclass(frozen=True)
class Case:
    name: str
    setting: Setting
    entry: Optional[GameEntry] = field(default=None, compare=False, hash=False)

    @property
    def id(self) -> str:
        params = ",".join(f"{k}={v}" for k, v in self.setting.params)
        return f"{self.name}({params or 'defaults'})"


def _cases() -> list[Case]:
    out = []
    for name in sorted(REGISTERED):
        entry = CONFORMANCE.get(name)
        # A game without an entry still gets the generic checks on its defaults (and
        # test_every_registered_game_has_a_conformance_entry fails).
        settings = entry.settings if entry is not None else (Setting(lcfr_iterations=256),)
        out.extend(Case(name, s, entry) for s in settings)
    return out


CASES = _cases()
SOLVE_CASES = [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.setting.slow_solve else [])
               for c in CASES]
KNOWN_CASES = [c for c in CASES if c.entry is not None]


def cases(selected: list[Case] = CASES):
    return pytest.mark.parametrize("case", selected, ids=lambda c: c.id)


@functools.lru_cache(maxsize=None)
def game_of(case: Case) -> rebel.Game:
    return rebel.game_from_config(case.setting.config(case.name))


@functools.lru_cache(maxsize=None)
def tree_of(case: Case) -> rebel.PublicTree:
    return rebel.build_tree(game_of(case))


def _params(case: Case) -> dict:
    return {**REGISTERED[case.name], **dict(case.setting.params)}


def _nodes_to_check(tree: rebel.PublicTree, full: bool) -> np.ndarray:
    """Every node of a small tree; else every node of depth <= 2 plus a seeded sample."""
    N = len(tree)
    if full or N <= FULL_CHECK_NODES:
        return np.arange(N)
    depth = tree.depth
    rng = np.random.default_rng(0)
    sample = rng.choice(N, size=SAMPLE, replace=False)
    return np.unique(np.concatenate([np.flatnonzero(depth <= 2), sample, tree.terminal_nodes[:50]]))


# ------------------------------------------------------------------------- the table itself

def test_every_registered_game_has_a_conformance_entry():
    missing = sorted(set(REGISTERED) - set(CONFORMANCE))
    assert not missing, (f"registered game(s) {missing} have no entry in tests/test_conformance.py "
                         "CONFORMANCE: add their settings, known counts and a rules check")
    stale = sorted(set(CONFORMANCE) - set(REGISTERED))
    assert not stale, f"CONFORMANCE names game(s) {stale} that are not registered"
    for name, entry in CONFORMANCE.items():
        keys = [tuple(sorted(dict(s.params).items())) for s in entry.settings]
        assert len(set(keys)) == len(keys), f"{name}: a setting is listed twice"
        # The defaults are always checked (an empty setting or one spelling them out).
        resolved = [{**REGISTERED[name], **dict(s.params)} for s in entry.settings]
        assert REGISTERED[name] in resolved, f"{name}: the table does not check the default parameters"
        for s in entry.settings:
            unknown = set(dict(s.params)) - set(REGISTERED[name])
            assert not unknown, f"{name}: unknown parameter(s) {sorted(unknown)}"
            assert s.value is None or s.value_source, f"{name} {s.params}: a known value needs its source"


# ------------------------------------------------------------------------- the tree

def _check_tree(case: Case, full: bool) -> None:
    game, tree = game_of(case), tree_of(case)
    N, A = len(tree), game.num_actions
    parent, first, nchild = tree.parent, tree.first_child, tree.num_children
    action, depth, player, kind = tree.action, tree.depth, tree.player, tree.kind
    assert N == game.count_tree_nodes() >= 1  # the game's own counter agrees
    assert tree.game == game.description()

    # The root.
    assert parent[0] == -1 and action[0] == -1 and depth[0] == 0 and tree.history(0) == []

    # Breadth-first: parents before children, depth never decreasing, children contiguous,
    # every non-root node the child of exactly one parent.
    rest = np.arange(1, N)
    assert np.all((parent[1:] >= 0) & (parent[1:] < rest))
    assert np.all(depth[1:] == depth[parent[1:]] + 1)
    assert np.all(np.diff(depth) >= 0)
    # Each node's children are the nodes naming it as parent, and they fill its child range.
    np.testing.assert_array_equal(np.bincount(parent[1:], minlength=N), nchild)
    p = parent[1:]
    assert np.all((first[p] <= rest) & (rest < first[p] + nchild[p]))
    # Siblings in strictly increasing action order (legal actions are sorted).
    later = rest[rest > first[p]]
    assert np.all(parent[later - 1] == parent[later]) and np.all(action[later] > action[later - 1])

    # Actions and kinds.
    assert np.all((action[1:] >= 0) & (action[1:] < A))
    assert len(tree.pseudo_leaves) == 0 and not np.any((kind != DECISION) & (kind != TERMINAL) & (kind != CHANCE))
    np.testing.assert_array_equal(tree.decision_nodes, np.flatnonzero(kind == DECISION))
    np.testing.assert_array_equal(tree.terminal_nodes, np.flatnonzero(kind == TERMINAL))
    np.testing.assert_array_equal(tree.chance_nodes, np.flatnonzero(kind == CHANCE))
    np.testing.assert_array_equal(tree.internal_nodes, np.flatnonzero(kind != TERMINAL))
    assert game.has_public_chance or len(tree.chance_nodes) == 0  # chance nodes only where the game says so
    inner = kind != TERMINAL
    assert np.all(nchild[inner] >= 1)  # every non-terminal node has a legal action (or outcome)
    assert np.all(nchild[kind == TERMINAL] == 0)
    assert np.all(player[kind == TERMINAL] == -1)
    assert np.all((player[kind == DECISION] == 0) | (player[kind == DECISION] == 1))
    assert np.all(player[kind == CHANCE] == rebel._core.CHANCE_PLAYER)

    # Against the game's own methods, node by node.
    for n in _nodes_to_check(tree, full):
        n = int(n)
        h = tree.history(n)
        assert len(h) == depth[n]
        if n > 0:
            assert h == tree.history(int(parent[n])) + [int(action[n])]
        assert tree.find(h) == n
        assert game.is_terminal(h) == (kind[n] == TERMINAL)
        if kind[n] != TERMINAL:
            assert game.player_to_act(h) == player[n]
            assert game.legal_actions(h) == action[first[n]: first[n] + nchild[n]].tolist()
        else:
            assert game.legal_actions(h) == []
        if kind[n] == CHANCE:
            # The tree's factors are the game's, and P(b | h, h') = f_b(h) f_b(h') sums to 1
            # over the outcomes for every deal that can occur.
            factors = tree.chance_factors(n)
            outcomes = action[first[n]: first[n] + nchild[n]].tolist()
            for k, b in enumerate(outcomes):
                np.testing.assert_array_equal(factors[k], game.chance_factors(h, b))
            H = game.num_hands
            pair = np.array([[game.hand_pair_weight(x, o) for o in range(H)] for x in range(H)])
            total = np.einsum("kh,ko->ho", factors, factors)
            np.testing.assert_allclose(total[pair > 0], 1.0, rtol=0, atol=1e-12)


@cases()
def test_public_tree_is_consistent(case):
    _check_tree(case, full=False)


@pytest.mark.slow
@cases()
def test_public_tree_is_consistent_at_every_node(case):
    if len(tree_of(case)) <= FULL_CHECK_NODES:
        pytest.skip("the fast test already checks every node")
    _check_tree(case, full=True)


@cases([c for c in KNOWN_CASES if c.entry.counts(_params(c)) is not None])
def test_tree_size_matches_the_known_counts(case):
    known = case.entry.counts(_params(case))
    tree = tree_of(case)
    depth, kind = tree.depth, tree.kind
    assert len(tree) == known["nodes"]
    assert len(tree.decision_nodes) == known["decision"]
    assert len(tree.terminal_nodes) == known["terminal"]
    assert len(tree.chance_nodes) == known.get("chance", 0)
    if "nodes_by_depth" in known:
        np.testing.assert_array_equal(np.bincount(depth), known["nodes_by_depth"])
        np.testing.assert_array_equal(np.bincount(depth[kind == TERMINAL], minlength=len(known["nodes_by_depth"])),
                                      known["terminal_by_depth"])


@cases()
def test_stake_feature_is_a_positive_public_feature(case):
    """A game's stake (``Game.stake_feature``, which stake-relative value nets multiply their
    outputs by) is a public feature, positive at every checked node; a game without one says None."""
    game, tree = game_of(case), tree_of(case)
    stake = game.stake_feature
    if stake is None:
        return
    column, scale = stake
    assert 0 <= column < game.feature_size and scale > 0
    for n in _nodes_to_check(tree, full=False):
        assert game.public_features(tree.history(int(n)))[column] * scale > 0


# ------------------------------------------------------------------------- the rules

@cases(KNOWN_CASES)
def test_game_follows_the_rules(case):
    tree = tree_of(case)
    case.entry.rules(game_of(case), tree, _nodes_to_check(tree, full=False))


# ------------------------------------------------------------------------- terminal values

def _terminal_matrix(game: rebel.Game, history: list[int], player: int) -> np.ndarray:
    """T[h, o] = w(h, o) * u_player(h, o): values of `player`'s hands against a one-hot opponent."""
    H = game.num_hands
    eye = np.eye(H)
    return np.stack([game.terminal_values(history, player, eye[o]) for o in range(H)], axis=1)


def _check_terminals(case: Case, full: bool) -> int:
    game, tree = game_of(case), tree_of(case)
    H = game.num_hands
    W = np.array([[game.hand_pair_weight(h, o) for o in range(H)] for h in range(H)])
    terminals = np.asarray(tree.terminal_nodes)
    if not full and 2 * H * len(terminals) > FULL_CHECK_TERMINAL_CALLS:
        terminals = np.random.default_rng(0).choice(terminals, size=SAMPLE, replace=False)
    rng = np.random.default_rng(1)
    for n in terminals:
        h = tree.history(int(n))
        t0, t1 = _terminal_matrix(game, h, 0), _terminal_matrix(game, h, 1)
        assert np.all(np.isfinite(t0)) and np.all(np.isfinite(t1))
        # Zero-sum for every hand pair: u_0(h, o) + u_1(o, h) = 0 (both carry w(h, o) = w(o, h)).
        np.testing.assert_allclose(t0 + t1.T, 0.0, rtol=0, atol=1e-12)
        # Impossible pairs carry no value.
        assert np.all(t0[W == 0] == 0) and np.all(t1[W == 0] == 0)
        # The values are linear in the opponent's reach (the convention of core/game.h).
        r = rng.random(H)
        np.testing.assert_allclose(game.terminal_values(h, 0, r), t0 @ r, rtol=0, atol=1e-12)
        np.testing.assert_allclose(game.terminal_values(h, 1, r), t1 @ r, rtol=0, atol=1e-12)
    return len(terminals)


@cases()
def test_terminal_values_are_zero_sum_for_every_hand_pair(case):
    n = len(tree_of(case).terminal_nodes)
    every = 2 * game_of(case).num_hands * n <= FULL_CHECK_TERMINAL_CALLS
    assert _check_terminals(case, full=False) == (n if every else SAMPLE) >= 1


@pytest.mark.slow
@cases()
def test_terminal_values_are_zero_sum_at_every_terminal(case):
    game, tree = game_of(case), tree_of(case)
    if 2 * game.num_hands * len(tree.terminal_nodes) <= FULL_CHECK_TERMINAL_CALLS:
        pytest.skip("the fast test already checks every terminal")
    assert _check_terminals(case, full=True) == len(tree.terminal_nodes)


def test_tic_tac_toe_outcome_counts():
    """Player 0's result at each of tic-tac-toe's 255,168 terminals, counted by outcome
    (the depth counts already fix the games won by O: they end at even depths)."""
    case = next(c for c in CASES if c.name == "mnk" and _params(c) == {"m": 3, "n": 3, "k": 3})
    game, tree = game_of(case), tree_of(case)
    depth = tree.depth
    terminals = np.asarray(tree.terminal_nodes)
    # Only depth-9 terminals are either X wins or draws; check their split exactly.
    last = terminals[depth[terminals] == 9]
    one = np.ones(1)
    results = np.array([game.terminal_values(tree.history(int(n)), 0, one)[0] for n in last])
    odd = np.count_nonzero(depth[terminals] % 2 == 1)
    x_wins = odd - len(last) + np.count_nonzero(results == 1)
    assert x_wins == TIC_TAC_TOE["results"][1]
    assert np.count_nonzero(results == 0) == TIC_TAC_TOE["results"][0]
    assert np.count_nonzero(depth[terminals] % 2 == 0) == TIC_TAC_TOE["results"][-1]
    assert np.all(np.isin(results, [0.0, 1.0]))


# ------------------------------------------------------------------------- hands

@cases()
def test_hand_prior_is_a_distribution(case):
    game = game_of(case)
    prior = np.asarray(game.hand_prior)
    assert prior.shape == (game.num_hands,) and game.num_hands >= 1
    assert np.all(np.isfinite(prior)) and np.all(prior >= 0)
    assert prior.sum() == pytest.approx(1.0, abs=1e-12)


@cases()
def test_hand_pair_weights_match_the_prior(case):
    """w(h, o) = P(h, o) / (P(h) P(o)): symmetric, >= 0, 1 for independent hands, and the
    joint P(h, o) = prior[h] prior[o] w(h, o) is a distribution whose marginals (one per
    player) are the prior."""
    game = game_of(case)
    H = game.num_hands
    prior = np.asarray(game.hand_prior)
    W = np.array([[game.hand_pair_weight(h, o) for o in range(H)] for h in range(H)])
    assert np.all(np.isfinite(W)) and np.all(W >= 0)
    np.testing.assert_array_equal(W, W.T)
    if game.hands_independent:
        np.testing.assert_array_equal(W, 1.0)
    joint = prior[:, None] * prior[None, :] * W
    assert joint.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(joint.sum(axis=1), prior, rtol=0, atol=1e-12)  # player 0's marginal
    np.testing.assert_allclose(joint.sum(axis=0), prior, rtol=0, atol=1e-12)  # player 1's marginal


def test_kuhn_hand_pair_weights():
    """Cards without replacement: equal cards never meet, the others have w = (1/6)/(1/9)."""
    game = rebel.game_from_config({"name": "kuhn"})
    assert not game.hands_independent
    W = np.array([[game.hand_pair_weight(h, o) for o in range(3)] for h in range(3)])
    np.testing.assert_allclose(W, 1.5 * (1 - np.eye(3)), rtol=0, atol=1e-15)


# ------------------------------------------------------------------------- linear CFR

def _checkpoints(iterations: int) -> list[int]:
    return sorted({max(1, iterations // 16), max(1, iterations // 4), iterations})


@pytest.mark.parametrize("case", SOLVE_CASES)
def test_linear_cfr_converges(case):
    """Full-game linear CFR (the solver rebel.solve runs as "lcfr"), measured at iterations
    T/16, T/4 and T.

    - Exploitability decreases (strictly while it is above 1e-12) from the uniform policy's.
    - It ends below the table's measured bound.
    - Where the game value V is known: BR_0 >= V >= -BR_1 (a best response can only do
      better than the value), and the profile's value lies in [-BR_1, BR_0], so
      |value - V| <= BR_0 + BR_1 = 2 * exploitability: the tolerance is twice the measured
      exploitability, nothing looser.
    """
    game, tree = game_of(case), tree_of(case)
    s = case.setting
    solver = rebel.SubgameSolver(game, tree, solver="lcfr")
    uniform = rebel.exploitability(game, tree, rebel.uniform_policy(game, tree))["exploitability"]
    history = [uniform]
    for t in _checkpoints(s.lcfr_iterations):
        solver.run(t - solver.num_steps)
        assert solver.num_steps == t
        report = rebel.exploitability(game, tree, solver.average_policy())
        e = report["exploitability"]
        br0, br1 = report["br_values"]
        value = report["game_value"]
        assert e == pytest.approx((br0 + br1) / 2, abs=1e-12)
        assert e >= -1e-12
        assert -br1 - 1e-12 <= value <= br0 + 1e-12  # the profile's value lies between the BRs
        if s.value is not None:
            assert br0 >= s.value - 1e-9 and -br1 <= s.value + 1e-9, (t, br0, br1, s.value)
            assert abs(value - s.value) <= 2 * e + 1e-9, (t, value, s.value, e)
        prev = history[-1]
        if prev > 1e-12:
            assert e < prev, f"exploitability rose from {prev} to {e} at {t} iterations"
        else:
            assert e <= 1e-12
        history.append(e)
    if s.lcfr_bound is not None:
        assert history[-1] < s.lcfr_bound, history
    elif s.value is None:
        pytest.fail(f"{case.id}: a setting without a known value needs an lcfr_bound")


@pytest.mark.parametrize("case", [c for c in CASES if c.name == "kuhn"], ids=lambda c: c.id)
def test_rebel_solve_gives_the_same_linear_cfr(case):
    """rebel.solve(game, "lcfr", T) is the same run as the solver binding driven here."""
    game, tree = game_of(case), tree_of(case)
    T = case.setting.lcfr_iterations
    r = rebel.solve(game, "lcfr", T, progress=False, tree=tree)
    s = rebel.SubgameSolver(game, tree, solver="lcfr")
    for t in _checkpoints(T):
        s.run(t - s.num_steps)
    np.testing.assert_array_equal(r.policy, s.average_policy())
    assert r.game_value == pytest.approx(-1 / 18, abs=2 * r.exploitability + 1e-9)
