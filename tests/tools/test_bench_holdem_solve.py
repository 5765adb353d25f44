"""benchmarks/bench_holdem_solve.py runs and reports what it says, on tiny settings (no timing is
asserted: speed is measured by the benchmark itself, never by a unit test)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_holdem_solve  # noqa: E402


def test_bench_holdem_solve_reports_targets_memory_and_the_baseline_ratio(tmp_path):
    baseline = tmp_path / "pfs.json"
    baseline.write_text(json.dumps({"solver": "postflop-solver", "spots": {"river_example": {"threads": {"1": {
        "to_target": {"50%": {"iterations_median": 10, "seconds_median": 2.0}},
        "at_iterations": {"10": {"seconds_median": 2.0}}, "memory_usage_bytes": 1000}}}}}))
    out = tmp_path / "bench.json"
    assert bench_holdem_solve.main(["--spots", "river_example", "--repeats", "1", "--targets", "50",
                                    "--max-iterations", "10", "--at-iterations", "10", "--showdown-seconds", "0.01",
                                    "--baseline", str(baseline), "--json-out", str(out)]) == 0
    report = json.loads(out.read_text())
    spot = report["spots"]["river_example"]
    assert spot["hands"] == [1081, 1081] and spot["pot"] == 200
    one = spot["threads"]["1"]
    assert one["to_target"]["50%"]["iterations_median"] == 10
    assert one["at_iterations"]["10"]["seconds_median"] > 0
    assert one["solver_bytes"] == spot["size"]["solver_bytes"] > 0 and one["tree_bytes"] > 0
    assert one["peak_rss_bytes_median"] >= one["rss_at_start_bytes_median"] > 0
    assert sum(one["final"]["root_values"]) == pytest.approx(0.0, abs=1e-6)
    assert one["final"]["root_equity"] == pytest.approx([0.5, 0.5])
    ratio = report["ours_over_baseline"]["river_example"]["1"]
    assert ratio["50%"]["iterations_ratio"] == 1.0 and ratio["50%"]["seconds_ratio"] > 0
    assert ratio["solver_bytes_over_memory_usage"] == one["solver_bytes"] / 1000
    showdown = report["showdown"]
    assert showdown["hands"] == [1081, 1081] and showdown["max_abs_difference"] < 1e-9
    assert showdown["speedup"] > 0


def test_bench_holdem_solve_spots_and_bad_arguments():
    assert bench_holdem_solve.resolve_spot("teh").raise_cap == 3
    assert bench_holdem_solve.resolve_spot("teh@uncapped").raise_cap is None
    for argv in (["--spots", "no_such_spot"], ["--spots", "teh@capped"], ["--repeats", "0"],
                 ["--targets", "0"], ["--at-iterations", "15"]):
        with pytest.raises(SystemExit):
            bench_holdem_solve.main(argv)
