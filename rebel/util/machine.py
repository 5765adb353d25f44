"""What machine a measurement ran on (recorded with benchmark and experiment results)."""
from __future__ import annotations

import platform

__all__ = ["cpu_name"]


def cpu_name() -> str:
    """The CPU's model name, with its family and model numbers where /proc/cpuinfo has them
    (virtual machines often report a bare "AMD EPYC", which says neither Zen 3 nor Zen 4)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value.strip()
                if not line.strip() and fields:
                    break  # the first processor's block is enough
    except OSError:
        pass
    if "model name" in fields:
        if "cpu family" in fields and "model" in fields:
            return f"{fields['model name']} (family {fields['cpu family']}, model {fields['model']})"
        return fields["model name"]
    return platform.processor() or platform.machine()
