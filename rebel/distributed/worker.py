"""The Ray actor of distributed self-play and evaluation (torch-free: C++ core and numpy).

One :class:`RebelWorker` per actor. Its calls are pure functions of their arguments, so that
Ray can restart a killed actor and retry the call it was running with the same result:

* :meth:`generate` gets the self-play loops' states, an example quota and the weights
  (a version number and the object-store reference of the exported bytes, fetched only
  when the version changes), runs the quota on its threads and returns the examples as two
  numpy arrays together with the loops' new states;
* :meth:`sampled_sum` returns the reach-weighted sum of a range of mode-(b) samples
  (``TestTimeSearch.sampled_sum``), which the driver adds up in order.

Every reply carries the actor's incarnation (a fresh id per process), from which the
driver counts restarts.
"""
from __future__ import annotations

import os
import time
import uuid
from typing import Any, Optional

import numpy as np

from rebel import _core
from rebel.nets.precision import native_kernel
from rebel.search.selfplay import GenerationPool, SelfPlayLoop

__all__ = ["RebelWorker", "remote_worker_class"]


class RebelWorker:
    """Self-play generation and mode-(b) sampling for one game (wrapped by ``ray.remote``)."""

    def __init__(self, game_name: str, game_params: dict[str, int], search: dict[str, Any], precision: str) -> None:
        self.game = _core.make_game(game_name, dict(game_params))
        self.search = dict(search)  # solver, depth, iterations, epsilon, iteration_sampling, off_path, initial_pbs_keep
        self.precision = precision
        self.incarnation = uuid.uuid4().hex
        self._weights_version = -1
        self._native: Optional[_core.MlpValueNet] = None
        self._loops: list[SelfPlayLoop] = []
        self._eval_key: Any = None
        self._eval_search: Optional[_core.TestTimeSearch] = None

    # ------------------------------------------------------------------ info
    def info(self) -> dict[str, Any]:
        """Process id, host, Ray node and incarnation (and the net's kernel once weights arrived)."""
        import socket

        import ray

        out: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname(),
                               "node": ray.get_runtime_context().get_node_id(), "incarnation": self.incarnation}
        if self._native is not None:
            out["kernel"] = native_kernel(self._native)
        return out

    # ------------------------------------------------------------------ self-play
    def _weights(self, version: int, box: list[Any]) -> None:
        if version == self._weights_version:
            return
        import ray

        data = ray.get(box[0])
        if self._native is None:
            self._native = _core.MlpValueNet(self.game, data, precision=self.precision)
        else:
            self._native.set_weights_bytes(data)
        self._weights_version = version

    def _ensure_loops(self, count: int) -> None:
        if len(self._loops) == count:
            return
        s = self.search
        generator = _core.SelfPlayGenerator(self.game, self._native, solver=s["solver"], depth=s["depth"],
                                            iterations=s["iterations"], epsilon=s["epsilon"],
                                            sampling=s["iteration_sampling"], off_path=s["off_path"])
        keep = float(s.get("initial_pbs_keep", 1.0))
        self._loops = [SelfPlayLoop(self.game, generator, 0, keep) for _ in range(count)]

    def generate(self, states: list[dict[str, Any]], examples: int, version: int,
                 box: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Runs ``examples`` examples (even) on ``len(states)`` loops started from ``states``;
        returns the examples with counters, and the loops' new states (called with
        ``num_returns=2`` so the states can feed the next call without a trip to the driver)."""
        if examples % 2 or examples < 0:
            raise ValueError(f"an example quota must be even and >= 0, got {examples}")
        self._weights(version, box)
        self._ensure_loops(len(states))
        for loop, state in zip(self._loops, states):
            loop.load_state(state)
            loop.stats.step_seconds = loop.stats.net_seconds = loop.stats.loop_seconds = 0.0
        steps_before = [loop.stats.steps for loop in self._loops]
        episodes_before = [loop.stats.episodes for loop in self._loops]
        rows: list[np.ndarray] = []
        targets: list[np.ndarray] = []

        def add(r: np.ndarray, t: np.ndarray) -> None:
            rows.append(np.asarray(r, dtype=np.float32))
            targets.append(np.asarray(t, dtype=np.float32))

        start = time.perf_counter()
        pool = GenerationPool(self._loops, add)
        pool.start(0)
        try:
            pool.allow(examples)
            pool.wait_idle()
        finally:
            pool.stop(cancel_running=True)
        wall = time.perf_counter() - start
        width_q = int(self.game.query_size)
        width_h = int(self.game.num_hands)
        stats = {
            "steps": sum(loop.stats.steps - b for loop, b in zip(self._loops, steps_before)),
            "episodes": sum(loop.stats.episodes - b for loop, b in zip(self._loops, episodes_before)),
            "step_seconds": sum(loop.stats.step_seconds for loop in self._loops),
            "net_seconds": sum(loop.stats.net_seconds for loop in self._loops),
            "loop_seconds": sum(loop.stats.loop_seconds for loop in self._loops),
            "wall_seconds": wall,
        }
        payload = {
            "rows": np.concatenate(rows) if rows else np.zeros((0, width_q), np.float32),
            "targets": np.concatenate(targets) if targets else np.zeros((0, width_h), np.float32),
            "stats": stats,
            "incarnation": self.incarnation,
            "kernel": native_kernel(self._native) if self._native is not None else None,
        }
        return payload, [loop.state() for loop in self._loops]

    # ------------------------------------------------------------------ evaluation
    def sampled_sum(self, settings: Any, weights: Optional[bytes], begin: int, end: int, threads: int,
                    seed: int) -> dict[str, Any]:
        """The reach-weighted sum of mode-(b) samples ``begin .. end - 1`` of the search that
        ``settings`` (:class:`rebel.search.evaluate.EvalSettings`) describes, with ``weights`` (bytes of
        an exported net) when ``settings.net`` names a file."""
        from rebel.search.evaluate import search_for

        key = (repr(settings), None if weights is None else hash(weights))
        if key != self._eval_key:
            self._eval_search = search_for(self.game, settings, weights)
            self._eval_key = key
        assert self._eval_search is not None
        start = time.perf_counter()
        total = self._eval_search.sampled_sum(begin, end, threads=threads, seed=seed)
        return {"sum": total, "seconds": time.perf_counter() - start, "incarnation": self.incarnation}


def remote_worker_class(num_cpus: int, max_restarts: int) -> Any:
    """``RebelWorker`` as a Ray actor class: ``num_cpus`` CPUs, restarted (and its running
    call retried) up to ``max_restarts`` times when its process dies."""
    import ray

    return ray.remote(num_cpus=num_cpus, max_restarts=max_restarts, max_task_retries=max_restarts)(RebelWorker)
