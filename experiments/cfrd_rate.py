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

``--off-path`` sets the off-path mode (csrc/core/solver.h) of every solver (root, oracle and
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
from rebel.cli_common import emit_report
from rebel.games import make
from rebel.solve import DEFAULT_OFF_PATH, OFF_PATH_MODES

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
    return [c for s in tree.decision_nodes for c in range(tree.first_child[s], tree.first_child[s] + tree.num_children[s])]


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
# own average gives it (linear CFR: m + 1; DCFR with gamma = 2: (m + 1)^2).
ITERATE_WEIGHT_POWER = {"lcfr": 1, "dcfr": 2}
# Solver of every continuation below a pseudo-leaf, whatever the root runs.
CONTINUATION_SOLVER = "lcfr"


def root_only_expectation(tools: FullTreeTools, net: _core.ValueNet | None, depth: int, iterations: int,
                          leaf_iterations: int, root_solver: str, bar: tqdm,
                          off_path: str = DEFAULT_OFF_PATH) -> dict[str, Any]:
    """Exact exploitability of mode (b) when only the root subgame is depth-limited.

    The root runs `root_solver`; every continuation below a pseudo-leaf runs CONTINUATION_SOLVER."""
    game, full = tools.game, tools.tree
    root_tree = _core.build_tree(game, [], depth)
    to_full = subgame_to_full(full, root_tree, 0)
    root = _core.SubgameSolver(game, root_tree, None, None, root_solver,
                               net if len(root_tree.pseudo_leaves) else None, off_path=off_path)
    iterate_beliefs = off_path != "skip"
    power = ITERATE_WEIGHT_POWER[root_solver]
    leaves = [(leaf, root_tree.history(leaf)) for leaf in root_tree.pseudo_leaves]
    leaf_trees = {leaf: _core.build_tree(game, hist, -1) for leaf, hist in leaves}
    leaf_maps = {leaf: subgame_to_full(full, leaf_trees[leaf], full.find(hist)) for leaf, hist in leaves}
    internal = moves(root_tree)
    leaf_moves = {leaf: moves(leaf_trees[leaf]) for leaf, _ in leaves}
    summed = np.zeros((full.size, tools.H))
    for i in range(iterations):
        if i % 2 == 0:
            m = i // 2
            iterate = np.asarray(root.current_policy())
            policy = tools.uniform.copy()
            policy[to_full[internal]] = iterate[internal]
            reach = [reach_under(root_tree, iterate, p, tools.prior) for p in (0, 1)]
            for leaf, _ in leaves:
                if iterate_beliefs:
                    beliefs = [root.iterate_beliefs(leaf, p) for p in (0, 1)]
                else:
                    beliefs = [normalised(reach[p][leaf]) for p in (0, 1)]
                below = _core.SubgameSolver(game, leaf_trees[leaf], beliefs[0], beliefs[1], CONTINUATION_SOLVER,
                                            off_path=off_path)
                below.run(leaf_iterations)
                average = np.asarray(below.average_policy())
                inner = leaf_moves[leaf]
                policy[leaf_maps[leaf][inner]] = average[inner]
            summed += (m + 1.0) ** power * tools.reach_weighted(policy)
        root.step()
        bar.update(1)
    result = _core.exploitability(game, full, tools.normalise(summed))
    return {"exploitability": result["exploitability"], "br_values": list(result["br_values"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dice", type=int, default=1)
    p.add_argument("--faces", type=int, default=4)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--iters", type=int, nargs="+", default=[256, 1024, 4096],
                   help="half-iterations T of the root CFR-D (one row each)")
    p.add_argument("--leaf-iters", type=int, default=1024,
                   help="half-iterations of every continuation solve below a pseudo-leaf")
    p.add_argument("--oracle-iters", type=int, default=None, help="half-iterations of every oracle solve (default: --leaf-iters)")
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
