"""Pieces shared by the CLI subcommand modules: one parser class, one help style, the
game and output flags, range checks with one message per mistake, and output files that
are checked before any computation and never lose a computed result."""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import Any, NoReturn, Optional

#: Exit status for user errors (the same as argparse's).
EXIT_USAGE = 2
#: Exit status when a computed result could not be written where asked (it is kept elsewhere).
EXIT_OUTPUT = 1
#: The largest count the core takes (iterations, depth, repeats: C++ ints).
INT32_MAX = 2**31 - 1
#: Most threads a command may start.
MAX_THREADS = 256
#: Suffixes of policy files (rebel/policy_io.py).
POLICY_SUFFIXES = (".json", ".npz")

log = logging.getLogger("rebel.cli")


class UsageError(Exception):
    """A mistake in the user's request: reported on stderr, exit status 2, no traceback."""


class CliParser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (``rebel solve: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The help style of every subcommand: plain paragraphs, examples kept as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=min(100, max(60, _terminal_width())))


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns - 2
    except OSError:
        return 98


def add_subcommand(subparsers: Any, name: str, summary: str, description: str, examples: str) -> CliParser:
    """A subcommand parser in the shared style: ``summary`` in ``rebel --help``, then the
    description and an ``examples:`` block in ``rebel NAME --help``."""
    return subparsers.add_parser(name, help=summary, description=description.strip(),
                                 epilog="examples:\n" + examples.strip("\n"), formatter_class=HelpFormatter)


def default_help(text: str, key: str, defaults: Mapping[str, Any]) -> str:
    """``text`` followed by its config key and default, e.g. ``(solver.iterations; default 1024)``."""
    section, name = key.split(".")
    value = defaults[section][name]
    shown = {True: "on", False: "off", None: "none"}.get(value, value) \
        if isinstance(value, (bool, type(None))) else value
    return f"{text} ({key}; default {shown})"


# ------------------------------------------------------------------------- numbers


def int_arg(text: str) -> int:
    """argparse type: an integer (its range is checked with the configuration)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def finite_float(text: str) -> float:
    """argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _where(args: argparse.Namespace, flag: str, key: str) -> str:
    """The config key in brackets when the value did not come from ``flag`` itself."""
    given = getattr(args, flag.lstrip("-").replace("-", "_"), None) is not None
    return "" if given else f" ({key})"


