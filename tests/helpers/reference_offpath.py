"""A literal, slow re-implementation of CFR with an infinitesimal eps, for the off-path tests.

The C++ solvers' off-path modes keep every reach as a leading-order term c * eps^k and
compute the eps -> 0 limit exactly (csrc/solvers/subgame_solver.h, OffPath). This module does the
opposite: it runs the algorithm with a real, tiny eps in arbitrary-exponent floating point
(mpmath: 1e-80 ** 10 does not underflow), per node and hand, so the two can be compared:

* ``rule="floor"`` is the original ReBeL code's arithmetic: regret matching is
  max(R, eps) / sum(max(R, eps)), and beliefs are normalised as (x + eps) / sum(x + eps);
* ``rule="tremble"`` is regret matching on positive regrets (uniform if none), where an
  action with no positive regret is played with probability eps, and beliefs are
  normalised plainly: with eps far below the working precision this is the conditional
  mode's limit.

With ``float32=True`` it also rounds as the original code does where it leaves double
precision: the probability that the last bid holds is a float (``compute_win_probability``)
and the net's values are scaled by the opponent's mass in a float tensor, so both vanish
where the reach is of order eps.

Only the CFR family (cfr, lcfr, dcfr) and Liar's Dice are covered (hands independent).
Root beliefs are used as given, not normalised (as the original's solver).
"""
from __future__ import annotations

import mpmath
import numpy as np

from rebel import _core

mpmath.mp.dps = 40
ZERO = mpmath.mpf(0)


def _children(tree, n: int) -> range:
    k = int(tree.num_children[n])
    return range(int(tree.first_child[n]), int(tree.first_child[n]) + k)


