"""How fast CFR-D at the root converges with oracle leaf values: mode (b) without sampling noise.

    python experiments/cfrd_rate.py [--dice 1] [--faces 4] [--depth 2] [--iters 256 1024 4096]
                                    [--leaf-iters 1024] [--oracle-iters N] [--oracle-solver lcfr]
                                    [--oracle-values root_mean] [--root-solver lcfr]
                                    [--off-path skip] [--out FILE]

Mode (b) of ``rebel eval`` (the paper's protocol) is a random process: its figure is the
exploitability of the reach-weighted average of N sampled policies, so sampling noise and
the bias of the method are mixed. This script removes the noise from a simplified
protocol, whose expectation it computes exactly:

* only the root subgame is depth-limited: CFR-D with the oracle value net, T half-iterations;
* every pseudo-leaf continues with the full-depth solver's linear average policy from the
  beliefs the root iterate induces there (the limit of playing a random iteration below it);
* the root iterate is the one mode (b) samples: after i = 2m half-iterations, weight m + 1.
  With ``--root-solver dcfr`` the root runs DCFR (1.5, 0, 2) instead and its iterates are
  mixed with DCFR's own averaging weights, (m + 1)^2; the continuations stay linear CFR.

``--off-path`` sets the off-path mode (csrc/solvers/subgame_solver.h) of every solver (root, oracle and
continuations); under ``floor`` or ``conditional`` a continuation starts from the beliefs
the root iterate induces as that mode forms them (``SubgameSolver.iterate_beliefs``), which
differ from the normalised reach only where the iterate's reach is 0.

The played policy is the exact reach-weighted mixture over m, so its exploitability is the
N -> infinity value of this "root-only" mode (b). The same computation with no depth limit
at the root (a mixture of full-game linear-CFR iterates) is printed beside it as the floor.
Both rows are deterministic. Prints one JSON object (and writes it to --out).
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

import numpy as np
from tqdm import tqdm

from rebel import _core
from rebel.cli.common import emit_report
from rebel.games import make
from rebel.search.solve import DEFAULT_OFF_PATH, OFF_PATH_MODES

log = logging.getLogger("cfrd_rate")


def reach_under(tree: _core.PublicTree, policy: np.ndarray, p: int, root_reach: np.ndarray) -> np.ndarray:
    """Player p's reach at every node of `tree` under `policy` ([node, hand]), from `root_reach`."""
    r = np.empty_like(policy)
    r[0] = root_reach
    parent, player = tree.parent, tree.player
    for c in range(1, tree.size):
        par = parent[c]
        r[c] = r[par] * policy[c] if player[par] == p else r[par]
    return r


def moves(tree: _core.PublicTree) -> list[int]:
    """Every node that is some decision node's child (the rows a policy is defined on)."""
    return [c for s in tree.decision_nodes for c in range(tree.first_child[s],
                                                          tree.first_child[s] + tree.num_children[s])]


class FullTreeTools:
    """Reach propagation and policy mixing on the full public tree (NumPy, [node, hand])."""

    def __init__(self, game: _core.Game):
        self.game = game
        self.tree = _core.build_tree(game)
        self.H = game.num_hands
        self.player = np.asarray(self.tree.player)
        self.first_child = np.asarray(self.tree.first_child)
        self.num_children = np.asarray(self.tree.num_children)
        self.prior = np.asarray(game.hand_prior, dtype=np.float64)
        self.uniform = np.array(_core.uniform_policy(game, self.tree), dtype=np.float64)

    def reach_weighted(self, policy: np.ndarray) -> np.ndarray:
        """policy[c, h] times the acting player's reach at parent(c): summing these over
        policies and normalising gives the behavioural mixture of the policies."""
        reach = [reach_under(self.tree, policy, p, self.prior) for p in (0, 1)]
        out = np.zeros_like(policy)
        for n in self.tree.decision_nodes:
            a, b = self.first_child[n], self.first_child[n] + self.num_children[n]
            out[a:b] = reach[self.player[n]][n] * policy[a:b]
        return out

    def normalise(self, summed: np.ndarray) -> np.ndarray:
        """The behavioural policy of summed reach-weighted rows (uniform where nothing was summed)."""
        policy = self.uniform.copy()
        for n in self.tree.decision_nodes:
            a, b = self.first_child[n], self.first_child[n] + self.num_children[n]
            total = summed[a:b].sum(axis=0)
            seen = total > 0
            policy[a:b, seen] = summed[a:b, seen] / total[seen]
        return policy


