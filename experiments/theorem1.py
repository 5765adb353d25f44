"""Theorem 1 of ReBeL checked: the infostate values are a supergradient of the PBS value.

    python experiments/theorem1.py [--pbs 12] [--eps 1e-3] [--games kuhn,1x4f,...] [--out DIR]
    python experiments/theorem1.py --quick          # the pipeline in well under a minute

For a PBS beta (a public state and both players' beliefs) let V_p(beta) = sum_h beta_p(h)
v_p(h | beta), where v_p are the per-hand values at an equilibrium of the subgame rooted at
beta. Extended to unnormalised beliefs of player p, V_p is concave, piecewise linear and
degree-1 homogeneous in beta_p, and v_p is a supergradient there; away from kinks, along
d_h = e_h - beta_p (which keeps beta_p on the simplex),

    (V_p(beta_p + eps d_h) - V_p(beta_p)) / eps = v_p(h | beta) - V_p(beta)

exactly for small eps. Values are in the core's convention (csrc/core/game.h): per hand,
counterfactual in the opponent's normalised beliefs (what the solvers' root values and the
value nets' outputs are); in Liar's Dice that is the expected payoff given the hand, in
Kuhn poker it carries the card-removal weight w(h, h') = 3/2.

Exact part: every subgame is solved exactly as a sequence-form linear program (HiGHS dual
simplex, scipy): the opponent's LP gives V_p and v_p(h) (its dual values at p's root
infosets), p's own LP gives V_p again (strong duality: the check V = sum beta v). The
tabular solvers cannot be the reference: DCFR, the fastest, reaches only ~1e-6 to 1e-5
exploitability in 16k iterations here, and a finite difference divides that error by eps.
DCFR is run beside the LP at every PBS (its subgame exploitability and the distance of its
root values from the LP's are reported), and on the first PBSs of each game the finite
difference is repeated with DCFR's values, to show what its precision does to the check.

Trained-net part: for each shipped net of these games (rebel/nets/pretrained), at random
PBSs and at PBSs of the held-out walk of its training config, V_theta = sum_h beta_p(h)
v_theta(h) with torch, its autograd directional derivative along d_h and the gap
|dV_theta/d eps - (v_theta(h) - V_theta)|, beside the net's error against the LP's values.

Writes theorem1.json and theorem1.md under --out (default experiments/results/theorem1).
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from rebel import _core
from rebel.games import game_from_config

log = logging.getLogger("theorem1")

FORMAT = 1
#: The games of the exact part: name -> game config.
GAMES: Dict[str, Dict[str, Any]] = {
    "kuhn": {"name": "kuhn"},
    "1x3f": {"name": "liars_dice", "num_dice": 1, "num_faces": 3},
    "1x4f": {"name": "liars_dice", "num_dice": 1, "num_faces": 4},
    "1x5f": {"name": "liars_dice", "num_dice": 1, "num_faces": 5},
    "1x6f": {"name": "liars_dice", "num_dice": 1, "num_faces": 6},
    "2x3f": {"name": "liars_dice", "num_dice": 2, "num_faces": 3},
}
DEFAULT_GAMES = ("kuhn", "1x4f", "1x5f", "1x6f", "2x3f")
#: The figure every checked PBS must meet (max |finite difference - (v(h) - V)|).
TARGET = 1e-6
#: HiGHS tolerances: far below TARGET * eps.
LP_TOLERANCE = 1e-10


# ------------------------------------------------------------------ exact subgame values

class SequenceForm:
    """The sequence form of a subgame without depth limit and without public chance.

    Player q's sequences are (node, hand) for every node whose parent is a q-decision node,
    plus one empty sequence per hand; a q-decision node and a hand make a q-infoset (the
    root's "empty" infoset per hand is row 0..H-1 of the constraints)."""

    def __init__(self, game: _core.Game, tree: _core.PublicTree):
        if len(tree.pseudo_leaves) or len(tree.chance_nodes):
            raise ValueError("SequenceForm needs a tree without depth limit and without public chance")
        self.game, self.tree, self.H = game, tree, int(game.num_hands)
        parent, player = np.asarray(tree.parent), np.asarray(tree.player)
        n = tree.size
        # block[q][node]: index of q's sequence block ending at node (0 = the empty sequence).
        self.block = np.zeros((2, n), dtype=np.int64)
        self.blocks = [1, 1]
        for c in range(1, n):
            for q in (0, 1):
                if player[parent[c]] == q:
                    self.block[q, c] = self.blocks[q]
                    self.blocks[q] += 1
                else:
                    self.block[q, c] = self.block[q, parent[c]]
        self.terminals = [int(z) for z in tree.terminal_nodes]
        eye = np.eye(self.H)
        # payoff[p][k][h, h']: player p's counterfactual payoff at terminal k for hands (h, h').
        self.payoff = [[np.column_stack([game.terminal_values(tree.history(z), p, eye[o]) for o in range(self.H)])
                        for z in self.terminals] for p in (0, 1)]
        self.constraints = [self._realisation(q) for q in (0, 1)]

    def _realisation(self, q: int) -> Any:
        """E with E x = e: x(empty, h) = 1; at a q-node, sum of the children's x = x(its block)."""
        from scipy import sparse

        tree, H = self.tree, self.H
        rows, cols, vals = list(range(H)), list(range(H)), [1.0] * H
        nodes = [int(s) for s in tree.decision_nodes if tree.player[s] == q]
        for k, s in enumerate(nodes):
            first = int(tree.first_child[s])
            for h in range(H):
                r = H * (k + 1) + h
                rows.append(r), cols.append(H * int(self.block[q, s]) + h), vals.append(-1.0)
                for c in range(first, first + int(tree.num_children[s])):
                    rows.append(r), cols.append(H * int(self.block[q, c]) + h), vals.append(1.0)
        return sparse.csr_matrix((vals, (rows, cols)), shape=(H * (len(nodes) + 1), H * self.blocks[q]))

    def payoff_matrix(self, p: int, beliefs: Sequence[np.ndarray]) -> Any:
        """A[s_p, s_o]: p's payoff per pair of sequences, weighted by both players' beliefs."""
        from scipy import sparse

        H, o = self.H, 1 - p
        rows, cols, vals = [], [], []
        hh = np.arange(H)
        for k, z in enumerate(self.terminals):
            m = beliefs[p][:, None] * self.payoff[p][k] * beliefs[o][None, :]
            r = H * int(self.block[p, z]) + hh
            c = H * int(self.block[o, z]) + hh
            rows.append(np.repeat(r, H)), cols.append(np.tile(c, H)), vals.append(m.reshape(-1))
        return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                 shape=(H * self.blocks[p], H * self.blocks[o]))

    def hand_values(self, p: int, beliefs: Sequence[np.ndarray]) -> Tuple[float, np.ndarray]:
        """(V_p, v_p) at an equilibrium, from the opponent's LP: min over its realisation plan y
        and p's infoset values w of sum_h w(root, h), with E_p^T w >= A y, F y = f, y >= 0.
        At the optimum w(root, h) = beliefs_p(h) v_p(h), p's best response per hand."""
        from scipy import sparse
        from scipy.optimize import linprog

        o = 1 - p
        a = self.payoff_matrix(p, beliefs)
        e, f = self.constraints[p], self.constraints[o]
        nw, ny = e.shape[0], f.shape[1]
        cost = np.zeros(nw + ny)
        cost[: self.H] = 1.0
        upper = sparse.hstack([-e.T, a]).tocsr()          # A y - E^T w <= 0
        equal = sparse.hstack([sparse.csr_matrix((f.shape[0], nw)), f]).tocsr()
        rhs = np.zeros(f.shape[0])
        rhs[: self.H] = 1.0
        bounds = [(None, None)] * nw + [(0, None)] * ny
        res = _linprog(linprog, cost, upper, np.zeros(upper.shape[0]), equal, rhs, bounds)
        w = res.x[: self.H]
        mass = np.asarray(beliefs[p], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):  # a hand of belief 0 has no value here
            return float(res.fun), np.where(mass > 0, w / np.where(mass > 0, mass, 1.0), np.nan)

    def value(self, p: int, beliefs: Sequence[np.ndarray]) -> float:
        """V_p from p's own LP: max over x and the opponent's infoset values z of f^T z with
        F^T z <= A^T x, E x = e, x >= 0 (equal to hand_values' V by strong duality)."""
        from scipy import sparse
        from scipy.optimize import linprog

        o = 1 - p
        a = self.payoff_matrix(p, beliefs)
        e, f = self.constraints[p], self.constraints[o]
        nx, nz = e.shape[1], f.shape[0]
        cost = np.zeros(nx + nz)
        cost[nx: nx + self.H] = -1.0
        upper = sparse.hstack([-a.T, f.T]).tocsr()         # F^T z - A^T x <= 0
        equal = sparse.hstack([e, sparse.csr_matrix((e.shape[0], nz))]).tocsr()
        rhs = np.zeros(e.shape[0])
        rhs[: self.H] = 1.0
        bounds = [(0, None)] * nx + [(None, None)] * nz
        res = _linprog(linprog, cost, upper, np.zeros(upper.shape[0]), equal, rhs, bounds)
        return -float(res.fun)


