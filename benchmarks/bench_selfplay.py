"""Self-play data generation throughput, with the trainer running alongside, and where the
time goes.

Liar's Dice 1x4f, depth 2, T = 1024 linear CFR-D iterations per subgame, 2 x 256 MLP
(native forward), epsilon 0.25: the paper's setting. The real training components run:
``GenerationPool`` threads (each a Python episode loop around the C++ self-play step,
GIL released while solving) fill a ``ReplayBuffer`` while, in the "with trainer" case, a
``Trainer`` thread trains on it without pause (batch 512, torch with one thread). For 1 and
2 self-play threads the report gives examples/s and subgames/s (2 examples per subgame),
and the split of the loops' time: the value net's forward pass, the rest of the C++ solve,
and the Python loop (bookkeeping and replay adds) relative to the C++ time.

Every precision of the native net this CPU runs (fp32; bf16 with an AMX-BF16 or AVX512_BF16
kernel; int16 with AVX512_VNNI) runs side by side, case by case in the same run, and the
report gives each one's speed-up over fp32.

Baseline: the original ReBeL's data generation on this machine class (libtorch CPU):
7.7 subgames/s on one thread, 16.8 on two. Goal: at least 3x the baseline per
thread with training alongside, the Python loop at most 10% over the C++ time.

    python benchmarks/bench_selfplay.py --out runs/bench_selfplay.json
"""
from __future__ import annotations

import argparse
import threading
import time
from typing import Any, Optional

import numpy as np
import torch
from _machine import cpu_name  # benchmarks/_machine.py (this script's folder is on sys.path)

import rebel
from rebel import _core
from rebel.cli.common import emit_report
from rebel.config.train import TrainerSection
from rebel.nets.value_mlp import ValueMLP, weights_to_bytes
from rebel.search.selfplay import GenerationPool, SelfPlayLoop
from rebel.train.replay import ReplayBuffer
from rebel.train.trainer import Trainer

BASELINE = {"subgames_per_s_1_thread": 7.7, "subgames_per_s_2_threads": 16.8}
GOAL_PER_THREAD_FACTOR = 3.0
GOAL_LOOP_OVERHEAD = 0.10


