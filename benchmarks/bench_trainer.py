"""The value net's (and AlphaZero's policy-value net's) training epoch on the CPU (1, 2, ...
torch threads) and on a GPU.

Times ``Trainer.train_epoch`` with the shipped Liar's Dice configs' trainer settings (batch
512, 25,600 examples per epoch, Adam, gradient clipping, the weights' moving average) for each
game's net (2 x 256, the game's query size), on random rows drawn from a pre-filled array (the
replay buffer's sampling is not timed). A self-play run spends ``train_ratio`` gradient
examples per generated example, so seconds per epoch is what the trainer takes from the
self-play threads when it shares their cores, and what ``trainer.device=cuda`` gives back to
them. ``--alphazero CONFIGS`` adds the AlphaZero configs' epochs (their ``steps_per_epoch``
Adam steps of ``batch_size`` random boards through their residual net). Rounds alternate
between the devices; the best round counts. Prints JSON and optionally writes it to ``--out``.

    python benchmarks/bench_trainer.py --out experiments/results/benchmarks/bench_trainer.json
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Dict, List

import numpy as np
import torch
from _machine import cpu_name  # benchmarks/_machine.py (this script's folder is on sys.path)

from rebel.cli.common import emit_report
from rebel.config.train import TrainerSection
from rebel.games import make
from rebel.nets.value_mlp import ValueMLP
from rebel.train.trainer import Trainer

GAMES = {"1x4f": (1, 4), "1x6f": (1, 6), "2x3f": (2, 3)}


def _sampler(rows: np.ndarray, targets: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)

    def sample(n: int):
        idx = rng.integers(0, len(rows), n)
        return rows[idx], targets[idx]
    return sample


def bench_game(name: str, devices: List[str], rounds: int, epoch_examples: int) -> Dict[str, Any]:
    game = make("liars_dice", num_dice=GAMES[name][0], num_faces=GAMES[name][1])
    torch.manual_seed(0)
    template = ValueMLP.for_game(game, hidden=256, layers=2)
    rng = np.random.default_rng(0)
    rows = rng.uniform(0, 1, (100_000, template.input_size)).astype(np.float32)
    targets = rng.uniform(-1, 1, (100_000, template.output_size)).astype(np.float32)
    settings = dict(lr=3e-4, batch_size=512, epoch_examples=epoch_examples, grad_clip=5.0, ema_decay=0.998)
    trainers, best = {}, {}
    for device in devices:
        threads, kind = (int(device.split(":")[1]), "cpu") if device.startswith("cpu") else (None, device)
        model = ValueMLP.for_game(game, hidden=256, layers=2)
        model.load_state_dict(template.state_dict())
        trainers[device] = (Trainer(model, TrainerSection(**settings, device=kind)), threads)
        best[device] = float("inf")
    sample = _sampler(rows, targets, 1)
    for round_index in range(rounds + 1):  # round 0 warms up (allocator, CUDA context, kernels)
        for device, (trainer, threads) in trainers.items():
            if threads is not None:
                torch.set_num_threads(threads)
            start = time.perf_counter()
            trainer.train_epoch(sample)
            if trainer.device.type == "cuda":
                torch.cuda.synchronize()
            best[device] = min(best[device], time.perf_counter() - start) if round_index else best[device]
    return {"game": name, "input_size": template.input_size, "output_size": template.output_size,
            "epoch_examples": epoch_examples, "batch_size": 512,
            "seconds_per_epoch": {d: round(s, 4) for d, s in best.items()},
            "examples_per_second": {d: round(epoch_examples / s) for d, s in best.items()}}


def bench_alphazero(name: str, devices: List[str], rounds: int) -> Dict[str, Any]:
    from rebel.alphazero.net import PLANES, PolicyValueNet
    from rebel.alphazero.trainer import AlphaZeroTrainer, TrainerSettings
    from rebel.cli.train import _config_path
    from rebel.config.alphazero import load_alphazero_config

    config = load_alphazero_config(_config_path(name))
    g, mo, t = config.game, config.model, config.trainer
    torch.manual_seed(0)
    template = PolicyValueNet(g.m, g.n, channels=mo.channels, blocks=mo.blocks, value_hidden=mo.value_hidden)
    rng = np.random.default_rng(0)
    rows = 20_000
    planes = (rng.random((rows, PLANES, g.m, g.n)) < 0.3).astype(np.float32)
    policies = rng.dirichlet(np.ones(g.m * g.n), rows).astype(np.float32)
    values = rng.choice([-1.0, 0.0, 1.0], rows).astype(np.float32)
    trainers, best = {}, {}
    for device in devices:
        threads, kind = (int(device.split(":")[1]), "cpu") if device.startswith("cpu") else (None, device)
        net = PolicyValueNet(**template.architecture())
        net.load_state_dict(template.state_dict())
        settings = TrainerSettings(lr=t.lr, weight_decay=t.weight_decay, batch_size=t.batch_size, device=kind)
        trainers[device] = (AlphaZeroTrainer(net, settings), threads)
        best[device] = float("inf")
    for round_index in range(rounds + 1):  # round 0 warms up
        for device, (trainer, threads) in trainers.items():
            if threads is not None:
                torch.set_num_threads(threads)
            start = time.perf_counter()
            trainer.train(planes, policies, values, t.steps_per_epoch, np.random.default_rng(round_index))
            elapsed = time.perf_counter() - start  # train() copies the weights back: synchronised
            best[device] = min(best[device], elapsed) if round_index else best[device]
    return {"config": name, "board": f"{g.m}x{g.n}", "channels": mo.channels, "blocks": mo.blocks,
            "steps_per_epoch": t.steps_per_epoch, "batch_size": t.batch_size,
            "seconds_per_epoch": {d: round(s, 4) for d, s in best.items()}}


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="1x4f,1x6f,2x3f")
    parser.add_argument("--threads", default="1,2", help="CPU torch thread counts to time (comma-separated)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epoch-examples", type=int, default=25_600)
    parser.add_argument("--alphazero", default="", help="AlphaZero configs to time too (comma-separated)")
    parser.add_argument("--out", default=None, help="also write the JSON report here")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        parser.error(f"unknown game(s) {unknown}; choose from {sorted(GAMES)}")
    devices = [f"cpu:{int(t)}" for t in args.threads.split(",") if t.strip()]
    if torch.cuda.is_available():
        devices.append("cuda")
    results = [bench_game(g, devices, args.rounds, args.epoch_examples) for g in games]
    alphazero = [bench_alphazero(c.strip(), devices, args.rounds) for c in args.alphazero.split(",") if c.strip()]
    report = {"benchmark": "trainer", "cpu": cpu_name(), "cpu_count": os.cpu_count(),
              "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
              "torch": torch.__version__, "rounds": args.rounds, "results": results, "alphazero": alphazero}
    emit_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
