"""``rebel solve``: solve a full game with a tabular solver and report its exploitability."""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from rebel.cli.common import (
    EXIT_OUTPUT,
    UsageError,
    add_game_args,
    add_output_args,
    add_subcommand,
    apply_game_flags,
    check_choice,
    check_output_file,
    check_range,
    default_help,
    finite_float,
    full_tree,
    int_arg,
    print_json,
    save_policy_or_keep,
)
from rebel.cli.solve_spot import add_spot_args, run_spot, spot_only_flags
from rebel.config.solve import DEFAULTS, ConfigError, SolveConfig, load_solve_config
from rebel.search.holdem_solve import HOLDEM_SOLVERS
from rebel.search.solve import FP_SOLVERS, OFF_PATH_HELP, OFF_PATH_MODES, SOLVER_HELP, SOLVERS, SolveResult, solve

log = logging.getLogger(__name__)

DESCRIPTION = """\
Solves a whole game with a tabular solver (no search, no value net) and prints the exact
exploitability of the average policy, both players' best-response values and the game
value. Settings come from the built-in defaults, then --config FILE, then dotted
section.key=value overrides, then the flags below."""

EXAMPLES = """\
  rebel solve --game liars_dice --dice 1 --faces 4 --solver lcfr --iters 1024 --json
  rebel solve --game kuhn --solver cfr+ --iters 2000 --policy-out kuhn.json
  rebel solve --config configs/solve.yaml solver.name=dcfr game.num_faces=5
  rebel solve --spot configs/spots/turn_example.yaml --target 0.5% --threads 2
  rebel solve --spot configs/spots/river_example.yaml --solver dcfr-pfs --iters 300 --json
  rebel solve --spot configs/spots/river_example.yaml --node 'bet 120' --export-json r.json --grid-png r.png
  rebel solve --spot configs/spots/river_example.yaml --lock 'bet 120=fold:0.5,call:0.5'"""


def register(subparsers: Any) -> None:
    """Adds the ``solve`` subcommand."""
    p = add_subcommand(subparsers, "solve", "solve a full game and report its exploitability", DESCRIPTION, EXAMPLES)
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="dotted config overrides, e.g. solver.iterations=256 (applied after --config)")
    p.add_argument("--config", metavar="FILE", help="YAML config (see configs/solve.yaml)")
    add_game_args(p, DEFAULTS)
    s = p.add_argument_group("solver")
    s.add_argument("--solver", choices=tuple(dict.fromkeys(SOLVERS + HOLDEM_SOLVERS)), help=default_help(
        "; ".join(f"{k}: {SOLVER_HELP[k]}" for k in SOLVERS), "solver.name", DEFAULTS))
    s.add_argument("--iters", "--iterations", dest="iters", type=int_arg, metavar="N",
                   help=default_help("alternating half-iterations, counted as in the paper", "solver.iterations",
                                     DEFAULTS))
    s.add_argument("--optimistic", action="store_true", default=None,
                   help=default_help("optimistic fictitious play (fp, lfp only)", "solver.optimistic", DEFAULTS))
    for name, letter in (("alpha", "A"), ("beta", "B"), ("gamma", "G")):
        s.add_argument(f"--dcfr-{name}", type=finite_float, metavar=letter,
                       help=default_help(f"DCFR {name}", f"solver.dcfr_{name}", DEFAULTS))
    s.add_argument("--off-path", choices=OFF_PATH_MODES, help=default_help(
        "CFR solvers: nodes the current iterate reaches with probability 0; "
        + "; ".join(f"{k}: {v}" for k, v in OFF_PATH_HELP.items()), "solver.off_path", DEFAULTS))
    add_spot_args(p)
    add_output_args(p, DEFAULTS, "the average policy")
    p.set_defaults(handler=run)


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    """The command-line flags that were given, as a nested config layer."""
    game = {"name": args.game}  # --dice and --faces are applied by apply_game_flags
    solver = {"name": args.solver, "iterations": args.iters, "optimistic": args.optimistic,
              "dcfr_alpha": args.dcfr_alpha, "dcfr_beta": args.dcfr_beta, "dcfr_gamma": args.dcfr_gamma,
              "off_path": args.off_path}
    output = {"json": args.json, "policy_out": args.policy_out, "progress": args.progress}
    layer = {name: {k: v for k, v in section.items() if v is not None}
             for name, section in (("game", game), ("solver", solver), ("output", output))}
    return {k: v for k, v in layer.items() if v}


def _check(cfg: SolveConfig, args: argparse.Namespace) -> None:
    """Rejects requests that would fail later, so they are reported as usage errors."""
    check_choice(args, "--solver", "solver.name", cfg.solver.name, SOLVERS)
    check_range(args, "--iters", "solver.iterations", cfg.solver.iterations, 1)
    if cfg.solver.optimistic and cfg.solver.name not in ("fp", "lfp"):
        raise UsageError(f"--optimistic applies to fp and lfp, not {cfg.solver.name}")
    if cfg.output.policy_out is not None:
        check_output_file("--policy-out", cfg.output.policy_out)


def _print_table(result: SolveResult, game_text: str, policy_out: str | None) -> None:
    solver = f"{result.solver}, {result.iterations} iterations"
    if result.solver not in FP_SOLVERS:
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
    if args.spot is not None:
        return run_spot(args)
    if args.solver not in (None, *SOLVERS):
        raise UsageError(f"--solver {args.solver} applies to --spot only")
    for flag, value in spot_only_flags(args):
        if value is not None:
            raise UsageError(f"{flag} applies to --spot only")
    try:
        cfg = load_solve_config(args.config, args.overrides, _flags(args))
    except ConfigError as e:
        raise UsageError(str(e)) from None
    apply_game_flags(cfg.game, args)
    _check(cfg, args)
    game = cfg.game.make()
    tree = full_tree(game)  # refuses games too large for memory, before allocating
    log.info("config: %s", cfg.to_dict())

    s, out = cfg.solver, cfg.output
    result = solve(game, s.name, s.iterations, optimistic=s.optimistic, dcfr_alpha=s.dcfr_alpha,
                   dcfr_beta=s.dcfr_beta, dcfr_gamma=s.dcfr_gamma, off_path=s.off_path,
                   progress=out.progress, tree=tree)
    error = save_policy_or_keep("--policy-out", out.policy_out, game, result.policy, tree) if out.policy_out else None
    policy_out = out.policy_out if out.policy_out and error is None else None
    if out.json:
        summary = result.summary()
        if policy_out:
            summary["policy_out"] = policy_out
        print_json(summary)
    else:
        _print_table(result, game.description(), policy_out)
    if error:
        print(f"rebel solve: error: {error}", file=sys.stderr)
        return EXIT_OUTPUT
    return 0
