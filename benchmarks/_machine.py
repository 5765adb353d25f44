"""What the benchmarks say about the machine: CPU name, clock, and the peak arithmetic rates
of one core computed from its clock and its multiply-add units (measured by rebel._bench's
register-only probes, an extension built beside rebel._core for the benchmarks only)."""
from __future__ import annotations

import math
from typing import Any, Dict, Optional

from rebel import _bench
from rebel.util.machine import cpu_name  # noqa: F401  (re-exported for the benchmarks)

#: flops per instruction of each probe (a multiply-add counts 2).
FLOPS_PER_INSTRUCTION = {"fma512": 32, "fma256": 16, "dpbf16": 64, "amx": 16 * 16 * 32 * 2, "dpwssd": 64}
PROBE_DESCRIPTION = {
    "fma512": "AVX-512 fp32 FMA (16 lanes)",
    "fma256": "AVX2 fp32 FMA (8 lanes)",
    "dpbf16": "AVX512_BF16 VDPBF16PS (16 lanes x 2 products)",
    "amx": "AMX-BF16 TDPBF16PS (16 x 16 x 32 tile)",
    "dpwssd": "AVX512_VNNI VPDPWSSD (16 lanes x 2 int16 products)",
}


def peaks(seconds: float = 0.3, bursts: int = 5) -> Dict[str, Any]:
    """This core's clock and, per multiply-add instruction it runs, the peak GFLOP/s computed as
    clock x units x flops per instruction. The clock is measured (a chain of dependent adds,
    one per cycle: /proc/cpuinfo's "cpu MHz" is the nominal clock, not the turbo one under a
    hypervisor); units, the instructions issued per cycle, is the register-only probe's
    rate over that clock rounded to a half (the issue ports the core has for it; see below), except AMX,
    one TDPBF16PS per 16 cycles as documented for its tile unit.

    Each probe runs as ``bursts`` short bursts (``seconds`` in all), interleaved with as many
    clock bursts, and the best burst of each is kept: a virtual core whose hypervisor takes time
    away (steal) loses it in some bursts, never gains, so the best burst is the one closest to
    the hardware (one 0.3 s probe under 20% steal once read 1.5 FMAs a cycle on a core with two
    FMA pipes). The ratio of the best rate to the best clock is then rounded up to a half (a
    burst can only lose time, so the true issue rate is at or above it), unless it lies within
    0.1 of the half below (timer noise): 1.74 reads 2 pipes, 2.04 still 2."""
    burst = seconds / bursts
    clocks = []
    rates: Dict[str, float] = {}
    for kind in FLOPS_PER_INSTRUCTION:
        for _ in range(bursts):
            clocks.append(_bench.peak_probe("clock", burst) / 1e9)
            try:
                rate = _bench.peak_probe(kind, burst) / 1e9
            except ValueError:  # this CPU lacks the instruction
                break
            rates[kind] = max(rates.get(kind, 0.0), rate)
    ghz = max(clocks)
    out: Dict[str, Any] = {"clock_ghz_measured": ghz, "clock_ghz_nominal": nominal_clock_ghz(),
                           "probe": f"best of {bursts} bursts of {burst:.3g} s per instruction, "
                                    "each after a clock burst"}
    for kind, measured in rates.items():
        flops = FLOPS_PER_INSTRUCTION[kind]
        per_cycle = measured / ghz / flops
        units = 1 / 16 if kind == "amx" else issue_units(per_cycle)
        out[kind] = {"instruction": PROBE_DESCRIPTION[kind], "flops_per_instruction": flops,
                     "probe_gflops": measured, "instructions_per_cycle_measured": per_cycle, "units": units,
                     "peak_gflops": ghz * units * flops,
                     "how": f"{ghz:.2f} GHz x {units:g} instructions/cycle x {flops} flops"}
    return out


def issue_units(per_cycle: float) -> float:
    """Instructions a cycle from a measured rate that interference can only have lowered: the
    next half up, unless the rate lies within 0.1 above a half (noise), then that half; at
    least a half."""
    return max(0.5, math.ceil(per_cycle * 2 - 0.2) / 2)


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
