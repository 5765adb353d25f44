"""Leduc hold'em (limit and no-limit): the Table-2-style table, the learning curves and the
targets of issue 58, from our own runs.

Per game the table has:

* the full-game solvers at ``--full-iterations`` (1024): LCFR, DCFR, CFR+ and linear FP,
  solved on the whole public tree (no search);
* test-time search under the paper's protocol (mode (b): N = ``--repeats`` sampled
  policies, T = ``--iterations`` linear CFR-D iterations, subgames of a whole betting round,
  ``--depth`` 10) with the zero net, the exact-leaf (oracle) net and the trained net, each
  under every evaluation seed (``--seeds``, mean, spread and range reported);
* the trained net under a stronger search (``--stronger SOLVER:T:DEPTH``), and the same
  searches with exact leaves (``--stronger-oracle SOLVER:T:DEPTH``; the oracle keeps
  ``--iterations`` at every leaf): how low that search goes whatever the net.

Rows computed now also keep the mixture's exploitability at N = 1, 2, 4, ... of their own
samples (``curve_in_n``), tabulated as mode (b) against N: whether N limits the figure.

The trained net is the final net of its run (``weights.bin`` of the run directory given with
``--run GAME=DIR``, or of ``OUT/GAME`` which the script trains with ``rebel train GAME`` when
it holds no finished run; a killed run resumes), or with ``--net best`` the net the run chose
by ``evaluation.keep_best`` (``best.bin``: its lowest in-run figure, on evaluation seeds that
a report should not reuse). Every evaluation is cached in ``OUT/GAME/``
(one JSON per row and seed, refused if its protocol differs), so a killed script resumes;
``leduc.json`` and ``leduc.md`` gather them, ``curves_GAME.png`` plots the run's evaluations.
No-limit figures are in chips per hand and also in DeepStack-Leduc's convention
(:mod:`rebel.games.units`).

    python experiments/leduc.py                                   # both games (hours)
    python experiments/leduc.py --games leduc --run leduc=runs/leduc
    python experiments/leduc.py --quick                           # the pipeline in a minute
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from rebel.train.rundir import RunDirectory

sys.path.insert(0, str(Path(__file__).resolve().parent))

FORMAT = 1
GAMES = ("leduc", "leduc_nolimit")
FULL_SOLVERS = ("lcfr", "dcfr", "cfr+", "lfp")
#: A trained net meets issue 58's target at or below the oracle level of the same protocol
#: plus this fraction; the stronger search at or below this fraction of the protocol figure.
TRAINED_MARGIN = 0.10
STRONGER_FRACTION = 1.0 / 3.0
#: No-limit Leduc's target in DeepStack-Leduc's chips (its 1,000-iteration CFR reads about 1.0).
DEEPSTACK_TARGET = 1.0

log = logging.getLogger("leduc")


@dataclass(frozen=True)
class Protocol:
    """One search evaluation: mode (b) with these settings."""

    net: str
    solver: str
    iterations: int
    depth: int
    repeats: int
    seed: int
    precision: str = "fp32"  # the table's arithmetic, whatever kernel self-play ran
    # The oracle's own iterations at every leaf when they differ from the search's T (the
    # exact-leaf stronger searches keep the oracle rows' 1024); None: T, and left out of the
    # cache key so that rows cached before this field existed stay valid.
    oracle_iterations: Optional[int] = None

    def key(self) -> Dict[str, Any]:
        """The protocol as cached rows record it."""
        out = asdict(self)
        if out["oracle_iterations"] is None:
            del out["oracle_iterations"]
        return out


class Refused(Exception):
    """Bad arguments or a cache of another protocol: exit 2 with one line."""


def _write_json(path: Path, data: Any) -> None:
    from rebel.util.atomic_io import atomic_write_bytes

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(data, indent=1) + "\n").encode())


def cached(path: Path, protocol: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The result cached at ``path`` when it was computed with ``protocol``; None if absent."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise Refused(f"{path}: corrupt cache ({e}); remove it") from None
    if data.get("format") != FORMAT or data.get("protocol") != protocol:
        raise Refused(f"{path}: computed with another protocol ({data.get('protocol')}); remove it to recompute")
    return data


def full_game_row(game: Any, solver: str, iterations: int, out: Path) -> Dict[str, Any]:
    from rebel.search.solve import solve

    protocol = {"solver": solver, "iterations": iterations}
    path = out / f"full_{solver.replace('+', 'plus')}_{iterations}.json"
    hit = cached(path, protocol)
    if hit:
        return hit
    result = solve(game, solver, iterations, progress=False)
    row = {"format": FORMAT, "protocol": protocol, "exploitability": result.exploitability,
           "game_value": result.game_value, "seconds": result.seconds}
    _write_json(path, row)
    return row


def search_row(game: Any, protocol: Protocol, threads: int, out: Path, label: str) -> Dict[str, Any]:
    """Mode (b) of ``protocol`` on ``game`` (cached per label, search and seed)."""
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    key = protocol.key()
    oracle_t = f"_oracleT{protocol.oracle_iterations}" if protocol.oracle_iterations is not None else ""
    path = out / f"{label}_{protocol.solver.replace('+', 'plus')}_T{protocol.iterations}_d{protocol.depth}_" \
                 f"N{protocol.repeats}{oracle_t}_seed{protocol.seed}.json"
    hit = cached(path, key)
    if hit:
        return hit
    settings = EvalSettings(net=protocol.net, solver=protocol.solver, depth=protocol.depth,
                            iterations=protocol.iterations,
                            oracle_iterations=protocol.oracle_iterations or protocol.iterations,
                            repeats=protocol.repeats, threads=threads, seed=protocol.seed,
                            precision=protocol.precision, mode_a=False, full_game=False)
    result = evaluate(game, settings, progress=False)
    last = result["mode_b"][-1]
    # The mixture's exploitability at N = 1, 2, 4, ... (evaluate_sampled merges the samples in
    # order, so each entry is the protocol's figure at that N for this seed).
    curve = [[r["num_policies"], r["exploitability"]] for r in result["mode_b"]]
    row = {"format": FORMAT, "protocol": key, "exploitability": last["exploitability"],
           "br_values": last["br_values"], "seconds": result["seconds"]["mode_b"], "curve_in_n": curve}
    _write_json(path, row)
    log.info("%s %s seed %d: %.5f (%.0f s)", game.description(), label, protocol.seed, row["exploitability"],
             row["seconds"])
    return row


def summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    values = [r["exploitability"] for r in rows]
    out = {"seeds": [r["protocol"]["seed"] for r in rows], "values": values, "mean": statistics.mean(values),
           "stdev": statistics.stdev(values) if len(values) > 1 else 0.0, "min": min(values), "max": max(values)}
    if rows and all("curve_in_n" in r for r in rows):  # rows cached before curves were kept have none
        by_n: Dict[int, List[float]] = {}
        for r in rows:
            for n, e in r["curve_in_n"]:
                by_n.setdefault(n, []).append(e)
        out["mean_in_n"] = {str(n): statistics.mean(v) for n, v in sorted(by_n.items()) if len(v) == len(rows)}
    return out


def read_metrics(run_dir: Path) -> List[Dict[str, Any]]:
    """The run's metrics records (a line cut by a crash is skipped, as the trainer does)."""
    return RunDirectory(run_dir).read_metrics()


