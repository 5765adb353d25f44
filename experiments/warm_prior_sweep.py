"""The warm start's regret prior (``warm_prior``, csrc/solvers/warm_start.cc) swept on a Table 2
cell, under the paper's protocol (mode (b), N = 1024, fp32), one JSON line per setting and seed:

    python experiments/warm_prior_sweep.py --cell 1x4f-cfr --iters 256 --warm 15 --priors 0,0.3,1,3,10,30
    python experiments/warm_prior_sweep.py --cell 1x4f-cfr --iters 256 --warm 15 --priors 10 --seeds 3,4,5
    python experiments/warm_prior_sweep.py --cell 1x4f-cfr --iters 1024 --warm 0 --priors 0 --seeds 3,4,5
    python experiments/warm_prior_sweep.py --cell 1x4f-cfr --iters 256 --warm 15 --priors 10 --start equilibrium
    python experiments/warm_prior_sweep.py --cell 1x4f-fp --iters 256 --warm 15 --priors 0 --start uniform \
        --leaves oracle --repeats 256

The cell's final value net and search (experiments/results/table2/CELL) and the policy net
experiments/warm_start.py trained for it (experiments/results/warm_start/CELL/policy.bin, which
that script must have written first); ``--start equilibrium`` warm-starts from a full-game DCFR
solve (warm_start.EQUILIBRIUM_ITERATIONS, 4,096 iterations) instead, the ceiling of a perfect
policy net; ``--start uniform`` from the uniform policy (the warm start's mechanics alone).
``--leaves oracle`` swaps the cell's value net for exact leaf values (each leaf PBS solved with
warm_start.ORACLE_ITERATIONS LCFR iterations, the Table 2 oracle). ``--warm 0`` is the cold search.
Lines are appended to ``--out`` (default experiments/results/warm_start/CELL/prior_sweep.jsonl),
one per (setting, seed) as soon as that seed is evaluated (a seed costs minutes to hours), so an
interrupted sweep keeps its finished seeds: run again, it skips every seed the file already holds
for the same setting and prints each setting's mean +- sd over all of them. (Lines written before
this listed several seeds each; they count the same way.)
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, Sequence

from rebel import _core
from rebel.games import game_from_config
from rebel.util.machine import cpu_name

sys.path.insert(0, str(Path(__file__).resolve().parent))
import warm_start  # noqa: E402  (the cell configs and the policy nets' folder)

log = logging.getLogger("warm_prior_sweep")


def seeds_found(path: Path, setting: Dict[str, Any]) -> Dict[int, float]:
    """seed -> exploitability over the lines of ``path`` with this setting (a line written before
    ``leaves`` was recorded used the value net)."""
    found: Dict[int, float] = {}
    if not path.exists():
        return found
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as err:
            raise SystemExit(f"warm_prior_sweep.py: {path}:{number} is not JSON ({err})") from None
        if all(line.get(key, "net" if key == "leaves" else None) == value for key, value in setting.items()):
            found.update(zip(line["seeds"], line["exploitability"]))
    return found


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cell", default="1x4f-cfr")
    parser.add_argument("--iters", type=int, default=256, help="T, the iterations after the warm start")
    parser.add_argument("--warm", type=int, default=warm_start.WARM_ITERATIONS, help="K (0: the cold search)")
    parser.add_argument("--priors", default="0,1,10", help="comma-separated lambdas")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--repeats", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--start", choices=("net", "equilibrium", "uniform"), default="net",
                        help="sigma0: the cell's policy net, a full-game DCFR solve, or the uniform policy "
                             "(the warm start's mechanics without information)")
    parser.add_argument("--leaves", choices=("net", "oracle"), default="net",
                        help="leaf values: the cell's value net, or exact (the Table 2 oracle)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(list(argv) or None)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    cfg = warm_start.cell_config(args.cell)
    game = game_from_config(cfg["game"])
    search = cfg["search"]
    value_net = (_core.OracleNet(game, "lcfr", warm_start.ORACLE_ITERATIONS) if args.leaves == "oracle"
                 else _core.MlpValueNet(game, cfg["weights"], precision="fp32"))
    folder = warm_start.ROOT / "results" / "warm_start" / args.cell
    policy_net: _core.PolicyNet | None = None
    if args.warm > 0 and args.start == "net":
        policy_net = _core.MlpPolicyNet(game, str(folder / "policy.bin"), precision="fp32")
    elif args.warm > 0 and args.start == "equilibrium":
        policy_net = warm_start.equilibrium_policy_net(game)[0]
    elif args.warm > 0:
        policy_net = _core.TabularPolicyNet(game, _core.uniform_policy(game, _core.build_tree(game)))
    out = args.out or folder / "prior_sweep.jsonl"
    seeds = [int(s) for s in args.seeds.split(",")]
    for prior in (float(p) for p in args.priors.split(",")):
        setting = {"cell": args.cell, "iterations": args.iters, "warm_iterations": args.warm, "warm_prior": prior,
                   "start": args.start if args.warm else "cold", "leaves": args.leaves, "repeats": args.repeats}
        found = seeds_found(out, setting)
        searcher = _core.TestTimeSearch(game, value_net, search["solver"], search["depth"], args.iters,
                                        off_path=search["off_path"], policy_net=policy_net,
                                        warm_iterations=args.warm, warm_prior=prior)
        for seed in seeds:
            if seed in found:
                log.info("lambda %g seed %d: in %s already (%.5f), skipped", prior, seed, out, found[seed])
                continue
            start = time.perf_counter()
            result = searcher.evaluate_sampled(args.repeats, threads=args.threads, seed=seed)
            value = float(result["exploitability"][-1])
            line = {**setting, "seeds": [seed], "exploitability": [value], "mean": value, "stdev": 0.0,
                    "seconds": time.perf_counter() - start, "threads": args.threads, "cpu": cpu_name()}
            print(json.dumps(line), flush=True)
            with open(out, "a") as f:
                f.write(json.dumps(line) + "\n")
            found[seed] = value
        values = [found[seed] for seed in seeds]
        print(json.dumps({**setting, "seeds": seeds, "exploitability": values, "mean": statistics.fmean(values),
                          "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
