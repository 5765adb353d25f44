"""AlphaZero self-play on m,n,k games: many games side by side on one MctsBatch (the net sees
a batch of leaves per round), root Dirichlet noise, visit-count policy targets, moves drawn
in proportion to the visits for the first ``temperature_moves`` moves of a game and the most
visited move after that, and the final result as every position's value target (for the
player to move there). Examples are augmented with the board's symmetries.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from rebel import _core

__all__ = ["SelfPlaySettings", "Examples", "self_play", "augment"]


@dataclass
class SelfPlaySettings:
    m: int
    n: int
    k: int
    games: int = 64                 # games played side by side
    simulations: int = 100          # MCTS simulations per move
    c_puct: float = 1.5
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    temperature_moves: int = 4      # moves drawn from the visit distribution, then the argmax


@dataclass
class Examples:
    """Positions (planes, float32 (N, 4, m, n)), search policies (float32 (N, m * n)) and
    results for the player to move (float32 (N,))."""

    planes: np.ndarray
    policies: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.values)


Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def self_play(evaluate: Evaluator, settings: SelfPlaySettings, seed: int,
              on_move: Optional[Callable[[int], None]] = None) -> tuple[Examples, dict[str, int]]:
    """Plays ``settings.games`` games of the evaluator against itself; returns their examples
    (one per move) and the results (``{"win0": .., "win1": .., "draw": ..}``).

    ``evaluate(planes) -> (priors, values)`` is the batched net (e.g. :func:`rebel.alphazero.net.predict`).
    """
    s = settings
    rng = np.random.default_rng(seed)
    batch = _core.MctsBatch(s.m, s.n, s.k, num_games=s.games, simulations=s.simulations, c_puct=s.c_puct,
                            dirichlet_alpha=s.dirichlet_alpha, dirichlet_fraction=s.dirichlet_fraction,
                            reuse_tree=True, seed=int(rng.integers(2**63)))
    records: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(s.games)]
    outcomes = {"win0": 0, "win1": 0, "draw": 0}
    active = list(range(s.games))
    moves_played = 0
    while active:
        batch.begin(active, True)
        while (selected := batch.select()) is not None:
            ids, planes = selected
            if len(ids):
                batch.evaluate(*evaluate(planes))
        still = []
        for g in active:
            board = batch.board(g)
            counts = batch.visit_counts(g).astype(np.float64)
            policy = counts / counts.sum()
            if board.moves_made < s.temperature_moves:
                move = int(rng.choice(len(policy), p=policy))
            else:
                best = np.flatnonzero(counts == counts.max())
                move = int(rng.choice(best))
            records[g].append((board.planes(), policy.astype(np.float32), board.to_move))
            batch.advance(g, move)
            moves_played += 1
            after = batch.board(g)
            if after.terminal:
                outcomes[after.outcome] += 1
            else:
                still.append(g)
        active = still
        if on_move is not None:
            on_move(moves_played)
    planes_out, policies_out, values_out = [], [], []
    for g in range(s.games):
        final = batch.board(g)
        for planes, policy, mover in records[g]:
            planes_out.append(planes)
            policies_out.append(policy)
            values_out.append(float(final.result_for(mover)))
    return Examples(np.stack(planes_out).astype(np.float32), np.stack(policies_out).astype(np.float32),
                    np.asarray(values_out, dtype=np.float32)), outcomes


def augment(examples: Examples, m: int, n: int) -> Examples:
    """Every example under each of the board's symmetries (8 on a square board)."""
    perms = _core.mnk_symmetries(m, n)
    count = len(examples)
    planes = examples.planes.reshape(count, -1, m * n)
    out_planes, out_policies = [], []
    for perm in perms:
        p = np.empty_like(planes)
        p[:, :, perm] = planes  # cell c moves to perm[c]
        q = np.empty_like(examples.policies)
        q[:, perm] = examples.policies
        out_planes.append(p.reshape(examples.planes.shape))
        out_policies.append(q)
    return Examples(np.concatenate(out_planes), np.concatenate(out_policies), np.tile(examples.values, len(perms)))