def check_range(args: argparse.Namespace, flag: str, key: str, value: Any, low: int, high: int = INT32_MAX) -> int:
    """Raises UsageError unless ``low <= value <= high``. The message names the flag (and the
    config key when the value came from a config file or an override), the same in every
    subcommand: ``--iters must be >= 1, got 0``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{flag} must be an integer, got {value!r}{_where(args, flag, key)}")
    if value < low:
        raise UsageError(f"{flag} must be >= {low}, got {value}{_where(args, flag, key)}")
    if value > high:
        raise UsageError(f"{flag} must be <= {high}, got {value}{_where(args, flag, key)}")
    return value


def check_choice(args: argparse.Namespace, flag: str, key: str, value: Any, choices: tuple[str, ...]) -> str:
    """Raises UsageError unless ``value`` is one of ``choices`` (values from config files;
    argparse checks the flags themselves)."""
    if value not in choices:
        raise UsageError(f"{flag} must be one of {', '.join(choices)}, got {value!r}{_where(args, flag, key)}")
    return value


def check_nonnegative_float(args: argparse.Namespace, flag: str, key: str, value: float) -> float:
    """Raises UsageError unless ``value`` is finite and >= 0 (same message style as check_range)."""
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{flag} must be finite and >= 0, got {value}{_where(args, flag, key)}")
    return value


# --------------------------------------------------------------------------- game


def add_game_args(parser: argparse.ArgumentParser, defaults: Mapping[str, Any]) -> None:
    """--game, --dice, --faces, --m, --n, --k, --stack, --ante (the ``game`` section)."""
    g = parser.add_argument_group("game")
    g.add_argument("--game", help=default_help("game name, see `rebel games`", "game.name", defaults))
    g.add_argument("--dice", type=int_arg, metavar="D",
                   help="Liar's Dice: dice per player (game.num_dice; default 1)")
    g.add_argument("--faces", type=int_arg, metavar="F",
                   help="Liar's Dice: faces per die (game.num_faces; default 4)")
    g.add_argument("--m", type=int_arg, metavar="M", help="m,n,k game: rows (game.m; default 3)")
    g.add_argument("--n", type=int_arg, metavar="N", help="m,n,k game: columns (game.n; default 3)")
    g.add_argument("--k", type=int_arg, metavar="K", help="m,n,k game: stones in a row to win (game.k; default 3)")
    g.add_argument("--stack", type=int_arg, metavar="S",
                   help="no-limit Leduc: chips each player starts with (game.stack; default 1200)")
    g.add_argument("--ante", type=int_arg, metavar="A",
                   help="no-limit Leduc: each player's ante (game.ante; default 100)")


#: Game flags and the game parameter each sets.
GAME_FLAGS = (("--dice", "dice", "num_dice"), ("--faces", "faces", "num_faces"), ("--m", "m", "m"), ("--n", "n", "n"),
              ("--k", "k", "k"), ("--stack", "stack", "stack"), ("--ante", "ante", "ante"))


def apply_game_flags(game_section: Any, args: argparse.Namespace) -> None:
    """Applies the game flags (--dice, --faces, --m, --n, --k, --stack, --ante) to the resolved game section
    (after --game and the config), refusing a flag the game does not take, then checks the
    game by building it."""
    from rebel.config.common import ConfigError
    from rebel.games import game_param_defaults

    params = game_param_defaults(game_section.name)
    for flag, attr, key in GAME_FLAGS:
        value = getattr(args, attr, None)
        if value is None:
            continue
        if key not in params:
            accepted = ", ".join(f"--{key.removeprefix('num_')}" for key in params) or "none"
            raise UsageError(f"{flag} does not apply to {game_section.name} (its parameters: {accepted})")
        setattr(game_section, key, value)
    try:
        game_section.make()
    except ConfigError as e:
        raise UsageError(str(e)) from None


# ----------------------------------------------------------------- a net's own game

def read_net_file_metadata(flag: str, path: str, kind: str = "value") -> Optional[dict[str, Any]]:
    """The metadata a weights file carries (its game and search; None for a file written before
    format version 3). UsageError if the file is unreadable or malformed, or is a net of
    another ``kind`` (a policy net given as a value net)."""
    from rebel.nets.weights_io import read_net_metadata

    try:
        meta = read_net_metadata(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{flag} {path}: {e}") from None
    if meta is None:
        meta = _run_folder_metadata(path, kind)
    if meta is not None and meta.get("kind", kind) != kind:
        raise UsageError(f"{flag} {path} is a {meta['kind']} net, not a {kind} net")
    return meta


def _run_folder_metadata(path: str, kind: str) -> Optional[dict[str, Any]]:
    """For a net file from before format version 3 that lies in a `rebel train` run folder, the
    game and search of the run's config.yaml (None elsewhere, or if that config does not load)."""
    from pathlib import Path

    from rebel.config.common import ConfigError
    from rebel.config.train import load_train_config, trained_net_metadata

    config_file = Path(path).resolve().parent / "config.yaml"
    if not config_file.is_file():
        return None
    try:
        return trained_net_metadata(load_train_config(str(config_file)), kind)
    except (ConfigError, ValueError, OSError):
        return None


def game_label(game: Mapping[str, Any]) -> str:
    """``leduc_nolimit(stack=1200, ante=100, fold_without_bet=0)``: a game's name and parameters."""
    params = ", ".join(f"{k}={v}" for k, v in game.items() if k != "name")
    return f"{game['name']}({params})"


def adopt_net_game(section: Any, meta: Optional[Mapping[str, Any]], game_given: bool) -> None:
    """Makes ``section`` (a GameSection) the net's game when the user named none."""
    if meta is None or game_given or "game" not in meta:
        return
    game = dict(meta["game"])
    section.name = game.pop("name")
    for field in dataclasses.fields(section):  # every parameter back to "the game's default"
        if field.name != "name":
            setattr(section, field.name, None)
    for key, value in game.items():
        if not hasattr(section, key):
            raise UsageError(f"the net's game {game_label(meta['game'])} has a parameter {key!r} this version "
                             "does not know")
        setattr(section, key, value)