def _linprog(linprog: Any, cost: np.ndarray, a_ub: Any, b_ub: np.ndarray, a_eq: Any, b_eq: np.ndarray,
             bounds: List[Tuple[Optional[float], Optional[float]]]) -> Any:
    """scipy's HiGHS dual simplex at LP_TOLERANCE; RuntimeError unless it reports optimal."""
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs-ds",
                  options={"primal_feasibility_tolerance": LP_TOLERANCE,
                           "dual_feasibility_tolerance": LP_TOLERANCE})
    if res.status != 0:
        raise RuntimeError(f"LP not solved: {res.message}")
    return res


def perturbed(beliefs: Sequence[np.ndarray], p: int, h: int, eps: float) -> List[np.ndarray]:
    """Both players' beliefs with p's moved to beta_p + eps (e_h - beta_p) (still on the simplex)."""
    out = [np.array(b, dtype=np.float64) for b in beliefs]
    direction = -out[p]
    direction[h] += 1.0
    out[p] = out[p] + eps * direction
    return out


# ------------------------------------------------------------------ random PBSs

@dataclass
class Pbs:
    """A public state (history from the game's start) and both players' normalised beliefs."""

    history: List[int]
    beliefs: List[np.ndarray]
    source: str  # "random" or "heldout"

    def as_dict(self) -> Dict[str, Any]:
        return {"history": self.history, "beliefs": [b.tolist() for b in self.beliefs], "source": self.source}


