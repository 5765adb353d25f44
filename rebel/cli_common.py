"""Pieces shared by the CLI subcommand modules."""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

#: Exit status for user errors (the same as argparse's).
EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake in the user's request: reported on stderr, exit status 2, no traceback."""


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def finite_float(text: str) -> float:
    """argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def print_json(obj: Any) -> None:
    """Prints exactly one JSON object on stdout (floats at full repr precision)."""
    sys.stdout.write(json.dumps(obj, allow_nan=False) + "\n")
    sys.stdout.flush()


def emit_report(report: Any, out_path: str | None) -> None:
    """Prints a benchmark or experiment report as indented JSON on stdout and, if
    `out_path` is given, also writes it there atomically (never a half-written file)."""
    from rebel.policy_io import atomic_write_bytes

    text = json.dumps(report, indent=2)
    print(text)
    if out_path:
        atomic_write_bytes(out_path, (text + "\n").encode())
