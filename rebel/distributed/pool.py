"""Self-play on Ray actors, in the same lockstep as the threads backend (``selfplay.backend=ray``).

:class:`RayGenerationPool` has :class:`rebel.search.selfplay.GenerationPool`'s interface. The
driver owns every loop's state; each actor (:class:`rebel.distributed.worker.RebelWorker`) runs
``selfplay.threads`` of the loops. When the trainer allows examples up to a new total, the
pool cuts the new examples into rounds of at most one epoch (G examples), splits each round
into per-actor quotas (whole self-play steps, as evenly as possible) and submits them; a
round's examples enter the replay buffer when the round is collected, actor by actor in a
fixed order, so with one thread per actor the run is a deterministic function of the seed
just as with one thread. New weights travel as one ``ray.put`` per swap; every actor reads
that one object when it next generates.

A killed actor is restarted by Ray and its call retried from the same loop states and
weights (the call is a pure function of them), so the epoch's examples are exactly those
an uninterrupted run makes; each restart is counted (``actor_restarts`` in metrics.jsonl).
"""
from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from rebel.search.selfplay import LoopStats

log = logging.getLogger(__name__)

__all__ = ["RayGenerationPool"]


@dataclass
class _Round:
    end: int                      # the total number of examples once this round is added
    futures: list[Any]            # one per actor: the generate() call, or None for a zero quota
    states_out: list[Any]         # per actor: the loop states after the round (an ObjectRef, or a list if idle)