def random_pbs(game: _core.Game, full: _core.PublicTree, rng: np.random.Generator, root: bool) -> Pbs:
    """The root (``root``) or a uniformly drawn non-terminal public state of the full tree, with
    Dirichlet(1) beliefs for both players (strictly positive, normalised)."""
    nodes = [int(n) for n in full.decision_nodes]
    node = 0 if root else nodes[int(rng.integers(len(nodes)))]
    beliefs = [rng.dirichlet(np.ones(game.num_hands)) for _ in range(2)]
    return Pbs(list(full.history(node)), beliefs, "random")


# ------------------------------------------------------------------ the exact check

def dcfr_solve(game: _core.Game, tree: _core.PublicTree, beliefs: Sequence[np.ndarray],
               iterations: int) -> Tuple[_core.SubgameSolver, float]:
    """DCFR(1.5, 0, 2) on the subgame for ``iterations`` half-iterations and its exploitability."""
    solver = _core.SubgameSolver(game, tree, beliefs[0], beliefs[1], solver="dcfr")
    solver.run(iterations)
    report = _core.subgame_exploitability(game, tree, solver.average_policy(), beliefs[0], beliefs[1])
    return solver, float(report["exploitability"])


def dcfr_value(game: _core.Game, tree: _core.PublicTree, beliefs: Sequence[np.ndarray], p: int,
               iterations: int) -> Tuple[float, np.ndarray]:
    """(sum_h beta_p(h) v_p(h), v_p) with v_p DCFR's root values (its mean of iterates)."""
    solver, _ = dcfr_solve(game, tree, beliefs, iterations)
    v = np.asarray(solver.root_values(p), dtype=np.float64)
    return float(beliefs[p] @ v), v


