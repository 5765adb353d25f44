"""benchmarks/bench_leduc.py runs and reports what it says (no timing is asserted: speed is
measured by the benchmark itself, never by a unit test)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_leduc  # noqa: E402

import rebel.interop.openspiel as ros  # noqa: E402


def test_bench_leduc_reports_both_games(tmp_path, capsys):
    out = tmp_path / "leduc.json"
    assert bench_leduc.main(["--iters", "4", "--openspiel-iters", "1", "--repeats", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report["games"]) == {"leduc", "leduc_nolimit"}
    limit = report["games"]["leduc"]
    assert limit["nodes"] == 465 and limit["chance_nodes"] == 5
    assert set(limit["solvers"]) == set(bench_leduc.SOLVERS)
    if ros.available():
        assert limit["lcfr_speedup_per_iteration_vs_openspiel_cfr"] > 0
    else:
        assert limit["openspiel_cfr"].startswith("skipped: OpenSpiel is not installed")


def test_bench_leduc_rejects_bad_arguments():
    with pytest.raises(SystemExit):
        bench_leduc.main(["--iters", "1"])
