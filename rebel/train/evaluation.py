"""Evaluation during training: the net's error against exact values on a fixed held-out
set of PBSs, and the exact exploitability of test-time search (mode (b)) with the net.

The held-out set comes from self-play whose subgames are solved to the end of the game
(no depth limit, no net) but walked only ``depth`` actions, with the run's exploration: its
PBSs are the kind the net is queried at, and its labels are exactly what the oracle net
answers (the linear mean of a full-depth solve's root values, ``OracleNet`` with
``values='root_mean'``). The initial PBS is left out: the net is never asked about it.

With ``policy.enabled`` the same walk also gives the policy net's held-out set: D_pi of the
exact solves (the subgame's average policy at its decision nodes, weighted by the actor's
beliefs), at most HELDOUT_POLICY_NODES nodes of each step, drawn reproducibly. Its loss is
reported beside its two references: the targets' weighted entropy (a perfect net's loss)
and the uniform policy's.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Optional

import numpy as np

from rebel import _core
from rebel.config.train import ConfigError, TrainConfig
from rebel.distributed.evaluation import evaluate_sampled_ray
from rebel.nets.policy_mlp import policy_loss_references
from rebel.search.settings import EvalSettings

log = logging.getLogger(__name__)

__all__ = ["HeldOutSet", "heldout_walk", "check_evaluable", "search_exploitability", "evaluation_steps",
           "evaluation_seeds", "MAX_EVAL_TREE_CELLS"]

#: Largest full game tree (nodes x hands) for which the exact evaluation is attempted.
MAX_EVAL_TREE_CELLS = 1 << 21
#: The solver labelling the held-out set, as the oracle net's default.
ORACLE_SOLVER = "lcfr"
#: D_pi nodes kept of each held-out step (a full-depth subgame has them all, thousands in
#: the larger games).
HELDOUT_POLICY_NODES = 32
#: (rows [n, q], targets [n, H, A], legal [n, A] bool, weights [n, H]), as PolicyReplay's.
PolicySet = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def check_evaluable(game: _core.Game) -> None:
    """ConfigError if the game is too large for exact exploitability and oracle labels."""
    cells = game.count_tree_nodes([], -1) * game.num_hands
    if cells > MAX_EVAL_TREE_CELLS:
        raise ConfigError(
            f"{game.description()} is too large for the evaluation during training (exact exploitability and "
            f"oracle labels need the full game tree: {cells:.3g} node-hands, the limit is {MAX_EVAL_TREE_CELLS}); "
            "set evaluation.every=0 evaluation.final=false evaluation.references=false evaluation.heldout_steps=0")


def heldout_walk(game: _core.Game, config: TrainConfig, progress: Optional[Callable[[int], None]] = None,
                 oracle_solver: str = ORACLE_SOLVER,
                 collect_policy: bool = False) -> Iterator[tuple[list[int], tuple[np.ndarray, np.ndarray], Any]]:
    """The held-out self-play: yields (history, beliefs, step) at every PBS but the initial
    one, over ``evaluation.heldout_steps`` oracle-labelled steps (deterministic). The walk
    and its labels are full-depth solves with ``oracle_solver`` (the held-out set's is
    always ORACLE_SOLVER; experiments/heldout_gap.py walks with others). ``collect_policy``
    adds D_pi to every step; the walk and its value labels are the same either way."""
    s = config.search
    generator = _core.SelfPlayGenerator(game, None, solver=oracle_solver, depth=s.depth, iterations=s.iterations,
                                        epsilon=s.epsilon, sampling=s.iteration_sampling, full_depth=True,
                                        off_path=s.off_path, collect_policy=collect_policy)
    rng = np.random.Generator(np.random.PCG64(config.evaluation.heldout_seed))
    prior = np.asarray(game.hand_prior, dtype=np.float64)
    history: list[int] = []
    beliefs = (prior, prior)
    for i in range(config.evaluation.heldout_steps):
        step = generator.step(history, beliefs[0], beliefs[1], int(rng.integers(0, 2**63)))
        if history:
            yield history, beliefs, step
        if step.next_terminal:
            history, beliefs = [], (prior, prior)
        else:
            history, beliefs = list(step.next_history), step.next_beliefs
        if progress is not None:
            progress(i + 1)


def _policy_nodes(game: _core.Game, step: Any, keep: int, rng: np.random.Generator) -> PolicySet:
    """A step's D_pi as arrays, at most ``keep`` of its nodes (drawn uniformly, in order)."""
    H, A = int(game.num_hands), int(game.num_actions)
    rows = np.asarray(step.policy_rows, dtype=np.float32)
    n = rows.shape[0]
    chosen = np.sort(rng.choice(n, size=keep, replace=False)) if n > keep else np.arange(n)
    targets = np.asarray(step.policy_targets, dtype=np.float32).reshape(n, H, A)[chosen]
    legal = np.asarray(step.policy_legal).reshape(n, A)[chosen] > 0
    weights = np.asarray(step.policy_weights, dtype=np.float32).reshape(n, H)[chosen]
    return rows[chosen], targets, legal, weights


