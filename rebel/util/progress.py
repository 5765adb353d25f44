"""Progress reports for long phases, on stderr.

On a terminal a phase shows a tqdm bar once it has run ``after`` seconds; off a terminal
(output redirected, CI logs) it prints a line every ``every`` seconds instead, e.g.::

    rebel: mode (b) sampled policies: 96/1024 (9%), 61 s elapsed, about 590 s left

Phases shorter than ``after`` seconds print nothing either way. Training uses the same class
for its epoch bar (``initial`` for a resumed run, ``leave`` to keep the finished bar, and
:meth:`Progress.set_postfix` for the latest loss and rate).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, TextIO

#: A phase shows progress once it has run this many seconds.
AFTER_SECONDS = 2.0
#: Off a terminal, one line per this many seconds.
EVERY_SECONDS = 30.0

__all__ = ["AFTER_SECONDS", "EVERY_SECONDS", "Progress", "progress_callback"]


class Progress:
    """Progress of one phase of ``total`` steps: call it with the number done so far."""

    def __init__(self, desc: str, total: int, unit: str = "it", *, enabled: bool = True,
                 after: float = AFTER_SECONDS, every: float = EVERY_SECONDS, stream: Optional[TextIO] = None,
                 terminal: Optional[bool] = None, initial: int = 0, leave: bool = False) -> None:
        self.desc, self.total, self.unit = desc, total, unit
        self.initial, self.leave = initial, leave
        self.enabled, self.after, self.every = enabled, after, every
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = terminal if terminal is not None else _isatty(self.stream)
        self.start = time.perf_counter()
        self.last_line = self.start
        self.bar: Any = None
        self.shown = initial
        self.lines = 0
        self.postfix: dict[str, str] = {}

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.start < self.after:
            return
        if self.terminal:
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, initial=self.initial,
                                leave=self.leave, file=self.stream, dynamic_ncols=True)
            if self.postfix:
                self.bar.set_postfix(self.postfix, refresh=False)
            self.bar.update(done - self.shown)
            self.shown = done
        elif self.lines == 0 or now - self.last_line >= self.every:
            self.last_line = now
            self.lines += 1
            self.stream.write(self.line(done, now - self.start) + "\n")
            self.stream.flush()

    @property
    def shows_bar(self) -> bool:
        """Whether this phase draws a bar (enabled, on a terminal) rather than log lines."""
        return self.enabled and self.terminal

    def set_postfix(self, values: dict[str, str]) -> None:
        """Figures shown after the bar (e.g. the latest loss); lines off a terminal omit them."""
        self.postfix = dict(values)

    def line(self, done: int, elapsed: float) -> str:
        """The log line for ``done`` steps after ``elapsed`` seconds."""
        text = f"rebel: {self.desc}: {done}/{self.total} {self.unit}"
        if self.total > 0:
            text += f" ({100 * done // self.total}%)"
        text += f", {elapsed:.0f} s elapsed"
        done_here = done - self.initial
        if 0 < done_here and done < self.total:
            text += f", about {elapsed * (self.total - done) / done_here:.0f} s left"
        return text

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_callback(progress: Optional[Progress]) -> Optional[Callable[[int], None]]:
    """``progress`` itself, or None when it is None or disabled (so the core skips polling)."""
    return progress if progress is not None and progress.enabled else None