def subgame_to_full(full: _core.PublicTree, sub: _core.PublicTree, root: int) -> np.ndarray:
    """Full-tree node of every subgame node (children are stored in the same order)."""
    to_full = np.full(sub.size, -1)
    to_full[0] = root
    for s in sub.decision_nodes:
        for k in range(sub.num_children[s]):
            to_full[sub.first_child[s] + k] = full.first_child[to_full[s]] + k
    return to_full


def normalised(b: np.ndarray) -> np.ndarray:
    """Beliefs from a reach vector; uniform where the node is unreachable (any belief does)."""
    mass = b.sum()
    return b / mass if mass > 0 else np.full(len(b), 1.0 / len(b))


# Weight of the root iterate after 2m half-iterations in the mixture: the weight the solver's
# own average gives it (linear CFR and linear FP: m + 1, which is also how mode (b) samples;
# DCFR with gamma = 2: (m + 1)^2). FP's "iterate" is its running average (what it plays).
ITERATE_WEIGHT_POWER = {"lcfr": 1, "lfp": 1, "dcfr": 2}
# Solver of every continuation below a pseudo-leaf, whatever the root runs.
CONTINUATION_SOLVER = "lcfr"


class RootOnlyPlay:
    """The played policy of root-only mode (b) (and mode (a)) on the full tree.

    The root subgame (depth-limited, leaf values from `net`) runs `root_solver`; at every
    pseudo-leaf play continues with CONTINUATION_SOLVER's linear average of a full-depth solve
    from the beliefs the root policy induces there."""

    def __init__(self, tools: FullTreeTools, net: _core.ValueNet | None, depth: int, leaf_iterations: int,
                 root_solver: str, off_path: str = DEFAULT_OFF_PATH):
        game, full = tools.game, tools.tree
        self.tools, self.leaf_iterations, self.off_path = tools, leaf_iterations, off_path
        self.root_tree = _core.build_tree(game, [], depth)
        self.to_full = subgame_to_full(full, self.root_tree, 0)
        self.root = _core.SubgameSolver(game, self.root_tree, None, None, root_solver,
                                        net if len(self.root_tree.pseudo_leaves) else None, off_path=off_path)
        self.power = ITERATE_WEIGHT_POWER[root_solver]
        self.leaves = list(self.root_tree.pseudo_leaves)
        self.leaf_trees = {leaf: _core.build_tree(game, self.root_tree.history(leaf), -1) for leaf in self.leaves}
        self.leaf_maps = {leaf: subgame_to_full(full, self.leaf_trees[leaf], full.find(self.root_tree.history(leaf)))
                          for leaf in self.leaves}
        self.internal = moves(self.root_tree)
        self.leaf_moves = {leaf: moves(self.leaf_trees[leaf]) for leaf in self.leaves}

    def full_policy(self, root_policy: np.ndarray, iterate: bool) -> np.ndarray:
        """The full-tree policy: `root_policy` in the root subgame, continuations below it.
        Under an off-path mode other than skip, a continuation below the current iterate
        (`iterate`) starts from the beliefs that mode forms (SubgameSolver.iterate_beliefs)."""
        tools = self.tools
        policy = tools.uniform.copy()
        policy[self.to_full[self.internal]] = root_policy[self.internal]
        reach = [reach_under(self.root_tree, root_policy, p, tools.prior) for p in (0, 1)]
        for leaf in self.leaves:
            if iterate and self.off_path != "skip":
                beliefs = [self.root.iterate_beliefs(leaf, p) for p in (0, 1)]
            else:
                beliefs = [normalised(reach[p][leaf]) for p in (0, 1)]
            below = _core.SubgameSolver(tools.game, self.leaf_trees[leaf], beliefs[0], beliefs[1], CONTINUATION_SOLVER,
                                        off_path=self.off_path)
            below.run(self.leaf_iterations)
            inner = self.leaf_moves[leaf]
            policy[self.leaf_maps[leaf][inner]] = np.asarray(below.average_policy())[inner]
        return policy

    def run(self, checkpoints: list[int], bar: tqdm, average_too: bool = False) -> dict[int, dict[str, Any]]:
        """Steps the root solver to max(checkpoints) and returns, at every checkpoint T, the
        exact exploitability of mode (b) with T half-iterations (the reach-weighted mixture of
        the iterates after 2m < T half-iterations, weights (m + 1)^power) and, with
        `average_too`, of mode (a) (the root's average policy after T half-iterations)."""
        tools = self.tools
        summed = np.zeros((tools.tree.size, tools.H))
        results: dict[int, dict[str, Any]] = {}
        wanted = set(checkpoints)
        for i in range(max(checkpoints)):
            if i % 2 == 0:
                m = i // 2
                policy = self.full_policy(np.asarray(self.root.current_policy()), iterate=True)
                summed += (m + 1.0) ** self.power * tools.reach_weighted(policy)
            self.root.step()
            bar.update(1)
            if i + 1 in wanted:
                results[i + 1] = self.evaluate(tools.normalise(summed), average_too)
        return results

    def evaluate(self, sampled: np.ndarray, average_too: bool) -> dict[str, Any]:
        """Exploitability of the mode (b) mixture `sampled` (and of mode (a) with `average_too`)."""
        game, full = self.tools.game, self.tools.tree
        result = _core.exploitability(game, full, sampled)
        out: dict[str, Any] = {"exploitability": result["exploitability"], "br_values": list(result["br_values"])}
        if average_too:
            average = self.full_policy(np.asarray(self.root.average_policy()), iterate=False)
            result = _core.exploitability(game, full, average)
            out["mode_a"] = {"exploitability": result["exploitability"], "br_values": list(result["br_values"])}
        return out


