"""The headline results' tables, generated from one index (experiments/results/index.json).

    python experiments/results_tables.py            # rewrite the generated regions in place
    python experiments/results_tables.py --check    # exit 1 if any region is stale

Every headline figure of README.md and docs/results.md lives once, in
``experiments/results/index.json``: one row per figure with its game, what it measures, the
protocol, the evaluation seeds and per-seed values, mean and spread, the command that
reproduces it, the CPU it was measured on and the result file (and place in it) it was read
from. The documents hold marked regions::

    <!-- results:NAME -->
    ...generated, do not edit...
    <!-- /results:NAME -->

and this script renders each region's table from the index (``TABLES`` below).
``tests/architecture/test_results_index.py`` checks that every region is up to date, that
every row's values equal its source file's and that each mean and spread follows from its
values. No torch, no C++ extension: it reads JSON only.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "experiments" / "results" / "index.json"
#: The documents with generated regions, relative to the repository root.
DOCUMENTS = ("README.md", "docs/results.md", "experiments/results/README.md",
             "experiments/results/leduc/README.md")
REGION = re.compile(r"(<!-- results:(?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /results:(?P=name) -->)", re.S)


def load_index(path: Path = INDEX) -> List[Dict[str, Any]]:
    return json.loads(path.read_text())["rows"]


def by_id(rows: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {r["id"]: r for r in rows}


# --- reading a row's figure back from its source file ------------------------------------

def _walk(obj: Any, path: Sequence[Any]) -> Any:
    """``path`` of keys and indices into ``obj``; ``"*"`` maps the rest over a list."""
    for i, key in enumerate(path):
        if key == "*":
            return [_walk(item, path[i + 1:]) for item in obj]
        obj = obj[key]
    return obj


def read_source(source: Any, root: Path = ROOT) -> Dict[str, Any]:
    """The values (list) or value (number) a row's ``source`` names, read from its file.

    ``source``: ``file`` (relative to the repository root); for a ``.jsonl`` file ``line``,
    the fields that select exactly one line; then ``values`` (a path to the per-seed list) or
    ``value`` (a path to one number), and optionally ``mean`` (a path to the file's own mean)
    and ``interval_95``. A list of sources (seeds measured in different files) gives their
    values concatenated in order.
    """
    if isinstance(source, list):
        parts = [read_source(s, root) for s in source]
        return {"values": [v for p in parts for v in (p["values"] if "values" in p else [p["value"]])]}
    path = root / source["file"]
    if path.suffix == ".jsonl":
        match = source["line"]
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        chosen = [x for x in lines if all(x.get(k) == v for k, v in match.items())]
        if len(chosen) != 1:
            raise ValueError(f"{source['file']}: {len(chosen)} lines match {match}")
        data = chosen[0]
    else:
        data = json.loads(path.read_text())
    out: Dict[str, Any] = {}
    for key in ("values", "value", "mean", "interval_95"):
        if key in source:
            out[key] = _walk(data, source[key])
    return out


def spread_of(values: Sequence[float]) -> Dict[str, float]:
    """The spread the index records: sample sd (as the result files), min and max."""
    spread = {"min": min(values), "max": max(values)}
    if len(values) > 1:
        spread = {"sd": statistics.stdev(values), **spread}
    return spread


# --- number formats ----------------------------------------------------------------------

def fmt(x: Optional[float], digits: int) -> str:
    if x is None:
        return "-"
    if x != 0 and abs(x) < 10 ** -digits:
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


def figure(row: Dict[str, Any], bold: bool = False, spread: str = "range") -> str:
    """The row's mean, with [min, max] (``range``), +- sd (``sd``) or nothing."""
    d = row.get("digits", 4)
    text = fmt(row["mean"], d)
    if bold:
        text = f"**{text}**"
    s = row.get("spread") or {}
    if spread == "range" and "min" in s and len(row.get("values") or []) > 1:
        text += f" [{fmt(s['min'], d)}, {fmt(s['max'], d)}]"
    elif spread == "sd" and "sd" in s:
        text += f" +- {fmt(s['sd'], d)}"
    elif spread == "interval" and "interval_95" in s:
        lo, hi = s["interval_95"]
        text += f" [{fmt(lo, d)}, {fmt(hi, d)}]"
    return text


def seeds(row: Dict[str, Any]) -> str:
    s = row.get("seeds")
    if not s:
        return "-"
    if s == list(range(s[0], s[-1] + 1)) and len(s) > 2:
        return f"{s[0]}-{s[-1]}"
    return ", ".join(str(x) for x in s)


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out) + "\n"


