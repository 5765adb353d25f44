"""The settings of an evaluation of test-time search: one type for the Python API, the config
schema (the ``search`` and ``ray`` sections of ``rebel eval``) and the command line.

Every field has the default that a measured exploitability needs: in particular
``precision`` is fp32 (:data:`rebel.nets.precision.EVAL_PRECISION`), so a number computed
through the Python API does not depend on which CPU computed it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from rebel.nets.precision import EVAL_PRECISION, check_precision
from rebel.search.solve import (
    DEFAULT_OFF_PATH,
    FP_SOLVERS,
    SEARCH_SOLVERS,
    SOLVERS,
    check_average_leaves_off_path,
    check_off_path,
)

__all__ = ["EvalSettings", "RaySettings", "LEAF_ERROR_KINDS", "BACKENDS", "ORACLE_VALUES", "CHANCE_LEAVES",
           "check_leaf_error", "check_warm_start", "check_warm_prior", "MAX_WARM_START"]

LEAF_ERROR_KINDS = ("random", "bias", "noise")
BACKENDS = ("threads", "ray")
ORACLE_VALUES = ("root_mean", "best_response")
#: Where a subgame of a game with a public deal ends: after it (each dealt card a leaf, where the
#: next searches start; self-play's) or at it (the PBS before the card is the leaf and the next root).
CHANCE_LEAVES = ("after_deal", "at_deal")


@dataclass
class EvalSettings:
    """How the search is built, run and measured (``rebel eval --help`` explains each key)."""

    net: str = "zero"                        # zero, oracle, pretrained:NAME or an exported weights file
    solver: str = "lcfr"                     # rebel.search.solve.SEARCH_SOLVERS; lcfr: linear CFR-D (the paper)
    depth: int = 2
    iterations: int = 1024
    repeats: int = 1024                      # N sampled policies of mode (b)
    threads: int = 2
    seed: int = 0
    oracle_iterations: Optional[int] = None  # default: iterations
    oracle_solver: str = "lcfr"              # the oracle's own tabular solver
    oracle_values: str = "root_mean"         # as the original ReBeL; or best_response
    off_path: str = DEFAULT_OFF_PATH         # zero-reach nodes (CFR solvers, the oracle's too)
    leaf_error: float = 0.0                  # delta of a PerturbedNet around the net (0: none)
    leaf_error_kind: str = "random"          # random, bias or noise (see rebel.PerturbedNet)
    leaf_error_seed: int = 0
    precision: str = EVAL_PRECISION          # an MLP net's kernels: fp32, bf16, int16 or auto
    mode_a: bool = True
    full_game: bool = True                   # the full-game solver's row
    backend: str = "threads"                 # mode (b) on this machine's threads, or ray (see RaySettings)
    policy_net: str = ""                     # a policy-net weights file (rebel train's policy.bin); "": none
    warm_start: int = 0                      # K > 0: every subgame starts from the policy net's policy as if
    #                                          K updates had played it (the paper: 15); needs policy_net
    warm_prior: float = 0.0                  # CFR solvers with warm_start > 0: the regret prior lambda toward
    #                                          the policy net's policy (csrc/solvers/warm_start.cc); 0: none
    chance_leaves: str = "after_deal"        # games with a public deal: subgames end after it or at it

    def check(self) -> None:
        """ValueError naming the first impossible value."""
        for name in ("depth", "iterations", "repeats", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.oracle_iterations is not None and self.oracle_iterations < 1:
            raise ValueError(f"oracle_iterations must be >= 1, got {self.oracle_iterations}")
        for name, names in (("solver", SEARCH_SOLVERS), ("oracle_solver", SOLVERS)):
            if getattr(self, name) not in names:
                raise ValueError(f"unknown {name} {getattr(self, name)!r}; choose one of {', '.join(names)}")
        check_average_leaves_off_path(self.solver, self.off_path)
        if self.oracle_values not in ORACLE_VALUES:
            raise ValueError(f"oracle_values must be one of {', '.join(ORACLE_VALUES)}, got {self.oracle_values!r}")
        check_off_path(self.off_path)
        check_precision(self.precision)
        check_leaf_error(self.leaf_error, self.leaf_error_kind, self.leaf_error_seed)
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.chance_leaves not in CHANCE_LEAVES:
            raise ValueError(f"search.chance_leaves must be one of {', '.join(CHANCE_LEAVES)}, "
                             f"got {self.chance_leaves!r}")
        check_warm_start(self.solver, self.off_path, self.warm_start, "search.warm_start")
        check_warm_prior(self.solver, self.warm_start, self.warm_prior)
        if self.warm_start > 0 and not self.policy_net:
            raise ValueError(f"search.warm_start={self.warm_start} needs a policy net (--policy-net PATH, "
                             "search.policy_net)")
        if self.policy_net and self.warm_start == 0:
            raise ValueError("a policy net is given but search.warm_start is 0, so the search would not use it: "
                             "set search.warm_start=K (the paper's K: 15)")
        if self.warm_start > 0 and self.backend == "ray":
            raise ValueError("search.warm_start > 0 is not supported with backend ray (the actors rebuild the "
                             "search without the policy net); use backend threads")


@dataclass
class RaySettings:
    """Where mode (b) runs with ``backend = "ray"`` (the ``ray`` section of ``rebel eval``)."""

    address: str = ""                        # "": a local Ray; "auto": this machine's cluster; "host:port"
    workers: int = 1                         # actors, each with EvalSettings.threads threads
    num_cpus: Optional[int] = None           # CPUs of a local Ray (default: this machine's)

    def check(self) -> None:
        if self.workers < 1:
            raise ValueError(f"ray workers must be >= 1, got {self.workers}")


#: The largest warm start K the core accepts (csrc/solvers/warm_start.cc).
MAX_WARM_START = 100_000


def check_warm_start(solver: str, off_path: str, warm_start: int, key: str = "warm_start") -> None:
    """ValueError unless ``warm_start`` (K, the updates a policy-net warm start counts) is in
    [0, MAX_WARM_START] and, when > 0, ``solver`` has a warm start: not the CFR-AVG forms (their
    leaves follow the average policy's history), and CFR solvers only with off_path 'skip'."""
    if isinstance(warm_start, bool) or not isinstance(warm_start, int) or not 0 <= warm_start <= MAX_WARM_START:
        raise ValueError(f"{key} must be an int in [0, {MAX_WARM_START}], got {warm_start!r}")
    if warm_start == 0:
        return
    if solver.startswith("cfr-avg"):
        raise ValueError(f"{key}={warm_start}: solver {solver} has no warm start (its leaf values follow the "
                         "average policy's history); use lcfr, another CFR solver or an FP solver")
    if solver not in FP_SOLVERS and off_path != "skip":
        raise ValueError(f"{key}={warm_start}: the warm start of CFR solvers supports off_path 'skip' only, "
                         f"got {off_path!r}")


def check_warm_prior(solver: str, warm_start: int, warm_prior: float, key: str = "search.warm_prior") -> None:
    """ValueError unless ``warm_prior`` (the CFR warm start's regret prior lambda) is a finite
    number >= 0, and, when > 0, there is a warm start (``warm_start`` K > 0) of a CFR solver."""
    if isinstance(warm_prior, bool) or not isinstance(warm_prior, (int, float)) or not math.isfinite(warm_prior) \
            or warm_prior < 0:
        raise ValueError(f"{key} must be a finite number >= 0, got {warm_prior!r}")
    if warm_prior == 0:
        return
    if warm_start == 0:
        raise ValueError(f"{key}={warm_prior} needs a warm start (search.warm_start K > 0)")
    if solver in FP_SOLVERS:
        raise ValueError(f"{key}={warm_prior}: the prior acts on regrets, and solver {solver} has none; "
                         "use a CFR solver or warm_prior 0")


def check_leaf_error(delta: float, kind: str, seed: int) -> None:
    """ValueError unless delta is finite and >= 0, kind is known and seed >= 0."""
    if not math.isfinite(delta) or delta < 0:
        raise ValueError(f"leaf_error must be finite and >= 0, got {delta}")
    if kind not in LEAF_ERROR_KINDS:
        raise ValueError(f"leaf_error_kind must be one of {', '.join(LEAF_ERROR_KINDS)}, got {kind!r}")
    if seed < 0:
        raise ValueError(f"leaf_error_seed must be >= 0, got {seed}")
