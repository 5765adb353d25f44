"""Why test-time search must play a random iteration: the average-policy variants measured.

    python experiments/mode_a_variants.py [--game kuhn] [--depths 1 2] [--iters 1024] [--repeats 256] [--out FILE]
    python experiments/mode_a_variants.py --game liars_dice --dice 1 --faces 3 --depths 2 --oracle-iters 256

With the oracle value net (exact leaf values) it evaluates exactly, at each depth limit:

* ``to_leaf``: mode (a) of ``rebel eval`` (``TestTimeSearch.average_policy``): each subgame's
  average policy is played at all its nodes, and new subgames start at its leaves from the
  beliefs that average induces;
* ``root_only``: the other variant of the original ReBeL code: a subgame is solved at
  every public state from the beliefs of the policy played so far, and only its root's
  average policy is kept;
* ``sampled``: mode (b), the paper's protocol (random iteration, linear weights), the
  reach-weighted average of ``--repeats`` sampled policies.

Neither average-policy variant is covered by the paper's safe-search theorem; this script
shows how far from an equilibrium they land. Prints one JSON object (and writes it to --out).
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

log = logging.getLogger("mode_a_variants")


def root_only_average_policy(game: _core.Game, net: _core.ValueNet, solver: str, depth: int,
                             iterations: int, bar: tqdm) -> np.ndarray:
    """Full-game policy from a depth-limited solve at every public state, keeping the root."""
    full = _core.build_tree(game)
    H = game.num_hands
    policy = np.array(_core.uniform_policy(game, full), dtype=np.float64)
    first_child, num_children, player = full.first_child, full.num_children, full.player

    def normalised(b: np.ndarray) -> np.ndarray:
        mass = b.sum()
        # A belief with no mass cannot be reached; any belief gives the same exploitability.
        return b / mass if mass > 0 else np.full(H, 1.0 / H)

    stack = [(0, np.array(game.hand_prior), np.array(game.hand_prior))]
    while stack:
        node, b0, b1 = stack.pop()
        if num_children[node] == 0:
            continue
        subgame = _core.build_tree(game, full.history(node), depth)
        s = _core.SubgameSolver(game, subgame, b0, b1, solver, net)
        s.run(iterations)
        bar.update(1)
        average = np.asarray(s.average_policy())
        sub_first = int(subgame.first_child[0])
        p = int(player[node])
        for k in range(int(num_children[node])):
            child = int(first_child[node]) + k
            policy[child] = average[sub_first + k]
            beliefs = [b0, b1]
            beliefs[p] = normalised(beliefs[p] * average[sub_first + k])
            stack.append((child, beliefs[0], beliefs[1]))
    return policy


def measure(game: _core.Game, depth: int, args: argparse.Namespace) -> dict[str, Any]:
    net = _core.OracleNet(game, args.oracle_solver, args.oracle_iters or args.iters)
    search = _core.TestTimeSearch(game, net, args.solver, depth, args.iters)
    tree = search.full_tree
    row: dict[str, Any] = {"depth": depth}
    start = time.perf_counter()
    row["to_leaf"] = _core.exploitability(game, tree, search.average_policy())["exploitability"]
    row["to_leaf_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    with tqdm(total=len(tree.decision_nodes), desc=f"root-only, depth {depth}", unit="subgame",
              file=sys.stderr, leave=False) as bar:
        policy = root_only_average_policy(game, net, args.solver, depth, args.iters, bar)
    row["root_only"] = _core.exploitability(game, tree, policy)["exploitability"]
    row["root_only_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    sampled = search.evaluate_sampled(args.repeats, threads=args.threads, seed=args.seed)
    row["sampled"] = dict(zip(sampled["num_policies"], sampled["exploitability"]))
    row["sampled_seconds"] = time.perf_counter() - start
    log.info("depth %d: to_leaf %.5f, root_only %.5f, sampled(N=%d) %.5f", depth, row["to_leaf"],
             row["root_only"], args.repeats, sampled["exploitability"][-1])
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", choices=["kuhn", "liars_dice"], default="kuhn")
    p.add_argument("--dice", type=int, default=1)
    p.add_argument("--faces", type=int, default=3)
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2])
    p.add_argument("--solver", choices=["lcfr", "lfp"], default="lcfr")
    p.add_argument("--iters", type=int, default=1024)
    p.add_argument("--oracle-solver", default="lcfr")
    p.add_argument("--oracle-iters", type=int, default=None, help="default: --iters")
    p.add_argument("--repeats", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    args = p.parse_args(argv)
    for name in ("iters", "repeats", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1")
    if min(args.depths) < 1:
        p.error("--depths must be >= 1")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    game = make("kuhn") if args.game == "kuhn" else make("liars_dice", num_dice=args.dice, num_faces=args.faces)
    report = {
        "game": game.description(),
        "solver": args.solver,
        "iterations": args.iters,
        "oracle": {"solver": args.oracle_solver, "iterations": args.oracle_iters or args.iters},
        "repeats": args.repeats,
        "rows": [measure(game, d, args) for d in args.depths],
    }
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
