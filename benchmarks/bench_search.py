"""ReBeL search throughput with the native 2 x 256 MLP value net.

Measures, on Liar's Dice 1x4f, depth 2, 1024 CFR-D iterations per subgame (the original
ReBeL code's protocol):

* subgames solved per second on 1 and 2 threads, (i) always at the root PBS (the largest
  subgame, 28 pseudo-leaves: the worst case) and (ii) along self-play-like episodes (the
  mix data generation sees); each thread runs its own solver, the threads share one
  immutable set of weights and the GIL is released while solving;
* the thread scaling 2 threads / 1 thread;
* the fraction of root-subgame leaf rows not sent to the net because the opponent
  reaches that leaf with mass exactly 0 at that iteration (depends on the net);
* the wall time of the sampled-mode (b) evaluation of 16 full-game policies on 2 threads.

The baseline is the original ReBeL code (libtorch CPU) measured on this class of machine:
7.7 subgames/s on one thread, 16.8 on two, 25 s for the 16-policy evaluation.

    python benchmarks/bench_search.py --out runs/bench_search.json
"""
from __future__ import annotations

import argparse
import threading
import time
from typing import Dict, Tuple

import numpy as np
import torch

import rebel
from rebel import _core
from rebel.cli.common import emit_report
from rebel.nets.value_mlp import ValueMLP, to_native

BASELINE = {"subgames_per_s_1_thread": 7.7, "subgames_per_s_2_threads": 16.8, "eval_16_policies_2_threads_s": 25.0}


def subgames_per_second(game, net, threads: int, iterations: int, seconds: float) -> Tuple[float, float]:
    """(subgames solved per second, fraction of leaf rows not sent to the net) for
    `threads` threads, each solving the root subgame."""
    tree = _core.build_tree(game, [], 2)
    counts = [0] * threads
    rows = [[0, 0] for _ in range(threads)]  # [queried, skipped] per thread
    deadline = time.perf_counter() + seconds

    def worker(slot: int) -> None:
        while time.perf_counter() < deadline:
            solver = _core.SubgameSolver(game, tree, solver="lcfr", net=net)
            solver.run(iterations)
            counts[slot] += 1
            rows[slot][0] += solver.leaf_queries
            rows[slot][1] += solver.leaf_queries_skipped

    start = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    rate = sum(counts) / (time.perf_counter() - start)
    queried, skipped = (sum(r[i] for r in rows) for i in (0, 1))
    return rate, skipped / max(1, queried + skipped)


def selfplay_subgames_per_second(game, net, threads: int, iterations: int, seconds: float) -> float:
    """Subgames per second along self-play-like episodes.

    Each episode starts at the initial PBS, solves the depth-2 subgame, moves to a
    pseudo-leaf drawn uniformly (beliefs updated with the final iterate) and repeats until
    a subgame has no pseudo-leaf. This is the mix of subgame sizes data generation sees.
    """
    trees: Dict[tuple, object] = {}
    lock = threading.Lock()

    def tree_for(history: tuple):
        with lock:
            if history not in trees:
                trees[history] = _core.build_tree(game, list(history), 2)
            return trees[history]

    counts = [0] * threads
    deadline = time.perf_counter() + seconds

    def worker(slot: int) -> None:
        rng = np.random.default_rng(slot)
        while time.perf_counter() < deadline:
            history: tuple = ()
            beliefs = [game.hand_prior.copy(), game.hand_prior.copy()]
            while True:
                tree = tree_for(history)
                solver = _core.SubgameSolver(game, tree, beliefs[0], beliefs[1], solver="lcfr", net=net)
                solver.run(iterations)
                counts[slot] += 1
                leaves = tree.pseudo_leaves
                if len(leaves) == 0 or time.perf_counter() >= deadline:
                    break
                leaf = int(leaves[rng.integers(len(leaves))])
                policy = solver.current_policy()
                path = []
                node = leaf
                while node != 0:
                    path.append(node)
                    node = int(tree.parent[node])
                for child in reversed(path):
                    actor = int(tree.player[int(tree.parent[child])])
                    beliefs[actor] = _core.bayes_update(beliefs[actor], np.ascontiguousarray(policy[child]))
                history = tuple(tree.history(leaf))

    start = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring window per thread count")
    parser.add_argument("--policies", type=int, default=16)
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args()

    torch.manual_seed(0)
    game = _core.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    net = to_native(ValueMLP.for_game(game, hidden=256, layers=2), game)

    one, skipped_fraction = subgames_per_second(game, net, 1, args.iterations, args.seconds)
    two, _ = subgames_per_second(game, net, 2, args.iterations, args.seconds)

    selfplay_one = selfplay_subgames_per_second(game, net, 1, args.iterations, args.seconds)
    selfplay_two = selfplay_subgames_per_second(game, net, 2, args.iterations, args.seconds)

    search = _core.TestTimeSearch(game, net, "lcfr", 2, args.iterations)
    start = time.perf_counter()
    search.evaluate_sampled(args.policies, threads=2, seed=0)
    eval_seconds = time.perf_counter() - start

    report: Dict[str, object] = {
        "benchmark": "search",
        "game": "liars_dice 1x4f",
        "depth": 2,
        "iterations": args.iterations,
        "net": "mlp 2x256 (native)",
        "mlp_isa": net.isa,
        "subgames_per_s_1_thread": one,
        "subgames_per_s_2_threads": two,
        "thread_scaling": two / one,
        # Rows of the root subgame's net batches left out because the opponent never
        # reaches that leaf at that iteration (their value is 0): depends on the net.
        "root_leaf_rows_skipped_fraction": skipped_fraction,
        "selfplay_subgames_per_s_1_thread": selfplay_one,
        "selfplay_subgames_per_s_2_threads": selfplay_two,
        "selfplay_thread_scaling": selfplay_two / selfplay_one,
        f"eval_{args.policies}_policies_2_threads_s": eval_seconds,
        "baseline_original_rebel": BASELINE,
        "root_speedup_vs_baseline_1_thread": one / BASELINE["subgames_per_s_1_thread"],
        "root_speedup_vs_baseline_2_threads": two / BASELINE["subgames_per_s_2_threads"],
        "selfplay_speedup_vs_baseline_1_thread": selfplay_one / BASELINE["subgames_per_s_1_thread"],
        "selfplay_speedup_vs_baseline_2_threads": selfplay_two / BASELINE["subgames_per_s_2_threads"],
        "rebel_version": rebel.__version__,
        "numpy": np.__version__,
    }
    if args.policies == 16:
        report["speedup_vs_baseline_eval_16"] = BASELINE["eval_16_policies_2_threads_s"] / eval_seconds
    emit_report(report, args.out)


if __name__ == "__main__":
    main()