def check_pbs(game: _core.Game, pbs: Pbs, eps: float, eps_large: float, dcfr_iterations: int,
              dcfr_fd: bool) -> Dict[str, Any]:
    """Theorem 1 at one PBS for both players: the LP's finite differences at ``eps`` against
    v(h) - V, V = sum beta v (the two LPs), the supergradient inequality
    V(beta + eps_large d_h) <= V + eps_large (v(h) - V) and DCFR beside it."""
    tree = _core.build_tree(game, pbs.history)
    form = SequenceForm(game, tree)
    solver, exploitability = dcfr_solve(game, tree, pbs.beliefs, dcfr_iterations)
    out: Dict[str, Any] = {"pbs": pbs.as_dict(), "nodes": tree.size, "dcfr_exploitability": exploitability,
                           "players": []}
    for p in (0, 1):
        value, v = form.hand_values(p, pbs.beliefs)
        primal = form.value(p, pbs.beliefs)
        fd = np.array([(form.hand_values(p, perturbed(pbs.beliefs, p, h, eps))[0] - value) / eps
                       for h in range(game.num_hands)])
        large = np.array([(form.hand_values(p, perturbed(pbs.beliefs, p, h, eps_large))[0] - value) / eps_large
                          for h in range(game.num_hands)])
        dcfr_v = np.asarray(solver.root_values(p), dtype=np.float64)
        row: Dict[str, Any] = {
            "player": p, "value": value, "hand_values": v.tolist(), "finite_differences": fd.tolist(),
            "max_fd_error": float(np.max(np.abs(fd - (v - value)))),
            "sum_check": abs(primal - float(pbs.beliefs[p] @ v)),
            # > 0 would break the supergradient inequality V(b') <= V + eps (v - V)
            "concavity_violation": float(np.max(fd - (v - value))),
            "concavity_violation_large": float(np.max(large - (v - value))),
            # hands whose segment of length eps_large crosses a kink (the FD there is below v - V)
            "kinks_within_large": int(np.sum(np.abs(large - (v - value)) > TARGET)),
            "dcfr_max_value_error": float(np.max(np.abs(dcfr_v - v))),
        }
        if dcfr_fd:
            base = float(pbs.beliefs[p] @ dcfr_v)
            dfd = np.array([(dcfr_value(game, tree, perturbed(pbs.beliefs, p, h, eps), p, dcfr_iterations)[0] - base)
                            / eps for h in range(game.num_hands)])
            row["dcfr_max_fd_error"] = float(np.max(np.abs(dfd - (dcfr_v - base))))
        out["players"].append(row)
    return out


