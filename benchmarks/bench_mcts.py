"""MCTS simulations per second with the policy-value net, in one run: one position per net
call (one game searched at a time) against batched evaluation (many games searched side by
side, one net call per round), for each leaf evaluator: torch, and the C++ core's native
forward pass in float32 and (where the CPU has a bf16 kernel) bf16; plus pure random-rollout
MCTS for reference.

    python benchmarks/bench_mcts.py --out experiments/results/benchmarks/bench_mcts.json
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import torch
from _machine import cpu_name  # benchmarks/_machine.py (this script's folder is on sys.path)

from rebel import _core
from rebel.alphazero.inference import describe, make_evaluator
from rebel.alphazero.net import PolicyValueNet
from rebel.cli.common import emit_report


def searched_simulations_per_second(evaluate: Callable, m: int, n: int, k: int, games: int, simulations: int,
                                    repeats: int) -> dict[str, Any]:
    """Searches the empty board in `games` trees at once, `repeats` times; best of the repeats."""
    best = 0.0
    calls = 0
    for r in range(repeats):
        batch = _core.MctsBatch(m, n, k, num_games=games, simulations=simulations, reuse_tree=False, seed=r)
        start = time.perf_counter()
        batch.begin(list(range(games)), True)
        calls = 0
        while (selected := batch.select()) is not None:
            ids, planes = selected
            if len(ids):
                batch.evaluate(*evaluate(planes))
                calls += 1
        seconds = time.perf_counter() - start
        best = max(best, games * simulations / seconds)
    return {"games_side_by_side": games, "simulations_per_game": simulations, "net_calls": calls,
            "mean_batch": games * simulations / max(calls, 1), "simulations_per_s": best}


def rollout_simulations_per_second(m: int, n: int, k: int, playouts: int, repeats: int) -> float:
    best = 0.0
    for r in range(repeats):
        start = time.perf_counter()
        _core.mnk_rollout_search(_core.MnkBoard(m, n, k), playouts, seed=r)
        best = max(best, playouts / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board", default="6,6,4", help="m,n,k (default 6,6,4)")
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--simulations", type=int, default=200, help="per game and move searched")
    parser.add_argument("--games", type=int, default=64, help="games side by side in the batched run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", default="1,2", help="thread counts to measure (default 1,2)")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args()
    m, n, k = (int(x) for x in args.board.split(","))
    torch.manual_seed(0)
    net = PolicyValueNet(m, n, channels=args.channels, blocks=args.blocks).eval()
    choices = [("torch", "fp32"),
               ("native", "fp32")] + ([("native", "bf16")] if _core.mlp_supported_bf16_isas() else [])
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        for inference, precision in choices:
            evaluator = make_evaluator(net, inference, precision, threads=threads)
            one = searched_simulations_per_second(evaluator, m, n, k, 1, args.simulations, args.repeats)
            batched = searched_simulations_per_second(evaluator, m, n, k, args.games, args.simulations, args.repeats)
            rows.append({"threads": threads, "evaluator": describe(evaluator), "one_position_per_call": one,
                         "batched": batched,
                         "batched_speedup": batched["simulations_per_s"] / one["simulations_per_s"]})
    for row in rows:  # each evaluator against torch at the same thread count
        base = next(r for r in rows if r["threads"] == row["threads"] and r["evaluator"] == "torch")
        row["batched_vs_torch"] = row["batched"]["simulations_per_s"] / base["batched"]["simulations_per_s"]
        row["one_position_vs_torch"] = (row["one_position_per_call"]["simulations_per_s"]
                                        / base["one_position_per_call"]["simulations_per_s"])
    rollout = rollout_simulations_per_second(m, n, k, 2000, args.repeats)
    most = max(r["threads"] for r in rows)  # all the machine's cores, as training uses them
    judged = [r for r in rows if r["threads"] == most]
    report = {
        "benchmark": "mcts", "cpu": cpu_name(),
        "board": {"m": m, "n": n, "k": k}, "net": {"channels": args.channels, "blocks": args.blocks,
                                                   "parameters": sum(p.numel() for p in net.parameters())},
        "rows": rows,
        "goal": "batched >= 5x one position per call (same evaluator and threads; judged at the most threads measured)",
        "goal_met": {r["evaluator"]: bool(r["batched_speedup"] >= 5.0) for r in judged},
        "rollout_mcts_simulations_per_s": rollout,
        "protocol": "empty board, root noise on, no tree reuse, best of repeats; torch forward in eval mode; "
                    "native = rebel._core.ConvPolicyValueNet (BatchNorm folded)",
    }
    emit_report(report, args.out)


if __name__ == "__main__":
    main()