# --- the tables --------------------------------------------------------------------------

GAMES_LD = ("1x4f", "1x5f", "1x6f", "2x3f")


def table2(rows: Dict[str, Dict[str, Any]]) -> str:
    """The paper's Table 2 beside ours (README and docs)."""
    lines = []
    for solver, name in (("cfr", "CFR-D"), ("fp", "FP")):
        lines.append([f"paper: ReBeL with {name}"] + [fmt(rows[f"table2.{g}.{solver}.paper"]["mean"], 3)
                                                       for g in GAMES_LD])
        lines.append([f"**ours: ReBeL with {name}**"] + [figure(rows[f"table2.{g}.{solver}"], bold=True, spread="none")
                                                          for g in GAMES_LD])
    return _table(["Liar's Dice"] + list(GAMES_LD), lines)


def table2_detail(rows: Dict[str, Dict[str, Any]]) -> str:
    """Every Table 2 cell with its range, the deeper search, the references (docs)."""
    lines = []
    for solver, name in (("cfr", "CFR-D"), ("fp", "FP")):
        lines.append([f"paper: ReBeL with {name}"] + [fmt(rows[f"table2.{g}.{solver}.paper"]["mean"], 3)
                                                       for g in GAMES_LD])
        lines.append([f"ours: ReBeL with {name}, mean [min, max]"]
                     + [figure(rows[f"table2.{g}.{solver}"], bold=True) for g in GAMES_LD])
    for solver, name in (("cfr", "CFR-D"), ("fp", "FP")):
        lines.append([f"same {name} nets, depth 6 (LCFR, T = 1024)"]
                     + [figure(rows[f"table2.{g}.{solver}.depth6"]) for g in GAMES_LD])
    lines.append(["exact leaf values (oracle net), depth 2"]
                 + [figure(rows["table2.1x4f.oracle"]), "not computed", "not computed", "not computed"])
    lines.append(["zero net, depth 2"] + [fmt(rows[f"table2.{g}.zero"]["mean"], 3) for g in GAMES_LD])
    return _table(["Liar's Dice"] + list(GAMES_LD), lines)


def full_game(rows: Dict[str, Dict[str, Any]]) -> str:
    lines = []
    for solver, name in (("lcfr", "linear CFR"), ("lfp", "linear FP")):
        lines.append([f"paper: {name}"] + [fmt(rows[f"full_game.{g}.{solver}.paper"]["mean"], 3) for g in GAMES_LD])
        lines.append([f"**ours: {name} (`{solver}`)**"] + [fmt(rows[f"full_game.{g}.{solver}"]["mean"], 5)
                                                          for g in GAMES_LD])
    return _table(["solver, 1024 iterations"] + list(GAMES_LD), lines)


def _listing(rows: Dict[str, Dict[str, Any]], ids: Sequence[str], spread: str = "range",
             columns: Sequence[str] = ("game", "row", "figure", "seeds", "CPU")) -> str:
    lines = []
    for i in ids:
        r = rows[i]
        cells = {"game": r["game"], "row": r["row"], "figure": figure(r, spread=spread)
                 + (f" {r['unit']}" if r.get("unit") not in (None, "exploitability") else ""),
                 "seeds": seeds(r), "CPU": r.get("cpu") or "-", "command": f"`{r['command']}`"}
        lines.append([cells[c] for c in columns])
    return _table(list(columns), lines)


LEDUC_IDS = ("leduc.limit.trained", "leduc.limit.reproduced", "leduc.limit.oracle", "leduc.limit.zero",
             "leduc_nolimit.trained", "leduc_nolimit.oracle", "leduc_nolimit.zero")