def train(game_name: str, run_dir: Path, overrides: Sequence[str]) -> None:
    """Trains (or resumes) ``rebel train GAME`` in ``run_dir`` unless it has finished."""
    rows = read_metrics(run_dir)
    if any(r.get("kind") == "final" for r in rows):
        return
    cmd = [sys.executable, "-m", "rebel", "train", "--no-progress"]
    if (run_dir / "checkpoint.pt").is_file():
        cmd += ["--resume", str(run_dir)]
    else:
        cmd += [game_name, f"run.dir={run_dir.parent}", f"run.name={run_dir.name}", *overrides]
    log.info("training: %s", " ".join(cmd[3:]))
    subprocess.run(cmd, check=True)


def run_facts(run_dir: Path, net_file: str = RunDirectory.WEIGHTS) -> Dict[str, Any]:
    """What the table says about the run: its end, examples and minutes (final record, or the
    last epoch for a run stopped by Ctrl-C), and with ``best.bin`` the net it chose."""
    rows = read_metrics(run_dir)
    final = next((r for r in reversed(rows) if r.get("kind") == "final"), None)
    last = final or next((r for r in reversed(rows) if r.get("kind") is None and "epoch" in r), None)
    if last is None:
        raise Refused(f"{run_dir}: no trained epoch in metrics.jsonl")
    if not (run_dir / net_file).is_file():
        hint = " (the run was not trained with evaluation.keep_best=true)" if net_file == RunDirectory.BEST else ""
        raise Refused(f"{run_dir}: no {net_file}{hint}")
    facts = {"run_dir": str(run_dir), "epoch": last["epoch"], "examples_generated": last["examples_generated"],
             "examples_trained": last.get("examples_trained"), "wall_minutes": last["wall_seconds"] / 60,
             "finished": final is not None, "net": net_file}
    if net_file == RunDirectory.BEST:
        chosen = (final or {}).get("best")
        if chosen is None:
            raise Refused(f"{run_dir}: best.bin but no finished run's choice in metrics.jsonl (finish the run first)")
        facts["chosen"] = {k: chosen[k] for k in ("epoch", "exploitability", "exploitability_by_seed")
                           if k in chosen}
    return facts


