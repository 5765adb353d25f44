"""Arithmetic precision of the native MLP value net (torch-free, for every command).

``fp32`` runs the whole net in float32. ``bf16`` rounds the weights (once) and the inputs
of the hidden-to-hidden layers to bfloat16 and accumulates their products in float32
(AMX-BF16 or AVX512_BF16 kernels). ``int16`` quantises those layers' weights (once, per
output row) and inputs (per row) to int16 with a float32 scale each and sums their products
exactly in int32 (AVX512_VNNI): about 12 bits per operand against bf16's 8. In both, the
first layer (whose inputs are the query's beliefs), LayerNorm, GELU and the value head stay
float32. ``auto`` is bf16 where a bf16 kernel is faster than fp32 on this CPU
(:func:`rebel._core.mlp_bf16_preferred`), else int16 where the CPU has VNNI
(:func:`rebel._core.mlp_int16_preferred`), else fp32.
"""
from __future__ import annotations

from typing import Any, Dict

__all__ = ["PRECISIONS", "DEFAULT_PRECISION", "EVAL_PRECISION", "check_precision", "native_kernel"]

PRECISIONS = ("fp32", "bf16", "int16", "auto")
#: The default of self-play (``search.precision`` of ``rebel train``): see docs/performance.md
#: for the accuracy and learning checks behind it.
DEFAULT_PRECISION = "auto"
#: The default wherever an exploitability is measured (``rebel eval``, ``evaluation.precision``
#: of ``rebel train``): a rounded kernel moves a mode-(b) number by more than its spread over
#: evaluation seeds (the first 2x3f CFR-D net, seed 0: 0.0172 fp32, 0.0192 int16, 0.0218 bf16), so a
#: printed exploitability must not depend on which CPU computed it (docs/results.md).
EVAL_PRECISION = "fp32"


def check_precision(precision: str) -> None:
    """ValueError naming the problem unless ``precision`` is known and can run on this CPU."""
    from rebel._core import mlp_supported_bf16_isas, mlp_supported_int16_isas

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" and not mlp_supported_bf16_isas():
        raise ValueError("precision 'bf16' needs a CPU with AMX-BF16 or AVX512_BF16, and this one has neither; "
                         "use precision 'fp32' or 'auto'")
    if precision == "int16" and not mlp_supported_int16_isas():
        raise ValueError("precision 'int16' needs a CPU with AVX512_VNNI, and this one has none; "
                         "use precision 'fp32' or 'auto'")


def native_kernel(net: Any) -> Dict[str, str]:
    """Which kernels a :class:`rebel._core.MlpValueNet` runs, e.g. ``{"precision": "bf16", "isa": "amx"}``."""
    return {"precision": net.precision, "isa": net.isa}
