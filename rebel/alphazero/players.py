"""Players of m,n,k games, each choosing moves for a batch of boards at once (a net player
searches them side by side so that its net sees batches):

* ``random``: a uniformly random legal move;
* ``perfect``: a move of the best exact value (the core's solver), uniformly among ties;
* ``mcts:N``: pure MCTS with N random-rollout simulations per move, the most visited move;
* ``net:PATH[:SIMS]``: MCTS with the policy-value net at PATH (SIMS simulations per move,
  default 400), the most visited move, no exploration noise;
* ``rebel:PATH[:ITERS]``: ReBeL's test-time search with the value net PATH (a weights.bin of
  ``rebel train rebel_tictactoe`` or the like): depth-2 linear CFR-D subgames of ITERS
  iterations (default 1024), played as the evaluation's mode (b) plays them.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, List, Optional, Protocol, Sequence, Tuple

import numpy as np

from rebel import _core

if TYPE_CHECKING:
    from rebel.alphazero.net import PolicyValueNet

DEFAULT_NET_SIMULATIONS = 400

__all__ = ["Player", "RandomPlayer", "PerfectPlayer", "RolloutPlayer", "NetPlayer", "ReBeLPlayer", "make_player",
           "DEFAULT_NET_SIMULATIONS", "DEFAULT_REBEL_ITERATIONS"]

DEFAULT_REBEL_ITERATIONS = 1024


class Player(Protocol):
    name: str

    def moves(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> List[int]:
        """A move for each board (the player is to move in each); ``games`` identifies the
        boards across calls (a player may keep state per game, e.g. a search tree)."""


def _argmax_random_tie(values: np.ndarray, rng: np.random.Generator) -> int:
    best = np.flatnonzero(values == values.max())
    return int(best[0] if len(best) == 1 else rng.choice(best))


class RandomPlayer:
    def __init__(self, seed: int = 0) -> None:
        self.name = "random"
        self.rng = np.random.default_rng(seed)

    def moves(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> List[int]:
        return [int(self.rng.choice(b.legal_moves())) for b in boards]


class PerfectPlayer:
    def __init__(self, m: int, n: int, k: int, seed: int = 0) -> None:
        self.name = "perfect"
        self.solver = _core.MnkSolver(m, n, k)
        self.rng = np.random.default_rng(seed)

    def moves(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> List[int]:
        out = []
        for b in boards:
            values = self.solver.move_values(b).astype(np.float64)
            out.append(_argmax_random_tie(values, self.rng))
        return out


class RolloutPlayer:
    def __init__(self, playouts: int, seed: int = 0) -> None:
        if playouts < 1:
            raise ValueError(f"mcts:{playouts}: the number of playouts must be >= 1")
        self.name = f"mcts:{playouts}"
        self.playouts = playouts
        self.rng = np.random.default_rng(seed)

    def moves(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> List[int]:
        out = []
        for b in boards:
            counts = _core.mnk_rollout_search(b, self.playouts, seed=int(self.rng.integers(2**63)))
            out.append(_argmax_random_tie(counts, self.rng))
        return out


class NetPlayer:
    """MCTS with a policy-value net over all the games it plays at once (tree reuse per game:
    its tree follows the game's moves, the opponent's included)."""

    def __init__(self, net: "PolicyValueNet", simulations: int = DEFAULT_NET_SIMULATIONS, c_puct: float = 1.5,
                 seed: int = 0, name: Optional[str] = None, max_games: int = 1024,
                 evaluator: Optional[Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]] = None) -> None:
        """``net``: a PolicyValueNet, evaluated natively (precision auto) unless ``evaluator``
        (e.g. :func:`rebel.alphazero.inference.make_evaluator`) is given."""
        from rebel.alphazero.inference import describe, make_evaluator

        if simulations < 1:
            raise ValueError(f"net player: simulations must be >= 1, got {simulations}")
        self.net = net
        self.evaluate = evaluator if evaluator is not None else make_evaluator(net)
        self.inference = describe(self.evaluate)  # what evaluates the leaves, e.g. "native-fp32 (avx512)"
        self.name = name or f"net:{simulations}"
        self.simulations, self.c_puct = simulations, c_puct
        self.seed = seed
        self.max_games = max_games
        self.batch: Optional["_core.MctsBatch"] = None
        self.rng = np.random.default_rng(seed)

    def _batch_for(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> "_core.MctsBatch":
        b0 = boards[0]
        if self.batch is None:
            size = max(self.max_games, max(games) + 1)
            self.batch = _core.MctsBatch(b0.m, b0.n, b0.k, num_games=size, simulations=self.simulations,
                                         c_puct=self.c_puct, seed=self.seed)
        if max(games) >= self.batch.num_games:
            raise ValueError(f"net player: game index {max(games)} beyond its {self.batch.num_games} trees")
        return self.batch

    def moves(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> List[int]:
        batch = self._batch_for(boards, games)
        for board, g in zip(boards, games):
            _follow(batch, g, board)
        batch.begin(list(games), False)
        while (selected := batch.select()) is not None:
            ids, planes = selected
            if len(ids):
                batch.evaluate(*self.evaluate(planes))
        return [_argmax_random_tie(batch.visit_counts(g), self.rng) for g in games]


def _follow(batch: "_core.MctsBatch", game: int, board: "_core.MnkBoard") -> None:
    """Brings tree `game` to `board`: along the moves made since (tree reuse) or anew."""
    have, want = batch.board(game).history, board.history
    if len(have) <= len(want) and want[:len(have)] == have:
        for move in want[len(have):]:
            batch.advance(game, move)
    else:
        batch.reset(game, board)


class ReBeLPlayer:
    """ReBeL's test-time search as a player, exactly as its evaluation plays (mode (b)): a
    search starts every ``depth`` moves from the game's start (depth-limited linear CFR-D,
    the value net at the leaves), stops at a random iteration (even i < T with weight
    i/2 + 1), and the move is drawn from that iterate at the current position, which lies
    inside the last search's subgame. Its value net was trained on the positions where
    searches start, so it is asked nothing else."""

    def __init__(self, weights: str, m: int, n: int, k: int, iterations: int = DEFAULT_REBEL_ITERATIONS,
                 depth: int = 2, seed: int = 0) -> None:
        if iterations < 2 or depth < 1:
            raise ValueError(f"rebel player: iterations must be >= 2 and depth >= 1, got {iterations}, {depth}")
        self.name = f"rebel:{weights}:{iterations}"
        self.game = _core.make_game("mnk", {"m": m, "n": n, "k": k})
        if not os.path.isfile(weights):
            raise ValueError(f"rebel player: no weights file {weights!r}")
        self.net = _core.MlpValueNet(self.game, weights)  # ValueError for a net of another board
        self.iterations, self.depth = iterations, depth
        self.rng = np.random.default_rng(seed)

    def _stopping_iteration(self) -> int:
        count = (self.iterations + 1) // 2  # even half-steps 0, 2, ..., < T, weights 1, 2, ...
        weights = np.arange(1, count + 1, dtype=np.float64)
        return 2 * int(self.rng.choice(count, p=weights / weights.sum()))

    def moves(self, boards: Sequence["_core.MnkBoard"], games: Sequence[int]) -> List[int]:
        out = []
        for board in boards:
            history = list(board.history)
            start = len(history) - len(history) % self.depth  # where the protocol's last search began
            tree = _core.build_tree(self.game, history[:start], self.depth)
            solver = _core.SubgameSolver(self.game, tree, solver="lcfr", net=self.net)
            solver.run(self._stopping_iteration())
            policy = solver.current_policy()[:, 0]
            node = tree.find(history[start:])
            first = int(tree.first_child[node])
            probs = policy[first:first + int(tree.num_children[node])]
            choice = int(self.rng.choice(len(probs), p=probs / probs.sum()))
            out.append(int(tree.action[first + choice]))
        return out


def make_player(spec: str, m: int, n: int, k: int, seed: int = 0, inference: str = "native",
                precision: str = "auto") -> Player:
    """A player from its spec (see the module docstring); ValueError naming the problem.
    ``inference`` / ``precision``: what evaluates a ``net:`` player's leaves
    (:func:`rebel.alphazero.inference.make_evaluator`)."""
    if spec == "random":
        return RandomPlayer(seed)
    if spec == "perfect":
        return PerfectPlayer(m, n, k, seed)
    if spec.startswith("mcts:"):
        try:
            playouts = int(spec[5:])
        except ValueError:
            raise ValueError(f"{spec!r}: expected mcts:N with N an integer number of playouts") from None
        return RolloutPlayer(playouts, seed)
    if spec.startswith("net:"):
        from rebel.alphazero.net import load_net

        path, _, sims = spec[4:].rpartition(":") if spec.count(":") >= 2 else (spec[4:], "", "")
        try:
            simulations = int(sims) if sims else DEFAULT_NET_SIMULATIONS
        except ValueError:
            raise ValueError(f"{spec!r}: expected net:PATH[:SIMS] with SIMS an integer") from None
        net = load_net(path)
        if (net.m, net.n) != (m, n):
            raise ValueError(f"{path}: the net is for a {net.m} x {net.n} board, the game is {m} x {n}")
        from rebel.alphazero.inference import make_evaluator

        return NetPlayer(net, simulations, seed=seed, name=f"net:{path}:{simulations}",
                         evaluator=make_evaluator(net, inference, precision))
    if spec.startswith("rebel:"):
        path, _, iters = spec[6:].rpartition(":") if spec.count(":") >= 2 else (spec[6:], "", "")
        try:
            iterations = int(iters) if iters else DEFAULT_REBEL_ITERATIONS
        except ValueError:
            raise ValueError(f"{spec!r}: expected rebel:PATH[:ITERS] with ITERS an integer") from None
        return ReBeLPlayer(path, m, n, k, iterations, seed=seed)
    raise ValueError(f"unknown player {spec!r}: "
                     "expected net:PATH[:SIMS], rebel:PATH[:ITERS], mcts:N, perfect or random")
