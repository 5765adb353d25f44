"""torch process and device helpers shared by the trainers (ReBeL's value net, AlphaZero's net)."""
from __future__ import annotations

import logging
from typing import Any

import torch

__all__ = ["flush_denormals", "resolve_device", "to_cpu"]


def flush_denormals() -> None:
    """Makes torch treat denormal floats as zero in this process (flush-to-zero and
    denormals-are-zero on the calling thread, inherited by threads started after it).

    Weight decay drives unused weights towards zero until some become denormal, and each
    operation on one costs x86 cores a microcode assist: the 6x6 AlphaZero run's training
    steps went from 17 to 67 seconds per epoch over epochs 55-66 (0.3% of its weights
    denormal), and back to the fresh net's speed with denormals flushed. Values below 2^-126
    carry nothing a float32 net can use. Called by the training runs before torch starts its
    threads; the native kernels flush denormals themselves (csrc/nets/denormals.h)."""
    if not torch.set_flush_denormal(True):  # False where the CPU cannot (no SSE3)
        logging.getLogger("rebel.train").warning("this CPU cannot flush denormals; training may slow down")


def resolve_device(name: str) -> torch.device:
    """``cpu`` or a CUDA device; asking for CUDA where there is none is an error."""
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"trainer.device={name} but torch sees no CUDA device; use trainer.device=cpu")
    device = torch.device(name)
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ValueError(f"trainer.device={name} but torch sees {torch.cuda.device_count()} CUDA device(s)")
    return device


def to_cpu(obj: Any) -> Any:
    """``obj`` with every tensor in it (nested dicts and lists) moved to the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_cpu(v) for v in obj]
    return obj
