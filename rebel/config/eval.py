"""Configuration of ``rebel eval``: built-in defaults, an optional YAML file, dotted
``key=value`` overrides and command-line flags, merged by :mod:`rebel.config` (the
mechanism ``rebel solve`` and ``rebel train`` use).

Sections: ``game`` (as everywhere), ``search`` (the keys of
:class:`rebel.evaluate.EvalSettings`: net, solver, depth, iterations, repeats, threads,
seed, oracle_iterations, oracle_solver, oracle_values, off_path, leaf_error, leaf_error_kind,
leaf_error_seed, precision, mode_a, backend), ``ray`` (address, workers, num_cpus: with
``search.backend=ray``) and ``output`` (json, policy_out, progress).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from rebel.config import common as shared
from rebel.config.common import ConfigError, GameSection, OutputSection
from rebel.precision import EVAL_PRECISION
from rebel.solve import DEFAULT_OFF_PATH

__all__ = ["ConfigError", "EvalConfig", "load_eval_config"]


@dataclass
class EvalSearchSection:
    net: str = "zero"                        # zero, oracle or an exported weights file
    solver: str = "lcfr"                     # as in rebel solve; lcfr = linear CFR-D (the paper's)
    depth: int = 2
    iterations: int = 1024
    repeats: int = 1024                      # N sampled policies of mode (b)
    threads: int = 2
    seed: int = 0
    oracle_iterations: Optional[int] = None  # default: iterations
    oracle_solver: str = "lcfr"
    oracle_values: str = "root_mean"
    off_path: str = DEFAULT_OFF_PATH
    leaf_error: float = 0.0                  # delta of a PerturbedNet around the net (0: none)
    leaf_error_kind: str = "random"          # random, bias or noise
    leaf_error_seed: int = 0
    precision: str = EVAL_PRECISION          # an MLP net's kernels: fp32, bf16, int16 or auto
    mode_a: bool = True
    backend: str = "threads"                 # mode (b) on this machine's threads, or ray (see the ray section)


@dataclass
class EvalRaySection:
    address: str = ""                        # "": a local Ray; "auto": this machine's cluster; "host:port"
    workers: int = 1                         # actors, each with search.threads threads
    num_cpus: Optional[int] = None           # CPUs of a local Ray (default: this machine's)


@dataclass
class EvalConfig:
    game: GameSection = field(default_factory=GameSection)
    search: EvalSearchSection = field(default_factory=EvalSearchSection)
    output: OutputSection = field(default_factory=OutputSection)
    ray: EvalRaySection = field(default_factory=EvalRaySection)


def load_eval_config(config_file: Optional[str] = None, overrides: Sequence[str] = (),
                     flags: Optional[Mapping[str, Any]] = None) -> EvalConfig:
    """Resolves defaults < ``config_file`` < ``overrides`` < ``flags`` (a nested dict)."""
    return shared.load_config(EvalConfig, config_file, overrides, flags, example="search.iterations=256")