def curves(game_name: str, run_dir: Path, oracle: Optional[float], out: Path) -> Optional[str]:
    """The run's evaluations against minutes (experiments/training_curve.py's plot)."""
    import training_curve

    evals, refs = training_curve.read(run_dir)
    if not evals:
        return None
    path = out / f"curves_{game_name}.png"
    training_curve.plot(evals, refs, oracle, f"{game_name}: training (mode b, N as the run evaluated)", str(path))
    return path.name


def game_table(game_name: str, args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    from rebel import _core
    from rebel.games.units import deepstack_leduc_chips

    game = _core.make_game(game_name)
    gout = out / game_name
    result: Dict[str, Any] = {"game": game.description(), "full_game": {}, "search": {}}
    for solver in FULL_SOLVERS:
        result["full_game"][solver] = full_game_row(game, solver, args.full_iterations, gout / "eval")
    run_dir = Path(args.runs[game_name]) if game_name in args.runs else gout / "run"
    if game_name not in args.runs and not args.no_train:
        train(game_name, run_dir, args.train_overrides)
    nets = {"zero": "zero", "oracle": "oracle"}
    net_file = RunDirectory.BEST if args.net == "best" else RunDirectory.WEIGHTS
    if (run_dir / RunDirectory.WEIGHTS).is_file():
        result["run"] = run_facts(run_dir, net_file)
        nets["trained"] = str(run_dir / net_file)
    for label, net in nets.items():
        rows = [search_row_for(game, label, net, args, seed, gout / "eval") for seed in args.seeds]
        result["search"][f"{label} net"] = summary(rows)
        if label == "trained":  # in table2.py's eval.json layout, which experiments/pretrained.py reads
            _write_json(gout / "trained_eval.json", {
                "protocol": {"mode": "b", "depth": args.depth, "iterations": args.iterations,
                             "repeats": args.repeats, "solver": args.solver, "precision": "fp32"},
                "runs": [{"seed": r["protocol"]["seed"], "exploitability": r["exploitability"],
                          "br_values": r["br_values"]} for r in rows]})
    if "trained" in nets and game_name == "leduc_nolimit" and not args.quick:
        # DeepStack-Leduc's own tree offers fold at every decision (its 1.0 and 1.37 figures are
        # measured there, full game, 1/6 ranges): the same net searched on that tree.
        ds_game = _core.make_game(game_name, {"fold_without_bet": 1})
        rows = [search_row_for(ds_game, "trained_deepstack_tree", nets["trained"], args, seed, gout / "eval")
                for seed in args.seeds]
        result["search"]["trained net, DeepStack's tree (fold at every decision)"] = summary(rows)
    if "trained" in nets:
        for solver, iterations, depth in args.stronger:
            rows = [search_row_for(game, "trained", nets["trained"], args, seed, gout / "eval",
                                   solver=solver, iterations=iterations, depth=depth) for seed in args.seeds]
            result["search"][f"trained net, {solver} T={iterations} depth {depth}"] = summary(rows)
    for solver, iterations, depth in args.stronger_oracle:
        # The same stronger search with exact leaves (the oracle at the oracle rows' own
        # iterations): how low a one-round search of this kind can go whatever the net.
        rows = [search_row_for(game, "oracle", "oracle", args, seed, gout / "eval", solver=solver,
                               iterations=iterations, depth=depth, oracle_iterations=args.iterations)
                for seed in args.seeds]
        result["search"][f"oracle net, {solver} T={iterations} depth {depth}"] = summary(rows)
    oracle = result["search"]["oracle net"]["mean"]
    if "trained" in nets:
        trained = result["search"]["trained net"]["mean"]
        result["targets"] = {"trained_within_oracle_plus_10pct": trained <= oracle * (1 + TRAINED_MARGIN),
                             "trained_over_oracle": trained / oracle}
        for key, s in result["search"].items():
            if key.startswith("trained net, ") and " T=" in key:  # the stronger searches
                result["targets"][f"{key[len('trained net, '):]} below a third"] = \
                    s["mean"] <= trained * STRONGER_FRACTION
            elif key.startswith("oracle net, ") and " T=" in key:  # the same with exact leaves
                result["targets"][f"exact leaves, {key[len('oracle net, '):]} below a third"] = \
                    s["mean"] <= trained * STRONGER_FRACTION
        if game_name == "leduc_nolimit":
            result["targets"]["trained_deepstack_chips"] = deepstack_leduc_chips(trained)
            result["targets"]["trained_at_or_below_1_deepstack_chip"] = \
                deepstack_leduc_chips(trained) <= DEEPSTACK_TARGET
            ds_tree = result["search"].get("trained net, DeepStack's tree (fold at every decision)")
            if ds_tree:
                result["targets"]["trained_on_deepstack_tree_deepstack_chips"] = deepstack_leduc_chips(ds_tree["mean"])
        result["curves"] = curves(game_name, run_dir, oracle, out)
    return result


def search_row_for(game: Any, label: str, net: str, args: argparse.Namespace, seed: int, out: Path,
                   solver: Optional[str] = None, iterations: Optional[int] = None,
                   depth: Optional[int] = None, oracle_iterations: Optional[int] = None) -> Dict[str, Any]:
    protocol = Protocol(net=net, solver=solver or args.solver, iterations=iterations or args.iterations,
                        depth=depth or args.depth, repeats=args.repeats, seed=seed,
                        oracle_iterations=oracle_iterations)
    return search_row(game, protocol, args.threads, out, label)


def markdown(results: Dict[str, Dict[str, Any]], args: argparse.Namespace) -> str:
    from rebel.games.units import deepstack_leduc_chips

    lines = [f"Mode (b): N = {args.repeats} sampled policies, T = {args.iterations}, depth {args.depth} "
             f"(whole betting rounds), {args.solver}, seeds {', '.join(map(str, args.seeds))}; full-game solvers "
             f"at {args.full_iterations} iterations. Exploitability in chips per hand "
             "(no-limit also in DeepStack-Leduc's convention, x 5/6).", ""]
    for name, r in results.items():
        nolimit = name == "leduc_nolimit"
        lines += [f"### {r['game']}", "", "| row | exploitability (mean +- sd over seeds) | range |"
                  + (" DeepStack chips |" if nolimit else ""), "|---|---|---|" + ("---|" if nolimit else "")]
        for solver, row in r["full_game"].items():
            ds = f" {deepstack_leduc_chips(row['exploitability']):.4g} |" if nolimit else ""
            lines.append(f"| full-game {solver} | {row['exploitability']:.4g} | - |{ds}")
        for label, s in r["search"].items():
            ds = f" {deepstack_leduc_chips(s['mean']):.4g} |" if nolimit else ""
            lines.append(f"| search, {label} | {s['mean']:.4g} +- {s['stdev']:.2g} | "
                         f"{s['min']:.4g} - {s['max']:.4g} |{ds}")
        in_n = {label: s["mean_in_n"] for label, s in r["search"].items() if "mean_in_n" in s}
        ns = [n for n in ("16", "64", "256", "1024", "4096") if in_n and all(n in c for c in in_n.values())]
        if ns:
            lines += ["", "Mode (b) against N (mean over seeds; the same samples, merged in order):", "",
                      "| row | " + " | ".join(f"N = {n}" for n in ns) + " |", "|---|" + "---|" * len(ns)]
            lines += [f"| {label} | " + " | ".join(f"{c[n]:.4g}" for n in ns) + " |" for label, c in in_n.items()]
        if "run" in r:
            run = r["run"]
            lines += ["", f"Trained net: {run['run_dir']}, epoch {run['epoch']}, {run['examples_generated']:,} "
                      f"examples generated, {run['wall_minutes']:.0f} minutes"
                      + ("" if run["finished"] else " (stopped with Ctrl-C at the end of its budget)") + "."]
            if "chosen" in run:
                c = run["chosen"]
                seeds = ", ".join(map(str, c.get("exploitability_by_seed", {})))
                lines += ["", f"The rows of the trained net are the run's chosen net (evaluation.keep_best, best.bin): "
                          f"epoch {c['epoch']}, in-run figure {c['exploitability']:.4g}"
                          + (f" on seeds {seeds}" if seeds else "") + "."]
        if "targets" in r:
            lines += ["", "Targets: " + "; ".join(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}"
                                                 for k, v in r["targets"].items())]
        lines.append("")
    return "\n".join(lines)


