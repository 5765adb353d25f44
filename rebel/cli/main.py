"""The ``rebel`` command line: a thin dispatcher over subcommand modules.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds an
``argparse`` subparser and sets ``handler`` (a function ``args -> exit code``) as its
default. Adding a subcommand (e.g. ``eval`` in ``rebel/cli/eval.py``) = writing that
module and appending its name to :data:`COMMAND_MODULES`.

User errors (bad flags, unknown game, impossible parameters...) print one line on stderr
and exit with status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any, ContextManager, Optional

from rebel.cli.common import EXIT_USAGE, CliParser, UsageError

#: Modules that each register one subcommand, in the order shown by ``rebel --help``.
COMMAND_MODULES: tuple[str, ...] = ("rebel.cli.train", "rebel.cli.solve", "rebel.cli.eval", "rebel.cli.score",
                                    "rebel.cli.play", "rebel.cli.match", "rebel.cli.pretrained",
                                    "rebel.cli.games")
VERBOSE_HELP = "log more (-v: info, -vv: debug); logs go to stderr"

log = logging.getLogger("rebel.cli")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand of :data:`COMMAND_MODULES` registered."""
    from rebel import __version__

    parser = CliParser(
        prog="rebel",
        description="ReBeL: search plus learned public-belief-state values for two-player zero-sum games.",
    )
    parser.add_argument("--version", action="version", version=f"rebel {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    for sub in subparsers.choices.values():  # `rebel -v solve` and `rebel solve -v` alike
        sub.add_argument("-v", "--verbose", dest="sub_verbose", action="count", default=0, help=VERBOSE_HELP)
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")


def _log_through_progress_bars() -> ContextManager[Any]:
    """On a terminal, log records go through tqdm while a bar is shown, so that a log line
    never lands in the middle of a half-drawn bar; off a terminal there are no bars."""
    if not _isatty(sys.stderr):
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the CLI; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)  # argparse itself exits with status 2 on bad flags
    _configure_logging(args.verbose + args.sub_verbose)
    try:
        with _log_through_progress_bars():
            return int(args.handler(args) or 0)
    except UsageError as e:
        print(f"rebel {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rebel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `rebel games | head -1`
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
