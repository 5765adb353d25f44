"""Exports a training run's value net from its checkpoint: the trained weights themselves
("raw") or their moving average ("average", what weights.bin holds when the run keeps one).

A run with trainer.ema_decay > 0 exports only the average; this recovers the weights the
optimizer was at, for diagnosing what the average does to a net.

    python experiments/checkpoint_weights.py RUN_DIR raw OUT.bin
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

WHICH = ("raw", "average")


def export_checkpoint_weights(run_dir: Path, which: str, out: Path) -> int:
    """Writes RUN_DIR's checkpointed ``which`` weights to ``out`` (the native format); returns
    the checkpoint's epoch."""
    from rebel.config.train import game_of, load_train_config, trained_net_metadata
    from rebel.nets.value_mlp import export_weights
    from rebel.train.checkpoint import load_checkpoint
    from rebel.train.run import value_model
    from rebel.train.rundir import RunDirectory

    if which not in WHICH:
        raise ValueError(f"which must be one of {', '.join(WHICH)}, got {which!r}")
    config = load_train_config(str(run_dir / RunDirectory.CONFIG))
    state = load_checkpoint(run_dir / RunDirectory.CHECKPOINT)
    weights = state["trainer"]["model"] if which == "raw" else state["trainer"]["ema"]
    if weights is None:
        raise ValueError(f"{run_dir} keeps no moving average (trainer.ema_decay = 0): its raw weights are weights.bin")
    model = value_model(config, game_of(config))
    model.load_state_dict(weights)
    export_weights(model, out, trained_net_metadata(config))  # naming its game and search, as weights.bin does
    return int(state["epoch"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path, help="a `rebel train` run directory with checkpoint.pt")
    parser.add_argument("which", choices=WHICH, help="the trained weights or their moving average")
    parser.add_argument("out", type=Path, help="where to write the net (native weights format)")
    args = parser.parse_args(argv)
    try:
        epoch = export_checkpoint_weights(args.run_dir, args.which, args.out)
    except (OSError, ValueError) as e:
        print(f"checkpoint_weights: {e}", file=sys.stderr)
        return 2
    print(f"{args.which} weights of epoch {epoch} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
