"""``rebel eval``: evaluate ReBeL's test-time search exactly.

Reports the exploitability of the full-game solver at the same iteration count, of
mode (a) (each subgame's average policy) and of mode (b), the paper's protocol (each
subgame stopped at a random iteration; the reach-weighted average of N sampled full-game
policies, at every power of two up to N).

Examples::

    rebel eval --game liars_dice --dice 1 --faces 4 --net zero --depth 2 --iters 1024 --repeats 16
    rebel eval --game kuhn --net oracle --depth 2 --iters 1024 --repeats 256 --json
    rebel eval --net runs/exp/weights.bin --solver fp --repeats 1024 --threads 2 --policy-out b.json
    rebel eval --config my_eval.yaml search.iterations=256 game.num_faces=5
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from typing import Any, Dict

from rebel.cli_common import UsageError, non_negative_int, print_json
from rebel.evaluate import LEAF_ERROR_KINDS, EvalSettings, evaluate, mode_b_table, public_view
from rebel.eval_config import ConfigError, EvalConfig, load_eval_config
from rebel.games import game_param_defaults
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
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="dotted config overrides, e.g. search.iterations=256 (applied after --config)")
    p.add_argument("--config", metavar="FILE", help="YAML config with sections game, search, output")
    g = p.add_argument_group("game")
    g.add_argument("--game", help="game name (see `rebel games`; default liars_dice)")
    g.add_argument("--dice", type=int, metavar="D", help="Liar's Dice: dice per player (default 1)")
    g.add_argument("--faces", type=int, metavar="F", help="Liar's Dice: faces per die (default 4)")
    s = p.add_argument_group("search")
    s.add_argument("--net", metavar="{zero,oracle,PATH}",
                   help="leaf values: 'zero' (default), 'oracle' (exact, solves below each leaf) or an exported "
                        "MLP weights file")
    s.add_argument("--solver", choices=SOLVER_CHOICES,
                   help="cfr = linear CFR-D (the paper's, default), fp = linear FP; the others as in `rebel solve`")
    s.add_argument("--depth", type=int, help="actions per subgame (default 2)")
    s.add_argument("--iters", "--iterations", dest="iters", type=int,
                   help="half-iterations per subgame and for the full-game baseline (default 1024)")
    s.add_argument("--repeats", type=int, help="N: sampled full-game policies for mode (b) (default 1024)")
    s.add_argument("--threads", type=int, help="threads computing the sampled policies (default 2)")
    s.add_argument("--seed", type=non_negative_int, help="seed of the sampled policies (default 0)")
    s.add_argument("--oracle-iters", type=int, metavar="N",
                   help="iterations of each oracle solve (default: --iters)")
    s.add_argument("--oracle-solver", choices=SOLVER_CHOICES,
                   help="tabular solver of each oracle solve (default lcfr, as the original ReBeL)")
    s.add_argument("--oracle-values", choices=("root_mean", "best_response"),
                   help="oracle answer: the linear mean of the iterates' root values (default, the original "
                        "ReBeL's) or best-response values against the solved average policy")
    s.add_argument("--off-path", choices=OFF_PATH_MODES,
                   help="CFR solvers (search, full game and oracle): nodes the current iterate reaches with "
                        "probability 0; " + "; ".join(f"{k}: {v}" for k, v in OFF_PATH_HELP.items())
                        + f" (default {DEFAULT_OFF_PATH})")
    s.add_argument("--leaf-error", type=float, metavar="DELTA",
                   help="add a deterministic error of max norm DELTA (over hands, per query) to the net's values "
                        "(default 0: none); for testing the safe-search bound")
    s.add_argument("--leaf-error-kind", choices=LEAF_ERROR_KINDS,
                   help="shape of that error: random (fixed per public state, default), bias (favours player 0) "
                        "or noise (differs with the beliefs)")
    s.add_argument("--leaf-error-seed", type=non_negative_int, metavar="S", help="seed of the error (default 0)")
    s.add_argument("--no-mode-a", dest="mode_a", action="store_false", default=None, help="skip mode (a)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", default=None, help="print exactly one JSON object on stdout")
    o.add_argument("--policy-out", metavar="FILE", help="write the mode-(b) averaged policy (.json or .npz)")
    o.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help="never show a progress bar")
    p.set_defaults(handler=run)


def _flags(args: argparse.Namespace) -> Dict[str, Any]:
    """The command-line flags that were given, as a nested config layer."""
    game = {"name": args.game, "num_dice": args.dice, "num_faces": args.faces}
    search = {"net": args.net, "solver": args.solver, "depth": args.depth, "iterations": args.iters,
              "repeats": args.repeats, "threads": args.threads, "seed": args.seed,
              "oracle_iterations": args.oracle_iters, "oracle_solver": args.oracle_solver,
              "oracle_values": args.oracle_values, "off_path": args.off_path, "mode_a": args.mode_a,
              "leaf_error": args.leaf_error, "leaf_error_kind": args.leaf_error_kind,
              "leaf_error_seed": args.leaf_error_seed}
    output = {"json": args.json, "policy_out": args.policy_out, "progress": args.progress}
    layer = {name: {k: v for k, v in section.items() if v is not None}
             for name, section in (("game", game), ("search", search), ("output", output))}
    return {k: v for k, v in layer.items() if v}


def _config(args: argparse.Namespace) -> EvalConfig:
    if (args.dice is not None or args.faces is not None) and args.game is not None:
        try:
            if "num_dice" not in game_param_defaults(args.game):
                raise UsageError(f"--dice/--faces do not apply to {args.game}")
        except ValueError as e:
            raise UsageError(str(e)) from None
    try:
        cfg = load_eval_config(args.config, args.overrides, _flags(args))
    except ConfigError as e:
        raise UsageError(str(e)) from None
    s, out = cfg.search, cfg.output
    for flag, key in (("depth", "depth"), ("iters", "iterations"), ("repeats", "repeats"), ("threads", "threads")):
        if getattr(s, key) < 1:
            raise UsageError(f"--{flag} must be >= 1, got {getattr(s, key)} (search.{key})")
    if s.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {s.seed} (search.seed)")
    if s.oracle_iterations is not None and s.oracle_iterations < 1:
        raise UsageError(f"--oracle-iters must be >= 1, got {s.oracle_iterations} (search.oracle_iterations)")
    for key, choices in (("solver", SOLVER_CHOICES), ("oracle_solver", SOLVER_CHOICES),
                         ("oracle_values", ("root_mean", "best_response")), ("off_path", OFF_PATH_MODES),
                         ("leaf_error_kind", LEAF_ERROR_KINDS)):
        if getattr(s, key) not in choices:
            raise UsageError(f"search.{key} must be one of {', '.join(choices)}, got {getattr(s, key)!r}")
    if not math.isfinite(s.leaf_error) or s.leaf_error < 0:
        raise UsageError(f"--leaf-error must be finite and >= 0, got {s.leaf_error} (search.leaf_error)")
    if s.leaf_error_seed < 0:
        raise UsageError(f"--leaf-error-seed must be >= 0, got {s.leaf_error_seed} (search.leaf_error_seed)")
    if s.net not in ("zero", "oracle") and not os.path.isfile(s.net):
        raise UsageError(f"--net must be 'zero', 'oracle' or a weights file; {s.net!r} is not a file")
    if out.policy_out is not None:
        if not out.policy_out.lower().endswith((".json", ".npz")):
            raise UsageError(f"--policy-out {out.policy_out!r} must end in .json or .npz")
        folder = os.path.dirname(os.path.abspath(out.policy_out))
        if not os.path.isdir(folder):
            raise UsageError(f"--policy-out: folder {folder!r} does not exist")
    return cfg


def _settings(cfg: EvalConfig) -> EvalSettings:
    game = cfg.game.as_dict()
    s = cfg.search
    return EvalSettings(
        game=game.pop("name"), game_params=game, net=s.net, solver=s.solver, depth=s.depth,
        iterations=s.iterations, repeats=s.repeats, threads=s.threads, seed=s.seed,
        oracle_iterations=s.oracle_iterations, oracle_solver=s.oracle_solver, oracle_values=s.oracle_values,
        mode_a=s.mode_a, off_path=s.off_path, leaf_error=s.leaf_error, leaf_error_kind=s.leaf_error_kind,
        leaf_error_seed=s.leaf_error_seed,
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
    cfg = _config(args)
    settings = _settings(cfg)
    policy_out = cfg.output.policy_out
    bar, update = _progress_bar(cfg.output.progress and sys.stderr.isatty(), settings.repeats)
    try:
        try:
            result = evaluate(settings, progress=update)
        except ValueError as e:  # e.g. a weights file that does not fit the game
            raise UsageError(str(e)) from None
    finally:
        if bar is not None:
            bar.close()
    if policy_out:
        save_policy(policy_out, result["_game"], result["_mode_b_policy"], result["_full_tree"])
        log.info("wrote the mode-(b) policy to %s", policy_out)
    summary = public_view(result)
    if policy_out:
        summary["policy_out"] = policy_out
    if cfg.output.json:
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
    if "leaf_error" in summary:
        e = summary["leaf_error"]
        print(f"leaf error      delta={e['delta']} kind={e['kind']} seed={e['seed']} (added to the net's values)")
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

