"""Training checkpoints: one file holding everything a run needs to continue exactly.

The file is written with ``torch.save`` into memory and then atomically (temporary file,
fsync, rename), so a crash or ``kill -9`` leaves the previous checkpoint intact. It holds
only tensors and plain Python values and is read with ``torch.load(weights_only=True)``:
loading a checkpoint never runs code from it. numpy arrays are stored as tensors.
"""
from __future__ import annotations

import io
import os
import pickle
import zipfile
from typing import Any

import numpy as np
import torch

from rebel.util.atomic_io import atomic_write_bytes

__all__ = ["CheckpointError", "FORMAT", "save_checkpoint", "load_checkpoint"]

FORMAT = "rebel-train-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that is missing, truncated, corrupted or from another format."""


def _tensors(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, dict):
        return {k: _tensors(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_tensors(v) for v in obj]
    return obj


def _arrays(obj: Any, keep_tensors: frozenset[str]) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: v if k in keep_tensors else _arrays(v, keep_tensors) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_arrays(v, keep_tensors) for v in obj]
    return obj


def save_checkpoint(path: str | os.PathLike[str], state: dict[str, Any]) -> None:
    """Writes ``state`` (nested dicts of numpy arrays, tensors and plain values) atomically."""
    payload = {"format": FORMAT, "version": VERSION, **_tensors(state)}
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a checkpoint written by :func:`save_checkpoint` (CheckpointError if unusable).

    Tensors come back as numpy arrays except under the keys ``model``, ``optimizer``, ``ema``
    and ``torch_rng``, which torch consumes directly.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointError(f"no checkpoint at {path!r}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, ValueError, OSError, KeyError,
            AttributeError, TypeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated or corrupted?): {first}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a rebel training checkpoint")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {payload.get('version')!r}, this rebel reads {VERSION}")
    return _arrays(payload, frozenset({"model", "optimizer", "ema", "torch_rng"}))
