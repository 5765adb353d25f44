"""``rebel eval``: evaluate ReBeL's test-time search exactly."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import asdict
from typing import Any, Dict, List, Optional, Tuple

from rebel.cli.common import (
    EXIT_OUTPUT,
    INT32_MAX,
    MAX_THREADS,
    UsageError,
    add_game_args,
    add_output_args,
    add_subcommand,
    apply_game_flags,
    check_choice,
    check_net_game,
    check_nonnegative_float,
    check_output_file,
    check_range,
    default_help,
    full_tree,
    int_arg,
    print_json,
    read_net_file_metadata,
    save_policy_or_keep,
)
from rebel.config.common import given_settings
from rebel.config.eval import ConfigError, EvalConfig, load_eval_config
from rebel.nets.precision import PRECISIONS, check_precision
from rebel.nets.pretrained import resolve_net, resolve_policy_net
from rebel.nets.weights_io import SEARCH_KEYS
from rebel.search.evaluate import mode_b_table, public_view
from rebel.search.settings import BACKENDS, CHANCE_LEAVES, LEAF_ERROR_KINDS, MAX_WARM_START, ORACLE_VALUES
from rebel.search.solve import OFF_PATH_HELP, OFF_PATH_MODES, SEARCH_SOLVERS, SOLVER_HELP, SOLVERS

log = logging.getLogger(__name__)

DEFAULTS: Dict[str, Any] = asdict(EvalConfig())
UINT64_MAX = 2**64 - 1

DESCRIPTION = """\
Evaluates ReBeL's test-time search exactly. Reports the exploitability of the full-game
solver at the same iteration count, of mode (a) (each subgame's average policy) and of
mode (b), the paper's protocol (each subgame stopped at a random iteration; the
reach-weighted average of N sampled full-game policies, at every power of two up to N).
Solver names mean the same algorithm as in `rebel solve`; the paper's is lcfr (linear
CFR-D). Settings come from the built-in defaults, then --config FILE, then dotted
section.key=value overrides, then the flags below."""

EXAMPLES = """\
  rebel eval --game liars_dice --dice 1 --faces 4 --net zero --depth 2 --iters 1024 --repeats 16
  rebel eval --game kuhn --net oracle --depth 2 --iters 1024 --repeats 256 --json
  rebel eval --net runs/NAME/weights.bin --solver lfp --repeats 1024 --threads 2 --policy-out b.json
  rebel eval --config my_eval.yaml search.iterations=256 game.num_faces=5
  rebel eval --net runs/NAME/weights.bin --policy-net runs/NAME/policy.bin --warm-start 15 --iters 256
  rebel eval --net pretrained:1x4f --policy-net pretrained:1x4f-policy --warm-start 15 --warm-prior 10 --iters 256"""


def register(subparsers: Any) -> None:
    """Adds the ``eval`` subcommand."""
    p = add_subcommand(subparsers, "eval", "evaluate test-time search (modes a and b) exactly", DESCRIPTION, EXAMPLES)
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="dotted config overrides, e.g. search.iterations=256 (applied after --config)")
    p.add_argument("--config", metavar="FILE", help="YAML config with sections game, search, output")
    add_game_args(p, DEFAULTS)
    s = p.add_argument_group("search")
    s.add_argument("--net", metavar="{zero,oracle,pretrained:NAME,PATH}", help=default_help(
        "leaf values: zero, oracle (exact: solves below each leaf), a shipped net (`rebel pretrained`) or an "
        "exported MLP weights file (docs/weights_format.md); a net's file names its game and search (depth, "
        "solver, T, chance leaves), which are used unless set here; a net of another game is refused",
        "search.net", DEFAULTS))
    s.add_argument("--solver", choices=SEARCH_SOLVERS, help=default_help(
        "subgame and full-game solver; " + "; ".join(f"{k}: {v}" for k, v in SOLVER_HELP.items()),
        "search.solver", DEFAULTS))
    s.add_argument("--depth", type=int_arg, metavar="N",
                   help=default_help("actions per subgame", "search.depth", DEFAULTS))
    s.add_argument("--iters", "--iterations", dest="iters", type=int_arg, metavar="N", help=default_help(
        "half-iterations per subgame and for the full-game baseline", "search.iterations", DEFAULTS))
    s.add_argument("--repeats", type=int_arg, metavar="N",
                   help=default_help("sampled full-game policies of mode (b)", "search.repeats", DEFAULTS))
    s.add_argument("--threads", type=int_arg, metavar="N",
                   help=default_help("threads computing the sampled policies", "search.threads", DEFAULTS))
    s.add_argument("--seed", type=int_arg, metavar="N",
                   help=default_help("seed of the sampled policies", "search.seed", DEFAULTS))
    s.add_argument("--oracle-iters", type=int_arg, metavar="N", help=default_help(
        "iterations of each oracle solve; none: the same as --iters", "search.oracle_iterations", DEFAULTS))
    s.add_argument("--oracle-solver", choices=SOLVERS, help=default_help(
        "solver of each oracle solve (the original ReBeL's: lcfr)", "search.oracle_solver", DEFAULTS))
    s.add_argument("--oracle-values", choices=ORACLE_VALUES, help=default_help(
        "oracle answer: the linear mean of the iterates' root values (the original ReBeL's) or "
        "best-response values against the solved average policy", "search.oracle_values", DEFAULTS))
    s.add_argument("--off-path", choices=OFF_PATH_MODES, help=default_help(
        "CFR solvers (search, full game and oracle): nodes the current iterate reaches with probability 0; "
        + "; ".join(f"{k}: {v}" for k, v in OFF_PATH_HELP.items()), "search.off_path", DEFAULTS))
    s.add_argument("--leaf-error", type=float, metavar="DELTA", help=default_help(
        "add a deterministic error of max norm DELTA (over hands, per query) to the net's values, to test the "
        "safe-search bound; 0: none", "search.leaf_error", DEFAULTS))
    s.add_argument("--leaf-error-kind", choices=LEAF_ERROR_KINDS, help=default_help(
        "shape of that error: random (fixed per public state), bias (favours player 0) or noise (differs with "
        "the beliefs)", "search.leaf_error_kind", DEFAULTS))
    s.add_argument("--leaf-error-seed", type=int_arg, metavar="N",
                   help=default_help("seed of the error", "search.leaf_error_seed", DEFAULTS))
    s.add_argument("--precision", choices=PRECISIONS, help=default_help(
        "arithmetic of an MLP net: fp32; bf16 (hidden-to-hidden products in bfloat16, float32 sums; needs "
        "AMX-BF16 or AVX512_BF16); int16 (those layers quantised to int16 per row, exact int32 sums; needs "
        "AVX512_VNNI); auto (bf16 where it is faster on this CPU, else int16 where it runs, else fp32)",
        "search.precision", DEFAULTS))
    s.add_argument("--policy-net", metavar="{pretrained:NAME,PATH}", help=default_help(
        "a policy net to warm-start every subgame from: a shipped one (`rebel pretrained`) or a weights file "
        "(rebel train's policy.bin with policy.enabled=true); needs --warm-start K > 0", "search.policy_net",
        DEFAULTS))
    s.add_argument("--warm-start", type=int_arg, metavar="K", help=default_help(
        "start every subgame as if K updates had played the policy net's policy (the paper: 15); --iters more "
        "follow; 0: cold start", "search.warm_start", DEFAULTS))
    s.add_argument("--warm-prior", type=float, metavar="LAMBDA", help=default_help(
        "CFR solvers with --warm-start: the regret prior toward the policy net's policy, so the first iterates "
        "play it (csrc/solvers/warm_start.cc); 0: none", "search.warm_prior", DEFAULTS))
    s.add_argument("--chance-leaves", choices=CHANCE_LEAVES, help=default_help(
        "games with a public deal (Leduc): a subgame ends after the deal (each dealt card is a leaf and starts "
        "the next search; what self-play trains the net on) or at the deal (the PBS before the card is the "
        "leaf and the next search's root)", "search.chance_leaves", DEFAULTS))
    s.add_argument("--no-mode-a", dest="mode_a", action="store_false", default=None,
                   help=default_help("skip mode (a)", "search.mode_a", DEFAULTS))
    r = p.add_argument_group("distributed mode (b) (optional extra: pip install '.[ray]'; docs/distributed.md)")
    r.add_argument("--backend", choices=BACKENDS, help=default_help(
        "threads (this process) or ray (mode (b)'s sampled policies split across Ray actors; same result)",
        "search.backend", DEFAULTS))
    r.add_argument("--ray-address", metavar="ADDR", help=default_help(
        "'' starts a local Ray, 'auto' joins this machine's cluster, or host:port / ray://host:port",
        "ray.address", DEFAULTS))
    r.add_argument("--ray-workers", type=int_arg, metavar="N", help=default_help(
        "Ray actors, each with --threads threads", "ray.workers", DEFAULTS))
    r.add_argument("--ray-num-cpus", type=int_arg, metavar="N", help=default_help(
        "CPUs of a local Ray (default: this machine's)", "ray.num_cpus", DEFAULTS))
    add_output_args(p, DEFAULTS, "the mode-(b) averaged policy")
    p.set_defaults(handler=run)


def _flags(args: argparse.Namespace) -> Dict[str, Any]:
    """The command-line flags that were given, as a nested config layer."""
    game = {"name": args.game}  # --dice and --faces are applied by apply_game_flags
    search = {"net": args.net, "solver": args.solver, "depth": args.depth, "iterations": args.iters,
              "repeats": args.repeats, "threads": args.threads, "seed": args.seed,
              "oracle_iterations": args.oracle_iters, "oracle_solver": args.oracle_solver,
              "oracle_values": args.oracle_values, "off_path": args.off_path, "mode_a": args.mode_a,
              "leaf_error": args.leaf_error, "leaf_error_kind": args.leaf_error_kind,
              "leaf_error_seed": args.leaf_error_seed, "precision": args.precision, "backend": args.backend,
              "policy_net": args.policy_net, "warm_start": args.warm_start,
              "warm_prior": args.warm_prior, "chance_leaves": args.chance_leaves}
    output = {"json": args.json, "policy_out": args.policy_out, "progress": args.progress}
    ray = {"address": args.ray_address, "workers": args.ray_workers, "num_cpus": args.ray_num_cpus}
    layer = {name: {k: v for k, v in section.items() if v is not None}
             for name, section in (("game", game), ("search", search), ("output", output), ("ray", ray))}
    return {k: v for k, v in layer.items() if v}


def _config(args: argparse.Namespace) -> EvalConfig:
    """The resolved configuration, every value checked before anything is computed."""
    flags = _flags(args)
    try:
        given = given_settings(args.config, args.overrides, flags)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    net_label = str(given.get("search.net", DEFAULTS["search"]["net"]))
    try:
        net_path = resolve_net(net_label)
    except ValueError as e:
        raise UsageError(f"--net: {e}") from None
    meta = None
    if net_path not in ("zero", "oracle") and os.path.isfile(net_path):
        meta = read_net_file_metadata("--net", net_path)
    base, args.from_net = _net_layer(meta, given)
    try:
        cfg = load_eval_config(args.config, args.overrides, flags, base=base)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    cfg.search.net = net_path
    try:
        cfg.search.policy_net = resolve_policy_net(cfg.search.policy_net)
    except ValueError as e:
        raise UsageError(f"--policy-net: {e}") from None
    apply_game_flags(cfg.game, args)
    check_net_game("--net", net_label, meta, cfg.game)
    if cfg.search.policy_net and os.path.isfile(cfg.search.policy_net):
        check_net_game("--policy-net", cfg.search.policy_net,
                       read_net_file_metadata("--policy-net", cfg.search.policy_net, kind="policy"), cfg.game)
    s, out = cfg.search, cfg.output
    check_range(args, "--depth", "search.depth", s.depth, 1)
    check_range(args, "--iters", "search.iterations", s.iterations, 1)
    check_range(args, "--repeats", "search.repeats", s.repeats, 1)
    check_range(args, "--threads", "search.threads", s.threads, 1, MAX_THREADS)
    check_range(args, "--seed", "search.seed", s.seed, 0, UINT64_MAX)
    if s.oracle_iterations is not None:
        check_range(args, "--oracle-iters", "search.oracle_iterations", s.oracle_iterations, 1, INT32_MAX)
    check_choice(args, "--solver", "search.solver", s.solver, SEARCH_SOLVERS)
    check_choice(args, "--oracle-solver", "search.oracle_solver", s.oracle_solver, SOLVERS)
    check_choice(args, "--oracle-values", "search.oracle_values", s.oracle_values, ORACLE_VALUES)
    check_choice(args, "--off-path", "search.off_path", s.off_path, OFF_PATH_MODES)
    check_choice(args, "--leaf-error-kind", "search.leaf_error_kind", s.leaf_error_kind, LEAF_ERROR_KINDS)
    check_choice(args, "--precision", "search.precision", s.precision, PRECISIONS)
    if s.precision in ("bf16", "int16"):
        try:
            check_precision(s.precision)
        except ValueError as e:
            raise UsageError(f"{e} (--precision / search.precision)") from None
    check_choice(args, "--backend", "search.backend", s.backend, BACKENDS)
    check_choice(args, "--chance-leaves", "search.chance_leaves", s.chance_leaves, CHANCE_LEAVES)
    check_range(args, "--ray-workers", "ray.workers", cfg.ray.workers, 1, 4096)
    if cfg.ray.num_cpus is not None:
        check_range(args, "--ray-num-cpus", "ray.num_cpus", cfg.ray.num_cpus, 1, INT32_MAX)
    check_nonnegative_float(args, "--leaf-error", "search.leaf_error", s.leaf_error)
    check_range(args, "--leaf-error-seed", "search.leaf_error_seed", s.leaf_error_seed, 0, UINT64_MAX)
    if s.net not in ("zero", "oracle") and not os.path.isfile(s.net):
        raise UsageError(f"--net must be zero, oracle or a weights file; {s.net!r} is not a file (search.net)")
    check_range(args, "--warm-start", "search.warm_start", s.warm_start, 0, MAX_WARM_START)
    if s.policy_net and not os.path.isfile(s.policy_net):
        raise UsageError(f"--policy-net: {s.policy_net!r} is not a file (search.policy_net)")
    if out.policy_out is not None:
        check_output_file("--policy-out", out.policy_out)
    return cfg


def _net_layer(meta: Optional[Dict[str, Any]], given: Dict[str, Any]) -> Tuple[Any, List[str]]:
    """The configuration layer under the user's (a net's game unless ``game.name`` is given, and
    its search settings: depth, solver, T, chance leaves) and what of it the user leaves in place
    and differs from the built-in defaults (``game`` first when the net names the game)."""
    if meta is None:
        return None, []
    layer: Dict[str, Any] = {"search": {k: v for k, v in meta.get("search", {}).items() if k in SEARCH_KEYS}}
    taken: List[str] = []
    if "game" in meta and "game.name" not in given:
        layer["game"] = dict(meta["game"])
        taken.append("game")
    taken += [k for k, v in layer["search"].items() if f"search.{k}" not in given and DEFAULTS["search"][k] != v]
    return ("the net's file", layer), taken


def run(args: argparse.Namespace) -> int:
    """Handler of ``rebel eval``."""
    cfg = _config(args)
    settings, ray_settings = cfg.search, cfg.ray
    game = cfg.game.make()
    full_tree(game)  # refuses games too large for memory, before any work
    policy_out = cfg.output.policy_out
    from rebel.distributed.cluster import RayUnavailable, connect, disconnect
    from rebel.distributed.evaluation import evaluate

    try:
        if settings.backend == "ray":  # before any work: Ray missing, unreachable or too small
            connect(ray_settings.address, ray_settings.num_cpus, needed_cpus=ray_settings.workers * settings.threads)
        result = evaluate(game, settings, ray_settings, progress=cfg.output.progress)
    except (ValueError, RayUnavailable) as e:  # e.g. a weights file that does not fit the game
        raise UsageError(str(e)) from None
    finally:
        disconnect()
    error = None
    if policy_out:
        error = save_policy_or_keep("--policy-out", policy_out, result["_game"], result["_mode_b_policy"],
                                    result["_full_tree"])
    summary = public_view(result)
    if args.from_net:
        summary["from_net"] = args.from_net
    if policy_out and error is None:
        summary["policy_out"] = policy_out
    if cfg.output.json:
        print_json(summary)
    else:
        _print_report(summary)
    if error:
        print(f"rebel eval: error: {error}", file=sys.stderr)
        return EXIT_OUTPUT
    return 0


def _print_report(summary: Dict[str, Any]) -> None:
    game = summary["game"]
    params = ", ".join(f"{k}={v}" for k, v in game.items() if k != "name")
    solver = summary["solver"]
    print(f"game            {game['name']}({params})")
    if summary.get("from_net"):
        print(f"from the net    {', '.join(summary['from_net'])} (its file records them; flags override)")
    print(f"search          net={summary['net']} solver={solver} depth={summary['depth']} "
          f"iterations={summary['iterations']} off-path={summary['off_path']} "
          f"({summary['search_roots']} search roots)")
    if "chance_leaves" in summary:
        print(f"subgames end    {summary['chance_leaves'].replace('_', ' ')} (the PBS before the card is the leaf)")
    if "warm_start" in summary:
        prior = f", regret prior {summary['warm_prior']:g}" if "warm_prior" in summary else ""
        print(f"warm start      policy net {summary['policy_net']}, K={summary['warm_start']} updates{prior}")
    if "net_kernel" in summary:
        k = summary["net_kernel"]
        print(f"net kernels     precision={k['precision']} isa={k['isa']}")
    if "leaf_error" in summary:
        e = summary["leaf_error"]
        print(f"leaf error      delta={e['delta']} kind={e['kind']} seed={e['seed']} (added to the net's values)")
    if "full_game" in summary:
        print(f"full-game {solver:<6}exploitability {summary['full_game']['exploitability']:.6f}")
    if "mode_a" in summary:
        print(f"mode (a)        exploitability {summary['mode_a']['exploitability']:.6f}  (average policies)")
    if "ray" in summary:
        print(f"mode (b) on     Ray, {summary['ray']['workers']} actors x {summary['threads']} threads "
              f"(address {summary['ray']['address'] or 'local'})")
    print("mode (b)        exploitability of the average of N sampled policies:")
    for line in mode_b_table(summary):
        print(line)
    seconds = summary["seconds"]
    print("seconds         " + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items()))
    if summary.get("policy_out"):
        print(f"policy_out      {summary['policy_out']}")