def check_net_game(flag: str, label: str, meta: Optional[Mapping[str, Any]], section: Any) -> None:
    """UsageError unless the game asked (``section``, resolved) is the net's own game."""
    from rebel.config.common import ConfigError

    if meta is None or "game" not in meta:
        return
    try:
        asked = section.as_dict()
    except ConfigError as e:
        raise UsageError(str(e)) from None
    if asked != dict(meta["game"]):
        raise UsageError(f"{flag} {label} is a net of {game_label(meta['game'])}, but the game asked is "
                         f"{game_label(asked)}; leave out the game flags to use the net's game")


def full_tree(game: Any) -> Any:
    """The full public tree, or a UsageError if the game is too large for memory."""
    from rebel import _core

    try:
        return _core.build_tree(game)
    except ValueError as e:
        raise UsageError(f"{e}; use a smaller game (this command needs the whole public tree)") from None


# ------------------------------------------------------------------------- output


def add_output_args(parser: argparse.ArgumentParser, defaults: Mapping[str, Any], policy_what: str,
                    policy: bool = True) -> None:
    """--json, --policy-out, --no-progress (the ``output`` section)."""
    o = parser.add_argument_group("output")
    o.add_argument("--json", action="store_true", default=None,
                   help=default_help("print exactly one JSON object on stdout", "output.json", defaults))
    if policy:
        o.add_argument("--policy-out", metavar="FILE",
                       help=default_help(f"write {policy_what} (.json or .npz; checked before computing)",
                                         "output.policy_out", defaults))
    o.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help=default_help("no progress reports on stderr (a bar on a terminal, log lines "
                                     "otherwise)", "output.progress", defaults))


def _temp_name(path: str) -> tuple[str, str, str]:
    """(folder, prefix, suffix) of the temporary file the atomic writer uses for ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    return folder, f".{os.path.basename(path)}.", ".tmp"


def check_output_file(flag: str, path: str, suffixes: tuple[str, ...] = POLICY_SUFFIXES) -> None:
    """Checks, before any computation, that ``path`` can be written the way the atomic
    writer will write it (a temporary file in the same folder, then a rename)."""
    if not path.lower().endswith(suffixes):
        raise UsageError(f"{flag} {path!r} must end in {' or '.join(suffixes)}")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path!r} is a directory")
    folder, prefix, suffix = _temp_name(path)
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path!r}: folder {folder!r} does not exist")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UsageError(f"{flag} {path!r} is not writable")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    except OSError as e:
        raise UsageError(f"{flag} {path!r} cannot be written: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(tmp)


def save_policy_or_keep(flag: str, path: str, game: Any, policy: Any, tree: Any) -> Optional[str]:
    """Writes a computed policy to ``path``. If that fails anyway (the folder vanished, the
    disk is full...), writes it to a temporary file instead and returns an error message
    naming where it is; returns None on success. A computed result is never lost."""
    from rebel.interop.policy_io import save_policy

    try:
        save_policy(path, game, policy, tree)
        log.info("wrote the policy to %s", path)
        return None
    except OSError as e:
        suffix = os.path.splitext(path)[1].lower()
        fd, kept = tempfile.mkstemp(prefix="rebel-policy-", suffix=suffix)
        os.close(fd)
        save_policy(kept, game, policy, tree)
        return f"could not write {flag} {path!r} ({e.strerror or e}); the policy was written to {kept}"


def print_json(obj: Any) -> None:
    """Prints exactly one JSON object on stdout (floats at full repr precision)."""
    sys.stdout.write(json.dumps(obj, allow_nan=False) + "\n")
    sys.stdout.flush()


def emit_report(report: Any, out_path: str | None) -> None:
    """Prints a benchmark or experiment report as indented JSON on stdout and, if
    `out_path` is given, also writes it there atomically (never a half-written file)."""
    from rebel.util.atomic_io import atomic_write_bytes

    text = json.dumps(report, indent=2)
    print(text)
    if out_path:
        atomic_write_bytes(out_path, (text + "\n").encode())
