"""Adds (or refreshes) a trained net in the package's pretrained nets (rebel/nets/pretrained/).

Copies RUN_DIR/weights.bin to rebel/nets/pretrained/NAME.bin and writes its index entry: the
game and training config from RUN_DIR/config.yaml, the run's size from its metrics, the
paper-protocol exploitability (mode (b), depth 2, the run's solver and T, N = --repeats,
seeds 0, 1, 2; or the numbers of an existing evaluation file such as table2.py's eval.json
with --eval-json) and a small check (N = 16, seed 0, fp32) that tests/nets/test_pretrained.py
recomputes.

    python experiments/pretrained.py kuhn experiments/results/pretrained/kuhn --config kuhn --command "rebel train kuhn"
    python experiments/pretrained.py 1x4f experiments/results/table2/1x4f-cfr --config liars_dice_1x4f \\
        --command "python experiments/table2.py --cells 1x4f-cfr" \\
        --eval-json experiments/results/table2/1x4f-cfr/eval.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INDEX = REPO / "rebel" / "nets" / "pretrained" / "index.json"
CHECK = {"repeats": 16, "seed": 0, "precision": "fp32"}


def _evaluate(run_config, weights: Path, repeats: int, seed: int, precision: str) -> float:
    from rebel import _core
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    params = run_config.game.as_dict()
    name = params.pop("name")
    s = run_config.search
    game = _core.make_game(name, dict(params))
    settings = EvalSettings(net=str(weights), solver=s.solver, depth=s.depth,
                            iterations=s.iterations, repeats=repeats, threads=2, seed=seed, off_path=s.off_path,
                            precision=precision, mode_a=False, full_game=False)
    return float(evaluate(game, settings)["mode_b"][-1]["exploitability"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", help="the name users give as --net pretrained:NAME")
    parser.add_argument("run_dir", type=Path, help="a finished `rebel train` run directory")
    parser.add_argument("--command", required=True, help="the command that reproduces the run")
    parser.add_argument("--config", required=True,
                        help="the training config and its overrides, as given to rebel train")
    parser.add_argument("--repeats", type=int, default=1024, help="N of the listed exploitability")
    parser.add_argument("--eval-json", type=Path, help="take the listed exploitability from this evaluation file")
    args = parser.parse_args()

    from rebel.config.train import load_train_config
    from rebel.nets.weights_io import net_metadata, with_metadata
    from rebel.util.atomic_io import atomic_write_bytes

    config = load_train_config(str(args.run_dir / "config.yaml"))
    rows = [json.loads(line) for line in (args.run_dir / "metrics.jsonl").read_text().splitlines()]
    final = next((r for r in rows if r.get("kind") == "final"), None)
    if final is None:
        print(f"pretrained.py: {args.run_dir} has not finished (no final row in metrics.jsonl)", file=sys.stderr)
        return 2
    weights = args.run_dir / "weights.bin"
    # The listed figure is measured in fp32, whatever kernel the run's config chose: the same
    # number on every CPU (a rounded kernel's figure differs by CPU).
    if args.eval_json:
        ev = json.loads(args.eval_json.read_text())
        protocol = ev["protocol"]
        values = [r["exploitability"] for r in ev["runs"]]
        seeds = [r["seed"] for r in ev["runs"]]
        exploitability = {"depth": protocol["depth"], "iterations": protocol["iterations"],
                          "repeats": protocol["repeats"], "solver": protocol["solver"], "seeds": seeds,
                          "precision": protocol.get("precision", config.search.precision), "values": values}
        if exploitability["precision"] != "fp32":
            print(f"pretrained.py: {args.eval_json} was measured with precision {exploitability['precision']}; "
                  "a shipped net's figure is measured in fp32", file=sys.stderr)
            return 2
    else:
        seeds = [0, 1, 2]
        values = [_evaluate(config, weights, args.repeats, seed, "fp32") for seed in seeds]
        exploitability = {"depth": config.search.depth, "iterations": config.search.iterations,
                          "repeats": args.repeats, "solver": config.search.solver, "seeds": seeds,
                          "precision": "fp32", "values": values}
    exploitability.update({"mean": statistics.mean(values), "min": min(values), "max": max(values)})
    check = {**CHECK, "exploitability": _evaluate(config, weights, CHECK["repeats"], CHECK["seed"], CHECK["precision"])}
    entry = {
        "name": args.name,
        "game": config.game.as_dict(),
        "file": f"{args.name}.bin",
        "config": args.config,
        "command": args.command,
        "exploitability": exploitability,
        "check": check,
        "trained": {"epochs": final["epoch"], "examples_generated": final["examples_generated"],
                    "examples_trained": final["examples_trained"], "wall_minutes": final["wall_seconds"] / 60},
    }
    # The shipped file names its game and the search of its listed figure (format version 3).
    search = {"solver": exploitability["solver"], "depth": exploitability["depth"],
              "iterations": exploitability["iterations"], "chance_leaves": "after_deal"}
    atomic_write_bytes(INDEX.parent / entry["file"],
                       with_metadata(weights.read_bytes(), net_metadata("value", entry["game"], search)))
    index = json.loads(INDEX.read_text())
    names = [n["name"] for n in index["nets"]]
    if args.name in names:  # refreshed in place: `rebel pretrained` keeps its order
        index["nets"][names.index(args.name)] = entry
    else:
        index["nets"].append(entry)
    INDEX.write_text(json.dumps(index, indent=2) + "\n")
    print(json.dumps(entry, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
