"""The m,n,k game engine: rules, symmetries, the exact solver against known game values and
plain minimax, MCTS (random rollouts and batched net evaluation) and the same game as a
public-belief-state game for ReBeL's solvers."""
from __future__ import annotations

import functools
import itertools
import re

import numpy as np
import pytest

import rebel
from rebel import _core


def board(m=3, n=3, k=3, moves=()):
    b = _core.MnkBoard(m, n, k)
    for mv in moves:
        b.play(mv)
    return b


# ------------------------------------------------------------------------------ rules


@pytest.mark.parametrize("line", [
    ["a1", "b1", "c1"],  # row
    ["a1", "a2", "a3"],  # column
    ["a1", "b2", "c3"],  # diagonal
    ["c1", "b2", "a3"],  # anti-diagonal
])
def test_a_line_of_k_wins_in_every_direction(line):
    fillers = [c for c in ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3") if c not in line]
    b = board()
    for i, cell in enumerate(line):
        b.play(cell)
        if i < 2:
            assert not b.terminal
            # player 1 plays somewhere harmless: not on the line, not completing anything
            b.play(next(c for c in fillers if b.legal(c) and not b.wins_by(c)))
    assert b.outcome == "win0" and b.result_for(0) == 1 and b.result_for(1) == -1
    assert b.legal_moves() == []


def test_overlines_win_and_draws_fill_the_board():
    # k = 3 on a 1 x 5 strip: a line of 4 completed in the middle counts (k or more)
    b = board(1, 5, 3, ["a1", "c1", "b1", "e1"])
    assert b.outcome == "ongoing"
    b2 = board(2, 5, 3, ["a1", "a2", "b1", "b2", "d1", "d2", "c1"])  # X: a1 b1 c1 d1
    assert b2.outcome == "win0"
    draw = board(3, 3, 3, ["a1", "b2", "c3", "b1", "b3", "a3", "c1", "c2", "a2"])
    assert draw.outcome == "draw" and draw.terminal and draw.result_for(0) == 0


def test_win_detection_matches_a_full_scan_on_random_games():
    rng = np.random.default_rng(0)
    for m, n, k in [(3, 3, 3), (4, 5, 3), (6, 6, 4), (7, 5, 5)]:
        for _ in range(40):
            b = _core.MnkBoard(m, n, k)
            while not b.terminal:
                b.play(int(rng.choice(b.legal_moves())))
                assert (b.outcome in ("win0", "win1")) == _has_line(b.cells(), k)


def _has_line(cells, k):
    m, n = cells.shape
    for r, c in itertools.product(range(m), range(n)):
        if cells[r, c] == 0:
            continue
        for dr, dc in [(0, 1), (1, 0), (1, 1), (1, -1)]:
            if all(0 <= r + i * dr < m and 0 <= c + i * dc < n and cells[r + i * dr, c + i * dc] == cells[r, c]
                   for i in range(k)):
                return True
    return False


@pytest.mark.parametrize("m,n,k,message", [
    (0, 3, 3, "m (rows) must be in 1..19"),
    (3, 20, 3, "n (columns) must be in 1..19"),
    (3, 3, 0, "k must be >= 1"),
    (3, 3, 4, "k must be <= max(m, n)"),
])
def test_impossible_boards_are_refused(m, n, k, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        _core.MnkBoard(m, n, k)
    with pytest.raises(ValueError, match=re.escape(message)):
        rebel.make_game("mnk", {"m": m, "n": n, "k": k})


def test_illegal_moves_are_refused_and_change_nothing():
    b = board(moves=["b2"])
    with pytest.raises(ValueError, match="b2 is already occupied"):
        b.play("b2")
    with pytest.raises(ValueError, match="off the board"):
        b.play(9)
    with pytest.raises(ValueError, match="not a cell"):
        b.play("d1")
    with pytest.raises(TypeError):
        b.play(1.5)
    assert b.moves_made == 1 and b.to_move == 1
    won = board(moves=["a1", "a2", "b1", "b2", "c1"])
    with pytest.raises(ValueError, match="game is over"):
        won.play("c3")


def test_cell_names_round_trip():
    b = _core.MnkBoard(15, 15, 5)
    for cell in range(225):
        assert b.parse_cell(b.cell_name(cell)) == cell
    assert b.cell_name(0) == "a1" and b.cell_name(14) == "o1" and b.cell_name(224) == "o15"
    assert b.parse_cell("p1") == -1 and b.parse_cell("a16") == -1 and b.parse_cell("") == -1


# ------------------------------------------------------------------------------ symmetries


@pytest.mark.parametrize("m,n,count", [(3, 3, 8), (6, 6, 8), (4, 5, 4), (1, 7, 2), (1, 1, 1)])
def test_symmetries_are_the_boards_automorphisms(m, n, count):
    perms = _core.mnk_symmetries(m, n)
    assert perms.shape == (count, m * n)
    assert np.array_equal(perms[0], np.arange(m * n))
    as_set = {tuple(p) for p in perms}
    assert len(as_set) == count  # distinct
    for p, q in itertools.product(perms, perms):  # a group: closed under composition
        assert tuple(p[q]) in as_set
    # They map lines of k to lines of k: a won board stays won under every symmetry.
    rng = np.random.default_rng(1)
    k = min(3, max(m, n))
    for _ in range(30):
        b = _core.MnkBoard(m, n, k)
        while not b.terminal:
            b.play(int(rng.choice(b.legal_moves())))
        for p in perms:
            image = np.zeros(m * n, dtype=np.int8)
            image[p] = b.cells().reshape(-1)
            assert _has_line(image.reshape(m, n), k) == _has_line(b.cells(), k)


# ------------------------------------------------------------------------------ exact solver


@pytest.mark.parametrize("m,n,k,value", [
    (3, 3, 3, 0),   # tic-tac-toe is a draw
    (4, 4, 3, 1),   # first player wins
    (4, 4, 4, 0),   # draw
    (3, 4, 3, 1),   # first player wins
    (2, 2, 2, 1),   # the second stone always completes a line
])
def test_solver_known_game_values(m, n, k, value):
    assert _core.MnkSolver(m, n, k).value(_core.MnkBoard(m, n, k)) == value


def test_solver_agrees_with_plain_minimax_on_tic_tac_toe_positions():
    solver = _core.MnkSolver(3, 3, 3)
    rng = np.random.default_rng(2)
    for _ in range(60):
        b = _core.MnkBoard(3, 3, 3)
        for _ in range(int(rng.integers(3, 7))):  # plain minimax from the empty board is slow
            if b.terminal:
                break
            b.play(int(rng.choice(b.legal_moves())))
        if b.terminal:
            continue
        assert solver.value(b) == _minimax(tuple(b.history))
        values = solver.move_values(b)
        for cell in range(9):
            if b.legal(cell):
                assert values[cell] == _minimax_after(tuple(b.history), cell)
            else:
                assert values[cell] == -2


def test_tic_tac_toe_opening_values():
    """The centre and the corners draw; after X takes the centre, an O edge loses."""
    vals = _core.MnkSolver().move_values(_core.MnkBoard())
    assert list(vals) == [0] * 9
    after_edge = board(moves=["b2", "b1"])
    assert _core.MnkSolver().value(after_edge) == 1  # X to move wins
    assert _core.MnkSolver().value(board(moves=["b2", "a1"])) == 0


@functools.lru_cache(maxsize=None)
def _minimax(history):
    b = board(moves=history)
    if b.terminal:
        return b.result_for(b.to_move)
    return max(_minimax_after(history, c) for c in b.legal_moves())


def _minimax_after(history, cell):
    b = board(moves=history + (cell,))
    return b.result_for(1 - b.to_move) if b.terminal else -_minimax(history + (cell,))


def test_solver_bad_input():
    with pytest.raises(ValueError, match="at most 64 cells"):
        _core.MnkSolver(9, 9, 5)
    with pytest.raises(ValueError, match=r"the board is mnk\(m=4"):
        _core.MnkSolver(3, 3, 3).value(_core.MnkBoard(4, 4, 4))
    with pytest.raises(RuntimeError, match="gave up after 1000 positions"):
        _core.MnkSolver(5, 5, 4, max_positions=1000).value(_core.MnkBoard(5, 5, 4))


# ------------------------------------------------------------------------------ MCTS


def test_rollout_mcts_takes_a_win_and_blocks_a_loss():
    win = board(moves=["a1", "a2", "b1", "b2"])  # X to move: c1 wins
    assert int(np.argmax(_core.mnk_rollout_search(win, 400, seed=0))) == win.parse_cell("c1")
    block = board(moves=["a1", "b2", "b1"])  # O to move: must block c1
    assert int(np.argmax(_core.mnk_rollout_search(block, 2000, seed=0))) == block.parse_cell("c1")


def test_rollout_mcts_is_deterministic_per_seed():
    b = _core.MnkBoard(4, 4, 3)
    assert np.array_equal(_core.mnk_rollout_search(b, 300, seed=5), _core.mnk_rollout_search(b, 300, seed=5))
    assert _core.mnk_rollout_search(b, 300, seed=5).sum() == 300 - 1  # the root's own first visit


def _search(batch, games, net, root_noise=False):
    batch.begin(games, root_noise)
    rounds = 0
    while (sel := batch.select()) is not None:
        ids, planes = sel
        assert planes.shape == (len(ids), 4, 3, 3) and planes.dtype == np.float32
        if len(ids):
            batch.evaluate(*net(batch, ids, planes))
        rounds += 1
    return rounds


def test_batched_mcts_with_exact_values_finds_the_only_good_move():
    solver = _core.MnkSolver()
    batch = _core.MctsBatch(3, 3, 3, num_games=3, simulations=200, seed=0)
    positions = [["a1", "a2", "b1", "b2"], ["a1", "b2", "b1"], ["b2", "b1"]]
    for g, moves in enumerate(positions):
        batch.reset(g, board(moves=moves))
    net = _exact_net_with_boards(solver)
    rounds = _search(batch, [0, 1, 2], net)
    assert rounds <= 200 + 1  # one leaf per game per round: the games were searched side by side
    for g, moves in enumerate(positions):
        b = board(moves=moves)
        best = int(np.argmax(batch.visit_counts(g)))
        assert solver.move_values(b)[best] == max(solver.move_values(b)), (moves, batch.visit_counts(g))
        assert batch.visit_counts(g).sum() == 200 - 1


def _exact_net_with_boards(solver):
    """Values of the leaves: the leaf boards are rebuilt from the planes (mover, opponent)."""
    def evaluate(batch, games, planes):
        priors = np.ones((len(games), 9), dtype=np.float32)
        values = []
        for x in planes:
            mover_first = x[3, 0, 0] == 1.0
            cells = np.zeros(9, dtype=np.int8)
            cells[x[0].reshape(-1) == 1] = 1 if mover_first else 2
            cells[x[1].reshape(-1) == 1] = 2 if mover_first else 1
            values.append(_value_of_cells(solver, cells))
        return priors, np.array(values, dtype=np.float32)
    return evaluate


def _value_of_cells(solver, cells):
    """Rebuilds a position with these stones (any legal order) and asks the solver."""
    xs, os_ = list(np.flatnonzero(cells == 1)), list(np.flatnonzero(cells == 2))
    b = _core.MnkBoard()
    for i in range(len(xs) + len(os_)):
        b.play(int(xs[i // 2] if i % 2 == 0 else os_[i // 2]))
    return solver.value(b)


def test_tree_reuse_keeps_the_chosen_subtree():
    solver = _core.MnkSolver()
    batch = _core.MctsBatch(3, 3, 3, num_games=1, simulations=300, seed=0)
    net = _exact_net_with_boards(solver)
    _search(batch, [0], net)
    counts = batch.visit_counts(0)
    move = int(np.argmax(counts))
    batch.advance(0, move)
    assert batch.board(0).history == [move]
    kept = batch.visit_counts(0).sum() + 1  # the new root's visits
    assert kept == counts[move]
    no_reuse = _core.MctsBatch(3, 3, 3, num_games=1, simulations=300, seed=0, reuse_tree=False)
    _search(no_reuse, [0], net)
    no_reuse.advance(0, move)
    assert no_reuse.visit_counts(0).sum() == 0


def test_root_noise_is_seeded_and_changes_the_search():
    net = _exact_net_with_boards(_core.MnkSolver())

    def run(seed, noise):
        batch = _core.MctsBatch(3, 3, 3, num_games=1, simulations=64, seed=seed, dirichlet_alpha=0.3,
                                dirichlet_fraction=0.5)
        _search(batch, [0], net, root_noise=noise)
        return batch.visit_counts(0)

    assert np.array_equal(run(1, True), run(1, True))
    assert not np.array_equal(run(1, True), run(2, True))
    assert np.array_equal(run(1, False), run(2, False))  # without noise the seed plays no part


def test_mcts_bad_input():
    with pytest.raises(ValueError, match="simulations must be >= 1"):
        _core.MctsBatch(3, 3, 3, num_games=1, simulations=0)
    with pytest.raises(ValueError, match="num_games must be >= 1"):
        _core.MctsBatch(3, 3, 3, num_games=0)
    batch = _core.MctsBatch(3, 3, 3, num_games=2, simulations=4)
    with pytest.raises(ValueError, match="game index 5 out of range"):
        batch.begin([5])
    with pytest.raises(ValueError, match=r"the board is mnk\(m=4"):
        batch.reset(0, _core.MnkBoard(4, 4, 4))
    batch.begin([0, 1])
    ids, _ = batch.select()
    with pytest.raises(ValueError, match=r"priors has shape \(1, 9\), expected \(2, 9\)"):
        batch.evaluate(np.ones((1, 9), np.float32), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="priors must have dtype float32"):
        batch.evaluate(np.ones((2, 9)), np.zeros(2, np.float32))
    over = _core.MctsBatch(3, 3, 3, num_games=1)
    over.reset(0, board(moves=["a1", "a2", "b1", "b2", "c1"]))
    with pytest.raises(ValueError, match="game 0 is over"):
        over.begin([0])
    with pytest.raises(ValueError, match="playouts must be >= 1"):
        _core.mnk_rollout_search(_core.MnkBoard(), 0)


# ------------------------------------------------------------------------------ as a PBS game


@pytest.mark.parametrize("m,n,k", [(2, 2, 2), (2, 3, 3), (2, 3, 2), (1, 5, 3), (1, 6, 3)])
def test_small_boards_as_public_belief_state_games_match_the_exact_solver(m, n, k):
    """Perfect information is one hand per player: ReBeL's full-game solver reaches the game
    value the exact solver computes, with exploitability near 0."""
    game = rebel.make_game("mnk", {"m": m, "n": n, "k": k})
    assert game.num_hands == 1 and game.num_actions == m * n
    result = rebel.solve(game, "lcfr", 256, progress=False)
    exact = _core.MnkSolver(m, n, k).value(_core.MnkBoard(m, n, k))
    assert result.exploitability < 0.01
    assert result.game_value == pytest.approx(exact, abs=0.01)


@pytest.mark.slow
def test_tic_tac_toe_as_a_public_belief_state_game():
    game = rebel.make_game("mnk", {"m": 3, "n": 3, "k": 3})
    result = rebel.solve(game, "cfr+", 256, progress=False)
    assert result.exploitability < 0.01
    assert result.game_value == pytest.approx(0.0, abs=0.01)
