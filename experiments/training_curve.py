"""Learning curve of a training run: a Markdown table and a PNG plot from its metrics.jsonl.

For every evaluation the run logged (mode-(b) exploitability with N sampled policies, and
the net's error against the oracle-labelled held-out set) the table gives the wall time,
epoch and examples; the plot shows exploitability against minutes on a log scale with the
zero net, the full-game solver and, if given, the exact-leaf-value (oracle) level as
reference lines, and the held-out error below.

    python experiments/training_curve.py runs/1x4f-60min --oracle 0.0165 --out docs/training_1x4f.png
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Optional


def read(run_dir: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(evaluated epoch records in order, the references record)."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    refs = next((r for r in records if r.get("kind") == "references"), {})
    evals = [r for r in records if r.get("kind") is None and "exploitability" in r]
    final = next((r for r in records if r.get("kind") == "final"), None)
    if final and "evaluation" in final and (not evals or evals[-1]["epoch"] != final["epoch"]):
        evals.append({"epoch": final["epoch"], "wall_seconds": final["wall_seconds"],
                      "examples_generated": final["examples_generated"], **final["evaluation"]})
    return evals, refs


def table(evals: list[dict[str, Any]]) -> str:
    lines = ["| minutes | epoch | examples generated | exploitability | held-out error: mean | belief-weighted | "
             "mean max over hands |", "|---|---|---|---|---|---|---|"]
    for r in evals:
        lines.append(f"| {r['wall_seconds'] / 60:.1f} | {r['epoch']} | {r['examples_generated']:,} | "
                     f"{r['exploitability']:.4f} | {r.get('heldout_mae', float('nan')):.4f} | "
                     f"{r.get('heldout_weighted_mae', float('nan')):.4f} | "
                     f"{r.get('heldout_delta_mean', float('nan')):.4f} |")
    return "\n".join(lines)


def plot(evals: list[dict[str, Any]], refs: dict[str, Any], oracle: Optional[float], title: str, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [r["wall_seconds"] / 60 for r in evals]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    top.plot(minutes, [r["exploitability"] for r in evals], "o-", color="C0", label="trained net (mode b)")
    if "zero_net_exploitability" in refs:
        top.axhline(refs["zero_net_exploitability"], color="C3", ls="--", label="zero net")
    if oracle is not None:
        top.axhline(oracle, color="C2", ls="--", label="exact leaf values (oracle)")
    if "full_game_exploitability" in refs:
        top.axhline(refs["full_game_exploitability"], color="C7", ls=":",
                    label=f"full-game {refs.get('full_game_solver', '')} (no search)")
    top.set_yscale("log")
    top.set_ylabel("exploitability")
    top.set_title(title)
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=8)
    for key, label in (("heldout_mae", "mean |error|"), ("heldout_weighted_mae", "belief-weighted |error|"),
                       ("heldout_delta_mean", "mean of max over hands")):
        if any(key in r for r in evals):
            bottom.plot(minutes, [r.get(key, float("nan")) for r in evals], "o-", label=label)
    bottom.set_yscale("log")
    bottom.set_xlabel("wall-clock minutes (2 CPU cores, evaluation time included)")
    bottom.set_ylabel("held-out net error")
    bottom.grid(True, which="both", alpha=0.3)
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--oracle", type=float, help="exploitability with exact leaf values, drawn as a reference")
    parser.add_argument("--title", default=None)
    parser.add_argument("--out", help="write the plot here (PNG)")
    args = parser.parse_args(argv)
    run_dir = Path(args.run_dir)
    evals, refs = read(run_dir)
    print(table(evals))
    if refs:
        print(f"\nreferences: {json.dumps(refs)}")
    if args.out:
        plot(evals, refs, args.oracle, args.title or f"ReBeL training: {run_dir.name}", args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
