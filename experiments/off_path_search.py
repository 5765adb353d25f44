"""Test-time search under each off-path mode: mode (a) and mode (b) exploitability.

    python experiments/off_path_search.py [--dice 1] [--faces 4] [--depth 2] [--iters 1024]
                                          [--nets zero random oracle] [--repeats 256]
                                          [--oracle-iters 256] [--off-path skip floor conditional]
                                          [--threads 2] [--seed 0] [--out FILE]

For every value net and off-path mode (csrc/solvers/subgame_solver.h, OffPath) it runs the search of
``rebel eval`` on Liar's Dice: mode (a) (every subgame's average policy) and mode (b) (the
reach-weighted average of N policies, each subgame stopped at a random iteration; the same
seed for every mode, so the modes see the same random iterations). Nets:

* ``zero``: always answers 0;
* ``random``: the untrained 2x256 MLP ``torch.manual_seed(1); ValueMLP.for_game(game)``,
  run natively (needs torch);
* ``oracle``: exact values from a full-depth solve below each leaf (``--oracle-iters``
  LCFR iterations, under the same off-path mode as the search).

Prints a Markdown table and, with ``--out``, writes every number as JSON (atomically).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from typing import Any

from rebel import _core
from rebel.games import make
from rebel.search.solve import OFF_PATH_MODES
from rebel.util.atomic_io import atomic_write_bytes

log = logging.getLogger("off_path_search")

NETS = ("zero", "random", "oracle")


def random_net(game: _core.Game) -> _core.ValueNet:
    """The untrained MLP of the issue's table: torch.manual_seed(1), then ValueMLP.for_game."""
    import torch

    from rebel.nets.value_mlp import ValueMLP, to_native

    torch.manual_seed(1)
    return to_native(ValueMLP.for_game(game), game)


def build_net(name: str, game: _core.Game, oracle_iters: int, off_path: str) -> _core.ValueNet:
    if name == "zero":
        return _core.ZeroNet(game)
    if name == "random":
        return random_net(game)
    return _core.OracleNet(game, "lcfr", oracle_iters, "root_mean", off_path=off_path)


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    game = make("liars_dice", num_dice=args.dice, num_faces=args.faces)
    rows = []
    for net_name in args.nets:
        for mode in args.off_path:
            net = build_net(net_name, game, args.oracle_iters, mode)
            search = _core.TestTimeSearch(game, net, "lcfr", args.depth, args.iters, off_path=mode)
            start = time.perf_counter()
            mode_a = _core.exploitability(game, search.full_tree, search.average_policy())["exploitability"]
            seconds_a = time.perf_counter() - start
            start = time.perf_counter()
            sampled = search.evaluate_sampled(args.repeats, threads=args.threads, seed=args.seed)
            seconds_b = time.perf_counter() - start
            row = {
                "net": net_name,
                "off_path": mode,
                "mode_a": mode_a,
                "mode_b": dict(zip(map(str, sampled["num_policies"]), sampled["exploitability"])),
                "seconds": {"mode_a": seconds_a, "mode_b": seconds_b},
            }
            rows.append(row)
            log.info("%s %s: mode (a) %.6f, mode (b) N=%d %.6f (%.0f s)", net_name, mode, mode_a, args.repeats,
                     sampled["exploitability"][-1], seconds_a + seconds_b)
    return rows


def markdown(rows: list[dict[str, Any]], repeats: int) -> str:
    shown = [n for n in (1, 16, 64, 256, 1024) if n < repeats] + [repeats]
    lines = ["| net | off-path | mode (a) | mode (b), N = " + " / ".join(map(str, shown)) + " | seconds |",
             "|---|---|---|---|---|"]
    for r in rows:
        b = " / ".join(f"{r['mode_b'][str(n)]:.4f}" for n in shown)
        secs = r["seconds"]["mode_a"] + r["seconds"]["mode_b"]
        lines.append(f"| {r['net']} | {r['off_path']} | {r['mode_a']:.6f} | {b} | {secs:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dice", type=int, default=1)
    p.add_argument("--faces", type=int, default=4)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--iters", type=int, default=1024, help="half-iterations per subgame")
    p.add_argument("--nets", nargs="+", choices=NETS, default=["zero", "random"])
    p.add_argument("--repeats", type=int, default=256, help="N: sampled policies of mode (b)")
    p.add_argument("--oracle-iters", type=int, default=256, help="LCFR iterations of every oracle solve")
    p.add_argument("--off-path", nargs="+", choices=OFF_PATH_MODES, default=list(OFF_PATH_MODES))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="write the rows as JSON here")
    args = p.parse_args(argv)
    for name in ("depth", "iters", "repeats", "oracle_iters", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    args.off_path = list(dict.fromkeys(args.off_path))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    rows = run(args)
    print(markdown(rows, args.repeats))
    if args.out:
        atomic_write_bytes(args.out, (json.dumps({"settings": vars(args), "rows": rows}, indent=2) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
