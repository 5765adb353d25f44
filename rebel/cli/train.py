"""``rebel train``: learn a value net by ReBeL self-play (see ``rebel/train/run.py``), or a
policy-value net by AlphaZero self-play for configs that say ``algorithm: alphazero``
(see ``rebel/alphazero/run.py``)."""
from __future__ import annotations

import argparse
import datetime
import logging
import sys
from pathlib import Path
from typing import Any

from rebel.cli.common import UsageError, add_subcommand, print_json

log = logging.getLogger(__name__)

#: Keys that may change when a run is resumed (everything else would change the run itself).
RESUME_OVERRIDABLE = ("run.epochs", "run.max_minutes", "run.budget", "run.checkpoint_every", "run.snapshot_every",
                      "run.progress",
                      # where the work runs (the loop count, ray.workers x selfplay.threads with Ray, must stay)
                      "selfplay.backend", "selfplay.threads", "evaluation.backend", "evaluation.threads",
                      "trainer.device",  # a run trained on a GPU resumes on a CPU and back
                      "evaluation.every",  # how often the curve is sampled, not what is trained
                      "ray.address", "ray.workers", "ray.num_cpus", "ray.max_restarts")
#: The same for AlphaZero runs.
ALPHAZERO_RESUME_OVERRIDABLE = ("run.epochs", "run.max_minutes", "run.checkpoint_every", "run.progress",
                                "run.threads", "trainer.device")


DESCRIPTION = """\
Learns a value net by ReBeL self-play. CONFIG is a YAML file or the name of one in
configs/ (quick, kuhn, liars_dice_1x4f, ...); section.key=value overrides follow it. The
resolved configuration is printed and saved in the run directory (runs/NAME/ by default)
with metrics.jsonl, TensorBoard scalars, checkpoint.pt and weights.bin (the latest net,
usable as `rebel eval --net RUN_DIR/weights.bin`). Ctrl-C stops cleanly after saving a
checkpoint; --resume continues. The run ends by printing the trained net's exploitability
next to the zero net's and the full-game solver's.

A config with `algorithm: alphazero` (alphazero_tictactoe, alphazero_6x6k4,
alphazero_8x8k5) trains an AlphaZero policy-value net on an m,n,k game instead: batched
MCTS self-play, matches against fixed opponents every few epochs (metrics.jsonl), the net
in RUN_DIR/net.pt (usable as `rebel match net:RUN_DIR/net.pt ...`)."""

EXAMPLES = """\
  rebel train quick
  rebel train liars_dice_1x4f run.max_minutes=60
  rebel train --resume runs/liars_dice_1x4f-20261123-133000 run.epochs=2000"""


def register(subparsers: Any) -> None:
    """Adds the ``train`` subcommand."""
    p = add_subcommand(subparsers, "train", "learn a value net by self-play (ReBeL)", DESCRIPTION, EXAMPLES)
    p.add_argument("config", nargs="?", metavar="CONFIG", help="YAML config file or a name in configs/")
    p.add_argument("overrides", nargs="*", metavar="section.key=value", help="config overrides")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its checkpoint")
    p.add_argument("--json", action="store_true", help="print the final summary as one JSON object")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress reports on stderr (a bar on a terminal, log lines otherwise)")
    p.set_defaults(handler=run)


def configs_dir() -> Path:
    """The shipped configs: package data in rebel/configs/ (the checkout's configs/ links to it),
    so ``rebel train NAME`` works from any folder, editable install or not."""
    return Path(__file__).resolve().parents[1] / "configs"