def root_only_expectation(tools: FullTreeTools, net: _core.ValueNet | None, depth: int, iterations: int,
                          leaf_iterations: int, root_solver: str, bar: tqdm,
                          off_path: str = DEFAULT_OFF_PATH) -> dict[str, Any]:
    """Exact exploitability of mode (b) when only the root subgame is depth-limited.

    The root runs `root_solver`; every continuation below a pseudo-leaf runs CONTINUATION_SOLVER."""
    play = RootOnlyPlay(tools, net, depth, leaf_iterations, root_solver, off_path)
    return play.run([iterations], bar)[iterations]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dice", type=int, default=1)
    p.add_argument("--faces", type=int, default=4)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--iters", type=int, nargs="+", default=[256, 1024, 4096],
                   help="half-iterations T of the root CFR-D (one row each)")
    p.add_argument("--leaf-iters", type=int, default=1024,
                   help="half-iterations of every continuation solve below a pseudo-leaf")
    p.add_argument("--oracle-iters", type=int, default=None,
                   help="half-iterations of every oracle solve (default: --leaf-iters)")
    p.add_argument("--oracle-solver", choices=("lcfr", "dcfr", "cfr+"), default="lcfr")
    p.add_argument("--oracle-values", choices=("root_mean", "best_response"), default="root_mean")
    p.add_argument("--root-solver", choices=tuple(ITERATE_WEIGHT_POWER), default="lcfr",
                   help="solver of the root subgame (both rows); its iterates are mixed with its own averaging weights")
    p.add_argument("--off-path", choices=OFF_PATH_MODES, default=DEFAULT_OFF_PATH,
                   help="off-path mode of every solver (root, oracle, continuations)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    if args.depth < 1:
        p.error("--depth must be >= 1")
    if args.oracle_iters is None:
        args.oracle_iters = args.leaf_iters
    if min(args.iters) < 1 or args.leaf_iters < 1 or args.oracle_iters < 1:
        p.error("--iters, --leaf-iters and --oracle-iters must be >= 1")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    game = make("liars_dice", num_dice=args.dice, num_faces=args.faces)
    tools = FullTreeTools(game)
    net = _core.OracleNet(game, args.oracle_solver, args.oracle_iters, args.oracle_values, off_path=args.off_path)
    rows = []
    for iterations in args.iters:
        row: dict[str, Any] = {"iterations": iterations}
        for name, depth, leaf_net in (("depth_limited", args.depth, net), ("no_depth_limit", -1, None)):
            start = time.perf_counter()
            with tqdm(total=iterations, desc=f"T={iterations} {name}", unit="step", file=sys.stderr,
                      leave=False) as bar:
                row[name] = root_only_expectation(tools, leaf_net, depth, iterations, args.leaf_iters,
                                                  args.root_solver, bar, args.off_path)
            row[name]["seconds"] = time.perf_counter() - start
        log.info("T=%d: depth %d root %.5f, no depth limit %.5f", iterations, args.depth,
                 row["depth_limited"]["exploitability"], row["no_depth_limit"]["exploitability"])
        rows.append(row)
    report = {
        "game": game.description(),
        "depth": args.depth,
        "oracle": {"solver": args.oracle_solver, "iterations": args.oracle_iters, "values": args.oracle_values},
        "root_solver": args.root_solver,
        "off_path": args.off_path,
        "continuation": {"solver": CONTINUATION_SOLVER, "iterations": args.leaf_iters, "policy": "linear average"},
        "rows": rows,
    }
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