def measure(game: Any, net: Any, threads: int, iterations: int, seconds: float, with_trainer: bool) -> dict:
    """Runs the pool (and a trainer) for `seconds` after a warm-up; returns rates and the split."""
    # Every step solves its subgame (the rate of subgame solves against the original's); the
    # reuse of the initial PBS's solve is measured by bench_selfplay_reuse.py.
    generator = _core.SelfPlayGenerator(game, net, depth=2, iterations=iterations, epsilon=0.25,
                                        reuse_initial_solve=False)
    loops = [SelfPlayLoop(game, generator, np.random.SeedSequence([0, i])) for i in range(threads)]
    buffer = ReplayBuffer(1_000_000, int(game.query_size), int(game.num_hands))
    pool = GenerationPool(loops, buffer.add)
    pool.start(0)
    pool.allow(10**12)
    torch.set_num_threads(1)
    trainer = Trainer(ValueMLP.for_game(game), TrainerSection(epoch_examples=512 * 10))
    stop = threading.Event()
    trainer_stats = {"batches": 0, "seconds": 0.0}

    def train_forever() -> None:
        rng = np.random.default_rng(0)
        while not stop.is_set():
            if buffer.added < 512:
                time.sleep(0.01)
                continue
            start = time.perf_counter()
            trainer.train_epoch(lambda n: buffer.sample(n, rng))
            trainer_stats["seconds"] += time.perf_counter() - start
            trainer_stats["batches"] += 10

    trainer_thread: Optional[threading.Thread] = None
    if with_trainer:
        trainer_thread = threading.Thread(target=train_forever, daemon=True)
        trainer_thread.start()
    time.sleep(min(2.0, seconds / 5))  # warm-up: trees built, caches filled
    before, generated_before, t0 = pool.stats(), pool.generated(), time.perf_counter()
    batches_before, train_s_before = trainer_stats["batches"], trainer_stats["seconds"]
    time.sleep(seconds)
    after, generated_after, t1 = pool.stats(), pool.generated(), time.perf_counter()
    batches_after, train_s_after = trainer_stats["batches"], trainer_stats["seconds"]
    stop.set()
    pool.stop(cancel_running=True)
    if trainer_thread is not None:
        trainer_thread.join()
    wall = t1 - t0
    step_s = after.step_seconds - before.step_seconds
    net_s = after.net_seconds - before.net_seconds
    loop_s = after.loop_seconds - before.loop_seconds
    examples = generated_after - generated_before
    out = {
        "precision": net.precision,
        "isa": net.isa,
        "threads": threads,
        "with_trainer": with_trainer,
        "examples_per_s": examples / wall,
        "subgames_per_s": examples / 2 / wall,
        "subgames_per_s_per_thread": examples / 2 / wall / threads,
        "time_split": {  # fractions of the loops' busy time
            "net_forward": net_s / loop_s,
            "solve_other": (step_s - net_s) / loop_s,
            "python_loop": (loop_s - step_s) / loop_s,
        },
        "python_loop_over_cpp": (loop_s - step_s) / step_s,
        "episodes": after.episodes - before.episodes,
    }
    if with_trainer:
        out["trainer_batches_per_s"] = (batches_after - batches_before) / wall
        out["trainer_busy_fraction"] = (train_s_after - train_s_before) / wall
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=20.0, help="measuring window per case")
    parser.add_argument("--weights", help="an exported net to use instead of the random-init 2x256 MLP")
    runnable = ["fp32"] + (["bf16"] if _core.mlp_supported_bf16_isas() else []) + \
        (["int16"] if _core.mlp_supported_int16_isas() else [])
    parser.add_argument("--precisions", nargs="+", choices=("fp32", "bf16", "int16"), default=runnable,
                        help=f"native net precisions to compare (default here: {' '.join(runnable)})")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args()

    torch.manual_seed(0)
    game = _core.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    data = open(args.weights, "rb").read() if args.weights else weights_to_bytes(ValueMLP.for_game(game))
    nets = {p: _core.MlpValueNet(game, data, precision=p) for p in args.precisions}
    # Precisions alternate within each case, so that drift in machine load hits them alike.
    cases = [measure(game, nets[p], threads, args.iterations, args.seconds, with_trainer)
             for threads in (1, 2) for with_trainer in (False, True) for p in args.precisions]
    by = {(c["threads"], c["with_trainer"]): c for c in cases if c["precision"] == args.precisions[0]}
    def rate(t: int, w: bool, p: str) -> float:
        return next(c["subgames_per_s"] for c in cases
                    if (c["threads"], c["with_trainer"], c["precision"]) == (t, w, p))

    speedups = [{"threads": t, "with_trainer": w,
                 **{f"{p}_over_fp32": rate(t, w, p) / rate(t, w, "fp32") for p in args.precisions if p != "fp32"}}
                for t in (1, 2) for w in (False, True)] \
        if "fp32" in args.precisions and len(args.precisions) > 1 else []
    per_thread_goal = GOAL_PER_THREAD_FACTOR * BASELINE["subgames_per_s_1_thread"]
    report = {
        "benchmark": "selfplay",
        "game": "liars_dice 1x4f",
        "depth": 2,
        "iterations": args.iterations,
        "net": args.weights or "mlp 2x256 random init (native)",
        "cpu": cpu_name(),
        "cases": cases,
        "speedup_over_fp32": speedups,
        "baseline_original_rebel": BASELINE,
        "baseline_precision": args.precisions[0],
        "speedup_vs_baseline_1_thread_with_trainer":
            by[(1, True)]["subgames_per_s"] / BASELINE["subgames_per_s_1_thread"],
        "speedup_vs_baseline_2_threads_with_trainer":
            by[(2, True)]["subgames_per_s"] / BASELINE["subgames_per_s_2_threads"],
        "goal_subgames_per_s_per_thread": per_thread_goal,
        "goal_met_per_thread": all(by[(t, True)]["subgames_per_s_per_thread"] >= per_thread_goal for t in (1, 2)),
        "goal_met_python_loop": all(c["python_loop_over_cpp"] <= GOAL_LOOP_OVERHEAD for c in cases),
        "rebel_version": rebel.__version__,
        "torch": torch.__version__,
    }
    emit_report(report, args.out)


if __name__ == "__main__":
    main()