@dataclass
class HeldOutSet:
    rows: np.ndarray     # float32 [n, query_size]
    targets: np.ndarray  # float32 [n, num_hands]
    policy: Optional[PolicySet] = None  # with policy.enabled: the walk's D_pi (module docstring)

    @classmethod
    def generate(cls, game: _core.Game, config: TrainConfig,
                 progress: Optional[Callable[[int], None]] = None) -> "HeldOutSet":
        """Runs ``evaluation.heldout_steps`` oracle-labelled self-play steps (deterministic);
        with ``policy.enabled`` their D_pi too."""
        collect = config.policy.enabled
        rng = np.random.Generator(np.random.PCG64(config.evaluation.heldout_seed))
        rows, targets, policy = [], [], []
        for _history, _beliefs, step in heldout_walk(game, config, progress, collect_policy=collect):
            rows.append(step.rows)
            targets.append(step.targets)
            if collect:
                policy.append(_policy_nodes(game, step, HELDOUT_POLICY_NODES, rng))
        q, h = int(game.query_size), int(game.num_hands)
        policy_set = None
        if collect:
            a = int(game.num_actions)
            empty = (np.zeros((0, q), np.float32), np.zeros((0, h, a), np.float32), np.zeros((0, a), bool),
                     np.zeros((0, h), np.float32))
            policy_set = tuple(np.concatenate([p[i] for p in policy]) if policy else empty[i] for i in range(4))
        return cls(np.concatenate(rows) if rows else np.zeros((0, q), np.float32),
                   np.concatenate(targets) if targets else np.zeros((0, h), np.float32),
                   policy_set)  # type: ignore[arg-type]

    def policy_error(self, loss_on: Callable[[PolicySet], float]) -> dict[str, float]:
        """The policy net's held-out loss (``loss_on``, e.g. PolicyTrainer.loss_on) beside a
        perfect net's (the targets' weighted entropy) and the uniform policy's."""
        if self.policy is None or len(self.policy[0]) == 0:
            return {}
        references = policy_loss_references(self.policy[1], self.policy[2], self.policy[3])
        return {"heldout_policy_loss": float(loss_on(self.policy)),
                "heldout_policy_entropy": references["target_entropy"],
                "heldout_policy_uniform": references["uniform"]}

    def error(self, predict: Callable[[np.ndarray], np.ndarray]) -> dict[str, float]:
        """Net error against the exact values: mean |error| over hands, the same weighted by
        the queried player's beliefs (hands it cannot hold do not matter for play), the mean
        over PBSs of the max over hands (the delta of the safe-search bound, on average) and
        the largest error."""
        if len(self.rows) == 0:
            return {}
        err = np.abs(predict(self.rows).astype(np.float64) - self.targets)
        H = self.targets.shape[1]
        queried = self.rows[:, 1].astype(int)
        first = self.rows.shape[1] - 2 * H  # beliefs of player 0, then of player 1
        own = np.where(queried[:, None] == 0, self.rows[:, first:first + H],
                       self.rows[:, first + H:]).astype(np.float64)
        own /= own.sum(axis=1, keepdims=True)
        return {"heldout_mae": float(err.mean()), "heldout_weighted_mae": float((own * err).sum(axis=1).mean()),
                "heldout_delta_mean": float(err.max(axis=1).mean()), "heldout_delta_max": float(err.max())}


def evaluation_steps(game: _core.Game, config: TrainConfig) -> int:
    """What :func:`search_exploitability`'s progress counts up to: the sampled policies of
    every evaluation seed, or for a perfect-information game the distinct search states."""
    if game.perfect_information:
        s = config.search
        return _core.PerfectInfoSearch(game, _core.ZeroNet(game), s.solver, s.depth, 2, off_path=s.off_path).num_states
    return config.evaluation.repeats * config.evaluation.seeds


def evaluation_seeds(config: TrainConfig) -> list[int]:
    """The seeds mode (b) is evaluated with: ``evaluation.seed`` and the next ``seeds - 1``."""
    e = config.evaluation
    return [e.seed + k for k in range(e.seeds)]


