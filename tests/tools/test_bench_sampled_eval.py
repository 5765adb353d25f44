"""benchmarks/bench_sampled_eval.py runs and reports what it says (no timing is asserted: speed
is measured by the benchmark itself, never by a unit test)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_sampled_eval  # noqa: E402


def test_bench_sampled_eval_reports_identical_policies(tmp_path, capsys):
    out = tmp_path / "sampled.json"
    assert bench_sampled_eval.main(["--cases", "1x4f-net", "--repeats", "6", "--out", str(out)]) == 0
    case = json.loads(out.read_text())["cases"]["1x4f-net"]
    assert case["identical"] is True  # the shared solves change no policy
    assert case["samples"] == 6 and case["T"] == 1024
    assert case["speedup"] == pytest.approx(case["one_at_a_time_seconds"] / case["together_seconds"])


def test_bench_sampled_eval_rejects_bad_arguments():
    with pytest.raises(SystemExit):
        bench_sampled_eval.main(["--cases", "3x9f-net"])
    with pytest.raises(SystemExit):
        bench_sampled_eval.main(["--repeats", "0"])
