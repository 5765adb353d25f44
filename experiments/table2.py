"""The paper's Table 2 from our own training: Liar's Dice 1x4f, 1x5f, 1x6f and 2x3f, each with
CFR-D (lcfr) and FP (lfp) in self-play, one script.

For every cell (game x solver) the script trains a net from random initialisation with
``rebel train`` (the game's config, ``search.solver`` set to the cell's solver, a wall-time
budget per game), then evaluates the final net with the paper's protocol (mode (b), depth 2,
T = 1024, N = 1024 sampled policies) under several evaluation seeds (the seed the training
run's own final evaluation used is taken from its metrics.jsonl when that evaluation had the
same protocol and thread count: it is the same number, and 12-15 minutes on 1x6f and 2x3f).
Per game it also
computes the reference rows: the full-game linear CFR and linear FP exploitability after
1024 iterations, the zero net's search and, where it fits the machine (``--oracle``), the
exact-leaf level of the same protocol (the oracle net).

Everything lands in ``OUT`` (default experiments/results/table2/): one folder per cell with
the run (config.yaml, metrics.jsonl, weights.bin; the checkpoint stays but is not
committed) and ``eval.json``; ``references.json``; ``table2.json`` and ``table2.md``; a
learning-curve figure per game (``curves_<game>.png``). A killed run resumes from its last
checkpoint, a killed evaluation at the seed it was on (the seeds done are kept in
``eval.partial.json``); a finished cell is neither retrained nor re-evaluated unless ``--force CELL``. A run
that cannot resume (its checkpoint lost) is ended at its last recorded epoch by
``--end-training CELL``, which the results record.

The stronger-search rows evaluate the same final nets under other searches (``--stronger``,
each SOLVER:T:DEPTH, e.g. LCFR at depth 6 for both nets: the nets were trained on leaves at an
even number of actions from a subgame root, so an odd depth queries them out of distribution),
cached per search in ``eval_<solver>_T<T>_d<depth>.json``.

    python experiments/table2.py                       # every cell (hours: runs resume)
    python experiments/table2.py --cells 1x4f-cfr,1x4f-fp
    python experiments/table2.py --quick               # the whole pipeline in ~2 minutes
    python experiments/table2.py --cells 2x3f-cfr --set trainer.device=cuda --set selfplay.threads=14
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

FORMAT = 1  # of eval.json / references.json; a folder written by another format is refused

#: Paper's Table 2 (Brown et al. 2020): ReBeL with CFR-D and with FP, and the full-game rows.
PAPER = {
    "1x4f": {"cfr": 0.017, "fp": 0.041, "full_lcfr": 0.001, "full_lfp": 0.012},
    "1x5f": {"cfr": 0.015, "fp": 0.020, "full_lcfr": 0.001, "full_lfp": 0.024},
    "1x6f": {"cfr": 0.024, "fp": 0.040, "full_lcfr": 0.002, "full_lfp": 0.039},
    "2x3f": {"cfr": 0.017, "fp": 0.020, "full_lcfr": 0.002, "full_lfp": 0.057},
}
SOLVERS = {"cfr": "lcfr", "fp": "lfp"}


@dataclass(frozen=True)
class Plan:
    """What a run of the script trains and how it evaluates."""

    games: Dict[str, Dict[str, Any]]  # game key -> {config, minutes, overrides}
    repeats: int                       # N of mode (b)
    iterations: int                    # T of the search (evaluation)
    depth: int
    full_iterations: int               # of the full-game reference rows
    seeds: List[int]
    paper: Dict[str, Dict[str, float]]
    stronger: List[Dict[str, Any]]  # [{solver, iterations, depth}]: the stronger-search rows
    # The net's arithmetic in every evaluation: float32, whatever kernel self-play ran. Rounded
    # kernels (bf16, int16) move a mode-(b) number by about its seed spread on the larger games
    # (2x3f CFR-D final net, seed 0: 0.0172 fp32, 0.0218 bf16), and which one `auto` picks
    # depends on the CPU; float32 keeps the table comparable across machines.
    precision: str = "fp32"


FULL_PLAN = Plan(
    games={
        # Training budget per cell in minutes on 2 cores (run.max_minutes) and what it counts
        # (run.budget): 1x4f and 1x5f count the evaluations during training too; on 1x6f and
        # 2x3f one mode-(b) evaluation at N = 1024 takes about 15 minutes, so there the budget
        # counts training only (the wall time with evaluations is reported beside it), and the
        # curve is sampled every 200 epochs (about 50 minutes of training) instead of 100. 2x3f's
        # config self-plays at T = 256 since the 2x3f-cfr cell's first net was trained (with the bf16 net on
        # AVX512_BF16, about 30 epochs a minute with CFR-D, 3.6x more, and 23.5 with FP): its own
        # evaluation.every=500 samples the curve every 17-21 training minutes, and run.epochs=10000
        # leaves the end to the 180 minutes. Every cell keeps its
        # net each 50 epochs (run.snapshot_every; not committed): the curve can be sampled more
        # finely afterwards (experiments/time_to_target.py --from-run).
        "1x4f": {"config": "liars_dice_1x4f", "minutes": 60, "budget": "wall", "overrides": ["run.snapshot_every=50"]},
        "1x5f": {"config": "liars_dice_1x5f", "minutes": 120, "budget": "wall", "overrides": ["run.snapshot_every=50"]},
        "1x6f": {"config": "liars_dice_1x6f", "minutes": 180, "budget": "training",
                 "overrides": ["evaluation.every=200", "run.snapshot_every=50"]},
        "2x3f": {"config": "liars_dice_2x3f", "minutes": 180, "budget": "training",
                 "overrides": ["run.epochs=10000", "run.snapshot_every=50"]},
    },
    repeats=1024, iterations=1024, depth=2, full_iterations=1024, seeds=[0, 1, 2], paper=PAPER,
    # The same nets under searches this machine affords beyond the paper's protocol: DCFR at
    # 4x the iterations (experiments/cfrd_rate.py: with exact leaves, the depth-limited root's
    # error falls about 2.4x per 4x iterations, and DCFR's lies below LCFR's), and LCFR over
    # subgames three times as deep (fewer, later net queries; the FP nets too: linear FP's own
    # error after 1024 iterations is what limits them). Screened on the trained nets at N = 256
    # (seed 0): depth 3 0.80 (an odd depth queries the nets out of distribution), depth 4
    # 0.0035-0.017, depth 6 0.0025-0.0049 (the CFR-D nets with LCFR).
    # Depth 6 is the default since it was measured beside DCFR T = 4096 on three nets: lower on
    # each (1x4f CFR-D 0.0013 vs 0.0041, FP 0.0012 vs 0.0112; 1x5f CFR-D 0.0021 vs 0.0122) and
    # 40-150x cheaper (1x5f: 12 s against 470-600 s a seed; DCFR T = 4096 would take about
    # 45 minutes a seed on 1x6f and 2x3f). `--stronger dcfr:4096:2,lcfr:1024:6` runs both.
    stronger=[{"solver": "lcfr", "iterations": 1024, "depth": 6}],
)

QUICK_PLAN = Plan(
    # The runs evaluate in fp32 (evaluation.precision's default), the protocol's precision, so
    # seed 0 is the run's own final evaluation (the reuse is tested): 1x3f self-plays with the
    # default kernel (auto), Kuhn in fp32.
    games={
        "1x3f": {"config": "quick", "minutes": 5,
                 "overrides": ["run.epochs=14", "selfplay.threads=1", "evaluation.every=7", "evaluation.repeats=16",
                               "evaluation.heldout_steps=32"]},
        "kuhn": {"config": "kuhn", "minutes": 5,
                 "overrides": ["run.epochs=14", "selfplay.threads=1", "evaluation.every=7", "evaluation.repeats=16",
                               "evaluation.heldout_steps=32", "search.iterations=256",
                               "search.precision=fp32"]},
    },
    repeats=16, iterations=256, depth=2, full_iterations=256, seeds=[0, 1, 2], paper={},
    stronger=[{"solver": "dcfr", "iterations": 512, "depth": 2}, {"solver": "lcfr", "iterations": 256, "depth": 4}],
)

log = logging.getLogger("table2")


class Refused(Exception):
    """A problem with the arguments or the results folder: exit 2 with one line."""


# ----------------------------------------------------------------------------------- cells
def cell_names(plan: Plan) -> List[str]:
    return [f"{game}-{solver}" for game in plan.games for solver in SOLVERS]


def parse_cells(text: Optional[str], plan: Plan) -> List[str]:
    known = cell_names(plan)
    if not text:
        return known
    cells = [c.strip() for c in text.split(",") if c.strip()]
    for c in cells:
        if c not in known:
            game = c.rsplit("-", 1)[0]
            if game not in plan.games:
                raise Refused(f"unknown cell {c!r}: no config for game {game!r} (cells: {', '.join(known)})")
            raise Refused(f"unknown cell {c!r} (cells: {', '.join(known)})")
    return cells


def parse_stronger(text: Optional[str], plan: Plan) -> List[Dict[str, Any]]:
    """--stronger SOLVER:T:DEPTH[,SOLVER:T:DEPTH...] (or 'none'); the plan's when not given."""
    from rebel.search.solve import SEARCH_SOLVERS as SOLVERS

    if text is None:
        return plan.stronger
    if text == "none":
        return []
    searches = []
    for item in text.split(","):
        parts = item.split(":")
        try:
            solver, iterations, depth = parts[0], int(parts[1]), int(parts[2])
        except (IndexError, ValueError):
            raise Refused(f"--stronger must be SOLVER:T:DEPTH[,...] (e.g. dcfr:4096:2,lcfr:1024:4) or none, "
                          f"got {text!r}") from None
        if solver not in SOLVERS or iterations < 2 or depth < 1 or len(parts) != 3:
            raise Refused(f"--stronger {item!r}: solver one of {', '.join(SOLVERS)}, T >= 2, depth >= 1")
        searches.append({"solver": solver, "iterations": iterations, "depth": depth})
    return searches


