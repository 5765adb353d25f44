"""Hold'em endgames in the core (csrc/games/holdem_endgame.{h,cc}, csrc/solvers/holdem_cfr.{h,cc}),
on betting trees built by hand here: the linear-time terminal values against the dense pairwise
oracle, the tree's size and the pair mass by counting, a check-down value by brute force over
every deal, the clairvoyance game's value and equilibrium, convergence of every solver, equal
results on one and two threads, and clear errors for a malformed spot."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from rebel import _core

POT = 100.0


def street_tree(bets: list[float], streets: int, pot: float = POT, check_only: bool = False) -> dict[str, Any]:
    """A betting tree in the core's arrays: on each street OOP checks or bets `bets[street]`;
    after a check IP checks or bets the same; a bet is folded or called (no raises). A street
    that ends with the pot even deals the next street (a chance node) or shows down on the
    river. `check_only`: nobody bets (a check-down)."""
    kind: list[int] = []
    player: list[int] = []
    street: list[int] = []
    children: list[list[int]] = []
    invested: list[tuple[float, float]] = []
    labels: list[str] = []

    def add(k: int, p: int, s: int, i0: float, i1: float, label: str) -> int:
        kind.append(k)
        player.append(p)
        street.append(s)
        children.append([])
        invested.append((i0, i1))
        labels.append(label)
        return len(kind) - 1

    def sub(s: int, base: float, label: str) -> int:
        bet = bets[s - (3 - streets)] if not check_only else 0.0

        def end(i0: float, i1: float, label2: str) -> int:
            if s == 2:
                return add(3, -1, s, i0, i1, label2)
            c = add(1, -1, s, i0, i1, label2)
            children[c].append(sub(s + 1, i0, "deal"))
            return c

        root = add(0, 0, s, base, base, label)
        after_check = add(0, 1, s, base, base, "check")
        children[root].append(after_check)
        children[after_check].append(end(base, base, "check"))
        if check_only:
            return root
        ip_bet = add(0, 0, s, base, base + bet, f"bet {bet:g}")
        children[after_check].append(ip_bet)
        children[ip_bet].append(add(2, 0, s, base, base + bet, "fold"))
        children[ip_bet].append(end(base + bet, base + bet, "call"))
        oop_bet = add(0, 1, s, base + bet, base, f"bet {bet:g}")
        children[root].append(oop_bet)
        children[oop_bet].append(add(2, 1, s, base + bet, base, "fold"))
        children[oop_bet].append(end(base + bet, base + bet, "call"))
        return root

    sub(3 - streets, pot / 2, "")
    starts = [0]
    flat: list[int] = []
    for c in children:
        flat += c
        starts.append(len(flat))
    return dict(kind=np.array(kind, np.int8), player=np.array(player, np.int8), street=np.array(street, np.int8),
                child_start=np.array(starts, np.int32), children=np.array(flat, np.int32),
                invested=np.array(invested, np.float64), labels=labels)


def deck(ranks: int = 13, suits: int = 4) -> list[int]:
    return [r * 4 + s for r in range(ranks) for s in range(suits)]


def all_hands(board: list[int], cards: list[int]) -> np.ndarray:
    return np.array([h for h in itertools.combinations(sorted(cards), 2) if not set(h) & set(board)], np.int32)


def endgame(board_text: str, streets: int, bets: list[float] | None = None, cards: list[int] | None = None,
            hands: tuple[np.ndarray, np.ndarray] | None = None, weights: tuple[np.ndarray, np.ndarray] | None = None,
            check_only: bool = False) -> _core.HoldemEndgame:
    board = _core.parse_cards(board_text)
    cards = deck() if cards is None else cards
    if hands is None:
        full = all_hands(board, cards)
        hands = (full, full)
    if weights is None:
        weights = (np.ones(len(hands[0])), np.ones(len(hands[1])))
    tree = street_tree(bets or [50.0] * streets, streets, check_only=check_only)
    return _core.HoldemEndgame(board, cards, hands[0], weights[0], hands[1], weights[1], **tree)


def terminal_nodes(game: _core.HoldemEndgame) -> list[int]:
    return [i for i in range(game.num_nodes) if game.node(i)["kind"] in ("fold", "showdown")]


@pytest.mark.parametrize("board,streets,cards", [
    ("Td9d6hQc2s", 1, None),
    ("Td9d6hQc", 2, None),
    ("4h5c7d", 3, deck(6, 3)),
])
def test_linear_terminal_values_equal_the_dense_oracle(board: str, streets: int, cards: list[int] | None) -> None:
    rng = np.random.default_rng(7)
    game = endgame(board, streets, cards=cards)
    nodes = terminal_nodes(game)
    picked = [nodes[i] for i in rng.choice(len(nodes), size=min(len(nodes), 40), replace=False)]
    for node in picked:
        for player in (0, 1):
            reach = rng.random(game.num_hands(1 - player))
            reach[rng.random(reach.size) < 0.2] = 0.0  # hands out of the opponent's range here
            fast = game.terminal_values(node, player, reach)
            dense = game.terminal_values(node, player, reach, dense=True)
            # (a short deck's board can hold a straight that every hand plays: all values 0)
            scale = max(np.max(np.abs(dense)), 1.0)
            np.testing.assert_allclose(fast, dense, rtol=0, atol=1e-12 * scale)


def test_linear_terminal_values_with_weighted_narrow_ranges() -> None:
    """Ranges that share some hands and not others (the same-hand correction of folds)."""
    rng = np.random.default_rng(3)
    board = _core.parse_cards("Td9d6hQc2s")
    full = all_hands(board, deck())
    h0 = full[rng.choice(len(full), 300, replace=False)]
    h1 = full[rng.choice(len(full), 500, replace=False)]
    game = endgame("Td9d6hQc2s", 1, hands=(h0, h1), weights=(rng.random(300) + 0.1, rng.random(500) + 0.1))
    for node in terminal_nodes(game):
        for player in (0, 1):
            reach = rng.random(game.num_hands(1 - player))
            dense = game.terminal_values(node, player, reach, dense=True)
            np.testing.assert_allclose(game.terminal_values(node, player, reach), dense, rtol=0,
                                       atol=1e-12 * np.max(np.abs(dense)))


def test_tree_size_and_pair_mass_by_counting() -> None:
    game = endgame("Td9d6hQc", 2)
    size = game.size()
    # The turn: 4 decisions; 3 lines end the turn with the pot even, each dealing one of 48
    # river cards, below which 4 decisions and 5 terminals.
    assert size["chance_nodes"] == 3
    assert size["decision_nodes"] == 4 + 3 * 48 * 4
    assert size["terminal_nodes"] == 2 + 3 * 48 * 5
    assert size["river_boards"] == 48
    # Information sets: each decision's actor holds any of C(48, 2) hands on the turn and
    # C(47, 2) on a river board.
    assert size["infosets"] == 4 * 1128 + 3 * 48 * 4 * 1081
    # Storage: actions x all of the actor's hands (a blocked hand keeps its index).
    assert size["storage_values"] == (4 + 3 * 48 * 4) * 2 * 1128
    assert size["solver_bytes"] == 2 * 4 * size["storage_values"]
    assert game.num_hands(0) == game.num_hands(1) == 1128
    # Pairs of disjoint hands: C(48, 2) x C(46, 2).
    assert game.pair_mass == 1128 * 1035
    assert game.node(0)["board"] == _core.parse_cards("Td9d6hQc")
    first_chance = next(i for i in range(game.num_nodes) if game.node(i)["kind"] == "chance")
    river_cards = [game.node(c)["board"][-1] for c in game.node(first_chance)["children"]]
    assert sorted(river_cards) == sorted(set(range(52)) - set(_core.parse_cards("Td9d6hQc")))


def test_check_down_value_equals_brute_force_over_every_deal() -> None:
    """A turn check-down: each player's value is its equity over every pair of hands and river
    card, counted here with hand ranks alone."""
    board = _core.parse_cards("Ah7c3d2s")
    h0 = np.array([_core.parse_cards(t) for t in ("KsKd", "4c5c", "QhJh", "7d7h")], np.int32)
    h1 = np.array([_core.parse_cards(t) for t in ("AsKc", "8c9c", "7s6s", "QdJd", "KhQs")], np.int32)
    w0 = np.array([1.0, 0.5, 2.0, 1.0])
    w1 = np.array([1.0, 1.0, 0.25, 3.0, 1.0])
    game = endgame("Ah7c3d2s", 2, hands=(h0, h1), weights=(w0, w1), check_only=True)
    total = 0.0
    mass = 0.0
    for (a, wa), (b, wb) in itertools.product(zip(h0.tolist(), w0), zip(h1.tolist(), w1)):
        if set(a) & set(b):
            continue
        rivers = [c for c in range(52) if c not in board + a + b]
        assert len(rivers) == 44
        for river in rivers:
            ra = _core.hand_rank(board + [river] + a)
            rb = _core.hand_rank(board + [river] + b)
            total += wa * wb * (POT / 2) * np.sign(ra - rb) / len(rivers)
        mass += wa * wb
    solver = _core.HoldemSolver(game, "dcfr", 1)
    solver.iterate(1)
    assert game.pair_mass == pytest.approx(mass, rel=1e-15)
    values = solver.average_values()
    assert values[0] == pytest.approx(total / mass, abs=1e-9)
    assert values[1] == pytest.approx(-total / mass, abs=1e-9)
    assert solver.exploitability() == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("algorithm", ["cfr", "cfr+", "lcfr", "dcfr", "dcfr-pfs"])
def test_clairvoyance_game_value_and_equilibrium(algorithm: str) -> None:
    """OOP holds the nuts (KK, a set) or air (53) with equal weight, IP a bluff catcher (AA);
    pot 100, one pot-sized bet. OOP bets every nut hand and bluffs with half its air, IP calls
    half the time: OOP wins 25 chips a deal (nuts 0.5 x 100, air 0.5 x -50)."""
    board = _core.parse_cards("KsQd7h4c2s")
    h0 = np.array([_core.parse_cards("KdKc"), _core.parse_cards("3h5d")], np.int32)
    h1 = np.array([_core.parse_cards("AhAc")], np.int32)
    game = endgame("KsQd7h4c2s", 1, bets=[100.0], hands=(h0, h1), weights=(np.ones(2), np.ones(1)))
    assert game.node(0)["board"] == board
    solver = _core.HoldemSolver(game, algorithm, 1)
    solver.iterate(2000)
    values = solver.average_values()
    assert values[0] == pytest.approx(25.0, abs=0.05)
    assert values[1] == pytest.approx(-25.0, abs=0.05)
    assert solver.exploitability() < 0.05
    strategy = solver.average_strategy(0)  # OOP at the root: [check, bet] x [KK, 53]
    assert strategy[1, 0] == pytest.approx(1.0, abs=0.01)
    assert strategy[1, 1] == pytest.approx(0.5, abs=0.01)
    call = solver.average_strategy(game.node(0)["children"][1])  # IP facing the bet: [fold, call]
    assert call[1, 0] == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize("algorithm", ["cfr+", "lcfr", "dcfr", "dcfr-pfs"])
def test_every_solver_converges_on_a_river_spot(algorithm: str) -> None:
    game = endgame("Td9d6hQc2s", 1)
    solver = _core.HoldemSolver(game, algorithm, 1)
    solver.iterate(10)
    early = solver.exploitability()
    solver.iterate(190)
    late = solver.exploitability()
    assert late < early / 4
    assert late < 0.005 * POT  # 0.5% of the pot
    br = solver.best_response_values()
    avg = solver.average_values()
    assert avg[0] + avg[1] == pytest.approx(0.0, abs=1e-9)  # zero-sum
    assert br[0] >= avg[0] - 1e-9 and br[1] >= avg[1] - 1e-9


@pytest.mark.parametrize("board, streets, compressed", [("Td9d6hQc", 2, False), ("Td9d6hQc", 2, True),
                                                         ("Td9d6hQc2s", 1, False), ("Td9d6hQc2s", 1, True)])
def test_one_and_two_threads_give_the_same_numbers(board: str, streets: int, compressed: bool) -> None:
    """Threads over the river cards on the turn, over the root's actions on the river (no deal)."""
    full = all_hands(_core.parse_cards(board), deck())
    rng = np.random.default_rng(1)
    hands = (full[rng.choice(len(full), 120, replace=False)], full[rng.choice(len(full), 150, replace=False)])
    game = endgame(board, streets, hands=hands)
    results = []
    for threads in (1, 2):
        solver = _core.HoldemSolver(game, "dcfr", threads, compressed)
        solver.iterate(15)
        results.append((solver.exploitability(), solver.average_strategy(0), solver.current_strategy(0)))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][2], results[1][2])