def exact_part(name: str, args: argparse.Namespace, bar: tqdm) -> Dict[str, Any]:
    """Theorem 1 on ``args.pbs`` random PBSs of game ``name`` (the first at the root)."""
    game = game_from_config(GAMES[name])
    full = _core.build_tree(game)
    rng = np.random.default_rng([args.seed, list(GAMES).index(name)])
    rows = []
    start = time.perf_counter()
    for i in range(args.pbs):
        pbs = random_pbs(game, full, rng, root=i == 0)
        rows.append(check_pbs(game, pbs, args.eps, args.eps_large, args.dcfr_iterations, i < args.dcfr_fd))
        bar.update(1)
    players = [r for row in rows for r in row["players"]]
    summary = {
        "game": game.description(), "pbs": len(rows), "eps": args.eps,
        "max_fd_error": max(r["max_fd_error"] for r in players),
        "max_sum_check": max(r["sum_check"] for r in players),
        "max_concavity_violation": max(r["concavity_violation"] for r in players),
        "eps_large": args.eps_large,
        "max_concavity_violation_large": max(r["concavity_violation_large"] for r in players),
        "kinks_within_large": sum(r["kinks_within_large"] for r in players),
        "hands_checked": len(players) * game.num_hands,
        "max_nodes": max(r["nodes"] for r in rows),
        "dcfr_iterations": args.dcfr_iterations,
        "dcfr_exploitability": {"min": min(r["dcfr_exploitability"] for r in rows),
                                "max": max(r["dcfr_exploitability"] for r in rows)},
        "dcfr_max_value_error": max(r["dcfr_max_value_error"] for r in players),
        "dcfr_max_fd_error": max((r["dcfr_max_fd_error"] for r in players if "dcfr_max_fd_error" in r),
                                 default=None),
        "seconds": time.perf_counter() - start,
    }
    summary["meets_target"] = summary["max_fd_error"] <= TARGET
    log.info("%s: max |FD - (v - V)| %.2e over %d PBSs x 2 players (DCFR's %s)", name, summary["max_fd_error"],
             len(rows), summary["dcfr_max_fd_error"])
    return {"summary": summary, "rows": rows}


# ------------------------------------------------------------------ the trained nets

def shipped_nets(games: Sequence[str]) -> List[Tuple[str, str, Any]]:
    """(game key, net name, Pretrained entry) of every shipped net of a game in ``games``."""
    from rebel.nets import pretrained

    out = []
    for net in pretrained.available():
        key = next((k for k in games if GAMES[k] == net.game), None)
        if key is not None:
            out.append((key, net.name, net))
    return out


def heldout_pbs(game: _core.Game, net: Any, count: int) -> List[Pbs]:
    """The first ``count`` PBSs of the held-out walk of the net's training config (the PBSs its
    training run measured held-out error on)."""
    from rebel.cli.train import configs_dir
    from rebel.config.train import load_train_config
    from rebel.train.evaluation import heldout_walk

    name, *overrides = net.config.split()
    config = load_train_config(str(configs_dir() / f"{name}.yaml"), overrides)
    walk = heldout_walk(game, config)
    return [Pbs(list(history), [np.asarray(b, dtype=np.float64) for b in beliefs], "heldout")
            for history, beliefs, _step in itertools.islice(walk, count)]


def net_consistency(model: Any, game: _core.Game, pbs: Pbs, p: int) -> Tuple[np.ndarray, np.ndarray, float]:
    """(v_theta, dV_theta/d eps along every d_h, V_theta) for player ``p`` at ``pbs`` (float64 torch).

    V_theta(beta) = sum_h beta_p(h) v_theta(h | beta) with beta_p both the weights and the net's
    input; the directional derivative along d_h = e_h - beta_p is grad . d_h (d_h sums to 0, so
    beta_p stays normalised, as the net's input must be)."""
    import torch

    history = pbs.history
    head = torch.tensor([float(game.player_to_act(history)), float(p)], dtype=torch.float64)
    features = torch.from_numpy(np.asarray(game.public_features(history), dtype=np.float64))
    beliefs = [torch.tensor(b, dtype=torch.float64, requires_grad=(q == p)) for q, b in enumerate(pbs.beliefs)]
    row = torch.cat([head, features, beliefs[0], beliefs[1]])[None, :]
    v = model(row)[0]
    value = beliefs[p] @ v
    (grad,) = torch.autograd.grad(value, beliefs[p])
    g = grad.detach().numpy()
    b = pbs.beliefs[p]
    directional = g - g @ b  # grad . (e_h - beta_p) for every h
    return v.detach().numpy(), directional, float(value.detach())


