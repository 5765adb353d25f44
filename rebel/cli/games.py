"""``rebel games``: list the registered games with their parameters and defaults."""
from __future__ import annotations

import argparse
from typing import Any

from rebel.cli.common import add_subcommand, print_json
from rebel.games import list_games


def register(subparsers: Any) -> None:
    """Adds the ``games`` subcommand."""
    p = add_subcommand(subparsers, "games", "list the available games",
                       "Lists the registered games with their parameters and defaults.",
                       "  rebel games\n  rebel games --json")
    p.add_argument("--json", action="store_true", help="print the list as one JSON object")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel games``."""
    games = list_games()
    if args.json:
        print_json({"games": games})
        return 0
    for g in games:
        params = ", ".join(f"{k}={v}" for k, v in g["params"].items()) or "no parameters"
        print(f"{g['name']:<12} {g['summary']}  [{params}]")
    return 0
