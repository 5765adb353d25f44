"""The run directory of a training run (``runs/NAME/`` by default).

| file | what |
|---|---|
| ``config.yaml`` | the resolved configuration (what ``--resume`` continues with) |
| ``metrics.jsonl`` | one JSON object per epoch (and ``references`` / ``final`` records) |
| ``tb/`` | TensorBoard scalars (when the ``tensorboard`` package is installed) |
| ``checkpoint.pt`` | the latest checkpoint (see :mod:`rebel.train.checkpoint`) |
| ``weights.bin`` | the latest net in the native format: ``rebel eval --net runs/NAME/weights.bin`` |
| ``best.bin`` | with ``evaluation.keep_best``: the evaluated net with the lowest mode-(b) figure so far |
| ``policy.bin`` | with ``policy.enabled``: the latest policy net (``rebel eval --policy-net ... --warm-start K``) |
| ``heldout.npz`` | the oracle-labelled held-out set |
| ``snapshots/`` | with ``run.snapshot_every``: ``epoch_NNNNNN.bin``, the net every that many epochs |
"""
from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any, Optional

import numpy as np

from rebel.util.atomic_io import atomic_write_bytes, remove_stale_temp_files

#: A held-out D_pi: rows, targets, legal, weights (rebel.train.evaluation.PolicySet).
PolicyArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

log = logging.getLogger(__name__)

__all__ = ["RunDirectory", "RunDirError"]


