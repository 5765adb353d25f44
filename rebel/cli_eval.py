"""``rebel eval``: evaluate ReBeL's test-time search exactly.

Reports the exploitability of the full-game solver at the same iteration count, of
mode (a) (each subgame's average policy) and of mode (b), the paper's protocol (each
subgame stopped at a random iteration; the reach-weighted average of N sampled full-game
policies, at every power of two up to N).

Examples::

    rebel eval --game liars_dice --dice 1 --faces 4 --net zero --depth 2 --iters 1024 --repeats 16
    rebel eval --game kuhn --net oracle --depth 2 --iters 1024 --repeats 256 --json
    rebel eval --net runs/exp/weights.bin --solver fp --repeats 1024 --threads 2 --policy-out b.json
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any, Dict

from rebel.cli_common import UsageError, non_negative_int, print_json
from rebel.evaluate import EvalSettings, evaluate, mode_b_table, public_view
from rebel.games import game_from_config, game_param_defaults
from rebel.policy_io import save_policy
from rebel.solve import DEFAULT_OFF_PATH, OFF_PATH_HELP, OFF_PATH_MODES

log = logging.getLogger(__name__)

SOLVER_CHOICES = ("cfr", "fp", "lcfr", "lfp", "cfr+", "dcfr")


def register(subparsers: Any) -> None:
    """Adds the ``eval`` subcommand."""
    p = subparsers.add_parser(
        "eval",
        help="evaluate test-time search (modes a and b) exactly",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = p.add_argument_group("game")
    g.add_argument("--game", default="liars_dice", help="game name (see `rebel games`)")
    g.add_argument("--dice", type=int, metavar="D", help="Liar's Dice: dice per player (default 1)")
    g.add_argument("--faces", type=int, metavar="F", help="Liar's Dice: faces per die (default 4)")
    s = p.add_argument_group("search")
    s.add_argument("--net", default="zero", metavar="{zero,oracle,PATH}",
                   help="leaf values: 'zero', 'oracle' (exact, solves below each leaf) or an exported MLP weights file")
    s.add_argument("--solver", default="cfr", choices=SOLVER_CHOICES,
                   help="cfr = linear CFR-D (the paper's), fp = linear FP; the others as in `rebel solve`")
    s.add_argument("--depth", type=int, default=2, help="actions per subgame (>= 1)")
    s.add_argument("--iters", "--iterations", dest="iters", type=int, default=1024,
                   help="half-iterations per subgame and for the full-game baseline")
    s.add_argument("--repeats", type=int, default=1024, help="N: sampled full-game policies for mode (b)")
    s.add_argument("--threads", type=int, default=2, help="threads computing the sampled policies")
    s.add_argument("--seed", type=non_negative_int, default=0, help="seed of the sampled policies")
    s.add_argument("--oracle-iters", type=int, metavar="N",
                   help="iterations of each oracle solve (default: --iters)")
    s.add_argument("--oracle-solver", default="lcfr", choices=SOLVER_CHOICES,
                   help="tabular solver of each oracle solve (default lcfr, as the original ReBeL)")
    s.add_argument("--oracle-values", default="root_mean", choices=("root_mean", "best_response"),
                   help="oracle answer: the linear mean of the iterates' root values (default, the original "
                        "ReBeL's) or best-response values against the solved average policy")
    s.add_argument("--off-path", default=DEFAULT_OFF_PATH, choices=OFF_PATH_MODES,
                   help="CFR solvers (search, full game and oracle): nodes the current iterate reaches with "
                        "probability 0; " + "; ".join(f"{k}: {v}" for k, v in OFF_PATH_HELP.items())
                        + f" (default {DEFAULT_OFF_PATH})")
    s.add_argument("--no-mode-a", dest="mode_a", action="store_false", help="skip mode (a)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    o.add_argument("--policy-out", metavar="FILE", help="write the mode-(b) averaged policy (.json or .npz)")
    o.add_argument("--no-progress", dest="progress", action="store_false", help="never show a progress bar")
    p.set_defaults(handler=run)


def _settings(args: argparse.Namespace) -> EvalSettings:
    params: Dict[str, int] = {}
    try:
        defaults = game_param_defaults(args.game)
    except (KeyError, ValueError) as e:
        raise UsageError(str(e).strip("'\"")) from None
    if args.dice is not None or args.faces is not None:
        if "num_dice" not in defaults:
            raise UsageError(f"--dice/--faces do not apply to {args.game}")
    for key, value in (("num_dice", args.dice), ("num_faces", args.faces)):
        if value is not None:
            params[key] = value
    params = {**defaults, **params}
    try:
        game_from_config({"name": args.game, **params})  # validates sizes before any work
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(str(e).strip("'\"")) from None
    for name in ("depth", "iters", "repeats", "threads"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.oracle_iters is not None and args.oracle_iters < 1:
        raise UsageError(f"--oracle-iters must be >= 1, got {args.oracle_iters}")
    if args.net not in ("zero", "oracle") and not os.path.isfile(args.net):
        raise UsageError(f"--net must be 'zero', 'oracle' or a weights file; {args.net!r} is not a file")
    if args.policy_out is not None:
        if not args.policy_out.lower().endswith((".json", ".npz")):
            raise UsageError(f"--policy-out {args.policy_out!r} must end in .json or .npz")
        folder = os.path.dirname(os.path.abspath(args.policy_out))
        if not os.path.isdir(folder):
            raise UsageError(f"--policy-out: folder {folder!r} does not exist")
    return EvalSettings(
        game=args.game, game_params=params, net=args.net, solver=args.solver, depth=args.depth,
        iterations=args.iters, repeats=args.repeats, threads=args.threads, seed=args.seed,
        oracle_iterations=args.oracle_iters, oracle_solver=args.oracle_solver, oracle_values=args.oracle_values,
        mode_a=args.mode_a, off_path=args.off_path,
    )


def _progress_bar(enabled: bool, total: int):
    if not enabled:
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total, desc="sampled policies", unit="policy", delay=2.0, file=sys.stderr)

    def update(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    return bar, update


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel eval``."""
    settings = _settings(args)
    bar, update = _progress_bar(args.progress and sys.stderr.isatty(), settings.repeats)
    try:
        try:
            result = evaluate(settings, progress=update)
        except ValueError as e:  # e.g. a weights file that does not fit the game
            raise UsageError(str(e)) from None
    finally:
        if bar is not None:
            bar.close()
    if args.policy_out:
        save_policy(args.policy_out, result["_game"], result["_mode_b_policy"], result["_full_tree"])
        log.info("wrote the mode-(b) policy to %s", args.policy_out)
    summary = public_view(result)
    if args.policy_out:
        summary["policy_out"] = args.policy_out
    if args.json:
        print_json(summary)
    else:
        _print_report(summary)
    return 0


def _print_report(summary: Dict[str, Any]) -> None:
    game = summary["game"]
    params = ", ".join(f"{k}={v}" for k, v in game.items() if k != "name")
    solver = summary["solver"]
    print(f"game            {game['name']}({params})")
    print(f"search          net={summary['net']} solver={solver} depth={summary['depth']} "
          f"iterations={summary['iterations']} off-path={summary['off_path']} "
          f"({summary['search_roots']} search roots)")
    if "full_game" in summary:
        print(f"full-game {solver:<6}exploitability {summary['full_game']['exploitability']:.6f}")
    if "mode_a" in summary:
        print(f"mode (a)        exploitability {summary['mode_a']['exploitability']:.6f}  (average policies)")
    print("mode (b)        exploitability of the average of N sampled policies:")
    for line in mode_b_table(summary):
        print(line)
    seconds = summary["seconds"]
    print("seconds         " + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items()))
    if summary.get("policy_out"):
        print(f"policy_out      {summary['policy_out']}")

