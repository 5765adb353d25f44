"""Trains a river value net (rebel/nets/holdem_river_net.py) on river PBSs solved exactly
(experiments/holdem_river_data.py) and measures it on held-out shards (issue 93, item 1).

The last ``--heldout`` shards are held out; the rest train for ``--epochs`` epochs (Adam, the
learning rate decayed by cosine to 5% of ``--lr``, mean squared error over the live hands).
``--augment suits`` permutes the suits of each training row at random (one of 24), ``--target
chips`` trains on values in chips (divided by ``--chip-scale``) instead of pot units. The net
of the final epoch is measured (no selection): on the held-out rows, RMSE and MAE over the live
hands in pot units and in chips, and the error of each player's expected value (its beliefs times
the values), beside the zero net's; the forward cost per row on one thread at batch 1 and 256.
Results go to ``--out`` (JSON, with the command and the CPU) and the weights to ``--save``
(a state dict, loads with ``torch.load(weights_only=True)``).

    python experiments/holdem_river_net.py --data runs/river_two_tone --hidden 512 --layers 3 \\
        --epochs 20 --out experiments/results/holdem/river_net/h512.json
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rebel.nets.holdem_river_net import RiverValueNet, permute_suits, river_inputs
from rebel.train.holdem_river_data import live_mask, read_shards
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.progress import Progress

log = logging.getLogger("holdem_river_net")


def load(paths: list[Path]) -> dict[str, np.ndarray]:
    shards = list(read_shards(paths))
    return {k: np.concatenate([s[k] for s in shards]) for k in shards[0]}


def cpu_name() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from holdem_river_data import cpu_name as name

    return name()


@torch.no_grad()
def predict(net: RiverValueNet, data: dict[str, np.ndarray], chip_target: bool, chip_scale: float,
            batch: int = 512) -> np.ndarray:
    """Held-out predictions in pot units."""
    net.eval()
    out = []
    for i in range(0, len(data["pot"]), batch):
        s = slice(i, i + batch)
        x = torch.from_numpy(river_inputs(data["board"][s], data["pot"][s], data["stack"][s], data["beliefs"][s]))
        y = net(x).numpy().astype(np.float64)
        if chip_target:
            y = y * chip_scale / data["pot"][s, None, None]
        out.append(y)
    return np.concatenate(out)


def errors(pred: np.ndarray, data: dict[str, np.ndarray]) -> dict[str, float]:
    """RMSE and MAE over live hands (pot units and chips) and the expected-value error."""
    live = np.repeat(live_mask(data["board"])[:, None, :], 2, axis=1)
    diff = pred - data["values"].astype(np.float64)
    chips = diff * data["pot"][:, None, None]
    ev = np.abs((data["beliefs"] * diff).sum(axis=2))  # (n, 2): each player's expected value error
    return {"rmse_pot": float(np.sqrt((diff[live] ** 2).mean())), "mae_pot": float(np.abs(diff[live]).mean()),
            "rmse_chips": float(np.sqrt((chips[live] ** 2).mean())), "mae_chips": float(np.abs(chips[live]).mean()),
            "ev_mae_pot": float(ev.mean()), "ev_mae_chips": float((ev * data["pot"][:, None]).mean())}


def row_cost(net: RiverValueNet) -> dict[str, float]:
    """Forward microseconds per row on one thread, at batch 1 and 256."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    result = {}
    with torch.no_grad():
        for batch in (1, 256):
            x = torch.rand(batch, net.mlp.input_size)
            for _ in range(3):
                net(x)
            reps = max(3, 2000 // batch)
            started = time.perf_counter()
            for _ in range(reps):
                net(x)
            result[f"us_per_row_batch{batch}"] = 1e6 * (time.perf_counter() - started) / (reps * batch)
    torch.set_num_threads(threads)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--heldout", type=int, default=10, help="shards held out (the last ones)")
    parser.add_argument("--train-shards", type=int, default=0, help="train on the first N shards (0: all others)")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--augment", choices=("none", "suits"), default="none")
    parser.add_argument("--target", choices=("pot", "chips"), default="pot")
    parser.add_argument("--chip-scale", type=float, default=20.0, help="chips per output unit with --target chips")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--save", default="")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    paths = sorted(Path(args.data).glob("shard_*.npz"))
    if len(paths) <= args.heldout:
        parser.error(f"{args.data} has {len(paths)} shards; more than --heldout {args.heldout} are needed")
    train_paths = paths[: len(paths) - args.heldout]
    if args.train_shards:
        train_paths = train_paths[: args.train_shards]
    train, held = load(train_paths), load(paths[len(paths) - args.heldout:])
    n = len(train["pot"])
    log.info("%d training rows, %d held out", n, len(held["pot"]))
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    net = RiverValueNet(args.hidden, args.layers)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    steps = args.epochs * math.ceil(n / args.batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    chips = args.target == "chips"
    curve = []
    started = time.perf_counter()
    with Progress("river net", args.epochs, "epoch") as bar:
        for epoch in range(args.epochs):
            net.train()
            order = rng.permutation(n)
            total, count = 0.0, 0
            for i in range(0, n, args.batch):
                idx = order[i: i + args.batch]
                board, beliefs, values = train["board"][idx], train["beliefs"][idx], train["values"][idx]
                if args.augment == "suits":
                    board, beliefs, values = permute_suits(board, beliefs, values, rng.integers(24, size=len(idx)))
                assert values is not None
                x = torch.from_numpy(river_inputs(board, train["pot"][idx], train["stack"][idx], beliefs))
                y = torch.from_numpy(values)
                if chips:
                    y = y * torch.from_numpy(train["pot"][idx].astype(np.float32) / args.chip_scale)[:, None, None]
                live = net.live(x)[:, None, :]
                loss = (((net(x) - y) ** 2) * live).sum() / (2 * live.sum())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
                total += float(loss.detach()) * len(idx)
                count += len(idx)
            held_errors = errors(predict(net, held, chips, args.chip_scale), held)
            curve.append({"epoch": epoch + 1, "train_loss": total / count, **held_errors,
                          "seconds": time.perf_counter() - started})
            log.info("epoch %d: train loss %.5f, held-out rmse %.4f pot, ev mae %.4f pot", epoch + 1, total / count,
                     held_errors["rmse_pot"], held_errors["ev_mae_pot"])
            bar(epoch + 1)
    final = curve[-1]
    zero = errors(np.zeros_like(held["values"], dtype=np.float64), held)
    result: dict[str, Any] = {
        "hidden": args.hidden, "layers": args.layers, "epochs": args.epochs, "batch": args.batch, "lr": args.lr,
        "augment": args.augment, "target": args.target, "seed": args.seed, "train_rows": n,
        "heldout_rows": len(held["pot"]), "parameters": sum(p.numel() for p in net.parameters()),
        "train_seconds": final["seconds"], "threads": args.threads, "cpu": cpu_name(),
        "final": final, "zero_net": zero, "cost": row_cost(net), "curve": curve,
        "command": "python experiments/holdem_river_net.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, (json.dumps(result, indent=2) + "\n").encode())
    if args.save:
        import io

        buffer = io.BytesIO()
        torch.save({"hidden": args.hidden, "layers": args.layers, "target": args.target,
                    "chip_scale": args.chip_scale, "state_dict": net.state_dict()}, buffer)
        atomic_write_bytes(args.save, buffer.getvalue())
    log.info("final: %s; zero net: rmse %.4f pot, ev mae %.4f pot", json.dumps(final), zero["rmse_pot"],
             zero["ev_mae_pot"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
