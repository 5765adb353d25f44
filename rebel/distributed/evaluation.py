"""Mode (b) split across Ray actors: the same numbers as ``TestTimeSearch.evaluate_sampled``.

The N samples are cut into consecutive ranges whose ends include every power of two and N;
each range's reach-weighted sum is computed by an actor (:meth:`RebelWorker.sampled_sum`),
the driver adds the sums in order and evaluates the average exactly at every power of two
(``_core.evaluate_mixture_sum``). Only the order of floating-point additions differs from
the local evaluation (agreement to about 1e-15).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from rebel import _core
from rebel.distributed.cluster import connect
from rebel.games import game_config
from rebel.nets.pretrained import resolve_net
from rebel.search.evaluate import evaluate as evaluate_here
from rebel.search.settings import EvalSettings, RaySettings

__all__ = ["sample_ranges", "evaluate_sampled_ray", "start_workers", "evaluate"]


def sample_ranges(num_policies: int, pieces: int) -> list[tuple[int, int]]:
    """Consecutive ranges covering [0, N) in about ``pieces`` parts, cut at every power of two."""
    if num_policies < 1 or pieces < 1:
        raise ValueError(f"need num_policies >= 1 and pieces >= 1, got {num_policies}, {pieces}")
    marks = {num_policies} | {1 << i for i in range(num_policies.bit_length()) if (1 << i) <= num_policies}
    size = max(1, math.ceil(num_policies / pieces))
    marks |= set(range(size, num_policies, size))
    ends = sorted(marks)
    return list(zip([0] + ends[:-1], ends))


def start_workers(game_name: str, game_params: dict[str, int], search: dict[str, Any], precision: str,
                  workers: int, cpus_per_worker: int, max_restarts: int) -> list[Any]:
    """``workers`` RebelWorker actors (Ray must be connected), ready when this returns."""
    import ray

    from rebel.distributed.worker import remote_worker_class

    cls = remote_worker_class(cpus_per_worker, max_restarts)
    actors = [cls.remote(game_name, dict(game_params), dict(search), precision) for _ in range(workers)]
    ray.get([a.info.remote() for a in actors])
    return actors


def evaluate_sampled_ray(game: _core.Game, settings: Any, weights: Optional[bytes], actors: Sequence[Any],
                         num_policies: int, threads: int, seed: int,
                         progress: Optional[Callable[[int], None]] = None) -> dict[str, Any]:
    """``evaluate_sampled``'s result (num_policies, exploitability, br_values, average_policy)
    with the samples computed by ``actors``; ``settings`` is the EvalSettings they rebuild
    the search from, ``weights`` the exported net's bytes when it names a file."""
    import ray

    tree = _core.build_tree(game)
    ranges = sample_ranges(num_policies, 4 * len(actors))
    weights_ref = ray.put(weights) if weights is not None else None
    futures = [actors[i % len(actors)].sampled_sum.remote(settings, weights_ref, begin, end, threads, seed)
               for i, (begin, end) in enumerate(ranges)]
    total: Optional[np.ndarray] = None
    out: dict[str, Any] = {"num_policies": [], "exploitability": [], "br_values": [], "average_policy": None}
    try:
        for (_begin, end), future in zip(ranges, futures):
            part = ray.get(future)["sum"]
            total = part.copy() if total is None else total + part
            if progress is not None:
                progress(end)
            if (end & (end - 1)) == 0 or end == num_policies:
                report = _core.evaluate_mixture_sum(game, tree, total)
                out["num_policies"].append(end)
                out["exploitability"].append(report["exploitability"])
                out["br_values"].append(tuple(report["br_values"]))
                out["average_policy"] = report["average_policy"]
    except BaseException:
        for f in futures:
            ray.cancel(f)
        raise
    return out


def evaluate(game: _core.Game, settings: EvalSettings, ray_settings: Optional[RaySettings] = None,
             progress: bool = False,
             on_phase: Optional[Callable[[str, int, int], None]] = None) -> dict[str, Any]:
    """:func:`rebel.search.evaluate.evaluate` with ``settings.backend`` honoured: with ``ray``
    mode (b)'s samples are split across ``ray_settings.workers`` Ray actors
    (:class:`rebel.search.settings.RaySettings`; connected here if not already), with
    ``threads`` this is the local evaluation. The same numbers either way, up to rounding."""
    if settings.backend != "ray":
        return evaluate_here(game, settings, progress=progress, on_phase=on_phase)
    ray_settings = ray_settings if ray_settings is not None else RaySettings()
    ray_settings.check()

    def on_ray(game: _core.Game, settings: EvalSettings, progress: Optional[Callable[[int], None]]) -> dict[str, Any]:
        import ray

        connect(ray_settings.address, ray_settings.num_cpus, needed_cpus=ray_settings.workers * settings.threads)
        weights = None
        if settings.net not in ("zero", "oracle"):
            with open(resolve_net(settings.net), "rb") as f:
                weights = f.read()
        params = {k: v for k, v in game_config(game).items() if k != "name"}
        actors = start_workers(game.name, params, {}, settings.precision, ray_settings.workers, settings.threads,
                               max_restarts=3)
        try:
            return evaluate_sampled_ray(game, settings, weights, actors, settings.repeats, settings.threads,
                                        settings.seed, progress)
        finally:
            for actor in actors:
                ray.kill(actor)

    return evaluate_here(game, settings, progress=progress, on_phase=on_phase, sample_policies=on_ray,
                         report={"ray": {"address": ray_settings.address, "workers": ray_settings.workers}})
