"""The policy-net warm start of ReBeL's Algorithm 1, measured on the Table 2 nets.

    python experiments/warm_start.py --cells 1x4f-cfr [--steps 4000] [--out DIR]
    python experiments/warm_start.py --quick          # the pipeline in about a minute
    python experiments/warm_start.py --run RUN --rows warm_T256_P10,cold_T1024   # a policy.enabled run

For each cell (a Liar's Dice game and its CFR-D Table 2 run, experiments/results/table2/CELL)
the script, with that run's final value net frozen:

1. **collects D_pi**: self-play with the cell's own search (linear CFR-D, depth 2, T = 1024,
   epsilon 0.25), each step recording every PBS of its subgame with the subgame's average
   policy (``SelfPlayGenerator(collect_policy=True)``); a second, separately seeded stream of
   steps is the held-out set;
2. **trains the policy net** on it (``rebel.nets.policy_mlp``: the value net's MLP shape,
   masked softmax over the legal actions, cross-entropy weighted by the actor's beliefs) and
   reports train and held-out loss beside the held-out entropy of the targets (the loss of a
   perfect net) and the loss of the uniform policy;
3. **evaluates the paper's protocol** (mode (b), N = 1024, seeds 0/1/2, fp32) with the policy
   net warm-starting every subgame (K = 15 iterations, the paper's figure) at T = 1024 and at
   T = 256, and the cold search at T = 256; the cold T = 1024 figure is the cell's committed
   eval.json (the same protocol; fp32 exploitability does not depend on the CPU);
4. **measures self-play speed**: examples per second of the cold search at T = 1024 and the
   warm search at T = 256 (and, for CFR solvers, at T = 256 with the regret prior 10), one
   loop each, alternating blocks of steps in one process.

With ``--run RUN`` the script evaluates a `rebel train` run made with ``policy.enabled=true``
instead (Algorithm 1 in full: the policy net trained beside the value net, and with
``search.warm_start`` warm-starting the self-play subgames too): its final value net with its
own policy net under the rows asked, written to ``RUN/warm_eval.{json,md}``.

A phase whose output exists is not redone (``--force`` redoes all; D_pi is collected only to
train a policy net; speed.json is redone when its arms are not the current ones). Writes
``OUT/CELL/{dpi.npz, policy.bin, train.json, eval.json, speed.json}`` and ``OUT/warm_start.md``.
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch
from tqdm import tqdm

from rebel import _core
from rebel.games import game_from_config
from rebel.nets.policy_mlp import (
    PolicyMLP,
    export_policy_weights,
    policy_loss,
    policy_loss_references,
)
from rebel.search.evaluate import evaluate
from rebel.search.selfplay import SelfPlayLoop
from rebel.search.settings import EvalSettings
from rebel.search.solve import FP_SOLVERS
from rebel.util.machine import cpu_name

log = logging.getLogger("warm_start")

FORMAT = 1
ROOT = Path(__file__).resolve().parent
TABLE2 = ROOT / "results" / "table2"
WARM_ITERATIONS = 15  # the paper's appendix: regrets scaled as if 15 iterations had been played
SEEDS = (0, 1, 2)
EQUILIBRIUM_ITERATIONS = 4096  # full-game DCFR iterations of the eqwarm rows' start (exploitability 6e-6 on 1x4f)
ORACLE_ITERATIONS = 1024  # the Table 2 oracle's leaf solves (references.json), for every T
SPEED_PRIOR = 10.0  # the regret prior lambda fixed on 1x4f (docs/results.md), timed as its own speed arm


def run_config(folder: Path) -> Dict[str, Any]:
    """A training run's resolved config.yaml, its game section without the unset keys of other games."""
    import yaml  # omegaconf's dependency

    config = yaml.safe_load((folder / "config.yaml").read_text())
    config["game"] = {k: v for k, v in config["game"].items() if v is not None}
    return config


def cell_config(cell: str) -> Dict[str, Any]:
    """The game and search of a Table 2 cell, from its committed config.yaml."""
    config = run_config(TABLE2 / cell)
    return {"game": config["game"], "search": config["search"], "weights": str(TABLE2 / cell / "weights.bin")}


