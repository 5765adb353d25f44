"""``rebel score``: exact exploitability of a saved policy file."""
from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from rebel import _core
from rebel.cli.common import POLICY_SUFFIXES, UsageError, add_subcommand, print_json
from rebel.games import game_config
from rebel.interop.policy_io import load_policy

log = logging.getLogger(__name__)

DESCRIPTION = """\
Loads a policy file written by `rebel solve --policy-out` or `rebel eval --policy-out`
(or by rebel.save_policy; the format is in docs/policy_format.md), checks it strictly and
prints its exact exploitability, both players' best-response values and player 0's
expected value (the game value under the policy). The game is the one the file names."""

EXAMPLES = """\
  rebel solve --game kuhn --solver cfr+ --iters 2000 --policy-out kuhn.json
  rebel score kuhn.json
  rebel score mode_b.npz --json"""


def register(subparsers: Any) -> None:
    """Adds the ``score`` subcommand."""
    p = add_subcommand(subparsers, "score", "exact exploitability of a saved policy file", DESCRIPTION, EXAMPLES)
    p.add_argument("policy", metavar="POLICY", help="a policy file (.json or .npz)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    p.set_defaults(handler=run)


def score(path: str) -> dict[str, Any]:
    """The report of ``rebel score``: game, exploitability, br_values, game_value.

    Raises UsageError if the file is missing, unreadable or not a valid policy file.
    """
    if not path.lower().endswith(POLICY_SUFFIXES):
        raise UsageError(f"POLICY {path!r} must end in {' or '.join(POLICY_SUFFIXES)}")
    if not os.path.isfile(path):
        raise UsageError(f"POLICY {path!r} is not a file")
    try:
        loaded = load_policy(path)
    except OSError as e:
        raise UsageError(f"POLICY {path!r} cannot be read: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"not a valid policy file: {e}") from None
    report = _core.exploitability(loaded.game, loaded.tree, loaded.policy)
    log.info("scored %s (%s)", path, loaded.game.description())
    return {
        "policy": path,
        "game": game_config(loaded.game),
        "exploitability": float(report["exploitability"]),
        "br_values": [float(v) for v in report["br_values"]],
        "game_value": float(report["game_value"]),
    }


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel score``."""
    report = score(args.policy)
    if args.json:
        print_json(report)
        return 0
    game = report["game"]
    params = ", ".join(f"{k}={v}" for k, v in game.items() if k != "name")
    rows = [
        ("policy", report["policy"]),
        ("game", f"{game['name']}({params})" if params else game["name"]),
        ("exploitability", f"{report['exploitability']:.9g}"),
        ("br_values", f"{report['br_values'][0]:.9g}, {report['br_values'][1]:.9g}"),
        ("game_value", f"{report['game_value']:.9g}"),
    ]
    for key, value in rows:
        print(f"{key:<15} {value}")
    return 0