def test_compressed_storage_halves_the_memory_and_keeps_the_equilibrium() -> None:
    """16-bit regrets and strategies (one scale per node): the clairvoyance game's value and
    frequencies as with float32, a river spot's curve within twice float32's, and the
    storage the size report announces."""
    h0 = np.array([_core.parse_cards("KdKc"), _core.parse_cards("3h5d")], np.int32)
    h1 = np.array([_core.parse_cards("AhAc")], np.int32)
    clairvoyance = endgame("KsQd7h4c2s", 1, bets=[100.0], hands=(h0, h1), weights=(np.ones(2), np.ones(1)))
    solver = _core.HoldemSolver(clairvoyance, "dcfr", 1, compressed=True)
    assert solver.compressed
    solver.iterate(2000)
    assert solver.average_values()[0] == pytest.approx(25.0, abs=0.05)
    assert solver.exploitability() < 0.05
    assert solver.average_strategy(0)[1, 1] == pytest.approx(0.5, abs=0.01)  # bluffs half its air

    game = endgame("Td9d6hQc2s", 1)
    size = game.size()
    curves = {}
    for compressed in (False, True):
        solver = _core.HoldemSolver(game, "dcfr", 1, compressed=compressed)
        expected = size["solver_bytes_compressed"] if compressed else size["solver_bytes"]
        assert solver.storage_bytes == expected
        curves[compressed] = []
        for _ in range(4):
            solver.iterate(50)
            curves[compressed].append(solver.exploitability())
        avg = solver.average_values()
        assert avg[0] + avg[1] == pytest.approx(0.0, abs=1e-9)
    assert size["solver_bytes_compressed"] < 0.51 * size["solver_bytes"]
    assert curves[True][-1] < 0.005 * POT  # 0.5% of the pot after 200 iterations
    # Measured: 0.0269/0.0282, 0.0111/0.0125, 0.0056/0.0071, 0.0023/0.0040 chips (pot 100) at 50-200
    # iterations: the rounding to 16 bits slows the tail a little.
    for a, b in zip(curves[False], curves[True]):
        assert b < 2 * a