class LiteralCfr:
    """Alternating CFR over `tree` from `beliefs` with an explicit eps (see the module doc)."""

    def __init__(self, game, tree, solver: str, rule: str, eps, beliefs=None, net=None, float32: bool = False):
        assert solver in ("cfr", "lcfr", "dcfr") and rule in ("floor", "tremble")
        self.game, self.tree, self.solver, self.rule = game, tree, solver, rule
        self.float32 = float32
        self.eps = mpmath.mpf(eps)
        self.net = net
        self.H = H = game.num_hands
        self.n = len(tree)
        self.kind = [int(k) for k in tree.kind]
        self.player = [int(p) for p in tree.player]
        self.decision = [int(n) for n in tree.decision_nodes]
        self.hist = [tree.history(n) for n in range(self.n)]
        if beliefs is None:
            beliefs = (game.hand_prior, game.hand_prior)
        self.root = [[mpmath.mpf(float(x)) for x in b] for b in beliefs]
        # Terminal payoff matrices: u[p][z][h][h'] (exact: the game's values are linear).
        eye = np.eye(H)
        self.u = [{}, {}]
        for z in tree.terminal_nodes:
            for p in (0, 1):
                cols = [game.terminal_values(self.hist[z], p, eye[j]) for j in range(H)]
                self.u[p][int(z)] = [[float(cols[j][h]) for j in range(H)] for h in range(H)]
        self.current = [[ZERO] * H for _ in range(self.n)]
        for n in self.decision:
            kids = _children(tree, n)
            for c in kids:
                self.current[c] = [mpmath.mpf(1) / len(kids)] * H
        self.regrets = [[ZERO] * H for _ in range(self.n)]
        self.sum = [[ZERO] * H for _ in range(self.n)]
        for p in (0, 1):
            r = self.reach(p)
            for n in self.decision:
                if self.player[n] == p:
                    for c in _children(tree, n):
                        self.sum[c] = [r[n][h] * self.current[c][h] for h in range(H)]
        self.steps = [0, 0]
        self.root_mean = [[ZERO] * H, [ZERO] * H]

    def reach(self, p: int):
        r = [None] * self.n
        r[0] = list(self.root[p])
        for n in self.decision:
            for c in _children(self.tree, n):
                r[c] = [r[n][h] * self.current[c][h] for h in range(self.H)] if self.player[n] == p else list(r[n])
        return r

    def normalise(self, x):
        if self.rule == "floor":
            total = sum(v + self.eps for v in x)
            return [(v + self.eps) / total for v in x]
        total = sum(x)
        return [v / total for v in x] if total > 0 else [mpmath.mpf(1) / self.H] * self.H

    def step(self) -> None:
        H, tree = self.H, self.tree
        player = (self.steps[0] + self.steps[1]) % 2
        opp = 1 - player
        reach = [self.reach(0), self.reach(1)]
        ro = reach[opp]
        v = [None] * self.n
        for z in tree.terminal_nodes:
            z = int(z)
            u = self.u[player][z]
            if not self.float32:
                v[z] = [mpmath.fsum(u[h][j] * ro[z][j] for j in range(H)) for h in range(H)]
                continue
            # The original: P(bid holds) as a float, then +-(2 P - mass) for the bidder / caller.
            caller = self.player[int(tree.parent[z])]
            sign = -1 if player == caller else 1
            mass = mpmath.fsum(ro[z])
            v[z] = []
            for h in range(H):
                holds = mpmath.fsum(ro[z][j] for j in range(H) if sign * u[h][j] > 0)
                v[z].append(sign * (2 * mpmath.mpf(float(np.float32(float(holds)))) - mass))
        for leaf in tree.pseudo_leaves:
            leaf = int(leaf)
            b = [self.normalise(reach[0][leaf]), self.normalise(reach[1][leaf])]
            out = _core.net_values(self.net, self.game, [self.hist[leaf]], player,
                                   np.array([float(x) for x in b[0]]), np.array([float(x) for x in b[1]]))[0]
            mass = mpmath.fsum(ro[leaf])
            if self.float32:
                v[leaf] = [mpmath.mpf(float(np.float32(float(mass * float(np.float32(out[h])))))) for h in range(H)]
            else:
                v[leaf] = [mass * float(out[h]) for h in range(H)]
        for n in reversed(self.decision):
            kids = _children(tree, n)
            if self.player[n] != player:
                v[n] = [mpmath.fsum(v[c][h] for c in kids) for h in range(H)]
                continue
            v[n] = [mpmath.fsum(self.current[c][h] * v[c][h] for c in kids) for h in range(H)]
            for c in kids:
                self.regrets[c] = [self.regrets[c][h] + (v[c][h] - v[n][h]) for h in range(H)]
        self.steps[player] += 1
        t = self.steps[player]
        alpha = mpmath.mpf(1) / t if self.solver == "cfr" else mpmath.mpf(2) / (t + 1)
        self.root_mean[player] = [m + (v[0][h] - m) * alpha for h, m in enumerate(self.root_mean[player])]
        pos = neg = strat = mpmath.mpf(1)
        if self.solver == "lcfr":
            pos = neg = strat = mpmath.mpf(t) / (t + 1)
        elif self.solver == "dcfr":
            a, b = mpmath.mpf(t) ** mpmath.mpf(1.5), mpmath.mpf(1)
            pos, neg, strat = a / (a + 1), b / (b + 1), (mpmath.mpf(t) / (t + 1)) ** 2
        for n in self.decision:
            if self.player[n] != player:
                continue
            kids = list(_children(tree, n))
            for h in range(H):
                r = [self.regrets[c][h] for c in kids]
                if self.rule == "floor":
                    w = [x if x > self.eps else self.eps for x in r]
                    total = mpmath.fsum(w)
                    probs = [x / total for x in w]
                else:
                    w = [x if x > 0 else ZERO for x in r]
                    total = mpmath.fsum(w)
                    probs = ([x / total if x > 0 else self.eps for x in w] if total > 0
                             else [mpmath.mpf(1) / len(kids)] * len(kids))
                for c, p in zip(kids, probs):
                    self.current[c][h] = p
                    self.regrets[c][h] *= pos if self.regrets[c][h] > 0 else neg
        own = self.reach(player)
        for n in self.decision:
            if self.player[n] != player:
                continue
            for c in _children(tree, n):
                self.sum[c] = [self.sum[c][h] * strat + own[n][h] * self.current[c][h] for h in range(H)]

    def run(self, steps: int) -> "LiteralCfr":
        for _ in range(steps):
            self.step()
        return self

    def average_policy(self) -> np.ndarray:
        out = np.zeros((self.n, self.H))
        for n in self.decision:
            kids = list(_children(self.tree, n))
            for h in range(self.H):
                total = mpmath.fsum(self.sum[c][h] for c in kids)
                for c in kids:
                    out[c, h] = float(self.sum[c][h] / total) if total > 0 else 1.0 / len(kids)
        return out

    def current_policy(self) -> np.ndarray:
        return np.array([[float(x) for x in row] for row in self.current])

    def root_values(self, p: int) -> np.ndarray:
        return np.array([float(x) for x in self.root_mean[p]])