def _config_path(name: str) -> str:
    if "=" in name:
        raise UsageError(f"the first argument must be a CONFIG (e.g. `rebel train quick {name}`), got {name!r}")
    path = Path(name)
    if path.is_file():
        return str(path)
    candidate = configs_dir() / f"{name}.yaml"
    if "/" not in name and candidate.is_file():
        return str(candidate)
    known = sorted(p.stem for p in configs_dir().glob("*.yaml") if p.stem != "solve") if configs_dir().is_dir() else []
    raise UsageError(f"config {name!r} not found (a YAML file, or one of: {', '.join(known)})")


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel train``."""
    from rebel.config.train import ConfigError, from_yaml_text, load_train_config, to_yaml
    from rebel.distributed.cluster import RayUnavailable, disconnect
    from rebel.train.checkpoint import CheckpointError
    from rebel.train.run import Training, TrainingInterrupted
    from rebel.train.rundir import RunDirectory, RunDirError

    logging.getLogger("rebel.train").setLevel(min(logging.INFO, logging.getLogger().level or logging.INFO))
    if _is_alphazero(args):
        return _run_alphazero(args)
    try:
        if args.resume:
            run_dir, config = _resumed(args, RESUME_OVERRIDABLE, from_yaml_text, ConfigError)
        else:
            if not args.config:
                raise UsageError("give a CONFIG (e.g. `rebel train quick`) or --resume RUN_DIR")
            path = _config_path(args.config)
            config = load_train_config(path, args.overrides)
            name = config.run.name or f"{Path(path).stem}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
            config.run.name = name
            run_dir = None
        text = to_yaml(config)
        _check_trainer_device(config.trainer.device)  # before the run directory exists, like Ray below
        _connect_ray(config)  # before the run directory exists: Ray missing, unreachable or too small
        if run_dir is None:
            run_dir = RunDirectory.create(Path(config.run.dir) / config.run.name, text)
        else:
            from rebel.util.atomic_io import atomic_write_bytes

            atomic_write_bytes(run_dir.file(RunDirectory.CONFIG), text.encode())
        if not args.json:
            # The resolved config is in the run directory; -v prints it here too.
            if args.verbose + args.sub_verbose > 0:
                print(text.rstrip(), file=sys.stderr)
            print(f"rebel train: run {run_dir.path} (resolved config: {run_dir.file(RunDirectory.CONFIG)})",
                  file=sys.stderr)
        training = Training(config, run_dir, show_progress=None if args.progress else False)
        if args.resume:
            training.restore()
        summary = training.run()
    except (ConfigError, RunDirError, CheckpointError, RayUnavailable) as e:
        raise UsageError(str(e)) from None
    except TrainingInterrupted as e:
        print(f"rebel train: {e}", file=sys.stderr)
        return 130
    finally:
        disconnect()
    if args.json:
        print_json(summary)
    else:
        _print_summary(summary, config)
    return 0


def _check_trainer_device(name: str) -> None:
    """UsageError where trainer.device names a GPU torch cannot see."""
    if name == "cpu":
        return
    from rebel.nets.torch_device import resolve_device

    try:
        resolve_device(name)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _is_alphazero(args: argparse.Namespace) -> bool:
    from rebel.config.alphazero import is_alphazero_yaml
    from rebel.train.rundir import RunDirectory, RunDirError

    if args.resume:
        try:
            return is_alphazero_yaml(RunDirectory.existing(args.resume).config_text())
        except (RunDirError, OSError):
            return False  # the ReBeL path reports the problem
    if not args.config:
        return False
    return is_alphazero_yaml(Path(_config_path(args.config)).read_text())


def _resumed(args: argparse.Namespace, allowed: tuple[str, ...], from_yaml_text: Any,
             config_error: type[Exception]) -> tuple[Any, Any]:
    """The run directory of ``--resume`` and its config with the allowed overrides applied
    (UsageError for any other override or a broken config file)."""
    from rebel.train.rundir import RunDirectory

    overrides = ([args.config] if args.config else []) + list(args.overrides)
    bad = [o for o in overrides if o.split("=", 1)[0] not in allowed]
    if bad:
        raise UsageError(f"--resume takes only {', '.join(allowed)} overrides, got {bad}")
    run_dir = RunDirectory.existing(args.resume)
    try:
        return run_dir, from_yaml_text(run_dir.config_text(), overrides)
    except config_error as e:
        raise UsageError(f"{run_dir.file(RunDirectory.CONFIG)}: {e}") from None


def _run_alphazero(args: argparse.Namespace) -> int:
    """``rebel train`` for an AlphaZero config (or --resume of an AlphaZero run)."""
    from rebel.config.alphazero import ConfigError, from_yaml_text, load_alphazero_config, to_yaml
    from rebel.train.alphazero_run import AlphaZeroRun
    from rebel.train.checkpoint import CheckpointError
    from rebel.train.rundir import RunDirectory, RunDirError

    try:
        if args.resume:
            run_dir, config = _resumed(args, ALPHAZERO_RESUME_OVERRIDABLE, from_yaml_text, ConfigError)
            _check_trainer_device(config.trainer.device)
            from rebel.util.atomic_io import atomic_write_bytes

            atomic_write_bytes(run_dir.file(RunDirectory.CONFIG), to_yaml(config).encode())
        else:
            path = _config_path(args.config)
            config = load_alphazero_config(path, args.overrides)
            config.run.name = config.run.name or f"{Path(path).stem}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
            _check_trainer_device(config.trainer.device)
            run_dir = RunDirectory.create(Path(config.run.dir) / config.run.name, to_yaml(config))
        if not args.json:
            print(f"rebel train: run {run_dir.path} (AlphaZero; resolved config: {run_dir.file(RunDirectory.CONFIG)})",
                  file=sys.stderr)
        training = AlphaZeroRun(config, run_dir, show_progress=None if args.progress else False)
        if args.resume:
            training.restore()
        summary = training.run()
    except (ConfigError, RunDirError, CheckpointError) as e:
        raise UsageError(str(e)) from None
    except KeyboardInterrupt:
        print(f"rebel train: stopped; continue with `rebel train --resume {run_dir.path}`", file=sys.stderr)
        return 130
    if args.json:
        print_json(summary)
        return 0
    print(f"run             {summary['run_dir']}  (net: {summary['net']})")
    print(f"trained         {summary['epoch']} epochs, {summary['games_played']} self-play games, "
          f"{summary['positions']} positions, {summary['wall_seconds'] / 60:.1f} min")
    for opponent, r in (summary.get("evaluation") or {}).items():
        if opponent == "every_reply":
            print(f"every reply     lost {r['first']['losses']} of {r['first']['lines']} lines moving first, "
                  f"{r['second']['losses']} of {r['second']['lines']} moving second")
            continue
        low, high = r["interval"]
        print(f"{opponent.replace('vs_', 'against '):<15} {r['wins']} wins, {r['draws']} draws, {r['losses']} losses; "
              f"score {r['score']:.3f} [{low:.3f}, {high:.3f}]")
    return 0


def _connect_ray(config: Any) -> None:
    """Connects to Ray when the config asks for it (RayUnavailable otherwise)."""
    from rebel.config.train import ray_cpus_needed
    from rebel.distributed.cluster import connect

    needed = ray_cpus_needed(config)
    if needed:
        connect(config.ray.address, config.ray.num_cpus, needed_cpus=needed)


def _print_summary(summary: dict[str, Any], config: Any) -> None:
    from rebel.config.train import game_of

    game_obj = game_of(config)
    game = game_obj.description()
    s = config.search
    protocol = ("mode (b) with N -> infinity (exact: perfect information)" if game_obj.perfect_information
                else f"mode (b) with N = {config.evaluation.repeats}")
    print(f"run             {summary['run_dir']}  (net: {summary['weights']})")
    print(f"trained         {summary['epoch']} epochs, {summary['examples_generated']} examples generated, "
          f"{summary['examples_trained']} trained, {summary['wall_seconds'] / 60:.1f} min")
    ev, refs = summary.get("evaluation"), summary.get("references") or {}
    if ev is None and not refs:
        return
    print(f"exploitability  {game}, depth-{s.depth} search, {s.solver}, T = {s.iterations}, {protocol}:")
    if ev is not None:
        extra = f"   (held-out mean max error {ev['heldout_delta_mean']:.4f})" if "heldout_delta_mean" in ev else ""
        print(f"  trained net   {ev['exploitability']:.6f}{extra}")
    if "zero_net_exploitability" in refs:
        print(f"  zero net      {refs['zero_net_exploitability']:.6f}")
    if "full_game_exploitability" in refs:
        print(f"  full-game {refs['full_game_solver']} ({s.iterations} iterations, no search): "
              f"{refs['full_game_exploitability']:.6f}")
