"""Atomic file writes: a temporary file in the same folder, fsync, rename.

Every file the project writes that a crash must not leave half-written (checkpoints, weights,
policies, metrics) goes through :func:`atomic_write_bytes`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Union

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["atomic_write_bytes", "remove_stale_temp_files"]


def remove_stale_temp_files(folder: PathLike, name: str) -> list[Path]:
    """Removes the temporary files an interrupted :func:`atomic_write_bytes` of ``folder/name``
    left behind (a ``kill -9`` during the write); returns what was removed."""
    removed = []
    for stale in Path(folder).glob(f".{name}.*.tmp"):
        try:
            stale.unlink()
            removed.append(stale)
        except FileNotFoundError:
            pass
    return removed


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable (best effort: not every filesystem allows it)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
