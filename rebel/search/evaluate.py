"""Exact evaluation of ReBeL's test-time search (what `rebel eval` runs).

Three numbers are measured on the same game, solver and iteration count:

* the full-game solver (no depth limit, no net): the baseline row of the paper's table;
* mode (a): search at every public state, each subgame's average policy;
* mode (b), the paper's safe-search protocol: each subgame stops at a random iteration
  (linear weights) whose policy is played and propagates beliefs; the reach-weighted
  average of N sampled full-game policies is evaluated exactly at every power of two.

On a perfect-information game (one hand per player, e.g. tic-tac-toe) the search at a state
does not depend on the history that reached it, and mode (b) is evaluated exactly in the
limit N -> infinity by solving each distinct state once (``mode_b_limit``; mode (a) is
not computed there: it would solve a subgame per history).
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from rebel import _core
from rebel.games import game_config
from rebel.nets.precision import native_kernel
from rebel.nets.pretrained import resolve_net, resolve_policy_net
from rebel.nets.weights_io import read_policy_weights
from rebel.search.settings import EvalSettings
from rebel.util.progress import Progress, progress_callback

#: Computes mode (b)'s sampled policies somewhere else (rebel.distributed.evaluation: on Ray
#: actors): ``(game, settings, progress) -> TestTimeSearch.evaluate_sampled's result``.
SamplePolicies = Callable[[_core.Game, EvalSettings, Optional[Callable[[int], None]]], Dict[str, Any]]

log = logging.getLogger(__name__)


def _with_leaf_error(game: _core.Game, net: _core.ValueNet, settings: EvalSettings) -> _core.ValueNet:
    """`net`, wrapped in a PerturbedNet adding an error of max norm `settings.leaf_error` if > 0."""
    if settings.leaf_error > 0:
        net = _core.PerturbedNet(game, net, settings.leaf_error, settings.leaf_error_kind, settings.leaf_error_seed)
    return net


def _base_value_net(game: _core.Game, settings: EvalSettings, weights: Optional[bytes] = None) -> _core.ValueNet:
    if weights is not None:  # the bytes of settings.net, read elsewhere (a Ray actor on another machine)
        return _core.MlpValueNet(game, weights, precision=settings.precision)
    if settings.net == "zero":
        return _core.ZeroNet(game)
    if settings.net == "oracle":
        iterations = settings.oracle_iterations or settings.iterations
        return _core.OracleNet(game, settings.oracle_solver, iterations, settings.oracle_values,
                               off_path=settings.off_path)
    path = resolve_net(settings.net)  # pretrained:NAME -> its file
    if not os.path.isfile(path):
        raise ValueError(f"--net must be 'zero', 'oracle', pretrained:NAME or a weights file; "
                         f"{settings.net!r} is not a file")
    # Exported MLP weights (docs/weights_format.md); the file is validated on load.
    return _core.MlpValueNet(game, path, precision=settings.precision)


def policy_net_of(game: _core.Game, settings: EvalSettings,
                  policy_weights: Optional[bytes] = None) -> Optional["_core.MlpPolicyNet"]:
    """The native policy net of ``settings.policy_net`` (None without one), from
    ``policy_weights`` if given. ValueError if the file is missing or is not a policy net of
    ``game`` (a value net's file, or one sized for another game)."""
    if policy_weights is None:
        if not settings.policy_net:
            return None
        path = resolve_policy_net(settings.policy_net)  # pretrained:NAME -> its file
        if not os.path.isfile(path):
            raise ValueError(f"--policy-net: {settings.policy_net!r} is not a file (search.policy_net)")
        with open(path, "rb") as f:
            policy_weights = f.read()
    try:
        data = read_policy_weights(policy_weights, game)
    except ValueError as e:
        raise ValueError(f"--policy-net {settings.policy_net}: {e}") from None
    return _core.MlpPolicyNet(game, data, precision=settings.precision)


def _test_time_search(game: _core.Game, net: _core.ValueNet, settings: EvalSettings,
                      policy_net: Optional["_core.MlpPolicyNet"]) -> _core.TestTimeSearch:
    if settings.warm_start > 0:
        return _core.TestTimeSearch(game, net, settings.solver, settings.depth, settings.iterations,
                                    off_path=settings.off_path, policy_net=policy_net,
                                    warm_iterations=settings.warm_start, warm_prior=settings.warm_prior,
                                    chance_leaves=settings.chance_leaves)
    return _core.TestTimeSearch(game, net, settings.solver, settings.depth, settings.iterations,
                                off_path=settings.off_path, chance_leaves=settings.chance_leaves)


def search_for(game: _core.Game, settings: EvalSettings, weights: Optional[bytes] = None,
               policy_weights: Optional[bytes] = None) -> _core.TestTimeSearch:
    """The test-time search ``settings`` describe (``weights`` / ``policy_weights``: the
    value and policy nets' file bytes, if read already)."""
    net = _with_leaf_error(game, _base_value_net(game, settings, weights), settings)
    return _test_time_search(game, net, settings, policy_net_of(game, settings, policy_weights))


def evaluate(
    game: _core.Game,
    settings: EvalSettings,
    progress: bool = False,
    on_phase: Optional[Callable[[str, int, int], None]] = None,
    sample_policies: Optional[SamplePolicies] = None,
    report: Optional[Dict[str, Any]] = None,
    value_net: Optional[_core.ValueNet] = None,
) -> Dict[str, Any]:
    """Runs the evaluation of ``settings`` on ``game``; returns a JSON-ready dict plus the
    mode-(b) policy array.

    With ``progress``, every phase longer than a few seconds (the full-game solver, mode
    (a)'s subgame solves, mode (b)'s sampled policies; the oracle's solves happen within
    the last two) reports progress on stderr (:class:`rebel.util.progress.Progress`).
    ``on_phase(phase, done, total)``, if given, is called as each phase advances, with
    phase one of ``full_game``, ``mode_a``, ``mode_b``. ``sample_policies`` computes mode
    (b)'s samples elsewhere (``settings.backend = "ray"`` needs it: use
    :func:`rebel.distributed.evaluation.evaluate`, which passes it), ``report`` adds entries
    describing that backend to the result. ``value_net``, if given, answers the search's leaf
    queries in place of the net ``settings.net`` names (which then only labels the result):
    a net built in Python, e.g. a wrapper around a file's net (``core.PythonValueNet``).
    The leaf error of ``settings`` still applies on top of it.
    """
    settings.check()
    if value_net is not None and sample_policies is not None:
        raise ValueError("value_net is a net in this process; mode (b) computed elsewhere (sample_policies, "
                         "backend 'ray') would not use it")
    if settings.backend == "ray" and sample_policies is None:
        raise ValueError("backend 'ray' computes mode (b) on Ray actors: call rebel.distributed.evaluation.evaluate "
                         "(or use backend 'threads')")
    if settings.warm_start > 0 and game.perfect_information:
        raise ValueError("search.warm_start: the exact evaluation of perfect-information games "
                         "(PerfectInfoSearch) has no policy-net warm start")
    policy_net = policy_net_of(game, settings)  # checked before any work
    solver = settings.solver

    def reporter(phase: str, desc: str, total: int, unit: str) -> Tuple[Progress, Optional[Callable[[int], None]]]:
        bar = Progress(desc, total, unit, enabled=progress)
        shown = progress_callback(bar)
        if on_phase is None:
            return bar, shown

        def both(done: int) -> None:
            on_phase(phase, done, total)
            if shown is not None:
                shown(done)

        return bar, both

    result: Dict[str, Any] = {
        "game": game_config(game),
        "net": settings.net,
        "solver": solver,
        "depth": settings.depth,
        "iterations": settings.iterations,
        "off_path": settings.off_path,
        "repeats": settings.repeats,
        "threads": settings.threads,
        "seed": settings.seed,
    }
    if settings.net == "oracle":
        result["oracle"] = {
            "solver": settings.oracle_solver,
            "iterations": settings.oracle_iterations or settings.iterations,
            "values": settings.oracle_values,
        }
    if settings.warm_start > 0:
        result["policy_net"] = settings.policy_net
        result["warm_start"] = settings.warm_start
        if settings.warm_prior > 0:
            result["warm_prior"] = settings.warm_prior
    if settings.chance_leaves != "after_deal":
        result["chance_leaves"] = settings.chance_leaves
    if settings.leaf_error > 0:
        result["leaf_error"] = {"delta": settings.leaf_error, "kind": settings.leaf_error_kind,
                                "seed": settings.leaf_error_seed}
    seconds: Dict[str, float] = {}

    if settings.full_game:
        start = time.perf_counter()
        tree = _core.build_tree(game)
        full = _core.SubgameSolver(game, tree, solver=solver, off_path=settings.off_path)
        bar, callback = reporter("full_game", f"full-game {solver}", settings.iterations, "it")
        with bar:
            full.run(settings.iterations, callback)
            _finish(callback, settings.iterations)
        seconds["full_game"] = time.perf_counter() - start
        report = _core.exploitability(game, tree, full.average_policy())
        result["full_game"] = {"exploitability": report["exploitability"], "br_values": list(report["br_values"])}
        log.info("full-game %s: exploitability %.6f", solver, report["exploitability"])

    base_net = value_net if value_net is not None else _base_value_net(game, settings)
    if isinstance(base_net, _core.MlpValueNet):
        result["net_kernel"] = native_kernel(base_net)  # which kernel ran (precision and isa)
    net = _with_leaf_error(game, base_net, settings)
    if game.perfect_information:
        return _evaluate_perfect_info(game, net, settings, result, seconds, reporter, sample_policies)
    search = _test_time_search(game, net, settings, policy_net)
    result["search_roots"] = search.num_search_roots

    if settings.mode_a:
        start = time.perf_counter()
        bar, callback = reporter("mode_a", "mode (a) subgames", search.num_search_roots, "subgames")
        with bar:
            policy = search.average_policy(callback)
            _finish(callback, search.num_search_roots)
        report = _core.exploitability(game, search.full_tree, policy)
        seconds["mode_a"] = time.perf_counter() - start
        result["mode_a"] = {"exploitability": report["exploitability"], "br_values": list(report["br_values"])}
        log.info("mode (a): exploitability %.6f", report["exploitability"])

    start = time.perf_counter()
    bar, callback = reporter("mode_b", "mode (b) sampled policies", settings.repeats, "policies")
    with bar:
        if sample_policies is not None:
            sampled = sample_policies(game, settings, callback)
            result.update(report or {})
        else:
            sampled = search.evaluate_sampled(settings.repeats, threads=settings.threads, seed=settings.seed,
                                              progress=callback)
        _finish(callback, settings.repeats)
    seconds["mode_b"] = time.perf_counter() - start
    result["mode_b"] = [
        {"num_policies": n, "exploitability": e, "br_values": list(br)}
        for n, e, br in zip(sampled["num_policies"], sampled["exploitability"], sampled["br_values"])
    ]
    log.info("mode (b), %d policies: exploitability %.6f", settings.repeats, sampled["exploitability"][-1])
    return _completed(result, seconds, game, search.full_tree, sampled["average_policy"])


def _completed(result: Dict[str, Any], seconds: Dict[str, float], game: _core.Game, tree: _core.PublicTree,
               mode_b_policy: Any) -> Dict[str, Any]:
    """Adds the timings and the private entries (mode (b)'s policy, its tree, the game)."""
    seconds["total"] = sum(seconds.values())
    result["seconds"] = seconds
    result["_mode_b_policy"] = mode_b_policy
    result["_full_tree"] = tree
    result["_game"] = game
    return result


def _evaluate_perfect_info(game: _core.Game, net: _core.ValueNet, settings: EvalSettings, result: Dict[str, Any],
                           seconds: Dict[str, float], reporter: Callable[..., Any],
                           sample_policies: Optional[SamplePolicies]) -> Dict[str, Any]:
    """Mode (b) in the limit N -> infinity on a perfect-information game (local threads)."""
    start = time.perf_counter()
    search = _core.PerfectInfoSearch(game, net, settings.solver, settings.depth, settings.iterations,
                                     off_path=settings.off_path)
    result["search_roots"] = search.num_search_roots
    result["search_states"] = search.num_states
    if sample_policies is not None:
        log.info("perfect-information game: mode (b) is evaluated exactly on this machine, not on Ray")
    bar, callback = reporter("mode_b", "mode (b) limit, states", search.num_states, "states")
    with bar:
        limit = search.evaluate(threads=settings.threads, progress=callback)
        _finish(callback, search.num_states)
    seconds["mode_b"] = time.perf_counter() - start
    result["mode_b"] = []
    result["mode_b_limit"] = {"exploitability": limit["exploitability"], "br_values": list(limit["br_values"])}
    log.info("mode (b), N -> infinity (exact): exploitability %.6f", limit["exploitability"])
    return _completed(result, seconds, game, search.full_tree, limit["policy"])


def _finish(callback: Optional[Callable[[int], None]], total: int) -> None:
    """Reports a finished phase (the core's last poll may come before the end)."""
    if callback is not None:
        callback(total)


def public_view(result: Dict[str, Any]) -> Dict[str, Any]:
    """The JSON-serialisable part of `evaluate`'s result."""
    return {k: v for k, v in result.items() if not k.startswith("_")}


def mode_b_table(result: Dict[str, Any]) -> List[str]:
    """Human-readable lines for the mode-(b) results."""
    lines = [f"  N = {row['num_policies']:5d}: {row['exploitability']:.6f}" for row in result["mode_b"]]
    if "mode_b_limit" in result:
        lines.append(f"  N ->   inf: {result['mode_b_limit']['exploitability']:.6f}  (exact: perfect information, "
                     f"{result['search_states']} distinct search states)")
    return lines
