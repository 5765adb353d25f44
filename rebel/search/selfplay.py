"""Self-play data generation: Python episode loops around the C++ self-play step.

Each :class:`SelfPlayLoop` plays episodes from the initial PBS to a terminal public state;
one call of :meth:`rebel._core.SelfPlayGenerator.step` (GIL released) solves the subgame
at the current PBS, samples the next one and returns two training examples. The loop owns
its PBS and its own seeded generator, so its whole state fits in a checkpoint.

Every episode starts at the same PBS, the initial one, so its two examples repeat in every
episode: in a game of few subgames an episode (Leduc: two, one a betting round) they fill
most of the replay buffer (64.6% of a no-limit Leduc run's 2M rows were that one input).
No search ever asks the net about the initial PBS (a subgame's root is never one of its
leaves), so ``initial_keep`` < 1 records those examples for only that fraction of the
episodes; the step is still solved, since the walk starts there.

:class:`GenerationPool` runs several loops in threads that share one native value net and
feeds a replay buffer. It generates in lockstep with the trainer (see :meth:`allow`): a
loop starts a step only while the examples reserved stay below the quota the trainer
grants, and new weights are installed only when every loop is between steps. With one
loop the data stream is then a deterministic function of the seed.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from rebel import _core

log = logging.getLogger(__name__)

__all__ = ["SelfPlayLoop", "GenerationPool", "LoopStats"]


@dataclass
class LoopStats:
    """Counters of one loop (seconds are wall time of its thread)."""

    steps: int = 0
    episodes: int = 0
    step_seconds: float = 0.0   # inside the C++ step
    net_seconds: float = 0.0    # of which in the value net
    loop_seconds: float = 0.0   # the whole loop body (step + Python bookkeeping + replay add)


class SelfPlayLoop:
    """One episode loop: the current PBS and the generator of this loop's randomness."""

    def __init__(self, game: _core.Game, generator: _core.SelfPlayGenerator,
                 seed: "int | np.random.SeedSequence", initial_keep: float = 1.0) -> None:
        if not 0.0 <= initial_keep <= 1.0:
            raise ValueError(f"initial_keep must be in [0, 1], got {initial_keep}")
        self.game = game
        self.generator = generator
        self.initial_keep = float(initial_keep)
        # Whether the last step's examples go to the replay (False: a dropped initial-PBS step).
        self.last_step_recorded = True
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.prior = np.asarray(game.hand_prior, dtype=np.float64)
        self.stats = LoopStats()
        self._reset()

    def _reset(self) -> None:
        self.history: list[int] = []
        self.beliefs = (self.prior.copy(), self.prior.copy())

    def step(self) -> Any:
        """Solves the subgame at the current PBS and moves to the sampled next one.

        Returns the C++ step result (``rows`` and ``targets`` hold the two examples) and sets
        :attr:`last_step_recorded`. If the step is cancelled (KeyboardInterrupt) the loop's
        state is left as it was before.
        """
        rng_state = self.rng.bit_generator.state
        seed = int(self.rng.integers(0, 2**63))
        # Drawn only when it can matter, so initial_keep = 1 leaves the random stream as it was.
        record = not (self.initial_keep < 1.0 and not self.history and self.rng.random() >= self.initial_keep)
        start = time.perf_counter()
        try:
            result = self.generator.step(self.history, self.beliefs[0], self.beliefs[1], seed)
        except BaseException:
            self.rng.bit_generator.state = rng_state
            raise
        self.stats.step_seconds += time.perf_counter() - start
        self.stats.net_seconds += result.net_seconds
        self.stats.steps += 1
        self.last_step_recorded = record
        if result.next_terminal:
            self.stats.episodes += 1
            self._reset()
        else:
            self.history = list(result.next_history)
            self.beliefs = result.next_beliefs
        return result

    @staticmethod
    def initial_state(game: _core.Game, seed: "int | np.random.SeedSequence") -> dict[str, Any]:
        """The :meth:`state` of a new loop seeded with ``seed`` (no generator needed)."""
        prior = np.asarray(game.hand_prior, dtype=np.float64)
        return {"history": [], "beliefs0": prior.copy(), "beliefs1": prior.copy(),
                "rng": np.random.Generator(np.random.PCG64(seed)).bit_generator.state, "steps": 0, "episodes": 0}

    def state(self) -> dict[str, Any]:
        """Everything needed to continue this loop exactly (plain Python and numpy types)."""
        return {
            "history": list(self.history),
            "beliefs0": self.beliefs[0].copy(),
            "beliefs1": self.beliefs[1].copy(),
            "rng": self.rng.bit_generator.state,
            "steps": self.stats.steps,
            "episodes": self.stats.episodes,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.history = [int(a) for a in state["history"]]
        self.beliefs = (np.asarray(state["beliefs0"], dtype=np.float64).copy(),
                        np.asarray(state["beliefs1"], dtype=np.float64).copy())
        _core.Pbs(self.game, self.history, self.beliefs[0], self.beliefs[1])  # validates
        self.rng.bit_generator.state = state["rng"]
        self.stats.steps = int(state["steps"])
        self.stats.episodes = int(state["episodes"])


class GenerationPool:
    """Self-play loops in threads, gated by a quota of examples granted by the trainer."""

    def __init__(self, loops: list[SelfPlayLoop], add: Callable[[np.ndarray, np.ndarray], Any],
                 native: Optional[Any] = None, on_step: Optional[Callable[[Any], None]] = None) -> None:
        self.loops = loops
        self._add = add
        self._on_step = on_step  # also given every step's result (e.g. its policy examples), in the loop's thread
        self._native = native  # the value net the loops share (install_weights swaps it)
        self._cond = threading.Condition()
        self._allowed = 0       # examples the loops may reserve in total
        self._reserved = 0      # examples of started steps
        self._done = 0          # examples of finished steps (added to the replay buffer)
        self._in_flight = 0
        self._stop = False
        self._error: Optional[BaseException] = None
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ state
    def loop_states(self) -> list[dict[str, Any]]:
        """Every loop's state (call between epochs, when the loops are idle)."""
        return [loop.state() for loop in self.loops]

    def load_loop_states(self, states: list[dict[str, Any]]) -> None:
        if len(states) != len(self.loops):
            raise ValueError(f"the checkpoint has {len(states)} self-play loops, the config {len(self.loops)}")
        for loop, state in zip(self.loops, states):
            loop.load_state(state)

    def install_weights(self, data: bytes) -> None:
        """New weights (the exported byte format) for every loop's value net."""
        if self._native is None:
            raise RuntimeError("this pool was made without its value net")
        self._native.set_weights_bytes(data)

    def restarts(self) -> int:
        return 0

    # ------------------------------------------------------------------ control
    def start(self, already_generated: int) -> None:
        """Starts the threads; ``already_generated`` examples exist (resume)."""
        self._reserved = self._done = self._allowed = already_generated
        for i, loop in enumerate(self.loops):
            t = threading.Thread(target=self._run, args=(loop,), name=f"selfplay-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def allow(self, total: int) -> None:
        """Lets the loops generate until ``total`` examples exist in all."""
        with self._cond:
            self._allowed = max(self._allowed, total)
            self._cond.notify_all()

    def generated(self) -> int:
        with self._cond:
            return self._done

    def wait_generated(self, total: int, timeout: Optional[float] = None) -> bool:
        """Blocks until ``total`` examples are in the buffer (or a loop failed)."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self._done >= total or self._error is not None or self._stop, timeout)
            self._raise_error()
            return bool(ok) and self._done >= total

    def wait_idle(self) -> None:
        """Blocks until every loop has used up the quota and is between steps."""
        with self._cond:
            self._cond.wait_for(lambda: (self._in_flight == 0 and self._reserved >= self._allowed)
                                or self._error is not None or self._stop)
            self._raise_error()

    def stop(self, cancel_running: bool = True) -> None:
        """Stops the threads (running steps are cancelled unless told otherwise) and joins them."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if cancel_running:
            for loop in self.loops:
                loop.generator.cancel()
        for t in self._threads:
            t.join()
        self._threads.clear()
        for loop in self.loops:
            loop.generator.reset_cancel()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"a self-play loop failed: {self._error!r}") from self._error

    # ------------------------------------------------------------------ threads
    def _run(self, loop: SelfPlayLoop) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stop or self._reserved < self._allowed)
                if self._stop:
                    return
                self._reserved += 2
                self._in_flight += 1
            start = time.perf_counter()
            try:
                result = loop.step()
                if loop.last_step_recorded:
                    self._add(result.rows, result.targets)
                if self._on_step is not None:
                    self._on_step(result)
            except KeyboardInterrupt:  # cancelled by stop()
                with self._cond:
                    self._in_flight -= 1
                    self._cond.notify_all()
                return
            except BaseException as e:  # reported to the trainer thread
                log.exception("self-play loop failed")
                with self._cond:
                    self._error = e
                    self._in_flight -= 1
                    self._cond.notify_all()
                return
            loop.stats.loop_seconds += time.perf_counter() - start
            with self._cond:
                self._in_flight -= 1
                if loop.last_step_recorded:
                    self._done += 2
                else:  # nothing added: the reservation goes back to the quota
                    self._reserved -= 2
                self._cond.notify_all()

    # ------------------------------------------------------------------ stats
    def stats(self) -> LoopStats:
        total = LoopStats()
        for loop in self.loops:
            total.steps += loop.stats.steps
            total.episodes += loop.stats.episodes
            total.step_seconds += loop.stats.step_seconds
            total.net_seconds += loop.stats.net_seconds
            total.loop_seconds += loop.stats.loop_seconds
        return total
