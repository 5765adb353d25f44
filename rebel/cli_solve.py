"""``rebel solve``: solve a full game with a tabular solver and report its exploitability.

Examples::

    rebel solve --game liars_dice --dice 1 --faces 4 --solver lcfr --iters 1024 --json
    rebel solve --game kuhn --solver cfr+ --iters 2000 --policy-out kuhn.json
    rebel solve --config configs/solve.yaml solver.name=dcfr game.num_faces=5
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from rebel import _core
from rebel.cli_common import UsageError, finite_float, non_negative_int, print_json
from rebel.policy_io import save_policy
from rebel.solve import OFF_PATH_HELP, OFF_PATH_MODES, SOLVER_HELP, SOLVERS, SolveResult, check_iterations, solve
from rebel.solve_config import ConfigError, SolveConfig, load_solve_config

log = logging.getLogger(__name__)


def register(subparsers: Any) -> None:
    """Adds the ``solve`` subcommand."""
    p = subparsers.add_parser(
        "solve",
        help="solve a full game and report exploitability",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="dotted config overrides, e.g. solver.iterations=256 (applied after --config)")
    p.add_argument("--config", metavar="FILE", help="YAML config (see configs/solve.yaml)")
    g = p.add_argument_group("game")
    g.add_argument("--game", help="game name (see `rebel games`); default liars_dice")
    g.add_argument("--dice", type=int, metavar="D", help="Liar's Dice: dice per player (game.num_dice)")
    g.add_argument("--faces", type=int, metavar="F", help="Liar's Dice: faces per die (game.num_faces)")
    s = p.add_argument_group("solver")
    s.add_argument("--solver", choices=SOLVERS,
                   help="; ".join(f"{k}: {v}" for k, v in SOLVER_HELP.items()) + " (default lcfr)")
    s.add_argument("--iters", "--iterations", dest="iters", type=non_negative_int, metavar="N",
                   help="alternating half-iterations (paper counting; default 1024)")
    s.add_argument("--optimistic", action="store_true", default=None, help="optimistic FP (fp, lfp only)")
    s.add_argument("--dcfr-alpha", type=finite_float, metavar="A", help="DCFR alpha (default 1.5)")
    s.add_argument("--dcfr-beta", type=finite_float, metavar="B", help="DCFR beta (default 0)")
    s.add_argument("--dcfr-gamma", type=finite_float, metavar="G", help="DCFR gamma (default 2)")
    s.add_argument("--off-path", choices=OFF_PATH_MODES,
                   help="CFR solvers: nodes the current iterate reaches with probability 0; "
                        + "; ".join(f"{k}: {v}" for k, v in OFF_PATH_HELP.items()) + " (solver.off_path)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", default=None, help="print exactly one JSON object on stdout")
    o.add_argument("--policy-out", metavar="FILE", help="write the average policy (.json or .npz)")
    o.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help="never show a progress bar")
    p.set_defaults(handler=run)


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    """The command-line flags that were given, as a nested config layer."""
    game = {"name": args.game, "num_dice": args.dice, "num_faces": args.faces}
    solver = {"name": args.solver, "iterations": args.iters, "optimistic": args.optimistic,
              "dcfr_alpha": args.dcfr_alpha, "dcfr_beta": args.dcfr_beta, "dcfr_gamma": args.dcfr_gamma,
              "off_path": args.off_path}
    output = {"json": args.json, "policy_out": args.policy_out, "progress": args.progress}
    layer = {name: {k: v for k, v in section.items() if v is not None}
             for name, section in (("game", game), ("solver", solver), ("output", output))}
    return {k: v for k, v in layer.items() if v}


def _check(cfg: SolveConfig) -> None:
    """Rejects requests that would fail later, so they are reported as usage errors."""
    if cfg.solver.name not in SOLVERS:
        raise UsageError(f"unknown solver {cfg.solver.name!r}; choose one of {', '.join(SOLVERS)}")
    try:
        check_iterations(cfg.solver.iterations)
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None
    if cfg.solver.optimistic and cfg.solver.name not in ("fp", "lfp"):
        raise UsageError(f"--optimistic applies to fp and lfp, not {cfg.solver.name}")
    out = cfg.output.policy_out
    if out is not None:
        if not out.lower().endswith((".json", ".npz")):
            raise UsageError(f"--policy-out {out!r} must end in .json or .npz")
        folder = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(folder):
            raise UsageError(f"--policy-out: folder {folder!r} does not exist")


def _print_table(result: SolveResult, game_text: str, policy_out: str | None) -> None:
    solver = f"{result.solver}, {result.iterations} iterations"
    if result.solver not in ("fp", "lfp"):
        solver += f", off-path {result.off_path}"
    rows = [
        ("game", game_text),
        ("solver", solver),
        ("exploitability", f"{result.exploitability:.9g}"),
        ("br_values", f"{result.br_values[0]:.9g}, {result.br_values[1]:.9g}"),
        ("game_value", f"{result.game_value:.9g}"),
        ("seconds", f"{result.seconds:.4f}"),
    ]
    if policy_out:
        rows.append(("policy_out", policy_out))
    for key, value in rows:
        print(f"{key:<15} {value}")


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel solve``."""
    try:
        cfg = load_solve_config(args.config, args.overrides, _flags(args))
    except ConfigError as e:
        raise UsageError(str(e)) from None
    _check(cfg)
    game = cfg.game.make()
    try:
        tree = _core.build_tree(game)  # refuses games too large for memory, before allocating
    except ValueError as e:
        raise UsageError(str(e)) from None
    log.info("config: %s", cfg.to_dict())

    s = cfg.solver
    result = solve(game, s.name, s.iterations, optimistic=s.optimistic, dcfr_alpha=s.dcfr_alpha,
                   dcfr_beta=s.dcfr_beta, dcfr_gamma=s.dcfr_gamma, off_path=s.off_path,
                   progress=cfg.output.progress and sys.stderr.isatty(), tree=tree)
    if cfg.output.policy_out:
        save_policy(cfg.output.policy_out, game, result.policy, tree)
        log.info("wrote policy to %s", cfg.output.policy_out)

    if cfg.output.json:
        summary = result.summary()
        if cfg.output.policy_out:
            summary["policy_out"] = cfg.output.policy_out
        print_json(summary)
    else:
        _print_table(result, game.description(), cfg.output.policy_out)
    return 0
