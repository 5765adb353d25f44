"""benchmarks/_machine.py's peak estimate: units per cycle from probes that interference (steal,
another process on the core) can only slow down."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _machine  # noqa: E402


@pytest.mark.parametrize("per_cycle, units", [(1.5, 1.5), (1.74, 2.0), (1.98, 2.0), (2.04, 2.0), (2.1, 2.0),
                                              (2.2, 2.5), (0.455, 0.5), (0.2, 0.5), (1.0, 1.0), (0.93, 1.0)])
def test_issue_units_rounds_up_unless_within_noise_of_the_half_below(per_cycle, units):
    assert _machine.issue_units(per_cycle) == units


class _StolenCore:
    """A core at 4 GHz with two 512-bit FMA pipes whose hypervisor takes 30% of every other burst,
    and no AVX512_BF16."""

    def __init__(self):
        self.calls = 0

    def peak_probe(self, kind: str, seconds: float) -> float:
        self.calls += 1
        stolen = 0.7 if self.calls % 4 < 2 else 1.0
        if kind == "clock":
            return 4e9 * stolen
        if kind == "fma512":
            return 4e9 * 2 * 32 * stolen
        if kind == "fma256":
            return 4e9 * 2 * 16 * stolen
        raise ValueError(f"this CPU cannot run {kind}")


def test_peaks_keep_the_best_burst_and_skip_missing_instructions(monkeypatch):
    monkeypatch.setattr(_machine, "_bench", _StolenCore())
    out = _machine.peaks(seconds=0.01, bursts=4)
    assert out["clock_ghz_measured"] == pytest.approx(4.0)
    assert out["fma512"]["units"] == 2.0 and out["fma512"]["peak_gflops"] == pytest.approx(256.0)
    assert out["fma256"]["units"] == 2.0 and out["fma256"]["peak_gflops"] == pytest.approx(128.0)
    assert "dpbf16" not in out and "amx" not in out
