"""Shared Hypothesis settings of the property-based fuzz tests.

Every property runs derandomized (a fixed seed: the same cases on every run and machine),
with no example database, no deadline and a bounded number of examples. Under a sanitizer
(REBEL_SANITIZER set by scripts/sanitize.sh) the counts are divided by 4.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

UNDER_SANITIZER = bool(os.environ.get("REBEL_SANITIZER"))


def fuzz_settings(examples: int) -> settings:
    """Settings for one property: `examples` generated cases (fewer under a sanitizer)."""
    return settings(
        max_examples=max(10, examples // 4) if UNDER_SANITIZER else examples,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.function_scoped_fixture],
    )