def leduc(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, LEDUC_IDS, spread="sd")


def leduc_commands(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, ("leduc.limit.trained", "leduc_nolimit.trained"), columns=("game", "row", "command"))


WARM_IDS = ("table2.1x4f.cfr", "warm_start.1x4f.warm_T256_P10", "warm_start.1x4f.selfplay_warm",
            "warm_start.1x4f.selfplay_warm_seed1", "table2.2x3f.cfr", "warm_start.2x3f.warm_T256_P10")


def warm_start(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, WARM_IDS, spread="sd", columns=("game", "row", "figure", "seeds", "CPU"))


SEARCH_IDS = ("search.1x4f.cfr_avg", "search.1x4f.cfr_avg_modified", "search.2x3f.cfr_avg",
              "search.2x3f.cfr_avg_modified", "search.1x4f.flop", "search.2x3f.flop")


def search_variants(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, SEARCH_IDS, spread="sd", columns=("game", "row", "figure", "seeds"))


def safe_search(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, ("safe_search.lcfr.T1024.d0", "safe_search.lcfr.T1024.random_0.1"),
                    columns=("game", "row", "figure"))


MNK_IDS = ("alphazero.6x6k4.mcts1000", "alphazero.8x8k5.mcts1000", "alphazero.8x8k5.mcts5000", "rebel.tictactoe")


def mnk(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, MNK_IDS, spread="interval", columns=("game", "row", "figure", "CPU"))


def theorem1(rows: Dict[str, Dict[str, Any]]) -> str:
    return _listing(rows, ("theorem1.max_error",), columns=("game", "row", "figure"))


TEH_ITERATIONS = (125, 250, 500, 1000)


def holdem_teh(rows: Dict[str, Dict[str, Any]]) -> str:
    """TEH's full-game curve: exploitability in % of the pot by solver and iterations."""
    lines = [[f"{name} (`{solver}`)"] + [fmt(rows[f"holdem.teh.{solver}.{i}"]["mean"], 4) + "%" for i in TEH_ITERATIONS]
             for solver, name in (("dcfr", "DCFR"), ("lcfr", "linear CFR"))]
    return _table(["TEH, exploitability (% of the pot)"] + [f"{i} iterations" for i in TEH_ITERATIONS], lines)


def index_list(rows: Dict[str, Dict[str, Any]]) -> str:
    """Every row of the index: id, figure, seeds, CPU, command (experiments/results/README.md)."""
    lines = [[f"`{r['id']}`", r["row"], figure(r, spread="none"), seeds(r), r.get("cpu") or "-",
              f"`{r['command']}`" if r.get("command") else "-"] for r in rows.values()]
    return _table(["id", "row", "mean", "seeds", "CPU", "command"], lines)


TABLES: Dict[str, Callable[[Dict[str, Dict[str, Any]]], str]] = {
    "table2": table2, "table2_detail": table2_detail, "full_game": full_game, "leduc": leduc,
    "leduc_commands": leduc_commands, "warm_start": warm_start, "search_variants": search_variants,
    "safe_search": safe_search, "mnk": mnk, "theorem1": theorem1, "holdem_teh": holdem_teh, "index": index_list,
}


def render(text: str, rows: Dict[str, Dict[str, Any]]) -> str:
    """``text`` with every ``results:NAME`` region replaced by its table."""
    def sub(m: "re.Match[str]") -> str:
        name = m.group("name")
        if name not in TABLES:
            raise KeyError(f"unknown results region {name!r} (known: {', '.join(TABLES)})")
        return m.group(1) + TABLES[name](rows) + m.group(4)
    return REGION.sub(sub, text)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if any generated region is stale")
    args = parser.parse_args(argv)
    rows = by_id(load_index())
    stale = []
    for name in DOCUMENTS:
        path = ROOT / name
        text = path.read_text()
        new = render(text, rows)
        if new != text:
            stale.append(name)
            if not args.check:
                path.write_text(new)
    if args.check and stale:
        print("stale results tables (run python experiments/results_tables.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    for name in stale:
        print(f"updated {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