def spec(**changes: Any) -> dict[str, Any]:
    board = _core.parse_cards("KsQd7h4c2s")
    hands = np.array([_core.parse_cards("AhAc"), _core.parse_cards("3h5d")], np.int32)
    args: dict[str, Any] = dict(board=board, deck=deck(), hands0=hands, weights0=np.ones(2), hands1=hands,
                                weights1=np.ones(2), **street_tree([50.0], 1))
    args.update(changes)
    return args


@pytest.mark.parametrize("changes,message", [
    (dict(hands0=np.array([[47, 0]], np.int32), weights0=np.ones(1)), "holds board card"),
    (dict(hands0=np.array([[0, 1], [1, 0]], np.int32)), "twice"),
    (dict(weights0=np.array([1.0, -1.0])), "weight -1.000000 \\(weights are finite and not negative\\)"),
    (dict(weights0=np.array([1.0, np.nan])), "finite and not negative"),
    (dict(weights1=np.zeros(2)), "the IP range has no hand with a positive weight"),
    (dict(weights0=np.ones(3)), "shape"),
    (dict(board=[0, 1]), "the board has 2 cards"),
    (dict(board=[0, 1, 2, 3, 3]), "card 2s \\(3\\) appears twice"),
    (dict(deck=deck(6, 3)), "not in the deck"),
    (dict(hands0=np.array([[0.0, 1.0]]), weights0=np.ones(1)), "integer dtype"),
    (dict(player=np.zeros(3, np.int8)), "shape"),
])
def test_malformed_spots_are_one_line_errors(changes: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        _core.HoldemEndgame(**spec(**changes))


def test_malformed_betting_trees_are_errors() -> None:
    turn_tree = street_tree([50.0, 50.0], 2)
    with pytest.raises(ValueError, match="starts on street 1 but a board of 5 cards is street 2"):
        _core.HoldemEndgame(**spec(**turn_tree))
    river = street_tree([50.0], 1)
    kind = river["kind"].copy()
    kind[1] = 3  # a showdown where a decision with children stands
    with pytest.raises(ValueError, match="terminal but has children"):
        _core.HoldemEndgame(**spec(kind=kind))
    with pytest.raises(ValueError, match="unknown hold'em solver 'dcfr2'"):
        _core.HoldemSolver(_core.HoldemEndgame(**spec()), "dcfr2")
    with pytest.raises(ValueError, match="threads must be in 1..256"):
        _core.HoldemSolver(_core.HoldemEndgame(**spec()), "dcfr", 0)
    with pytest.raises(TypeError, match="game must not be None"):
        _core.HoldemSolver(None)  # type: ignore[arg-type]


def clairvoyance_game() -> _core.HoldemEndgame:
    h0 = np.array([_core.parse_cards("KdKc"), _core.parse_cards("3h5d")], np.int32)
    h1 = np.array([_core.parse_cards("AhAc")], np.int32)
    return endgame("KsQd7h4c2s", 1, bets=[100.0], hands=(h0, h1), weights=(np.ones(2), np.ones(1)))


def test_node_report_gives_each_hands_ev_and_equity_in_the_clairvoyance_game() -> None:
    game = clairvoyance_game()
    solver = _core.HoldemSolver(game, "dcfr", 1)
    solver.iterate(2000)
    root = solver.node_report(0)
    # KK bets and wins 150 (called half the time) or 50; 53 loses 50 whether it bluffs or checks.
    np.testing.assert_allclose(root["oop"]["ev"], [100.0, -50.0], atol=0.1)
    np.testing.assert_allclose(root["ip"]["ev"], [-25.0], atol=0.1)
    np.testing.assert_array_equal(root["oop"]["equity"], [1.0, 0.0])
    np.testing.assert_array_equal(root["ip"]["equity"], [0.5])
    np.testing.assert_array_equal(root["oop"]["reach"], [1.0, 1.0])
    bet = game.node(0)["children"][1]
    facing = solver.node_report(bet)  # IP facing the bet: KK always, 53 half the time
    np.testing.assert_allclose(facing["oop"]["reach"], [1.0, 0.5], atol=0.01)
    assert facing["ip"]["equity"][0] == pytest.approx(1 / 3, abs=0.01)
    assert facing["ip"]["ev"][0] == pytest.approx(-50.0, abs=0.2)  # calling and folding both lose 50 on average


def test_node_locking_solves_the_rest_and_measures_its_exploitability() -> None:
    """IP locked to call every bet: OOP stops bluffing, bets its nuts for 150 and wins 50 a deal."""
    game = clairvoyance_game()
    bet = game.node(0)["children"][1]
    solver = _core.HoldemSolver(game, "dcfr", 1)
    solver.lock(bet, np.array([[0.0], [1.0]], np.float32))
    assert solver.locked_nodes() == [bet]
    solver.iterate(1000)
    values = solver.average_values()
    assert values[0] == pytest.approx(50.0, abs=0.05)
    assert solver.average_strategy(0)[1, 1] < 0.01  # no bluffs
    np.testing.assert_array_equal(solver.average_strategy(bet), [[0.0], [1.0]])
    assert solver.exploitability() < 0.05  # of the rest: IP's best response keeps calling
    solver.unlock(bet)
    assert solver.locked_nodes() == []
    assert solver.exploitability() > 10  # unlocked, IP would fold to a bluff-free bet
    with pytest.raises(ValueError, match="hand 0.s locked strategy sums to 0.5"):
        solver.lock(bet, np.array([[0.0], [0.5]], np.float32))
    with pytest.raises(ValueError, match="not a decision"):
        solver.lock(terminal_nodes(game)[0], np.array([[1.0]], np.float32))
    with pytest.raises(ValueError, match="shape"):
        solver.lock(bet, np.array([[0.0, 1.0]], np.float32))
    with pytest.raises(TypeError, match="float32"):
        solver.lock(bet, np.array([[0.0], [1.0]]))


def test_equity_and_ev_of_a_check_down_equal_brute_force() -> None:
    board = _core.parse_cards("Ah7c3d2s")
    h0 = np.array([_core.parse_cards(t) for t in ("KsKd", "4c5c", "QhJh")], np.int32)
    h1 = np.array([_core.parse_cards(t) for t in ("AsKc", "8c9c", "QdJd")], np.int32)
    w1 = np.array([1.0, 2.0, 0.5])
    game = endgame("Ah7c3d2s", 2, hands=(h0, np.asarray(h1)), weights=(np.ones(3), w1), check_only=True)
    solver = _core.HoldemSolver(game, "dcfr", 1)
    report = solver.node_report(0)
    for i, a in enumerate(h0.tolist()):
        share = mass = 0.0
        for b, w in zip(h1.tolist(), w1):
            if set(a) & set(b):
                continue
            for river in (c for c in range(52) if c not in board + a + b):
                ra, rb = _core.hand_rank(board + [river] + a), _core.hand_rank(board + [river] + b)
                share += w * (1.0 if ra > rb else 0.5 if ra == rb else 0.0)
                mass += w
        assert report["oop"]["equity"][i] == pytest.approx(share / mass, abs=1e-12)
        assert report["oop"]["ev"][i] == pytest.approx((2 * share / mass - 1) * POT / 2, abs=1e-9)
