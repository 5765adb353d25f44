"""The replay buffer: fixed capacity, first in first out, uniform sampling, thread-safe adds.

Every example gets a sequence number when it is added. The trainer samples from a *prefix*
of the stream ("the last `capacity` examples among the first `upto`"), so what it sees does
not depend on how far the self-play threads have run ahead. The ring therefore keeps
`lookahead` slots beyond the capacity for the examples generated ahead of the trainer.
(AlphaZero's training alternates self-play and training and keeps its window as plain
arrays: ``_Replay`` in :mod:`rebel.train.alphazero_run` says why it is a separate class.)
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["ReplayBuffer"]


class ReplayBuffer:
    """Query rows (float32 [row_size]) and targets (float32 [target_size]) in a ring."""

    def __init__(self, capacity: int, row_size: int, target_size: int, lookahead: int = 0) -> None:
        if capacity < 1 or row_size < 1 or target_size < 1 or lookahead < 0:
            raise ValueError(f"bad replay buffer shape: capacity {capacity}, row {row_size}, "
                             f"target {target_size}, lookahead {lookahead}")
        self.capacity = int(capacity)
        self.slots = self.capacity + int(lookahead)
        # np.empty leaves pages untouched until written, so a large capacity costs memory
        # only as it fills.
        self._rows = np.empty((self.slots, row_size), dtype=np.float32)
        self._targets = np.empty((self.slots, target_size), dtype=np.float32)
        self._added = 0
        self._lock = threading.Lock()

    @property
    def added(self) -> int:
        """Examples added since the buffer was created (the next sequence number)."""
        return self._added

    def size(self, upto: int | None = None) -> int:
        """Examples available to sampling from the first ``upto`` added (default: all)."""
        upto = self._added if upto is None else upto
        return min(upto, self.capacity)

    def add(self, rows: np.ndarray, targets: np.ndarray) -> int:
        """Appends a batch of examples; returns the sequence number of the first one."""
        rows = np.asarray(rows, dtype=np.float32)
        targets = np.asarray(targets, dtype=np.float32)
        if rows.ndim != 2 or targets.ndim != 2 or rows.shape[0] != targets.shape[0] \
                or rows.shape[1] != self._rows.shape[1] or targets.shape[1] != self._targets.shape[1]:
            raise ValueError(f"replay add: rows {rows.shape} and targets {targets.shape} do not fit "
                             f"(n, {self._rows.shape[1]}) and (n, {self._targets.shape[1]})")
        n = rows.shape[0]
        with self._lock:
            first = self._added
            positions = (first + np.arange(n)) % self.slots
            self._rows[positions] = rows
            self._targets[positions] = targets
            self._added = first + n
        return first

    def sample(self, count: int, rng: np.random.Generator, upto: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``count`` examples drawn uniformly (with replacement) from the last ``capacity``
        of the first ``upto`` examples added."""
        upto = self._added if upto is None else upto
        if upto > self._added:
            raise ValueError(f"replay sample: only {self._added} examples added, asked for the first {upto}")
        if self._added - upto > self.slots - self.capacity:
            raise ValueError(f"replay sample: examples before {self._added - (self.slots - self.capacity)} may be "
                             f"overwritten already, cannot sample the first {upto}")
        available = self.size(upto)
        if available < 1:
            raise ValueError("replay sample: the buffer is empty")
        seq = (upto - available) + rng.integers(0, available, size=count)
        positions = seq % self.slots
        return self._rows[positions], self._targets[positions]

    def state(self, upto: int | None = None) -> dict[str, Any]:
        """The examples that can still be sampled, oldest first, and the counter (for checkpoints)."""
        upto = self._added if upto is None else upto
        available = self.size(upto)
        positions = (upto - available + np.arange(available)) % self.slots
        return {"added": upto, "rows": self._rows[positions].copy(), "targets": self._targets[positions].copy()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restores :meth:`state` (the buffer must have the same row and target sizes)."""
        rows, targets, added = np.asarray(state["rows"]), np.asarray(state["targets"]), int(state["added"])
        if rows.ndim != 2 or targets.ndim != 2 or rows.shape[0] != targets.shape[0] \
                or rows.shape[1:] != self._rows.shape[1:] or targets.shape[1:] != self._targets.shape[1:] \
                or added < 0 or rows.shape[0] != min(added, self.capacity):
            raise ValueError(f"replay state does not fit this buffer: rows {rows.shape}, targets {targets.shape}, "
                             f"added {added}, capacity {self.capacity}")
        n = rows.shape[0]
        with self._lock:
            positions = (added - n + np.arange(n)) % self.slots
            self._rows[positions] = rows
            self._targets[positions] = targets
            self._added = added