def parse_stronger(text: str, option: str = "--stronger") -> List[tuple[str, int, int]]:
    """``option`` SOLVER:T:DEPTH[,...] or none, parsed as experiments/table2.py does."""
    import table2

    try:
        return [(s["solver"], s["iterations"], s["depth"]) for s in table2.parse_stronger(text, None)]
    except table2.Refused as e:
        raise Refused(str(e).replace("--stronger", option, 1)) from None


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", default=",".join(GAMES), help="comma-separated: leduc, leduc_nolimit")
    p.add_argument("--run", action="append", default=[], metavar="GAME=DIR", help="a trained run of GAME")
    p.add_argument("--no-train", action="store_true", help="do not train a game that has no run")
    p.add_argument("--net", choices=("final", "best"), default="final",
                   help="the run's final net (weights.bin) or its chosen one (best.bin, evaluation.keep_best)")
    p.add_argument("--out", default="experiments/results/leduc/latest")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--repeats", type=int, default=1024)
    p.add_argument("--iterations", type=int, default=1024)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--solver", default="lcfr")
    p.add_argument("--full-iterations", type=int, default=1024)
    p.add_argument("--stronger", default="lcfr:4096:10", help="SOLVER:T:DEPTH[,...] on the trained net, or none")
    p.add_argument("--stronger-oracle", default="none",
                   help="SOLVER:T:DEPTH[,...] with exact leaves (the oracle at --iterations), or none")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="small N and T, a few-epoch run: the pipeline only")
    args = p.parse_args(argv)
    args.games = [g.strip() for g in args.games.split(",") if g.strip()]
    for g in args.games:
        if g not in GAMES:
            raise Refused(f"unknown game {g!r} (games: {', '.join(GAMES)})")
    args.runs = {}
    for item in args.run:
        game, _, path = item.partition("=")
        if game not in GAMES or not path:
            raise Refused(f"--run must be GAME=DIR with GAME one of {', '.join(GAMES)}, got {item!r}")
        args.runs[game] = path
    try:
        args.seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise Refused(f"--seeds must be comma-separated integers, got {args.seeds!r}") from None
    args.train_overrides = []
    if args.quick:
        args.repeats, args.iterations, args.full_iterations = 8, 32, 64
        args.stronger = "lcfr:64:10"
        args.stronger_oracle = "lcfr:32:10,dcfr:32:10"
        args.train_overrides = ["run.epochs=2", "run.max_minutes=null", "selfplay.threads=1", "search.iterations=32",
                                "trainer.epoch_examples=1024", "evaluation.every=1", "evaluation.repeats=8",
                                "evaluation.heldout_steps=16", "search.precision=fp32",
                                "evaluation.keep_best=true"]
    args.stronger = parse_stronger(args.stronger)
    args.stronger_oracle = parse_stronger(args.stronger_oracle, "--stronger-oracle")
    for name in ("repeats", "iterations", "depth", "full_iterations", "threads"):
        if getattr(args, name) < 1:
            raise Refused(f"--{name.replace('_', '-')} must be >= 1")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        args = parse_args(argv)
        out = Path(args.out)
        results = {g: game_table(g, args, out) for g in args.games}
    except Refused as e:
        print(f"leduc.py: {e}", file=sys.stderr)
        return 2
    _write_json(out / "leduc.json", {"format": FORMAT, "results": results})
    text = markdown(results, args)
    (out / "leduc.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