def _offset(progress: Optional[Callable[[int], None]], done_before: int) -> Optional[Callable[[int], None]]:
    """``progress`` counting on from ``done_before`` (each seed's run counts from 0)."""
    if progress is None:
        return None
    return lambda done: progress(done_before + done)


def _over_seeds(results: list[dict[str, Any]], seeds: list[int], start: float) -> dict[str, Any]:
    """Mode (b)'s figures averaged over evaluation seeds; each seed's own figure and the
    sample sd (ddof 1) beside them when there are several, as the protocol reports them."""
    finals = np.array([float(r["exploitability"][-1]) for r in results])
    br = np.array([[float(v) for v in r["br_values"][-1]] for r in results])
    curves = np.array([[float(x) for x in r["exploitability"]] for r in results])
    out: dict[str, Any] = {
        "exploitability": float(finals.mean()),
        "br_values": [float(v) for v in br.mean(axis=0)],
        "by_num_policies": {int(n): float(x) for n, x in zip(results[0]["num_policies"], curves.mean(axis=0))},
        "seconds": time.perf_counter() - start,
    }
    if len(seeds) > 1:
        out["exploitability_by_seed"] = {int(seed): float(x) for seed, x in zip(seeds, finals)}
        out["exploitability_sd"] = float(finals.std(ddof=1))
    return out


def search_exploitability(game: _core.Game, net: _core.ValueNet, config: TrainConfig,
                          progress: Optional[Callable[[int], None]] = None,
                          policy_net: Any = None) -> dict[str, Any]:
    """Exact exploitability of mode (b) with ``net`` (N = evaluation.repeats sampled policies),
    the mean over ``evaluation.seeds`` seeds (:func:`evaluation_seeds`).

    On a perfect-information game (one hand per player) the search at a state does not
    depend on how it was reached, and mode (b) is evaluated exactly in the limit of
    infinitely many sampled policies instead (:class:`rebel._core.PerfectInfoSearch`;
    ``by_num_policies`` is then empty and ``limit`` is true; there is nothing to seed).
    ``policy_net``: with ``search.warm_start`` K > 0, every subgame starts from its policy
    (K updates)."""
    s, e = config.search, config.evaluation
    start = time.perf_counter()
    if game.perfect_information:
        exact = _core.PerfectInfoSearch(game, net, s.solver, s.depth, s.iterations, off_path=s.off_path)
        result = exact.evaluate(threads=e.threads, progress=progress)
        return {"exploitability": float(result["exploitability"]),
                "br_values": [float(v) for v in result["br_values"]],
                "by_num_policies": {}, "limit": True, "seconds": time.perf_counter() - start}
    if policy_net is not None and s.warm_start > 0:
        search = _core.TestTimeSearch(game, net, s.solver, s.depth, s.iterations, off_path=s.off_path,
                                      policy_net=policy_net, warm_iterations=s.warm_start,
                                      warm_prior=s.warm_prior)
    else:
        search = _core.TestTimeSearch(game, net, s.solver, s.depth, s.iterations, off_path=s.off_path)
    seeds = evaluation_seeds(config)
    results = [search.evaluate_sampled(e.repeats, threads=e.threads, seed=seed,
                                       progress=_offset(progress, k * e.repeats))
               for k, seed in enumerate(seeds)]
    return _over_seeds(results, seeds, start)


def search_exploitability_ray(game: _core.Game, config: TrainConfig, weights: Optional[bytes], actors: list[Any],
                              progress: Optional[Callable[[int], None]] = None) -> dict[str, Any]:
    """:func:`search_exploitability` with mode (b)'s samples split across Ray ``actors``
    (``weights``: the exported net's bytes; None for the zero net). Same numbers up to rounding."""
    s, e = config.search, config.evaluation
    start = time.perf_counter()
    settings = EvalSettings(net="zero" if weights is None else "<weights>",
                            solver=s.solver, depth=s.depth, iterations=s.iterations, repeats=e.repeats,
                            threads=e.threads, seed=e.seed, off_path=s.off_path, precision=e.precision,
                            mode_a=False, full_game=False)
    seeds = evaluation_seeds(config)
    results = [evaluate_sampled_ray(game, replace(settings, seed=seed), weights, actors, e.repeats, e.threads,
                                    seed, _offset(progress, k * e.repeats))
               for k, seed in enumerate(seeds)]
    return _over_seeds(results, seeds, start)