class RunDirError(ValueError):
    """A run directory that cannot be created or resumed."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class RunDirectory:
    CONFIG = "config.yaml"
    METRICS = "metrics.jsonl"
    CHECKPOINT = "checkpoint.pt"
    WEIGHTS = "weights.bin"
    BEST = "best.bin"
    POLICY = "policy.bin"
    HELDOUT = "heldout.npz"
    HELDOUT_POLICY_KEYS = ("policy_rows", "policy_targets", "policy_legal", "policy_weights")
    SNAPSHOTS = "snapshots"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._tb: Any = None

    # ------------------------------------------------------------------ creation
    @classmethod
    def create(cls, path: str | os.PathLike[str], config_yaml: str) -> "RunDirectory":
        """A new run directory (RunDirError if a run already lives there)."""
        run = cls(path)
        if (run.path / cls.CONFIG).exists() or (run.path / cls.CHECKPOINT).exists():
            raise RunDirError(f"{run.path} already holds a run; continue it with `rebel train --resume {run.path}` "
                              "or choose another run.name")
        try:
            run.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RunDirError(f"cannot create the run directory {run.path}: {e.strerror}") from None
        atomic_write_bytes(run.file(cls.CONFIG), config_yaml.encode())
        return run

    @classmethod
    def existing(cls, path: str | os.PathLike[str]) -> "RunDirectory":
        """An existing run (RunDirError if ``path`` is not one)."""
        run = cls(path)
        if not run.path.is_dir():
            raise RunDirError(f"{run.path} is not a directory")
        if not run.file(cls.CONFIG).is_file():
            raise RunDirError(f"{run.path} is not a training run (no {cls.CONFIG})")
        if not run.file(cls.CHECKPOINT).is_file():
            raise RunDirError(f"{run.path} has no {cls.CHECKPOINT} yet: the run stopped before its first checkpoint, "
                              "start it again instead")
        # a killed run's temporaries
        for name in (cls.CONFIG, cls.METRICS, cls.CHECKPOINT, cls.WEIGHTS, cls.BEST, cls.POLICY, cls.HELDOUT):
            for stale in remove_stale_temp_files(run.path, name):
                log.info("removed %s, left by an interrupted write", stale.name)
        for stale in run.file(cls.SNAPSHOTS).glob(".epoch_*.tmp"):
            stale.unlink(missing_ok=True)
            log.info("removed %s, left by an interrupted write", stale.name)
        return run

    def file(self, name: str) -> Path:
        return self.path / name

    def snapshot_path(self, epoch: int) -> Path:
        """Where the net after ``epoch`` is kept (``run.snapshot_every``); the folder is made."""
        folder = self.file(self.SNAPSHOTS)
        folder.mkdir(exist_ok=True)
        return folder / f"epoch_{epoch:06d}.bin"

    def snapshots(self) -> list[tuple[int, Path]]:
        """The kept nets as (epoch, path), in epoch order."""
        found = []
        for path in self.file(self.SNAPSHOTS).glob("epoch_*.bin"):
            digits = path.stem[len("epoch_"):]
            if digits.isdigit():
                found.append((int(digits), path))
        return sorted(found)

    def config_text(self) -> str:
        return self.file(self.CONFIG).read_text()

    # ------------------------------------------------------------------ metrics
    def append_metrics(self, record: dict[str, Any]) -> None:
        """Appends one JSON line (flushed and synced: a crash loses at most the line being written)."""
        line = json.dumps(_jsonable(record), allow_nan=False) + "\n"
        with open(self.file(self.METRICS), "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self._tensorboard(record)

    def read_metrics(self) -> list[dict[str, Any]]:
        path = self.file(self.METRICS)
        if not path.is_file():
            return []
        records = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by a crash
                continue
        return records

    def truncate_metrics(self, epoch: int) -> None:
        """Keeps the records up to ``epoch`` (resume after a crash past the checkpoint)."""
        kept = [r for r in self.read_metrics() if r.get("epoch", 0) <= epoch and r.get("kind") != "final"]
        text = "".join(json.dumps(r, allow_nan=False) + "\n" for r in kept)
        atomic_write_bytes(self.file(self.METRICS), text.encode())

    def open_tensorboard(self, purge_step: Optional[int] = None) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard is optional
            log.warning("tensorboard is not installed: no TensorBoard scalars (pip install tensorboard)")
            return
        self._tb = SummaryWriter(log_dir=str(self.file("tb")), purge_step=purge_step)

    def _tensorboard(self, record: dict[str, Any]) -> None:
        if self._tb is None or "epoch" not in record:
            return
        step = int(record["epoch"])
        for key, value in record.items():
            if key != "epoch" and isinstance(value, (int, float)) and not isinstance(value, bool):
                self._tb.add_scalar(key, value, step)
        self._tb.flush()

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
            self._tb = None

    # ------------------------------------------------------------------ held-out set
    def save_heldout(self, rows: np.ndarray, targets: np.ndarray,
                     policy: Optional[PolicyArrays] = None) -> None:
        """The held-out set; ``policy`` (rows, targets, legal, weights) with policy.enabled."""
        import io

        buffer = io.BytesIO()
        if policy is None:
            np.savez(buffer, rows=rows, targets=targets)
        else:
            p_rows, p_targets, p_legal, p_weights = policy
            np.savez(buffer, rows=rows, targets=targets, policy_rows=p_rows, policy_targets=p_targets,
                     policy_legal=p_legal, policy_weights=p_weights)
        atomic_write_bytes(self.file(self.HELDOUT), buffer.getvalue())

    def load_heldout(self) -> Optional[tuple[np.ndarray, np.ndarray, Optional[PolicyArrays]]]:
        """(rows, targets, policy or None), or None without a readable file."""
        path = self.file(self.HELDOUT)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as npz:
                policy = None
                if all(k in npz for k in self.HELDOUT_POLICY_KEYS):
                    rows, targets, legal, weights = (npz[k] for k in self.HELDOUT_POLICY_KEYS)
                    policy = (rows.astype(np.float32), targets.astype(np.float32), legal.astype(bool),
                              weights.astype(np.float32))
                return npz["rows"].astype(np.float32), npz["targets"].astype(np.float32), policy
        except Exception as e:  # unreadable: regenerate it
            log.warning("ignoring unreadable %s (%s); it will be generated again", path, e)
            return None
