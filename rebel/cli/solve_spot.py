"""``rebel solve --spot FILE``: a hold'em endgame spot solved, with per-hand results as JSON,
node locking and the strategy grid as a PNG (docs/holdem_spots.md)."""
from __future__ import annotations

import argparse
from typing import Any

from rebel import _core
from rebel.cli.common import UsageError, check_output_file, check_range, int_arg, print_json
from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_lines import find_node, format_line
from rebel.games.holdem_spot import Spot, load_spot
from rebel.search.holdem_lock import Lock, check_lock, load_lock_file, lock_line, parse_lock_option
from rebel.search.holdem_results import export_json, write_json
from rebel.search.holdem_solve import HOLDEM_SOLVERS, SpotSolveResult, parse_target, solve_spot

__all__ = ["add_spot_args", "run_spot"]


def add_spot_args(p: argparse.ArgumentParser) -> None:
    """The ``--spot`` group of ``rebel solve``."""
    h = p.add_argument_group("hold'em endgame spots (docs/holdem_spots.md)")
    h.add_argument("--spot", metavar="FILE",
                   help="solve a hold'em endgame spot file instead of a game (solvers: " + ", ".join(HOLDEM_SOLVERS)
                   + "; default dcfr, 1000 iterations at most)")
    h.add_argument("--target", metavar="T",
                   help="--spot: stop at this exploitability, chips or percent of the starting pot, e.g. 0.5%% "
                        "(default none: run --iters)")
    h.add_argument("--threads", type=int_arg, metavar="N", help="--spot: threads (default 1)")
    h.add_argument("--compress", action="store_true", default=None,
                   help="--spot: keep regrets and strategies in 16 bits with a scale per node, half the memory "
                        "(default float32)")
    h.add_argument("--isomorphism", action="store_true", default=None,
                   help="--spot: deal a turn or river card of a suit the spot cannot tell from a lower one "
                        "(same ranks on the board, ranges alike) as that suit's card, suits swapped: the same "
                        "solution in less time and memory; not with --lock (default off)")
    h.add_argument("--check-every", type=int_arg, metavar="N",
                   help="--spot: measure the exact exploitability every N iterations (default 10)")
    h.add_argument("--node", action="append", metavar="LINE",
                   help="--spot: a node for --export-json and --grid-png, by its line ('check, bet 120, call, Qs'; "
                        "'' is the root); repeat for several (default the root)")
    h.add_argument("--export-json", metavar="PATH",
                   help="--spot: write per-hand results at each --node (names, weights, reach, strategy, EV, "
                        "equity) as JSON (default none)")
    h.add_argument("--grid-png", metavar="PATH",
                   help="--spot: draw the strategy at --node on the 13 x 13 hand grid as a PNG (needs matplotlib; "
                        "default none)")
    h.add_argument("--lock", action="append", metavar="LINE=ACTION:FREQ,...",
                   help="--spot: lock a node to frequencies for every hand, e.g. 'check, bet 120=call:0.7,fold:0.3'; "
                        "several separated by ';' or repeated; the exploitability is then the rest's (default none)")
    h.add_argument("--lock-file", metavar="FILE",
                   help="--spot: locks from a YAML or JSON file, hand by hand (docs/holdem_spots.md; default none)")


