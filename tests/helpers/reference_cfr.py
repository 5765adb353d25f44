"""A deliberately plain NumPy re-implementation of linear CFR over a public tree.

Used only by the tests, as an independent check of the vectorised C++ solver: it walks
the tree with per-node loops and recomputes everything from scratch at every step.
"""
from __future__ import annotations

import numpy as np

from rebel import _core


def terminal_values(game, tree, node: int, player: int, opp_reach: np.ndarray) -> np.ndarray:
    return game.terminal_values(tree.history(node), player, opp_reach)


def reach(tree, policy: np.ndarray, player: int, root: np.ndarray) -> np.ndarray:
    out = np.zeros_like(policy)
    out[0] = root
    for n in range(len(tree)):
        for c in children(tree, n):
            out[c] = out[n] * (policy[c] if tree.player[n] == player else 1.0)
    return out


def children(tree, n: int) -> range:
    k = tree.num_children[n]
    return range(tree.first_child[n], tree.first_child[n] + k) if k else range(0)


def values(game, tree, policy: np.ndarray, player: int, opp_reach: np.ndarray) -> np.ndarray:
    v = np.zeros_like(policy)
    for n in reversed(range(len(tree))):
        if tree.kind[n] == int(_core.NodeKind.TERMINAL):
            v[n] = terminal_values(game, tree, n, player, opp_reach[n])
        elif tree.player[n] == player:
            v[n] = sum(policy[c] * v[c] for c in children(tree, n))
        else:
            v[n] = sum(v[c] for c in children(tree, n))
    return v


def linear_cfr(game, tree, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Returns (current, average) policies after `steps` alternating half-iterations."""
    prior = np.asarray(game.hand_prior)
    current = _core.uniform_policy(game, tree)
    regrets = np.zeros_like(current)
    weighted_sum = np.zeros_like(current)
    for p in (0, 1):  # the uniform policy enters the average once
        r = reach(tree, current, p, prior)
        for n in tree.decision_nodes:
            if tree.player[n] == p:
                for c in children(tree, n):
                    weighted_sum[c] = r[n] * current[c]
    updates = [0, 0]
    for step in range(steps):
        p = step % 2
        v = values(game, tree, current, p, reach(tree, current, 1 - p, prior))
        updates[p] += 1
        t = updates[p]
        for n in tree.decision_nodes:
            if tree.player[n] != p:
                continue
            for c in children(tree, n):
                regrets[c] += t * (v[c] - v[n])  # linear: regret of update t weighted by t
        for n in tree.decision_nodes:
            if tree.player[n] != p:
                continue
            kids = list(children(tree, n))
            pos = np.maximum(regrets[kids], 0.0)
            total = pos.sum(axis=0)
            current[kids] = np.where(total > 0, pos / np.where(total > 0, total, 1), 1.0 / len(kids))
        r = reach(tree, current, p, prior)
        for n in tree.decision_nodes:
            if tree.player[n] == p:
                for c in children(tree, n):
                    weighted_sum[c] += (t + 1) * r[n] * current[c]  # update t weighs t + 1
    average = np.zeros_like(current)
    for n in tree.decision_nodes:
        kids = list(children(tree, n))
        total = weighted_sum[kids].sum(axis=0)
        average[kids] = np.where(total > 0, weighted_sum[kids] / np.where(total > 0, total, 1), 1.0 / len(kids))
    return current, average
