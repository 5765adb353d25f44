"""The headline results index (experiments/results/index.json) and the tables made from it.

Three checks, all reading JSON and Markdown only: every generated region of the README and
the results pages equals what experiments/results_tables.py renders from the index (so the
README's numbers are the index's); every index row's values equal its source result file's
(so the index cannot drift from the measurements); every mean and spread follows from the
row's values.
"""
from __future__ import annotations

import importlib.util
import math
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("results_tables", ROOT / "experiments" / "results_tables.py")
results_tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results_tables)

ROWS = results_tables.load_index()
REQUIRED = ("id", "game", "row", "protocol", "seeds", "values", "mean", "spread", "unit", "command", "cpu", "source")


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def test_ids_are_unique_and_rows_complete():
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids))
    for r in ROWS:
        missing = [k for k in REQUIRED if k not in r]
        assert not missing, f"{r['id']}: missing {missing}"


@pytest.mark.parametrize("name", results_tables.DOCUMENTS)
def test_generated_regions_are_current(name):
    text = (ROOT / name).read_text()
    assert results_tables.REGION.search(text), f"{name} has no generated results region"
    assert results_tables.render(text, results_tables.by_id(ROWS)) == text, (
        f"{name}: a results table differs from experiments/results/index.json; "
        "run python experiments/results_tables.py")


def test_readme_shows_the_table2_and_leduc_tables():
    text = (ROOT / "README.md").read_text()
    for name in ("table2", "leduc"):
        assert f"<!-- results:{name} -->" in text


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row_equals_its_source(row):
    got = results_tables.read_source(row["source"])
    if row["values"] is None:
        assert close(row["mean"], got["value"])
    else:
        assert len(row["values"]) == len(got["values"])
        assert all(close(a, b) for a, b in zip(row["values"], got["values"]))
        if row["seeds"] is not None:
            assert len(row["seeds"]) == len(row["values"])
    if "mean" in got:
        assert close(row["mean"], got["mean"])
    if "interval_95" in got:
        assert row["spread"]["interval_95"] == got["interval_95"]


@pytest.mark.parametrize("row", [r for r in ROWS if r["values"]], ids=[r["id"] for r in ROWS if r["values"]])
def test_mean_and_spread_follow_from_values(row):
    values = row["values"]
    assert close(row["mean"], statistics.mean(values))
    spread = row["spread"]
    assert spread["min"] == min(values) and spread["max"] == max(values)
    if len(values) > 1:
        assert close(spread["sd"], statistics.stdev(values))


def test_sources_exist():
    for r in ROWS:
        for s in r["source"] if isinstance(r["source"], list) else [r["source"]]:
            assert (ROOT / s["file"]).is_file(), f"{r['id']}: {s['file']}"
