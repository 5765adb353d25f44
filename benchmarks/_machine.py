"""What the benchmarks say about the machine: CPU name, clock, and the peak arithmetic rates
of one core computed from its clock and its multiply-add units (measured by rebel._core's
register-only probes)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from rebel import _core
from rebel.machine import cpu_name  # noqa: F401  (re-exported for the benchmarks)

#: flops per instruction of each probe (a multiply-add counts 2).
FLOPS_PER_INSTRUCTION = {"fma512": 32, "fma256": 16, "dpbf16": 64, "amx": 16 * 16 * 32 * 2, "dpwssd": 64}
PROBE_DESCRIPTION = {
    "fma512": "AVX-512 fp32 FMA (16 lanes)",
    "fma256": "AVX2 fp32 FMA (8 lanes)",
    "dpbf16": "AVX512_BF16 VDPBF16PS (16 lanes x 2 products)",
    "amx": "AMX-BF16 TDPBF16PS (16 x 16 x 32 tile)",
    "dpwssd": "AVX512_VNNI VPDPWSSD (16 lanes x 2 int16 products)",
}


def peaks(seconds: float = 0.3) -> Dict[str, Any]:
    """This core's clock and, per multiply-add instruction it runs, the peak GFLOP/s computed as
    clock x units x flops per instruction. The clock is measured (a chain of dependent adds,
    one per cycle: /proc/cpuinfo's "cpu MHz" is the nominal clock, not the turbo one under a
    hypervisor); units, the instructions issued per cycle, is the register-only probe's
    rate over that clock rounded to a half (the issue ports the core has for it), except AMX,
    one TDPBF16PS per 16 cycles as documented for its tile unit."""
    ghz = _core._peak_probe("clock", seconds) / 1e9
    out: Dict[str, Any] = {"clock_ghz_measured": ghz, "clock_ghz_nominal": nominal_clock_ghz()}
    for kind, flops in FLOPS_PER_INSTRUCTION.items():
        try:
            measured = _core._peak_probe(kind, seconds) / 1e9
        except ValueError:
            continue
        per_cycle = measured / ghz / flops
        units = 1 / 16 if kind == "amx" else max(0.5, round(per_cycle * 2) / 2)
        out[kind] = {"instruction": PROBE_DESCRIPTION[kind], "flops_per_instruction": flops,
                     "probe_gflops": measured, "instructions_per_cycle_measured": per_cycle, "units": units,
                     "peak_gflops": ghz * units * flops,
                     "how": f"{ghz:.2f} GHz x {units:g} instructions/cycle x {flops} flops"}
    return out


def nominal_clock_ghz() -> Optional[float]:
    """The clock /proc/cpuinfo reports ("cpu MHz"), or None."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":", 1)[1]) / 1000.0
    except (OSError, ValueError):
        pass
    return None