def at_kink(form: SequenceForm, beliefs: Sequence[np.ndarray], p: int, value: float, eps: float) -> bool:
    """Whether V_p has a kink at ``beliefs`` along some d_h of a hand of positive belief: the
    one-sided finite differences at +eps and -eps differ by more than TARGET (there the
    per-hand values are one supergradient of several, and a net's values need not match them)."""
    for h in np.flatnonzero(beliefs[p] > 0):
        up = (form.hand_values(p, perturbed(beliefs, p, int(h), eps))[0] - value) / eps
        down = (value - form.hand_values(p, perturbed(beliefs, p, int(h), -eps))[0]) / eps
        if abs(up - down) > TARGET:
            return True
    return False


def net_part(key: str, name: str, entry: Any, args: argparse.Namespace, bar: tqdm) -> Dict[str, Any]:
    """Consistency gap and error of the shipped net ``name`` at random and held-out PBSs."""
    from rebel.nets.value_mlp import load_weights

    game = game_from_config(GAMES[key])
    model = load_weights(entry.path).double().eval()
    full = _core.build_tree(game)
    rng = np.random.default_rng([args.seed, 1000 + list(GAMES).index(key)])
    sets = {"random": [random_pbs(game, full, rng, root=i == 0) for i in range(args.net_pbs)],
            "heldout": heldout_pbs(game, entry, args.net_pbs)}
    out: Dict[str, Any] = {"net": name, "game": game.description(), "weights": entry.file}
    for kind, pbss in sets.items():
        gaps, errors, scale, kinks = [], [], [], 0
        for pbs in pbss:
            form = SequenceForm(game, _core.build_tree(game, pbs.history))
            for p in (0, 1):
                v_net, directional, value = net_consistency(model, game, pbs, p)
                exact_value, v_exact = form.hand_values(p, pbs.beliefs)
                known = pbs.beliefs[p] > 0  # the theorem and the LP give no value to a hand of belief 0
                gaps.append(np.abs(directional - (v_net - value))[known])
                errors.append(np.abs(v_net - v_exact)[known])
                scale.append(np.abs(v_exact)[known])
                kinks += int(at_kink(form, pbs.beliefs, p, exact_value, args.eps))
            bar.update(1)
        gap, err, mag = np.concatenate(gaps), np.concatenate(errors), np.concatenate(scale)
        out[kind] = {"pbs": len(pbss), "values": int(gap.size),
                     "gap_mean": float(gap.mean()), "gap_max": float(gap.max()),
                     "error_mean": float(err.mean()), "error_max": float(err.max()),
                     "exact_abs_mean": float(mag.mean()), "at_kink": kinks}
        log.info("net %s, %s PBSs: consistency gap mean %.3g max %.3g; error mean %.3g max %.3g", name, kind,
                 gap.mean(), gap.max(), err.mean(), err.max())
    return out


# ------------------------------------------------------------------ report

