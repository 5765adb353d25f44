"""``rebel pretrained``: the value and policy nets shipped with the package."""
from __future__ import annotations

import argparse
from typing import Any

from rebel.cli.common import add_subcommand, print_json

DESCRIPTION = """\
Lists the trained value nets shipped with the package, usable wherever a net is taken as
--net pretrained:NAME (rebel eval, rebel play): each with its game, the config and command
that trained it, and its exploitability measured with the paper's protocol (mode (b), depth
2, N sampled policies, mean [min, max] over evaluation seeds); then the policy nets, usable as
--policy-net pretrained:NAME with --warm-start K, each with the value net and warm-start
search its figure was measured with. --json lists both, each entry with its "kind"."""

EXAMPLES = """\
  rebel pretrained
  rebel eval --net pretrained:kuhn --repeats 64
  rebel play --net pretrained:1x4f
  rebel eval --net pretrained:1x4f --policy-net pretrained:1x4f-policy --warm-start 15 --warm-prior 10 --iters 256"""


def register(subparsers: Any) -> None:
    """Adds the ``pretrained`` subcommand."""
    p = add_subcommand(subparsers, "pretrained", "list the shipped trained nets", DESCRIPTION, EXAMPLES)
    p.add_argument("--json", action="store_true", help="print the list as JSON (default: a table)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel pretrained``."""
    from dataclasses import asdict

    from rebel.nets.pretrained import available, available_policies

    nets, policies = available(), available_policies()
    if args.json:
        print_json([{"kind": "value", **asdict(n), "path": str(n.path)} for n in nets] +
                   [{"kind": "policy", **asdict(p), "path": str(p.path)} for p in policies])
        return 0
    for n in nets:
        params = ", ".join(f"{k}={v}" for k, v in n.game_params().items())
        e = n.exploitability
        print(f"pretrained:{n.name}")
        print(f"  game            {n.game['name']}({params})")
        print(f"  exploitability  {e['mean']:.4f} [{e['min']:.4f}, {e['max']:.4f}]  (mode (b), depth {e['depth']}, "
              f"T = {e['iterations']}, N = {e['repeats']}, {e['precision']} net, "
              f"seeds {', '.join(map(str, e['seeds']))})")
        t = n.trained
        print(f"  trained         {n.config}: {t['epochs']} epochs, {t['examples_generated']:,} examples, "
              f"{t['wall_minutes']:.1f} min")
        print(f"  reproduce       {n.command}")
    for p in policies:
        params = ", ".join(f"{k}={v}" for k, v in p.game_params().items())
        e, s = p.exploitability, p.search
        print(f"pretrained:{p.name} (policy net)")
        print(f"  game            {p.game['name']}({params})")
        print(f"  exploitability  {e['mean']:.4f} [{e['min']:.4f}, {e['max']:.4f}]  "
              f"(with --net pretrained:{p.value_net}, mode (b), depth {s['depth']}, T = {s['iterations']}, "
              f"--warm-start {s['warm_start']} --warm-prior {s['warm_prior']:g}, N = {e['repeats']}, "
              f"{e['precision']} net, seeds {', '.join(map(str, e['seeds']))})")
        t = p.trained
        print(f"  trained         {t['pbs']:,} PBSs from {t['self_play_steps']:,} self-play steps, "
              f"{t['epochs']} epochs")
        print(f"  reproduce       {p.command}")
    return 0