def stronger_path(run_dir: Path, search: Dict[str, Any]) -> Path:
    """Where a cell's evaluation under ``search`` is cached."""
    return run_dir / f"eval_{search_key(search)}.json"


def stronger_evaluations(run_dir: Path) -> List[Dict[str, Any]]:
    """Every stronger-search evaluation cached in a cell's folder, in file-name order. A file
    from before the per-search names (eval_stronger.json) is renamed after its protocol."""
    old = run_dir / "eval_stronger.json"
    if old.is_file():
        protocol = read_json(old, "evaluation").get("protocol") or {}
        if not all(k in protocol for k in ("solver", "iterations", "depth")):
            raise Refused(f"{old}: corrupt evaluation (no search protocol); "
                          f"move it away or pass --force {run_dir.name}")
        os.replace(old, stronger_path(run_dir, protocol))
    return [read_json(p, "evaluation") for p in sorted(run_dir.glob("eval_*_T*_d*.json"))
            if not p.name.endswith(".partial.json")]


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise Refused(f"{path}: corrupt {what} ({e}); move it away or pass --force") from None


def read_metrics(run_dir: Path) -> List[Dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    rows = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            raise Refused(f"{path}:{i}: corrupt metrics line; move the folder away or pass --force "
                          f"{run_dir.name}") from None
    return rows


def plan_minutes(plan: Plan, cell: str) -> Optional[float]:
    """The plan's training budget in minutes for the cell (None for a game the plan lacks)."""
    game = plan.games.get(cell.rsplit("-", 1)[0])
    return None if game is None else float(game["minutes"])


def recorded_budget(run_dir: Path) -> Optional[List[str]]:
    """The training budget a run last ran under, as overrides (run.max_minutes, run.budget), from
    its config.yaml (rebel train rewrites it on every resume); None where it sets no minutes."""
    from rebel.config.train import ConfigError, load_train_config

    try:
        run = load_train_config(str(run_dir / "config.yaml")).run
    except (ConfigError, OSError) as e:
        raise Refused(f"{run_dir / 'config.yaml'}: {e}") from None
    if run.max_minutes is None:
        return None
    return [f"run.max_minutes={run.max_minutes:g}", f"run.budget={run.budget}"]


def trained(run_dir: Path) -> bool:
    return any(r.get("kind") == "final" for r in read_metrics(run_dir))


#: Why a run was ended by --end-training (recorded in its final metrics line and in table2.md).
ENDED_WITHOUT_CHECKPOINT = ("training ended at the last epoch metrics.jsonl records (its checkpoint was lost, "
                            "so the run could not resume); weights.bin is that epoch's net")


def end_training(cell: str, run_dir: Path) -> None:
    """Ends a cell's training at its last recorded epoch, for a run that cannot resume (its
    checkpoint is gone, e.g. with a replaced machine): appends the ``final`` record ``rebel
    train`` would have written there, marked ``ended``, so the cell is evaluated on the net the
    run last wrote (weights.bin is exported after every epoch, before that epoch's metrics
    line). No evaluation is carried over: every seed of the protocol is run on weights.bin."""
    rows = read_metrics(run_dir)
    if not rows:
        raise Refused(f"--end-training {cell}: {run_dir} holds no run (no metrics.jsonl)")
    if trained(run_dir):
        raise Refused(f"--end-training {cell}: its training has already finished")
    if (run_dir / "checkpoint.pt").is_file():
        raise Refused(f"--end-training {cell}: {run_dir} has a checkpoint; resume the run instead "
                      f"(run the script without --end-training)")
    if not (run_dir / "weights.bin").is_file():
        raise Refused(f"--end-training {cell}: {run_dir} has no weights.bin")
    last = next((r for r in reversed(rows) if r.get("kind") is None and "net_isa" in r), None)
    if last is None:
        raise Refused(f"--end-training {cell}: metrics.jsonl records no trained epoch")
    final = {"kind": "final", "epoch": last["epoch"], "wall_seconds": last["wall_seconds"],
             "training_seconds": last["training_seconds"],
             "evaluation_seconds": last["wall_seconds"] - last["training_seconds"],
             "examples_generated": last["examples_generated"], "examples_trained": last["examples_trained"],
             "run_dir": str(run_dir), "weights": str(run_dir / "weights.bin"), "ended": ENDED_WITHOUT_CHECKPOINT}
    path = run_dir / "metrics.jsonl"
    text = path.read_text()
    _write_text(path, text + ("" if text.endswith("\n") else "\n") + json.dumps(final) + "\n")
    log.info("%s: training ended at epoch %d (%.1f training minutes, %d examples)", cell, last["epoch"],
             last["training_seconds"] / 60, last["examples_generated"])


def train(cell: str, plan: Plan, out: Path, progress: bool, extra: Sequence[str] = ()) -> Path:
    """Trains the cell (or resumes it from its checkpoint); returns its run directory.
    ``extra``: the --set overrides, after the plan's and its budget, so they win (on a resume,
    only those --resume accepts). A resume keeps the budget the run last ran under (its
    config.yaml), so a budget set with --set holds without repeating it; --set can change it."""
    game, solver = cell.rsplit("-", 1)
    run_dir = out / cell
    if trained(run_dir):
        return run_dir
    cmd = [sys.executable, "-m", "rebel", "train"] + ([] if progress else ["--no-progress"])
    g = plan.games[game]
    budget = [f"run.max_minutes={g['minutes']}", f"run.budget={g.get('budget', 'wall')}"]
    if (run_dir / "checkpoint.pt").is_file():
        from rebel.cli.train import RESUME_OVERRIDABLE

        resumable = [o for o in g["overrides"] if o.split("=", 1)[0] in RESUME_OVERRIDABLE]
        refused = [o for o in extra if o.split("=", 1)[0] not in RESUME_OVERRIDABLE]
        if refused:
            raise Refused(f"{cell} resumes from its checkpoint, which takes only {', '.join(RESUME_OVERRIDABLE)} "
                          f"overrides; --set {' '.join(refused)} would change the run")
        cmd += ["--resume", str(run_dir), *(recorded_budget(run_dir) or budget), *resumable, *extra]
    else:
        if run_dir.exists() and any(run_dir.iterdir()):
            raise Refused(f"{run_dir} holds a run without a checkpoint (killed before its first one?); "
                          f"remove it or pass --force {cell}")
        # --set comes last, as on a resume: `--set run.max_minutes=100` ends the cell's training
        # at 100 minutes (a finished run, noted in table2.md), where the plan would give more.
        cmd += [g["config"], f"search.solver={SOLVERS[solver]}", *g["overrides"], *budget, *extra,
                f"run.dir={out}", f"run.name={cell}"]
    log.info("%s: %s", cell, " ".join(cmd[3:]))
    subprocess.run(cmd, check=True)
    return run_dir


def final_evaluation(run_dir: Path, config: Any, plan: Plan, threads: int, seed: int) -> Optional[Dict[str, Any]]:
    """The training run's own evaluation of its final net, when it is exactly what seed
    ``seed`` of the paper's protocol would compute (same N, T, depth, solver, seed, thread
    count and precision, evaluated in this process rather than on Ray); else None.

    A mode-(b) evaluation is a deterministic function of these (the committed 1x4f and 1x5f
    cells' seed-0 results equal their runs' final evaluations to the last digit), and on
    1x6f and 2x3f one costs 12-15 minutes of the 2 cores."""
    rows = read_metrics(run_dir)
    final = next((r for r in reversed(rows) if r.get("kind") == "final"), None)
    last_epoch = next((r for r in reversed(rows) if r.get("kind") is None and "net_isa" in r), {})
    evaluation = (final or {}).get("evaluation") or {}
    s, e = config.search, config.evaluation
    same = (evaluation.get("epoch") == final.get("epoch") if final else False) and "exploitability" in evaluation \
        and (e.repeats, s.iterations, s.depth, e.seed, e.threads, e.backend) == \
        (plan.repeats, plan.iterations, plan.depth, seed, threads, "threads")
    if "eval_precision" in evaluation:  # the kernel the evaluation ran, recorded since evaluation.precision
        kernel = {"precision": evaluation["eval_precision"], "isa": evaluation.get("eval_isa")}
    elif last_epoch:  # earlier runs evaluated with self-play's kernel, built in the same process
        kernel = {"precision": last_epoch["net_precision"], "isa": last_epoch["net_isa"]}
    else:
        return None
    if not same or kernel["precision"] != plan.precision:
        return None
    return {"seed": seed, "exploitability": evaluation["exploitability"], "br_values": evaluation["br_values"],
            "seconds": evaluation.get("eval_seconds"), "net_kernel": kernel,
            "source": "metrics.jsonl: the training run's final evaluation"}


def evaluate_cell(cell: str, run_dir: Path, plan: Plan, threads: int, progress: bool,
                  search: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The paper's protocol on the cell's final net, once per seed (cached in eval.json); with
    ``search`` ({solver, iterations, depth}) that search instead (cached in eval_stronger.json)."""
    from rebel import _core
    from rebel.config.train import load_train_config
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    if search:
        stronger_evaluations(run_dir)  # renames an eval_stronger.json of this search into place
    path = stronger_path(run_dir, search) if search else run_dir / "eval.json"
    if path.is_file():
        cached = read_json(path, "evaluation")
        if cached.get("format") != FORMAT:
            raise Refused(f"{path}: written by another version of table2.py (format {cached.get('format')!r}, "
                          f"this one writes {FORMAT}); pass --force {cell}")
        if search and any(cached["protocol"].get(k) != v for k, v in search.items()):
            raise Refused(f"{path}: evaluated with another search ({cached['protocol']}); remove it or pass "
                          f"--force {cell}")
        if not search and net_precisions(cached) != {plan.precision}:
            raise Refused(f"{path}: evaluated with the net in {'/'.join(sorted(net_precisions(cached)))}, the table's "
                          f"protocol runs it in {plan.precision}; pass --reevaluate {cell}")
        return cached
    config = load_train_config(str(run_dir / "config.yaml"))
    params = config.game.as_dict()
    name = params.pop("name")
    protocol = search or {"solver": config.search.solver, "iterations": plan.iterations, "depth": plan.depth}
    full_protocol = {"mode": "b", "depth": protocol["depth"], "iterations": protocol["iterations"],
                     "repeats": plan.repeats, "solver": protocol["solver"], "precision": plan.precision}
    partial = partial_path(path)
    done = finished_seeds(partial, full_protocol, cell)
    runs = []
    for seed in plan.seeds:
        if seed in done:
            runs.append(done[seed])
            log.info("%s: seed %d%s: exploitability %.5f (evaluated before, kept in %s)", cell, seed,
                     " (stronger search)" if search else "", done[seed]["exploitability"], partial.name)
            continue
        reused = None if search else final_evaluation(run_dir, config, plan, threads, seed)
        if reused is not None:
            runs.append(reused)
            log.info("%s: seed %d: exploitability %.5f (the training run's own final evaluation, same protocol)",
                     cell, seed, reused["exploitability"])
            continue
        game = _core.make_game(name, dict(params))
        settings = EvalSettings(net=str(run_dir / "weights.bin"),
                                solver=protocol["solver"], depth=protocol["depth"], iterations=protocol["iterations"],
                                repeats=plan.repeats, threads=threads, seed=seed, off_path=config.search.off_path,
                                precision=plan.precision, mode_a=False, full_game=False)
        result = evaluate(game, settings, progress=progress)
        runs.append({"seed": seed, "exploitability": result["mode_b"][-1]["exploitability"],
                     "br_values": result["mode_b"][-1]["br_values"], "seconds": result["seconds"]["mode_b"],
                     "net_kernel": result.get("net_kernel")})
        log.info("%s: seed %d%s: exploitability %.5f", cell, seed, " (stronger search)" if search else "",
                 runs[-1]["exploitability"])
        # Each seed is kept as soon as it is done: on 1x6f and 2x3f one costs 12-15 minutes, and
        # a killed evaluation resumes at the seed it was on.
        _write_json(partial, {"format": FORMAT, "cell": cell, "protocol": full_protocol, "runs": runs})
    expl = [r["exploitability"] for r in runs]
    out = {"format": FORMAT, "cell": cell, "protocol": full_protocol,
           "runs": runs, "mean": statistics.mean(expl), "min": min(expl), "max": max(expl),
           "stdev": statistics.stdev(expl) if len(expl) > 1 else 0.0}
    _write_json(path, out)
    partial.unlink(missing_ok=True)
    return out


def partial_path(path: Path) -> Path:
    """Where the seeds of an unfinished evaluation cached at ``path`` are kept."""
    return path.with_name(path.stem + ".partial.json")


def finished_seeds(partial: Path, protocol: Dict[str, Any], cell: str) -> Dict[int, Dict[str, Any]]:
    """The seeds an interrupted evaluation of the same protocol finished (seed -> run); none
    when there is no such file. One of another version or protocol is refused, not reused."""
    if not partial.is_file():
        return {}
    kept = read_json(partial, "partial evaluation")
    if not isinstance(kept, dict) or kept.get("format") != FORMAT or kept.get("protocol") != protocol \
            or not isinstance(kept.get("runs"), list):
        raise Refused(f"{partial}: an unfinished evaluation of another protocol or version of table2.py; "
                      f"remove it or pass --force {cell}")
    try:
        return {int(r["seed"]): {**r, "exploitability": float(r["exploitability"])} for r in kept["runs"]}
    except (KeyError, TypeError, ValueError):
        raise Refused(f"{partial}: corrupt partial evaluation (a run without seed or exploitability); "
                      f"remove it or pass --force {cell}") from None


def net_precisions(evaluation: Dict[str, Any]) -> set:
    """The net precisions an evaluation's seeds ran (``"unknown"`` where a run did not record it)."""
    return {(r.get("net_kernel") or {}).get("precision", "unknown") for r in evaluation.get("runs", [])}


def reevaluate(cell: str, run_dir: Path, plan: Plan) -> None:
    """Removes a cell's cached evaluations that were not run with the protocol's net precision
    (eval.json and the plan's stronger searches, finished or partial), so this invocation
    computes them again; other cached searches stay (the table marks their precision)."""
    paths = [run_dir / "eval.json"] + [stronger_path(run_dir, search) for search in plan.stronger]
    for path in paths:
        if path.is_file() and net_precisions(read_json(path, "evaluation")) != {plan.precision}:
            log.info("%s: %s is evaluated again with the net in %s", cell, path.name, plan.precision)
            path.unlink()
        partial = partial_path(path)
        if partial.is_file():
            kept = read_json(partial, "partial evaluation")
            protocol = kept.get("protocol") if isinstance(kept, dict) else None
            if not isinstance(protocol, dict) or protocol.get("precision") != plan.precision \
                    or not net_precisions(kept) <= {plan.precision}:
                log.info("%s: the seeds kept in %s (another precision) are evaluated again with the net in %s",
                         cell, partial.name, plan.precision)
                partial.unlink()


def _write_text(path: Path, text: str) -> None:
    """Writes ``path`` atomically (a temporary file renamed over it)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _write_json(path: Path, obj: Any) -> None:
    _write_text(path, json.dumps(obj, indent=2) + "\n")


# ------------------------------------------------------------------------------ references
def search_key(search: Dict[str, Any]) -> str:
    return f"{search['solver']}_T{search['iterations']}_d{search['depth']}"


def references(game_key: str, plan: Plan, out: Path, threads: int, oracle: bool, progress: bool,
               stronger: Sequence[Dict[str, Any]] = ()) -> Dict[str, Any]:
    """Full-game LCFR and LFP, the zero net's search and (if asked) the oracle's, per game; and
    the zero net under each stronger search (``zero_<solver>_T<T>_d<depth>``, seed 0): what
    that search reaches without learned values."""
    from rebel import _core
    from rebel.cli.train import _config_path
    from rebel.config.train import load_train_config
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings
    from rebel.search.solve import solve

    path = out / "references.json"
    all_refs = read_json(path, "references") if path.is_file() else {"format": FORMAT, "games": {}}
    if all_refs.get("format") != FORMAT:
        raise Refused(f"{path}: written by another version of table2.py; move it away")
    refs = all_refs["games"].setdefault(game_key, {})
    config = load_train_config(_config_path(plan.games[game_key]["config"]), plan.games[game_key]["overrides"])
    game = config.game.make()
    params = config.game.as_dict()
    name = params.pop("name")
    changed = False
    for solver in ("lcfr", "lfp"):
        key = f"full_{solver}"
        if key not in refs:
            refs[key] = solve(game, solver, plan.full_iterations, off_path=config.search.off_path,
                              progress=False).exploitability
            changed = True
    paper = {"solver": "lcfr", "iterations": plan.iterations, "depth": plan.depth}
    wanted = [("zero", "zero", paper)] + ([("oracle", "oracle", paper)] if oracle else [])
    wanted += [(f"zero_{search_key(s)}", "zero", s) for s in stronger]
    for key, net, search in wanted:
        if key not in refs:
            start = time.perf_counter()
            game = _core.make_game(name, dict(params))
            settings = EvalSettings(net=net, solver=search["solver"],
                                    depth=search["depth"], iterations=search["iterations"], repeats=plan.repeats,
                                    threads=threads, seed=0, off_path=config.search.off_path, mode_a=False,
                                    full_game=False)
            refs[key] = evaluate(game, settings, progress=progress)["mode_b"][-1]["exploitability"]
            refs[f"{key}_seconds"] = time.perf_counter() - start
            changed = True
    if changed:
        # Merge into the file as it is now, not as it was read: another table2.py may have
        # added references while these were computed (an hour for an oracle row).
        current = read_json(path, "references") if path.is_file() else {"format": FORMAT, "games": {}}
        merged = current["games"].setdefault(game_key, {})
        merged.update(refs)
        _write_json(path, current)
        refs = merged
    return refs


# ---------------------------------------------------------------------------------- report
def shortened_budget(run_dir: Path, final: Dict[str, Any], budget_minutes: Optional[float]) -> Optional[str]:
    """Why a run trained less than its plan's budget, when ``--set run.max_minutes=N`` below
    the plan's minutes ended it (its config.yaml records the value the run ran under);
    ``final``: the run's final metrics line."""
    from rebel.config.train import load_train_config

    if budget_minutes is None or not (run_dir / "config.yaml").is_file():
        return None
    run = load_train_config(str(run_dir / "config.yaml")).run
    if run.max_minutes is None or run.max_minutes >= budget_minutes:
        return None
    spent = final.get("training_seconds") if run.budget == "training" else final.get("wall_seconds")
    if spent is None or spent < 60 * run.max_minutes:
        return None  # it reached run.epochs first: the shortened budget did not end it
    return (f"training ended under run.max_minutes={run.max_minutes:g} (set with --set) instead of the plan's "
            f"{budget_minutes:g} minutes; weights.bin is the net at that point")


def cell_row(cell: str, run_dir: Path, ev: Dict[str, Any], budget_minutes: Optional[float] = None) -> Dict[str, Any]:
    """The table's record of a finished cell; ``budget_minutes``: the plan's training budget for
    it, to note a run that was ended earlier on purpose."""
    rows = read_metrics(run_dir)
    final = next(r for r in rows if r.get("kind") == "final")
    evals = [r for r in rows if r.get("kind") is None and "exploitability" in r]
    eval_seconds = sum(r.get("eval_seconds", 0.0) for r in evals)
    # A run ended by --end-training has no final evaluation: its held-out error is the last
    # in-run evaluation's, at the epoch given beside it.
    heldout_source = final.get("evaluation") or next((r for r in reversed(evals) if "heldout_mae" in r), {})
    heldout = heldout_source.get("heldout_mae")
    return {"cell": cell, "mean": ev["mean"], "min": ev["min"], "max": ev["max"], "stdev": ev["stdev"],
            "seeds": [r["seed"] for r in ev["runs"]], "wall_seconds": final["wall_seconds"],
            # runs since run.budget record their training time (held-out labelling and references
            # excluded too); older ones: the wall time less the mode-(b) evaluations
            "train_seconds_without_evaluation": final.get("training_seconds", final["wall_seconds"] - eval_seconds),
            "examples_generated": final["examples_generated"], "examples_trained": final["examples_trained"],
            "epochs": final["epoch"], "heldout_mae": heldout,
            "heldout_delta_mean": heldout_source.get("heldout_delta_mean"),
            "heldout_epoch": heldout_source.get("epoch", final["epoch"]) if heldout is not None else None,
            "ended": final.get("ended") or shortened_budget(run_dir, final, budget_minutes),
            "stronger": [{**{k: x[k] for k in ("protocol", "mean", "min", "max")},
                          "precisions": sorted(net_precisions(x))} for x in stronger_evaluations(run_dir)]}


def oracle_estimates(out: Path) -> Dict[str, Dict[str, Any]]:
    """Per game, what the oracle row would cost (experiments/oracle_cost.py's file, if there)."""
    path = out / "oracle_cost.json"
    if not path.is_file():
        return {}
    try:
        games = json.loads(path.read_text())["games"]
        return {game: entry["estimate_n1024"] for game, entry in games.items()}
    except (ValueError, KeyError, TypeError) as e:
        raise Refused(f"{path} is not an oracle_cost.py file ({e})") from None


def markdown(rows: Dict[str, Dict[str, Any]], refs: Dict[str, Dict[str, Any]], plan: Plan,
             oracle_cost: Optional[Dict[str, Dict[str, Any]]] = None) -> str:
    games = list(plan.games)
    oracle_cost = oracle_cost or {}
    head = "| | " + " | ".join(games) + " |\n|---|" + "---|" * len(games) + "\n"

    def line(label: str, values: List[str]) -> str:
        return f"| {label} | " + " | ".join(values) + " |\n"

    def ref(game: str, key: str) -> str:
        v = refs.get(game, {}).get(key)
        return f"{v:.4f}" if isinstance(v, float) else "not computed"

    def cell(game: str, solver: str) -> str:
        r = rows.get(f"{game}-{solver}")
        if r is None:
            return "not trained yet"
        return f"**{r['mean']:.4f}** [{r['min']:.4f}, {r['max']:.4f}]"

    def paper(game: str, key: str) -> str:
        v = plan.paper.get(game, {}).get(key)
        return f"{v:.3f}" if v is not None else "-"

    text = head
    text += line("paper: full-game linear FP", [paper(g, "full_lfp") for g in games])
    text += line("paper: full-game linear CFR", [paper(g, "full_lcfr") for g in games])
    text += line("paper: ReBeL with FP", [paper(g, "fp") for g in games])
    text += line("paper: ReBeL with CFR-D", [paper(g, "cfr") for g in games])
    text += line(f"ours: full-game linear FP ({plan.full_iterations} it.)", [ref(g, "full_lfp") for g in games])
    text += line(f"ours: full-game linear CFR ({plan.full_iterations} it.)", [ref(g, "full_lcfr") for g in games])
    text += line("ours: ReBeL with FP (mean [min, max] over seeds)", [cell(g, "fp") for g in games])
    text += line("ours: ReBeL with CFR-D (mean [min, max] over seeds)", [cell(g, "cfr") for g in games])
    for st in stronger_searches(rows, plan):
        label = f"{st['solver'].upper()}, T = {st['iterations']}, depth {st['depth']}"

        def strong(game: str, solver: str, st: Dict[str, Any] = st) -> str:
            r = rows.get(f"{game}-{solver}")
            if r is None:
                return "not trained yet"
            x = next((x for x in r.get("stronger") or [] if _search(x["protocol"]) == st), None)
            if x is None:
                return "not evaluated yet"
            other = sorted(set(x.get("precisions") or [plan.precision]) - {plan.precision})
            return f"{x['mean']:.4f} [{x['min']:.4f}, {x['max']:.4f}]" + (f" ({'/'.join(other)} net)" if other else "")

        text += line(f"ours, stronger search ({label}): the FP net", [strong(g, "fp") for g in games])
        text += line(f"ours, stronger search ({label}): the CFR-D net", [strong(g, "cfr") for g in games])
        text += line(f"zero net, stronger search ({label}), seed 0", [ref(g, f"zero_{search_key(st)}") for g in games])
    def oracle(game: str) -> str:
        estimate = oracle_cost.get(game)
        if ref(game, "oracle") != "not computed" or estimate is None:
            return ref(game, "oracle")
        if "seconds" in estimate:
            return f"not computed (N = {plan.repeats}: about {estimate['seconds'] / 3600:.1f} h, oracle_cost.json)"
        return f"not computed (N = {plan.repeats}: over {estimate['seconds_at_least'] / 3600:.1f} h, oracle_cost.json)"

    text += line("exact leaf values (oracle net), same protocol", [oracle(g) for g in games])
    text += line("zero net, same protocol", [ref(g, "zero") for g in games])
    text += (f"\nProtocol: mode (b), depth {plan.depth}, T = {plan.iterations}, N = {plan.repeats} sampled policies, "
             f"evaluation seeds {plan.seeds}, the net in {plan.precision} (a row marked with another precision was "
             f"evaluated with a rounded kernel before the protocol fixed it).\n\n")
    text += ("| cell | training wall min | of which without evaluation | examples generated | epochs | "
             "held-out MAE | held-out mean max error |\n|---|---|---|---|---|---|---|\n")
    notes = []
    for name, r in rows.items():
        at = "" if r.get("heldout_epoch") in (None, r["epochs"]) else f" (epoch {r['heldout_epoch']})"
        mark = ""
        if r.get("ended"):
            notes.append(f"{name}: {r['ended']}.")
            mark = f" [{len(notes)}]"
        text += (f"| {name}{mark} | {r['wall_seconds'] / 60:.1f} | {r['train_seconds_without_evaluation'] / 60:.1f} | "
                 f"{r['examples_generated']:,} | {r['epochs']} | {_fmt(r['heldout_mae'])}{at} | "
                 f"{_fmt(r['heldout_delta_mean'])}{at} |\n")
    if notes:
        text += "\n" + "".join(f"[{i}] {n}\n" for i, n in enumerate(notes, 1))
    return text


def _search(protocol: Dict[str, Any]) -> Dict[str, Any]:
    return {k: protocol[k] for k in ("solver", "iterations", "depth")}


def stronger_searches(rows: Dict[str, Dict[str, Any]], plan: Plan) -> List[Dict[str, Any]]:
    """The stronger searches of the table: the plan's, then any other a cached cell was evaluated with."""
    found = list(plan.stronger)
    for r in rows.values():
        for x in r.get("stronger") or []:
            if _search(x["protocol"]) not in found:
                found.append(_search(x["protocol"]))
    return found


def _fmt(v: Optional[float]) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) else "-"


def final_seed0(run_dir: Path, final: Dict[str, Any]) -> Optional[float]:
    """Seed 0 on the final net: the run's own final evaluation, or (for a run ended by
    --end-training, which has none) eval.json's seed-0 run."""
    if "evaluation" in final:
        return final["evaluation"]["exploitability"]
    path = run_dir / "eval.json"
    runs = read_json(path, "evaluation").get("runs", []) if path.is_file() else []
    return next((r["exploitability"] for r in runs if r.get("seed") == 0), None)


def plot_curves(game: str, cells: Dict[str, Path], refs: Dict[str, Any], plan: Plan, path: Path) -> bool:
    """Exploitability against wall minutes and against examples, both solvers, reference lines."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no figure for %s", game)
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for solver, run_dir in cells.items():
        records = read_metrics(run_dir)
        rows = [r for r in records if r.get("kind") is None and "exploitability" in r]
        final = next((r for r in records if r.get("kind") == "final"), None)
        final_value = final_seed0(run_dir, final) if final else None
        if final_value is not None and (not rows or rows[-1]["epoch"] != final["epoch"]):  # the final net
            rows.append({"wall_seconds": final["wall_seconds"], "examples_generated": final["examples_generated"],
                         "exploitability": final_value})
        if not rows:
            continue
        label = {"cfr": "ReBeL CFR-D", "fp": "ReBeL FP"}[solver]
        axes[0].plot([r["wall_seconds"] / 60 for r in rows], [r["exploitability"] for r in rows], "o-", label=label)
        axes[1].plot([r["examples_generated"] for r in rows], [r["exploitability"] for r in rows], "o-", label=label)
    lines = [("paper CFR-D", plan.paper.get(game, {}).get("cfr"), "C0", ":"),
             ("paper FP", plan.paper.get(game, {}).get("fp"), "C1", ":"),
             ("zero net", refs.get("zero"), "grey", "--"),
             ("full-game LCFR", refs.get("full_lcfr"), "C2", "-."),
             ("full-game LFP", refs.get("full_lfp"), "C3", "-."),
             ("oracle net", refs.get("oracle"), "black", ":")]
    for ax in axes:
        for label, value, color, style in lines:
            if value:
                ax.axhline(value, color=color, linestyle=style, linewidth=1, label=label)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_xlabel("wall minutes (2 cores, evaluations included)")
    axes[1].set_xlabel("examples generated")
    axes[0].set_ylabel(f"exploitability (mode (b), N = {plan.repeats}, seed 0)")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"Liar's Dice {game}: learning curves" if game[0].isdigit() else f"{game}: learning curves")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ------------------------------------------------------------------------------------ main
def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", help="comma-separated cells, e.g. 1x5f-cfr,2x3f-fp (default: all)")
    parser.add_argument("--force", action="append", default=[], metavar="CELL",
                        help="retrain and re-evaluate CELL (its folder is removed first)")
    parser.add_argument("--quick", action="store_true", help="the whole pipeline on tiny settings (1x3f and Kuhn)")
    parser.add_argument("--out", help="results folder (default experiments/results/table2, or table2-quick)")
    parser.add_argument("--threads", type=int, default=2, help="threads of each evaluation")
    parser.add_argument("--oracle", default="1x4f,1x3f,kuhn",
                        help="games whose exact-leaf (oracle) level is computed (costly on the larger games)")
    parser.add_argument("--stronger", metavar="SOLVER:T:DEPTH[,...]",
                        help="the stronger-search rows' searches (default lcfr:1024:6; --quick "
                             "dcfr:512:2,lcfr:256:4; 'none' skips them)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="a training override for the cells trained or resumed now, e.g. trainer.device=cuda "
                             "or selfplay.threads=8, or run.max_minutes=100 to end the cell's training there, "
                             "which the table "
                             "notes (repeatable; after the plan's settings, so it wins; recorded in each run's "
                             "config.yaml, whose budget a resume keeps)")
    parser.add_argument("--reevaluate", action="append", default=[], metavar="CELL",
                        help="evaluate CELL's final net again where a cached evaluation ran the net in another "
                             "precision than the protocol's, finished or kept per seed (no retraining)")
    parser.add_argument("--end-training", action="append", default=[], metavar="CELL",
                        help="end CELL's training at the last epoch its metrics record and evaluate that net "
                             "(for a run whose checkpoint was lost; recorded in the results)")
    parser.add_argument("--no-progress", dest="progress", action="store_false")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    plan = QUICK_PLAN if args.quick else FULL_PLAN
    out = Path(args.out or ("experiments/results/table2-quick" if args.quick else "experiments/results/table2"))
    try:
        cells = parse_cells(args.cells, plan)
        forced = parse_cells(",".join(args.force), plan) if args.force else []
        out.mkdir(parents=True, exist_ok=True)
        # Each of these prepares its cells' folders, then the cells join this invocation's.
        actions = [(forced, lambda cell: shutil.rmtree(out / cell, ignore_errors=True)),
                   (parse_cells(",".join(args.reevaluate), plan) if args.reevaluate else [],
                    lambda cell: reevaluate(cell, out / cell, plan)),
                   (parse_cells(",".join(args.end_training), plan) if args.end_training else [],
                    lambda cell: end_training(cell, out / cell))]
        for named, prepare in actions:
            for cell in named:
                prepare(cell)
                if cell not in cells:
                    cells.append(cell)
        oracle_games = {g.strip() for g in args.oracle.split(",") if g.strip()}
        stronger = parse_stronger(args.stronger, plan)
        malformed = [o for o in args.overrides if "=" not in o or not o.split("=", 1)[0]]
        if malformed:
            raise Refused(f"--set takes KEY=VALUE (e.g. trainer.device=cuda), got {malformed}")
        rows: Dict[str, Dict[str, Any]] = {}
        refs: Dict[str, Dict[str, Any]] = {}
        for game in plan.games:
            game_cells = [c for c in cells if c.rsplit("-", 1)[0] == game]
            if not game_cells:
                continue
            refs[game] = references(game, plan, out, args.threads, game in oracle_games, args.progress, stronger)
            for cell in game_cells:
                run_dir = train(cell, plan, out, args.progress, args.overrides)
                ev = evaluate_cell(cell, run_dir, plan, args.threads, args.progress)
                for search in stronger:
                    evaluate_cell(cell, run_dir, plan, args.threads, args.progress, search=search)
                rows[cell] = cell_row(cell, run_dir, ev, plan_minutes(plan, cell))
        # The summary covers every finished cell in the folder, not only this invocation's.
        for cell in cell_names(plan):
            if cell not in rows and (out / cell / "eval.json").is_file() and trained(out / cell):
                rows[cell] = cell_row(cell, out / cell, evaluate_cell(cell, out / cell, plan, args.threads, False),
                                      plan_minutes(plan, cell))
        all_refs = read_json(out / "references.json",
                             "references")["games"] if (out / "references.json").is_file() else {}
        ordered = {c: rows[c] for c in cell_names(plan) if c in rows}
        # The stronger searches the table's rows were evaluated with (cached rows keep theirs,
        # even when this invocation skips them with --stronger none).
        _write_json(out / "table2.json",
                    {"format": FORMAT, "protocol": {"depth": plan.depth, "iterations": plan.iterations,
                                                                         "repeats": plan.repeats, "seeds": plan.seeds,
                                                                         "precision": plan.precision,
                                                                         "stronger_searches":
                                                                             stronger_searches(ordered, plan)},
                                          "paper": plan.paper, "references": all_refs, "cells": ordered})
        (out / "table2.md").write_text(markdown(ordered, all_refs, plan, oracle_estimates(out)))
        for game in plan.games:
            done = {c.rsplit("-", 1)[1]: out / c for c in ordered if c.rsplit("-", 1)[0] == game}
            if done:
                plot_curves(game, done, all_refs.get(game, {}), plan, out / f"curves_{game}.png")
    except Refused as e:
        print(f"table2.py: {e}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"table2.py: training stopped ({' '.join(e.cmd[3:])} exited {e.returncode}); run again to resume",
              file=sys.stderr)
        return 1
    print((out / "table2.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
