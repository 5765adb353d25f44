"""Self-play on Ray against the threads backend on the same cores, what travels per epoch, and
a scaling model for clusters of 2-core machines.

1. Overhead (one machine): the real training loop (``Training``: lockstep self-play, replay,
   trainer, weight swaps; evaluation off) runs ``--epochs`` epochs of Liar's Dice 1x4f with
   the shipped config, with two self-play loops in three layouts: two threads in this process,
   two Ray actors of one loop, one Ray actor of two loops. Examples/s counts the epochs after
   the warm-up ones; layouts alternate over ``--repeats`` rounds so drift hits them alike.
2. Multi-raylet check: the two-actor layout again on Ray's test cluster (two raylets of one
   CPU on this machine), against the model's prediction from the measured rates.
3. Per epoch on the network: the weights (one object per swap, fetched once per machine) and
   the examples (back to the driver), computed from each Table 2 game's config and net, and
   the measured object-store put/get times of those sizes.
4. Scaling model, per Table 2 game, for 1, 4, 16 and 64 machines of 2 cores (one loop per
   core) with the trainer on the driver: an epoch takes max(G / (2 M r), t_train) plus the
   swap and collection costs, with r (examples/s per loop) and t_train (trainer seconds per
   epoch) measured here by a short threads run of the game.

    python benchmarks/bench_ray.py --out experiments/results/benchmarks/bench_ray.json
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _machine import cpu_name  # benchmarks/_machine.py (this script's folder is on sys.path)

import rebel
from rebel.cli.common import emit_report

REPO = Path(__file__).resolve().parent.parent
GAMES = {"1x4f": "liars_dice_1x4f", "1x5f": "liars_dice_1x5f", "1x6f": "liars_dice_1x6f", "2x3f": "liars_dice_2x3f"}
LAYOUTS = {
    "threads 2": ["selfplay.backend=threads", "selfplay.threads=2"],
    "ray 2 actors x 1 loop": ["selfplay.backend=ray", "ray.workers=2", "selfplay.threads=1"],
    "ray 1 actor x 2 loops": ["selfplay.backend=ray", "ray.workers=1", "selfplay.threads=2"],
}
QUIET = ["evaluation.every=0", "evaluation.final=false", "evaluation.references=false",
         "evaluation.heldout_steps=0", "run.checkpoint_every=100000", "run.progress=false"]
log = logging.getLogger("bench_ray")
NETWORK_BYTES_PER_S = 1.25e9  # assumption of the model: 10 Gbit/s Ethernet between machines
MACHINES = (1, 4, 16, 64)


def run_training(config: str, overrides: list[str], epochs: int) -> dict[str, Any]:
    """Trains ``epochs`` epochs in a temporary run directory; returns rates from metrics.jsonl."""
    from rebel.config.train import load_train_config, to_yaml
    from rebel.train.run import Training
    from rebel.train.rundir import RunDirectory

    cfg = load_train_config(str(REPO / "configs" / f"{config}.yaml"), [*QUIET, f"run.epochs={epochs}", *overrides])
    log.info("%s %s: %d epochs", config, " ".join(overrides), epochs)
    with tempfile.TemporaryDirectory() as tmp:
        training = Training(cfg, RunDirectory.create(Path(tmp) / "run", to_yaml(cfg)), show_progress=False)
        training.run()
        rows = [json.loads(line) for line in (Path(tmp) / "run" / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("kind") is None and r.get("epoch", 0) >= 1]
    warm = min(2, len(rows) - 2)
    a, b = rows[warm], rows[-1]
    return {
        "examples_per_s": (b["examples_generated"] - a["examples_generated"]) / (b["wall_seconds"] - a["wall_seconds"]),
        "train_seconds_per_epoch": statistics.mean(r["train_seconds"] for r in rows[warm + 1:]),
        "epochs_measured": len(rows) - warm - 1,
        "examples_per_epoch": rows[1]["examples_generated"] - rows[0]["examples_generated"],
        "weight_puts": getattr(training.pool, "weight_puts", None),
        "net_isa": rows[-1]["net_isa"],
    }


def object_store_costs(sizes: dict[str, int], reps: int = 20) -> dict[str, float]:
    """Seconds of one ray.put and of one ray.get (another process's copy) of each size."""
    import ray

    @ray.remote(num_cpus=0)
    def touch(x: Any) -> int:
        return len(x)

    out = {}
    for name, size in sizes.items():
        payload = np.zeros(size // 4, dtype=np.float32)
        start = time.perf_counter()
        refs = [ray.put(payload) for _ in range(reps)]
        out[f"{name}_put_s"] = (time.perf_counter() - start) / reps
        ray.get([touch.remote(r) for r in refs[:2]])  # warm the worker
        start = time.perf_counter()
        ray.get([touch.remote(r) for r in refs])
        out[f"{name}_remote_read_s"] = (time.perf_counter() - start) / reps
    start = time.perf_counter()
    ray.get([touch.remote(b"") for _ in range(reps)])
    out["round_trip_s"] = (time.perf_counter() - start) / reps
    return out


def epoch_bytes(config: str) -> dict[str, int]:
    from rebel.config.train import load_train_config
    from rebel.nets.value_mlp import ValueMLP, weights_to_bytes
    from rebel.train.run import examples_per_epoch

    cfg = load_train_config(str(REPO / "configs" / f"{config}.yaml"))
    game = cfg.game.make()
    model = ValueMLP.for_game(game, hidden=cfg.model.hidden, layers=cfg.model.layers)
    G = examples_per_epoch(cfg)
    return {"weights_bytes": len(weights_to_bytes(model)), "examples_per_epoch": G,
            "example_bytes": 4 * (int(game.query_size) + int(game.num_hands)),
            "examples_bytes_per_epoch": G * 4 * (int(game.query_size) + int(game.num_hands))}


def model(rate_per_loop: float, t_train: float, sizes: dict[str, int], costs: dict[str, float],
          machines: int) -> dict[str, float]:
    """Predicted examples/s of M machines of 2 loops each (see the module docstring)."""
    G = sizes["examples_per_epoch"]
    generate = G / (2 * machines * rate_per_loop)
    swap = costs["weights_put_s"] + machines * sizes["weights_bytes"] / NETWORK_BYTES_PER_S + costs["round_trip_s"]
    collect = sizes["examples_bytes_per_epoch"] / NETWORK_BYTES_PER_S + costs["examples_remote_read_s"]
    epoch = max(generate, t_train) + swap + collect
    rate = G / epoch
    return {"machines": machines, "examples_per_s": rate, "efficiency": rate / (2 * machines * rate_per_loop),
            "bound": "trainer" if t_train > generate else "generation", "epoch_seconds": epoch}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10, help="epochs per overhead run (2 are warm-up)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds over the layouts")
    parser.add_argument("--model-epochs", type=int, default=6, help="epochs of each game's rate measurement")
    parser.add_argument("--games", default=",".join(GAMES), help="Table 2 games of the scaling model")
    parser.add_argument("--out", help="also write the JSON report here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
    import ray

    from rebel.distributed.cluster import connect

    connect("", num_cpus=2, needed_cpus=2)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in LAYOUTS}
    for _ in range(args.repeats):
        for name, overrides in LAYOUTS.items():
            runs[name].append(run_training("liars_dice_1x4f", overrides, args.epochs))
    overhead = {name: {"examples_per_s": statistics.mean(r["examples_per_s"] for r in rs), "runs": rs}
                for name, rs in runs.items()}
    base = overhead["threads 2"]["examples_per_s"]
    for name in LAYOUTS:
        overhead[name]["relative_to_threads"] = overhead[name]["examples_per_s"] / base

    sizes = {g: epoch_bytes(c) for g, c in GAMES.items()}
    largest = max(sizes.values(), key=lambda s: s["examples_bytes_per_epoch"])
    costs = object_store_costs({"weights": max(s["weights_bytes"] for s in sizes.values()),
                                "examples": largest["examples_bytes_per_epoch"]})
    ray.shutdown()

    scaling = {}
    for game in [g.strip() for g in args.games.split(",") if g.strip()]:
        measured = run_training(GAMES[game], LAYOUTS["threads 2"], args.model_epochs)
        rate = measured["examples_per_s"] / 2
        scaling[game] = {"rate_per_loop": rate, "train_seconds_per_epoch": measured["train_seconds_per_epoch"],
                         **sizes[game],
                         "predicted": [model(rate, measured["train_seconds_per_epoch"], sizes[game], costs, m)
                                       for m in MACHINES]}

    # Ray's test cluster: two raylets of one CPU, two actors of one loop.
    from ray.cluster_utils import Cluster

    os.environ["RAY_worker_niceness"] = "0"  # as docs/distributed.md tells cluster users (Ray's default is 15)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    connect(cluster.address, needed_cpus=2)
    multi = run_training("liars_dice_1x4f", LAYOUTS["ray 2 actors x 1 loop"] + [f"ray.address={cluster.address}"],
                         args.epochs)
    ray.shutdown()
    cluster.shutdown()
    one = scaling.get("1x4f") or {
        "rate_per_loop": base / 2,
        "train_seconds_per_epoch": overhead["threads 2"]["runs"][0]["train_seconds_per_epoch"]}
    predicted = model(one["rate_per_loop"], one["train_seconds_per_epoch"], sizes["1x4f"], costs, 1)
    report = {
        "benchmark": "ray",
        "cpu": cpu_name(),
        "config": "liars_dice_1x4f (shipped defaults), evaluation off",
        "overhead": overhead,
        "overhead_goal": "ray within 10% of threads (relative_to_threads >= 0.90)",
        "overhead_goal_met": all(overhead[n]["relative_to_threads"] >= 0.90 for n in LAYOUTS),
        "per_epoch_transfer": sizes,
        "object_store_costs": costs,
        "network_assumption_bytes_per_s": NETWORK_BYTES_PER_S,
        "scaling_model": scaling,
        "multi_raylet_check": {"measured_examples_per_s": multi["examples_per_s"],
                               "predicted_examples_per_s": predicted["examples_per_s"],
                               "measured_over_predicted": multi["examples_per_s"] / predicted["examples_per_s"]},
        "rebel_version": rebel.__version__,
        "ray": ray.__version__,
    }
    emit_report(report, args.out)
    if args.out:
        Path(args.out).with_suffix(".md").write_text(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    """The report's tables for docs/distributed.md."""
    lines = ["| layout (2 loops in all, trainer alongside) | examples/s | relative to threads |", "|---|---|---|"]
    for name, o in report["overhead"].items():
        lines.append(f"| {name} | {o['examples_per_s']:.0f} | {o['relative_to_threads']:.3f} |")
    lines += ["", "| game | weights bytes (one object per swap) | examples per epoch G | bytes per example | "
              "example bytes per epoch |", "|---|---|---|---|---|"]
    for game, s in report["per_epoch_transfer"].items():
        lines.append(f"| {game} | {s['weights_bytes']:,} | {s['examples_per_epoch']:,} | {s['example_bytes']} | "
                     f"{s['examples_bytes_per_epoch']:,} |")
    c = report["object_store_costs"]
    lines += ["", "| object store (this machine) | seconds |", "|---|---|"]
    lines += [f"| {k} | {v:.6f} |" for k, v in c.items()]
    lines += ["", "| game | examples/s per loop (r) | trainer s per epoch | " +
              " | ".join(f"{m} machines: examples/s (efficiency, bound)" for m in MACHINES) + " |",
              "|---|---|---|" + "---|" * len(MACHINES)]
    for game, g in report["scaling_model"].items():
        cells = [f"{p['examples_per_s']:,.0f} ({p['efficiency']:.2f}, {p['bound']})" for p in g["predicted"]]
        lines.append(f"| {game} | {g['rate_per_loop']:.0f} | {g['train_seconds_per_epoch']:.2f} | "
                     + " | ".join(cells) + " |")
    m = report["multi_raylet_check"]
    lines += ["",
              f"Multi-raylet check (two raylets of one CPU): measured {m['measured_examples_per_s']:.0f} examples/s, "
                  f"model {m['predicted_examples_per_s']:.0f} (ratio {m['measured_over_predicted']:.2f})."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