def spot_only_flags(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """The flags that apply to --spot only, with their values."""
    return [("--target", args.target), ("--threads", args.threads), ("--compress", args.compress),
            ("--isomorphism", args.isomorphism), ("--check-every", args.check_every),
            ("--node", args.node), ("--export-json", args.export_json), ("--grid-png", args.grid_png),
            ("--lock", args.lock), ("--lock-file", args.lock_file)]


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _locks(args: argparse.Namespace) -> list[tuple[str, Lock]]:
    """The locks of --lock and --lock-file, each with its flag."""
    locks: list[tuple[str, Lock]] = []
    try:
        for text in args.lock or []:
            locks += [("--lock", lock) for lock in parse_lock_option(text)]
    except ValueError as e:
        raise UsageError(f"--lock: {e}") from None
    if args.lock_file is not None:
        try:
            locks += [("--lock-file", lock) for lock in load_lock_file(args.lock_file)]
        except ValueError as e:
            raise UsageError(f"--lock-file: {e}") from None
    return locks


def _check_outputs(args: argparse.Namespace) -> None:
    if args.export_json is not None:
        check_output_file("--export-json", args.export_json, (".json",))
    if args.grid_png is not None:
        check_output_file("--grid-png", args.grid_png, (".png",))
        from rebel.play.holdem_grid import require_matplotlib

        try:
            require_matplotlib()
        except ImportError as e:
            raise UsageError(f"--grid-png: {e}") from None


def _nodes(args: argparse.Namespace, game: _core.HoldemEndgame) -> list[int]:
    lines = args.node if args.node else [""]
    try:
        nodes = [find_node(game, line) for line in lines]
    except ValueError as e:
        raise UsageError(f"--node: {e}") from None
    if args.grid_png is not None:
        if len(nodes) > 1:
            raise UsageError("--grid-png draws one node: give one --node (several apply to --export-json alone)")
        if game.node(nodes[0])["kind"] != "decision":
            raise UsageError(f"--grid-png: node {format_line(lines[0])!r} is a {game.node(nodes[0])['kind']} node; "
                             "draw a node where a player acts")
    return nodes


def _print_size(args: argparse.Namespace, spot: Spot, game: _core.HoldemEndgame) -> None:
    size = game.size()
    print(f"{'spot':<15} {args.spot}: {spot.describe()}")
    print(f"{'hands':<15} OOP {game.num_hands(0)}, IP {game.num_hands(1)}")
    print(f"{'tree':<15} {size['decision_nodes']} decision nodes, {size['chance_nodes']} chance nodes, "
          f"{size['terminal_nodes']} terminal nodes, {size['infosets']} information sets"
          + (f", {size['isomorphic_deals']} deals merged by suit isomorphism" if game.isomorphism else ""))
    solver = size["solver_bytes_compressed"] if args.compress else size["solver_bytes"]
    kind = "16-bit" if args.compress else "float32"
    print(f"{'memory':<15} {_mb(solver + size['tree_bytes'])}: solver {_mb(solver)} "
          f"({kind} regrets and strategies), tree {_mb(size['tree_bytes'])}", flush=True)


def run_spot(args: argparse.Namespace) -> int:
    """``rebel solve --spot FILE``: the tree's size and memory first, then the solve (before
    and after locking when a lock leaves hands to the solver), then the outputs."""
    given = [flag for flag, value in (("--config", args.config), ("--game", args.game), ("KEY=VALUE", args.overrides),
                                      ("--policy-out", args.policy_out), ("--off-path", args.off_path),
                                      ("--optimistic", args.optimistic)) if value]
    if given:
        raise UsageError(f"--spot takes its game from the spot file: {given[0]} does not apply")
    solver = args.solver or "dcfr"
    if solver not in HOLDEM_SOLVERS:
        raise UsageError(f"--solver {solver} does not apply to --spot (choose from {', '.join(HOLDEM_SOLVERS)})")
    iterations = 1000 if args.iters is None else args.iters
    threads = 1 if args.threads is None else args.threads
    check_every = 10 if args.check_every is None else args.check_every
    check_range(args, "--iters", "", iterations, 1)
    check_range(args, "--threads", "", threads, 1, 256)
    check_range(args, "--check-every", "", check_every, 1)
    try:
        spot: Spot = load_spot(args.spot)
        target = parse_target(args.target, spot.pot) if args.target is not None else None
    except (ValueError, OSError) as e:
        raise UsageError(f"{args.spot}: {e}" if not str(e).startswith(str(args.spot)) else str(e)) from None
    flagged = _locks(args)
    locks = [lock for _, lock in flagged]
    if locks and args.isomorphism:
        raise UsageError(f"{flagged[0][0]} needs the tree without --isomorphism (a lock need not treat alike the "
                         "suits the isomorphism merges)")
    _check_outputs(args)
    game = build_endgame(spot, isomorphism=bool(args.isomorphism))
    nodes = _nodes(args, game)
    for flag, lock in flagged:
        try:
            check_lock(game, lock.line, lock.strategy)
        except ValueError as e:
            raise UsageError(f"{flag}: {e}") from None
    if not args.json:
        _print_size(args, spot, game)
    progress = bool(args.progress if args.progress is not None else True)
    engine = _core.HoldemSolver(game, solver, threads, bool(args.compress))
    result: SpotSolveResult
    if locks and not all(lock.complete for lock in locks):
        # hands a lock leaves keep the solver's strategy: solve first, as PioSOLVER users do
        _, result = solve_spot(spot, solver, iterations, target=target, check_every=check_every, progress=progress,
                               game=game, engine=engine)
        if not args.json:
            print(f"{'before locking':<15} {result.iterations} iterations, exploitability {result.exploitability:.6g} "
                  f"chips = {result.exploitability_pct:.4f}% of the pot", flush=True)
    locked = [n for lock in locks for n in lock_line(engine, game, lock.line, lock.strategy)]
    _, result = solve_spot(spot, solver, iterations, target=target, check_every=check_every, progress=progress,
                           game=game, engine=engine)
    doc = export_json(engine, game, spot, nodes, result) if args.export_json is not None else None
    if doc is not None:
        write_json(args.export_json, doc)
    if args.grid_png is not None:
        from rebel.play.holdem_grid import plot_strategy_grid

        plot_strategy_grid(engine, game, nodes[0], args.grid_png, spot=spot)
    if args.json:
        summary = result.summary()
        summary["spot"] = str(args.spot)
        summary["locked"] = [format_line(lock.line) for lock in locks]
        summary["locked_nodes"] = len(set(locked))
        for key, path in (("export_json", args.export_json), ("grid_png", args.grid_png)):
            if path is not None:
                summary[key] = path
        print_json(summary)
        return 0
    rows = [
        ("solver", f"{solver}, {result.iterations} iterations, {threads} thread{'s' if threads > 1 else ''}"
                   + (", 16-bit storage" if result.compressed else "")
                   + (", suit isomorphism" if game.isomorphism else "")),
        ("exploitability", f"{result.exploitability:.6g} chips = {result.exploitability_pct:.4f}% of the pot "
                           f"{spot.pot}" + (" (of the rest of the game: locked nodes keep their strategy)"
                                            if locks else "")),
        ("br_values", f"{result.br_values[0]:.6g}, {result.br_values[1]:.6g}"),
        ("values", f"OOP {result.values[0]:.6g}, IP {result.values[1]:.6g} (chips, from the start of the spot)"),
        ("seconds", f"{result.seconds:.3f}"),
    ]
    if locks:
        rows.append(("locked", f"{len(set(locked))} node{'s' * (len(set(locked)) != 1)}: "
                               + "; ".join(format_line(lock.line) for lock in locks)))
    if args.export_json is not None:
        rows.append(("export_json", f"{args.export_json} ({len(nodes)} node{'s' * (len(nodes) != 1)})"))
    if args.grid_png is not None:
        rows.append(("grid_png", args.grid_png))
    for key, value in rows:
        print(f"{key:<15} {value}")
    return 0