def markdown(report: Dict[str, Any]) -> str:
    """The two tables of docs/results.md's "Theorem 1" section."""
    a = report["args"]
    lines = [f"Exact part: {a['pbs']} random PBSs per game (the first at the root), both players, "
             f"eps = {a['eps']:g} (concavity also at {a['eps_large']:g}); LP = sequence-form linear program "
             f"(HiGHS); DCFR T = {a['dcfr_iterations']}.", "",
             "| game | PBSs | max nodes | max \\|FD - (v - V)\\| (LP) | max \\|V - sum beta v\\| | "
             f"max concavity excess (eps {a['eps']:g} / {a['eps_large']:g}) | kinks within {a['eps_large']:g} | "
             "DCFR exploitability | max \\|v_DCFR - v\\| | max \\|FD - (v - V)\\| (DCFR) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for key, g in report["exact"].items():
        s = g["summary"]
        dfd = "-" if s["dcfr_max_fd_error"] is None else f"{s['dcfr_max_fd_error']:.1e}"
        lines.append(f"| {key} | {s['pbs']} | {s['max_nodes']} | {s['max_fd_error']:.1e} | {s['max_sum_check']:.1e} | "
                     f"{s['max_concavity_violation']:.1e} / {s['max_concavity_violation_large']:.1e} | "
                     f"{s['kinks_within_large']} of {s['hands_checked']} | {s['dcfr_exploitability']['min']:.1e} .. "
                     f"{s['dcfr_exploitability']['max']:.1e} | {s['dcfr_max_value_error']:.1e} | {dfd} |")
    if report["nets"]:
        lines += ["", f"Trained nets: {a['net_pbs']} random and {a['net_pbs']} held-out-walk PBSs each, both players; "
                  "gap = \\|dV_theta/d eps along d_h - (v_theta(h) - V_theta)\\| (autograd), "
                  "error = \\|v_theta(h) - v(h)\\| against the LP.", "",
                  "| net | game | PBSs | gap mean | gap max | error mean | error max | mean \\|v\\| | "
                  "(PBS, player) at a kink |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for n in report["nets"]:
            for kind in ("random", "heldout"):
                r = n[kind]
                lines.append(f"| {n['net']} | {n['game']} | {r['pbs']} {kind} | {r['gap_mean']:.2e} | "
                             f"{r['gap_max']:.2e} | {r['error_mean']:.2e} | {r['error_max']:.2e} | "
                             f"{r['exact_abs_mean']:.3f} | {r['at_kink']} of {2 * r['pbs']} |")
    return "\n".join(lines) + "\n"


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", default=",".join(DEFAULT_GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    p.add_argument("--pbs", type=int, default=12, help="random PBSs per game (the first is the root)")
    p.add_argument("--eps", type=float, default=1e-3, help="step of the finite differences")
    p.add_argument("--eps-large", type=float, default=0.1, help="step of the second concavity check")
    p.add_argument("--dcfr-iterations", type=int, default=16384, help="DCFR half-iterations beside the LP")
    p.add_argument("--dcfr-fd", type=int, default=2, help="PBSs per game whose finite differences DCFR repeats")
    p.add_argument("--net-pbs", type=int, default=32, help="random and held-out PBSs per trained net")
    p.add_argument("--no-nets", action="store_true", help="skip the trained-net part")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="experiments/results/theorem1")
    p.add_argument("--quick", action="store_true", help="Kuhn and 1x4f, few PBSs: the pipeline in seconds")
    args = p.parse_args(argv)
    if args.quick:
        args.games, args.pbs, args.dcfr_iterations, args.dcfr_fd, args.net_pbs = "kuhn,1x4f", 3, 2048, 1, 4
    args.games = [g.strip() for g in args.games.split(",") if g.strip()]
    for g in args.games:
        if g not in GAMES:
            p.error(f"unknown game {g!r} (games: {', '.join(GAMES)})")
    for name in ("pbs", "dcfr_iterations", "net_pbs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if not (0 < args.eps < 1 and 0 < args.eps_large < 1):
        p.error("--eps and --eps-large must lie in (0, 1)")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    nets = [] if args.no_nets else shipped_nets(args.games)
    total = len(args.games) * args.pbs + 2 * args.net_pbs * len(nets)
    with tqdm(total=total, desc="theorem1", unit="pbs", file=sys.stderr, leave=False) as bar:
        exact = {g: exact_part(g, args, bar) for g in args.games}
        net_rows = [net_part(key, name, entry, args, bar) for key, name, entry in nets]
    report = {"format": FORMAT, "target": TARGET,
              "args": {k: v for k, v in vars(args).items() if k not in ("out", "no_nets")},
              "exact": exact, "nets": net_rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from rebel.util.atomic_io import atomic_write_bytes

    atomic_write_bytes(out / "theorem1.json", (json.dumps(report, indent=1) + "\n").encode())
    text = markdown(report)
    atomic_write_bytes(out / "theorem1.md", text.encode())
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