def _writable(state: dict[str, Any]) -> dict[str, Any]:
    """A loop state with its arrays copied (those from the object store are read-only)."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in state.items()}


class RayGenerationPool:
    """``workers`` Ray actors with ``threads`` self-play loops each, gated like GenerationPool."""

    def __init__(self, game_name: str, game_params: dict[str, int], search: dict[str, Any], precision: str,
                 initial_states: list[dict[str, Any]], workers: int, threads: int, max_restarts: int,
                 add: Callable[[np.ndarray, np.ndarray], Any], round_examples: int) -> None:
        if len(initial_states) != workers * threads:
            raise ValueError(f"{len(initial_states)} loop states for {workers} actors x {threads} loops")
        self._spec = (game_name, dict(game_params), dict(search), precision)
        self.workers, self.threads, self.max_restarts = workers, threads, max_restarts
        self._states = [list(initial_states[a * threads:(a + 1) * threads]) for a in range(workers)]
        self._add = add
        self._round_examples = max(2, round_examples + round_examples % 2)
        self._weights: Optional[bytes] = None
        self._weights_ref: Any = None
        self._version = -1
        self._put_count = 0
        self.actors: list[Any] = []
        self.actor_info: list[dict[str, Any]] = []  # per actor at start: pid, host, node, incarnation
        self._incarnations: list[Optional[str]] = []
        self._restarts = 0
        self._rounds: deque[_Round] = deque()
        self._allowed = 0
        self._done = 0
        self._stats = LoopStats()
        self.kernel: Optional[dict[str, str]] = None

    # ------------------------------------------------------------------ state
    def loop_states(self) -> list[dict[str, Any]]:
        """Every loop's state after the last collected round (call when idle)."""
        return [s for actor_states in self._states for s in actor_states]

    def load_loop_states(self, states: list[dict[str, Any]]) -> None:
        if len(states) != self.workers * self.threads:
            raise ValueError(f"the checkpoint has {len(states)} self-play loops, the config "
                             f"{self.workers * self.threads} (ray.workers x selfplay.threads)")
        t = self.threads
        self._states = [list(states[a * t:(a + 1) * t]) for a in range(self.workers)]

    def install_weights(self, data: bytes) -> None:
        """One object-store put; actors fetch it when they next generate."""
        self._weights = data
        if self.actors:
            self._publish()

    def _publish(self) -> None:
        import ray

        assert self._weights is not None
        self._weights_ref = ray.put(self._weights)
        self._put_count += 1
        self._version += 1

    @property
    def weight_puts(self) -> int:
        """How many times weights were put into the object store (one per swap)."""
        return self._put_count

    def restarts(self) -> int:
        """Actor restarts seen so far (a changed incarnation in an actor's reply)."""
        return self._restarts

    # ------------------------------------------------------------------ control
    def start(self, already_generated: int) -> None:
        """Creates the actors (Ray must be connected, see rebel.distributed.cluster.connect)."""
        import ray

        from rebel.distributed.worker import remote_worker_class

        if self._weights is None:
            raise RuntimeError("install_weights() before start()")
        self._allowed = self._done = already_generated
        cls = remote_worker_class(self.threads, self.max_restarts)
        game_name, game_params, search, precision = self._spec
        self.actors = [cls.remote(game_name, game_params, search, precision) for _ in range(self.workers)]
        infos = ray.get([a.info.remote() for a in self.actors])
        self.actor_info = infos
        self._incarnations = [i["incarnation"] for i in infos]
        log.info("ray: %d self-play actors on %s", self.workers, ", ".join(sorted({i["host"] for i in infos})))
        self._publish()

    def allow(self, total: int) -> None:
        """Submits rounds until ``total`` examples are asked for in all."""
        while self._allowed < total:
            n = min(self._round_examples, total - self._allowed)
            n += n % 2
            self._submit(n)

    def _quotas(self, examples: int) -> list[int]:
        steps = examples // 2
        base, extra = divmod(steps, self.workers)
        return [2 * (base + (1 if a < extra else 0)) for a in range(self.workers)]

    def _submit(self, examples: int) -> None:
        previous = self._rounds[-1].states_out if self._rounds else self._states
        futures: list[Any] = []  # ray ObjectRefs, None for an actor without a quota
        states_out: list[Any] = []
        box = [self._weights_ref]  # in a list: the actor fetches it only when the version is new
        for a, quota in enumerate(self._quotas(examples)):
            if quota == 0:
                futures.append(None)
                states_out.append(previous[a])
                continue
            # Two results: the examples, and the loop states that the actor's next round starts from
            # (passed on as a reference: Ray hands it over once this call is done).
            f, states = self.actors[a].generate.options(num_returns=2).remote(previous[a], quota, self._version, box)
            futures.append(f)
            states_out.append(states)
        self._allowed += examples
        self._rounds.append(_Round(end=self._allowed, futures=futures, states_out=states_out))

    def _collect(self) -> None:
        import ray

        r = self._rounds[0]
        results: list[Optional[dict[str, Any]]] = []
        for a, f in enumerate(r.futures):
            if f is None:
                results.append(None)
                continue
            try:
                payload, actor_states = ray.get([f, r.states_out[a]])
                payload["states"] = [_writable(state) for state in actor_states]
                results.append(payload)
            except ray.exceptions.RayActorError as e:
                raise RuntimeError(f"self-play actor {a} died and was not restarted "
                                   f"(ray.max_restarts={self.max_restarts}): {str(e).splitlines()[0]}") from None
        states: list[list[dict[str, Any]]] = []
        for a, res in enumerate(results):
            if res is None:
                states.append(self._states[a])
                continue
            if res["incarnation"] != self._incarnations[a]:
                self._restarts += 1
                log.warning("ray: self-play actor %d was restarted; its quota was generated again", a)
                self._incarnations[a] = res["incarnation"]
            self._add(res["rows"], res["targets"])
            self._done += int(res["rows"].shape[0])
            s = res["stats"]
            self._stats.steps += s["steps"]
            self._stats.episodes += s["episodes"]
            self._stats.step_seconds += s["step_seconds"]
            self._stats.net_seconds += s["net_seconds"]
            self._stats.loop_seconds += s["loop_seconds"]
            if self.kernel is None and res.get("kernel"):
                self.kernel = res["kernel"]
            states.append(res["states"])
        self._states = states
        self._rounds.popleft()

    def generated(self) -> int:
        return self._done

    def wait_generated(self, total: int, timeout: Optional[float] = None) -> bool:
        """Collects rounds until ``total`` examples are in the buffer."""
        while self._done < total and self._rounds:
            self._collect()
        return self._done >= total

    def wait_idle(self) -> None:
        """Collects every submitted round."""
        while self._rounds:
            self._collect()

    def stop(self, cancel_running: bool = True) -> None:
        """Kills the actors (unfinished rounds are dropped; the loop states stay at the last collected one)."""
        if not self.actors:
            return
        import ray

        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already gone
                pass
        self.actors = []
        self._rounds.clear()
        self._allowed = self._done

    # ------------------------------------------------------------------ stats
    def stats(self) -> LoopStats:
        return LoopStats(self._stats.steps, self._stats.episodes, self._stats.step_seconds, self._stats.net_seconds,
                         self._stats.loop_seconds)

