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
from rebel.search.solve import DEFAULT_OFF_PATH, SEARCH_SOLVERS, SOLVERS, check_average_leaves_off_path, check_off_path

__all__ = ["EvalSettings", "RaySettings", "LEAF_ERROR_KINDS", "BACKENDS", "ORACLE_VALUES", "check_leaf_error"]

LEAF_ERROR_KINDS = ("random", "bias", "noise")
BACKENDS = ("threads", "ray")
ORACLE_VALUES = ("root_mean", "best_response")


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


@dataclass
class RaySettings:
    """Where mode (b) runs with ``backend = "ray"`` (the ``ray`` section of ``rebel eval``)."""

    address: str = ""                        # "": a local Ray; "auto": this machine's cluster; "host:port"
    workers: int = 1                         # actors, each with EvalSettings.threads threads
    num_cpus: Optional[int] = None           # CPUs of a local Ray (default: this machine's)

    def check(self) -> None:
        if self.workers < 1:
            raise ValueError(f"ray workers must be >= 1, got {self.workers}")


def check_leaf_error(delta: float, kind: str, seed: int) -> None:
    """ValueError unless delta is finite and >= 0, kind is known and seed >= 0."""
    if not math.isfinite(delta) or delta < 0:
        raise ValueError(f"leaf_error must be finite and >= 0, got {delta}")
    if kind not in LEAF_ERROR_KINDS:
        raise ValueError(f"leaf_error_kind must be one of {', '.join(LEAF_ERROR_KINDS)}, got {kind!r}")
    if seed < 0:
        raise ValueError(f"leaf_error_seed must be >= 0, got {seed}")