def generator_for(game: _core.Game, value_net: Any, search: Dict[str, Any], iterations: int,
                  policy_net: Any = None, warm: int = 0, collect: bool = False,
                  prior: float = 0.0) -> _core.SelfPlayGenerator:
    return _core.SelfPlayGenerator(game, value_net, solver=search["solver"], depth=search["depth"],
                                   iterations=iterations, epsilon=search["epsilon"],
                                   sampling=search["iteration_sampling"], off_path=search["off_path"],
                                   policy_net=policy_net, warm_iterations=warm, collect_policy=collect,
                                   warm_prior=prior)


# ------------------------------------------------------------------ 1. D_pi

def collect(game: _core.Game, value_net: Any, search: Dict[str, Any], steps: int, seed: int,
            loops: int = 2, desc: str = "D_pi") -> Dict[str, np.ndarray]:
    """D_pi from `steps` self-play steps on `loops` threads (loop i seeded (seed, i))."""
    generator = generator_for(game, value_net, search, search["iterations"], collect=True)
    per_loop = [steps // loops + (i < steps % loops) for i in range(loops)]
    bar = tqdm(total=steps, desc=desc, unit="step", file=sys.stderr, disable=not sys.stderr.isatty())

    def run(i: int) -> List[Any]:
        loop = SelfPlayLoop(game, generator, np.random.SeedSequence([seed, i]))
        out = []
        for _ in range(per_loop[i]):
            r = loop.step()
            if r.policy_count:
                out.append((np.array(r.policy_rows), np.array(r.policy_targets), np.array(r.policy_legal),
                            np.array(r.policy_weights)))
            bar.update(1)
        return out

    with ThreadPoolExecutor(loops) as pool:
        parts = [p for chunk in pool.map(run, range(loops)) for p in chunk]
    bar.close()
    return {name: np.concatenate([p[k] for p in parts]) for k, name in
            enumerate(("rows", "targets", "legal", "weights"))}


# ------------------------------------------------------------------ 2. training

def held_out_reference(data: Dict[str, np.ndarray]) -> Dict[str, float]:
    """The loss of a perfect net (the targets' weighted entropy) and of the uniform policy."""
    return policy_loss_references(data["targets"], data["legal"], data["weights"])


def tensors(data: Dict[str, np.ndarray]) -> List[torch.Tensor]:
    return [torch.from_numpy(np.ascontiguousarray(data[k])) for k in ("rows", "targets", "legal", "weights")]


def mean_loss(model: PolicyMLP, data: List[torch.Tensor], batch: int = 4096) -> float:
    """The belief-weighted cross-entropy over the whole set."""
    total, weight = 0.0, 0.0
    with torch.no_grad():
        for start in range(0, data[0].shape[0], batch):
            x, t, legal, w = (d[start:start + batch] for d in data)
            total += float(policy_loss(model(x), t, legal, w)) * float(w.sum())
            weight += float(w.sum())
    return total / weight


def train(game: _core.Game, data: Dict[str, np.ndarray], held: Dict[str, np.ndarray], epochs: int,
          seed: int = 0, hidden: int = 256, layers: int = 2, lr: float = 1e-3, batch: int = 512) -> Any:
    torch.manual_seed(seed)
    model = PolicyMLP.for_game(game, hidden=hidden, layers=layers)
    optim = torch.optim.Adam(model.parameters(), lr=lr)
    train_t, held_t = tensors(data), tensors(held)
    n = train_t[0].shape[0]
    gen = torch.Generator().manual_seed(seed)
    history = []
    for epoch in tqdm(range(epochs), desc="policy net", unit="epoch", file=sys.stderr,
                      disable=not sys.stderr.isatty()):
        # cosine decay to 0: the set is fixed, so the last epochs polish
        for group in optim.param_groups:
            group["lr"] = lr * 0.5 * (1 + np.cos(np.pi * epoch / epochs))
        order = torch.randperm(n, generator=gen)
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            x, t, legal, w = (d[idx] for d in train_t)
            loss = policy_loss(model(x), t, legal, w)
            optim.zero_grad()
            loss.backward()
            optim.step()
        if epoch % max(1, epochs // 10) == 0 or epoch == epochs - 1:
            history.append({"epoch": epoch + 1, "train": mean_loss(model, train_t),
                            "heldout": mean_loss(model, held_t)})
            log.info("epoch %d: train %.4f, held-out %.4f", epoch + 1, history[-1]["train"], history[-1]["heldout"])
    return model, history


# ------------------------------------------------------------------ 3. evaluation

def evaluate_row(game: _core.Game, weights: str, search: Dict[str, Any], iterations: int, warm: int, prior: float,
                 policy_path: str, seeds: Sequence[int], repeats: int) -> Dict[str, Any]:
    """One row under the protocol; ``weights`` "oracle" gives exact leaf values (each leaf PBS
    solved with ORACLE_ITERATIONS LCFR iterations whatever the row's T, as the Table 2 oracle)."""
    runs = []
    oracle = weights == "oracle"
    for seed in seeds:
        settings = EvalSettings(net=weights, solver=search["solver"], depth=search["depth"], iterations=iterations,
                                repeats=repeats, threads=2, seed=seed, off_path=search["off_path"],
                                mode_a=False, full_game=False, warm_start=warm,
                                policy_net=policy_path if warm > 0 else "", warm_prior=prior,
                                oracle_iterations=ORACLE_ITERATIONS if oracle else None)
        start = time.perf_counter()
        result = evaluate(game, settings, progress=sys.stderr.isatty())
        runs.append({"seed": seed, "exploitability": result["mode_b"][-1]["exploitability"],
                     "seconds": time.perf_counter() - start})
        log.info("T=%d K=%d seed %d: %.5f (%.0f s)", iterations, warm, seed, runs[-1]["exploitability"],
                 runs[-1]["seconds"])
    values = [r["exploitability"] for r in runs]
    row: Dict[str, Any] = {"iterations": iterations, "warm_iterations": warm, "warm_prior": prior, "runs": runs,
                           "mean": statistics.fmean(values),
                           "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}
    if oracle:
        row["net"] = f"oracle ({ORACLE_ITERATIONS} LCFR iterations per leaf solve)"
    return row


def merge_runs(row: Dict[str, Any], added: Dict[str, Any]) -> Dict[str, Any]:
    """``row`` with ``added``'s runs appended (sorted by seed) and its mean and sd recomputed."""
    runs = sorted(row["runs"] + added["runs"], key=lambda run: run["seed"])
    values = [run["exploitability"] for run in runs]
    return {**row, "runs": runs, "mean": statistics.fmean(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}


def equilibrium_policy_net(game: _core.Game, iterations: int = EQUILIBRIUM_ITERATIONS) -> tuple[Any, float]:
    """A TabularPolicyNet of the full-game DCFR solve after ``iterations``, and that policy's
    exploitability: the warm start of a perfect policy net."""
    import rebel

    tree = _core.build_tree(game)
    solved = rebel.solve(game, "dcfr", iterations, progress=False, tree=tree)
    exploitability = float(rebel.exploitability(game, tree, solved.policy)["exploitability"])
    log.info("full-game DCFR, %d iterations: exploitability %.2e", iterations, exploitability)
    return _core.TabularPolicyNet(game, solved.policy), exploitability


def evaluate_equilibrium_row(game: _core.Game, value_net: Any, search: Dict[str, Any], iterations: int, warm: int,
                             prior: float, seeds: Sequence[int], repeats: int,
                             equilibrium_iterations: int) -> Dict[str, Any]:
    """The same protocol, every subgame warm-started from a full-game DCFR solve (TabularPolicyNet)."""
    policy_net, eq_expl = equilibrium_policy_net(game, equilibrium_iterations)
    searcher = _core.TestTimeSearch(game, value_net, search["solver"], search["depth"], iterations,
                                    off_path=search["off_path"], policy_net=policy_net,
                                    warm_iterations=warm, warm_prior=prior)
    runs = []
    for seed in seeds:
        start = time.perf_counter()
        e = float(searcher.evaluate_sampled(repeats, threads=2, seed=seed)["exploitability"][-1])
        runs.append({"seed": seed, "exploitability": e, "seconds": time.perf_counter() - start})
        log.info("T=%d K=%d from the equilibrium, seed %d: %.5f", iterations, warm, seed, e)
    values = [r["exploitability"] for r in runs]
    return {"iterations": iterations, "warm_iterations": warm, "warm_prior": prior,
            "start": f"full-game dcfr {equilibrium_iterations}",
            "start_exploitability": eq_expl, "runs": runs, "mean": statistics.fmean(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}


DEFAULT_ROWS = ("warm_T256", "cold_T256", "warm_T1024")


def parse_row(name: str) -> tuple[int, int, float]:
    """(T, K, lambda) of a row name: KIND_T<T>[_K<K>][_P<lambda>] with KIND warm (default K = 15),
    cold (no K, no P) or eqwarm (warm-started from the full-game equilibrium instead of the
    policy net: the ceiling of a perfect policy net). P is the warm start's regret prior
    (SolverParams::warm_prior; default 0). The prefix ``oracle_`` (oracle_warm_T256_P10,
    oracle_cold_T256) swaps the value net for exact leaf values: the row's exact-leaf level."""
    oracle = name.startswith("oracle_")
    parts = name.removeprefix("oracle_").split("_")
    try:
        kind, t, rest = parts[0], parts[1], parts[2:]
        if kind not in ("warm", "cold", "eqwarm") or not t.startswith("T") or (oracle and kind == "eqwarm"):
            raise ValueError
        iterations = int(t[1:])
        warm, prior = (0 if kind == "cold" else WARM_ITERATIONS), 0.0
        if rest and rest[0].startswith("K") and kind != "cold":
            warm = int(rest.pop(0)[1:])
        if rest and rest[0].startswith("P") and kind != "cold":
            prior = float(rest.pop(0)[1:])
        if rest or iterations < 1 or warm < 0 or not prior >= 0:
            raise ValueError
    except (ValueError, IndexError):
        raise SystemExit(f"warm_start.py: bad row {name!r}: use warm_T<T>[_K<K>][_P<lambda>], cold_T<T> or "
                         "eqwarm_T<T>[_K<K>][_P<lambda>], the first two optionally prefixed oracle_") from None
    return iterations, warm, prior


# ------------------------------------------------------------------ 4. speed

def speed_arms(search: Dict[str, Any]) -> List[str]:
    """The timed self-play searches: cold T = 1024, warm T = 256 and, for solvers with regrets,
    warm T = 256 with the regret prior SPEED_PRIOR."""
    arms = ["cold_T1024", "warm_T256"]
    if search["solver"] not in FP_SOLVERS:
        arms.append(f"warm_T256_P{SPEED_PRIOR:g}")
    return arms


def speed(game: _core.Game, value_net: Any, policy_net: Any, search: Dict[str, Any], blocks: int,
          steps_per_block: int) -> Dict[str, Any]:
    """Examples per second (2 per step) of each of `speed_arms`, one loop per arm, alternating blocks."""
    arms = {}
    for name in speed_arms(search):
        iterations, warm, prior = parse_row(name)
        arms[name] = generator_for(game, value_net, search, iterations, policy_net if warm else None, warm,
                                   prior=prior)
    loops = {name: SelfPlayLoop(game, g, np.random.SeedSequence([7, k])) for k, (name, g) in enumerate(arms.items())}
    seconds = {name: 0.0 for name in arms}
    for _ in range(blocks):
        for name, loop in loops.items():
            start = time.perf_counter()
            for _ in range(steps_per_block):
                loop.step()
            seconds[name] += time.perf_counter() - start
    examples = 2 * blocks * steps_per_block
    rates = {name: examples / s for name, s in seconds.items()}
    # Whether every arm took the kept-solve path at the initial PBS (SelfPlayGenerator's default;
    # the warm arms key it by the policy net too), as training self-play does: read from the
    # generators' counters, which count only that path.
    reused = all(g.initial_solves_computed + g.initial_solves_reused > 0 for g in arms.values())
    return {"cpu": cpu_name(), "threads": 1, "reuse_initial_solve": reused, "examples_per_arm": examples,
            "examples_per_second": rates,
            "ratio": rates["warm_T256"] / rates["cold_T1024"],
            "ratios": {name: rate / rates["cold_T1024"] for name, rate in rates.items() if name != "cold_T1024"}}


# ------------------------------------------------------------------ driver

def evaluate_rows(game: _core.Game, value_net: Any, weights: str, search: Dict[str, Any], policy_path: Path,
                  eval_json: Path, label: str, args: argparse.Namespace) -> Dict[str, Any]:
    """Evaluates ``args.rows`` (cached in ``eval_json``, one seed at a time) and returns them."""
    rows = json.loads(eval_json.read_text())["rows"] if eval_json.exists() and not args.force else {}

    def write_rows() -> None:
        eval_json.write_text(json.dumps({"format": FORMAT, "cell": label, "repeats": args.repeats, "rows": rows},
                                        indent=1))

    for name in args.rows:
        iterations, warm, prior = parse_row(name)
        if name.startswith("eqwarm"):
            if name not in rows:
                rows[name] = evaluate_equilibrium_row(game, value_net, search, iterations, warm, prior, args.seeds,
                                                      args.repeats, args.equilibrium_iterations)
                write_rows()
            continue
        # One seed at a time, each written when done: a cached row gains the requested seeds it
        # lacks (an oracle row costs about 20 minutes a seed) and keeps its other runs as they are.
        done = {run["seed"] for run in rows[name]["runs"]} if name in rows else set()
        net = "oracle" if name.startswith("oracle_") else weights
        for seed in (s for s in args.seeds if s not in done):
            added = evaluate_row(game, net, search, iterations, warm, prior, str(policy_path), [seed], args.repeats)
            rows[name] = merge_runs(rows[name], added) if name in rows else added
            write_rows()
    return rows


def run_training(run_dir: Path, args: argparse.Namespace) -> Dict[str, Any]:
    """``--run``: a `rebel train` run with ``policy.enabled`` (Algorithm 1 in full: the policy net
    trained beside the value net and, with ``search.warm_start``, warm-starting self-play): its
    final value net and its own policy.bin under the protocol rows, cached in RUN/warm_eval.json."""
    weights, policy_path = run_dir / "weights.bin", run_dir / "policy.bin"
    for needed in (run_dir / "config.yaml", weights, policy_path):
        if not needed.exists():
            raise SystemExit(f"warm_start.py --run {run_dir}: no {needed.name} there (a `rebel train` run with "
                             "policy.enabled=true writes config.yaml, weights.bin and policy.bin)")
    config = run_config(run_dir)
    game = game_from_config(config["game"])
    search = config["search"]
    value_net = _core.MlpValueNet(game, str(weights), precision="fp32")
    rows = evaluate_rows(game, value_net, str(weights), search, policy_path, run_dir / "warm_eval.json",
                         str(run_dir), args)
    final = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()
             if '"kind": "final"' in line]
    training = ({"epoch": final[-1]["epoch"], "minutes": final[-1]["wall_seconds"] / 60,
                 "examples_generated": final[-1]["examples_generated"]} if final else None)
    return {"run": str(run_dir), "repeats": args.repeats, "rows": rows, "training": training,
            "self_play": {k: search.get(k) for k in ("solver", "warm_start", "warm_prior")} |
            {"iterations": config["selfplay"].get("iterations") or search["iterations"]}}


def run_markdown(result: Dict[str, Any]) -> str:
    """The ``--run`` table: the run's training, then each protocol row."""
    sp, tr = result["self_play"], result["training"]
    lines = [f"# {result['run']}: its value net and its own policy net under the protocol", "",
             f"Self-play: {sp['solver']}, T = {sp['iterations']}, warm start K = {sp['warm_start']}, "
             f"prior {sp['warm_prior']:g}. " +
             (f"Final net: epoch {tr['epoch']}, {tr['minutes']:.1f} minutes, {tr['examples_generated']:,} examples."
              if tr else "The run has no final record yet."),
             f"Mode (b), N = {result['repeats']}, fp32.", "",
             "| row | T | K | prior | exploitability (mean +- sd over seeds) | per seed |", "|---|---|---|---|---|---|"]
    for name, row in result["rows"].items():
        per_seed = " / ".join(f"{run['exploitability']:.4f}" for run in row["runs"])
        lines.append(f"| {name} | {row['iterations']} | {row['warm_iterations']} | {row.get('warm_prior', 0.0):g} | "
                     f"{row['mean']:.4f} +- {row['stdev']:.4f} | {per_seed} |")
    return "\n".join(lines) + "\n"


def run_cell(cell: str, out: Path, args: argparse.Namespace) -> Dict[str, Any]:
    cfg = cell_config(cell)
    game = game_from_config(cfg["game"])
    search = cfg["search"]
    value_net = _core.MlpValueNet(game, cfg["weights"], precision="fp32")
    folder = out / cell
    folder.mkdir(parents=True, exist_ok=True)

    policy_path = folder / "policy.bin"
    train_json = folder / "train.json"
    if args.force or not policy_path.exists() or not train_json.exists():
        # D_pi (not committed: dpi.npz) is needed only to train the policy net
        dpi = folder / "dpi.npz"
        if args.force or not dpi.exists():
            data = collect(game, value_net, search, args.steps, seed=0)
            held = collect(game, value_net, search, max(1, args.steps // 8), seed=1, desc="held-out D_pi")
            np.savez_compressed(dpi, **data, **{"held_" + k: v for k, v in held.items()})
        z = np.load(dpi)
        data = {k: z[k] for k in ("rows", "targets", "legal", "weights")}
        held = {k: z["held_" + k] for k in ("rows", "targets", "legal", "weights")}
        log.info("%s: D_pi %d train / %d held-out PBSs", cell, data["rows"].shape[0], held["rows"].shape[0])
        model, history = train(game, data, held, args.epochs)
        export_policy_weights(model, policy_path)
        train_json.write_text(json.dumps({
            "format": FORMAT, "steps": args.steps, "examples": int(data["rows"].shape[0]),
            "heldout_examples": int(held["rows"].shape[0]), "epochs": args.epochs, "history": history,
            "heldout_reference": held_out_reference(held)}, indent=1))

    rows = evaluate_rows(game, value_net, cfg["weights"], search, policy_path, folder / "eval.json", cell, args)
    speed_json = folder / "speed.json"
    timed = json.loads(speed_json.read_text())["examples_per_second"] if speed_json.exists() else {}
    if not args.no_speed and (args.force or args.redo_speed or sorted(timed) != sorted(speed_arms(search))):
        policy_net = _core.MlpPolicyNet(game, str(policy_path), precision="fp32")
        speed_json.write_text(json.dumps(speed(game, value_net, policy_net, search, args.speed_blocks,
                                               args.speed_steps), indent=1))
    return {"cell": cell, "repeats": args.repeats, "rows": rows, "train": json.loads(train_json.read_text()),
            "speed": json.loads(speed_json.read_text()) if speed_json.exists() else None}


def saved_cell(folder: Path) -> Optional[Dict[str, Any]]:
    """A cell's record from its files alone (nothing computed): what the report shows for the
    cells not named in ``--cells``, so a run on one cell does not drop the others' rows. None
    where the folder holds no evaluated cell (a ``--run`` folder, for one)."""
    eval_json, train_json, speed_json = folder / "eval.json", folder / "train.json", folder / "speed.json"
    if not (eval_json.is_file() and train_json.is_file() and (TABLE2 / folder.name / "eval.json").is_file()):
        return None
    saved = json.loads(eval_json.read_text())
    return {"cell": folder.name, "repeats": saved["repeats"], "rows": saved["rows"],
            "train": json.loads(train_json.read_text()),
            "speed": json.loads(speed_json.read_text()) if speed_json.exists() else None}


def committed_cold(cell: str) -> Dict[str, float]:
    runs = json.loads((TABLE2 / cell / "eval.json").read_text())["runs"]
    values = [r["exploitability"] for r in runs]
    return {"mean": statistics.fmean(values), "stdev": statistics.stdev(values),
            "seeds": "/".join(str(r["seed"]) for r in runs)}


def markdown(results: List[Dict[str, Any]]) -> str:
    """Two tables: exploitability per cell and row; the policy net and self-play speed per cell."""
    lines = ["# Policy-net warm start (experiments/warm_start.py)", "",
             f"Mode (b), N = {results[0]['repeats']}, fp32, the Table 2 cell's final value net and search; "
             f"warm rows start every subgame from the policy net as if K updates had played it (default K = "
             f"{WARM_ITERATIONS}, the paper's); T counts the iterations after them. The cold T = 1024 row is the "
             "cell's committed Table 2 figure (experiments/results/table2/CELL/eval.json).", "",
             "| cell | search | T | K | prior | exploitability (mean +- sd over seeds) | seeds |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        cold = committed_cold(r["cell"])
        solver = cell_config(r["cell"])["search"]["solver"]
        lines.append(f"| {r['cell']} | {solver}, cold (Table 2) | 1024 | 0 | 0 | "
                     f"{cold['mean']:.4f} +- {cold['stdev']:.4f} | {cold['seeds']} |")
        for row in r["rows"].values():
            seeds = "/".join(str(run["seed"]) for run in row["runs"])
            kind = ("warm from the full-game equilibrium" if "start" in row else
                    "warm" if row["warm_iterations"] else "cold")
            if "net" in row:
                kind += ", exact leaves (oracle)"
            lines.append(f"| {r['cell']} | {solver}, {kind} | "
                         f"{row['iterations']} | {row['warm_iterations']} | {row.get('warm_prior', 0.0):g} | "
                         f"{row['mean']:.4f} +- {row['stdev']:.4f} "
                         f"| {seeds} |")
    lines += ["", "| cell | D_pi PBSs (train / held-out) | held-out loss | perfect (target entropy) | uniform | "
              f"examples/s cold T=1024 | warm T=256 (ratio) | warm T=256, prior {SPEED_PRIOR:g} (ratio) | CPU |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        t, sp = r["train"], r["speed"]
        ref = t["heldout_reference"]
        if sp:
            rate = sp["examples_per_second"]
            warm = [f"{rate[arm]:.1f} ({rate[arm] / rate['cold_T1024']:.2f}x)" if arm in rate else "n/a (no regrets)"
                    for arm in ("warm_T256", f"warm_T256_P{SPEED_PRIOR:g}")]
            rates = f"{rate['cold_T1024']:.1f} | {warm[0]} | {warm[1]} | {sp['cpu']}"
        else:
            rates = "not run | | |"
        lines.append(f"| {r['cell']} | {t['examples']} / {t['heldout_examples']} | {t['history'][-1]['heldout']:.4f} "
                     f"| {ref['target_entropy']:.4f} | {ref['uniform']:.4f} | {rates} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", default="1x4f-cfr")
    parser.add_argument("--steps", type=int, default=4000, help="self-play steps of D_pi (held-out: 1/8 of it)")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=1024)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--rows", default=",".join(DEFAULT_ROWS),
                        help="evaluated rows: warm_T<T> (K = 15), warm_T<T>_K<K>, cold_T<T>, eqwarm_T<T>[_K<K>]; "
                             "oracle_warm_T<T>[_K<K>] and oracle_cold_T<T> with exact leaf values")
    parser.add_argument("--equilibrium-iterations", type=int, default=EQUILIBRIUM_ITERATIONS,
                        help="full-game DCFR iterations of the eqwarm rows' start")
    parser.add_argument("--speed-blocks", type=int, default=4)
    parser.add_argument("--speed-steps", type=int, default=25)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--redo-speed", action="store_true",
                        help="time the speed arms again (speed.json) even where they are cached")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: the pipeline only, no figures")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "warm_start")
    parser.add_argument("--run", type=Path, default=None,
                        help="instead of the cells: a `rebel train` run with policy.enabled (its weights.bin and "
                             "policy.bin) evaluated under --rows, written to RUN/warm_eval.{json,md}")
    args = parser.parse_args(list(argv) or None)
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.rows = args.rows.split(",")
    for name in args.rows:
        parse_row(name)
    if args.quick:
        args.steps, args.epochs, args.repeats, args.seeds = 40, 2, 4, [0]
        args.speed_blocks, args.speed_steps = 1, 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.run is not None:
        table = run_markdown(run_training(args.run, args))
        (args.run / "warm_eval.md").write_text(table)
        print(table)
        return 0
    cells = args.cells.split(",")
    results = [run_cell(cell, args.out, args) for cell in cells]
    others = [saved_cell(f) for f in sorted(args.out.iterdir()) if f.is_dir() and f.name not in cells]
    results = sorted(results + [r for r in others if r is not None], key=lambda r: r["cell"])
    (args.out / "warm_start.md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
