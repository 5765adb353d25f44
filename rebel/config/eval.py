"""Configuration of ``rebel eval``: built-in defaults, an optional YAML file, dotted
``key=value`` overrides and command-line flags, merged by :mod:`rebel.config` (the
mechanism ``rebel solve`` and ``rebel train`` use).

Sections: ``game`` (as everywhere), ``search`` (:class:`rebel.search.settings.EvalSettings`,
the same type the Python API takes: net, solver, depth, iterations, repeats, threads, seed,
oracle_iterations, oracle_solver, oracle_values, off_path, leaf_error, leaf_error_kind,
leaf_error_seed, precision, mode_a, full_game, backend, policy_net, warm_start, warm_prior,
chance_leaves), ``ray``
(:class:`rebel.search.settings.RaySettings`: address, workers, num_cpus, with
``search.backend=ray``) and ``output`` (json, policy_out, progress).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from rebel.config import common as shared
from rebel.config.common import ConfigError, GameSection, OutputSection
from rebel.search.settings import EvalSettings, RaySettings

__all__ = ["ConfigError", "EvalConfig", "load_eval_config"]


@dataclass
class EvalConfig:
    game: GameSection = field(default_factory=GameSection)
    search: EvalSettings = field(default_factory=EvalSettings)
    output: OutputSection = field(default_factory=OutputSection)
    ray: RaySettings = field(default_factory=RaySettings)


def load_eval_config(config_file: Optional[str] = None, overrides: Sequence[str] = (),
                     flags: Optional[Mapping[str, Any]] = None,
                     base: Optional[tuple[str, Mapping[str, Any]]] = None) -> EvalConfig:
    """Resolves defaults < ``base`` < ``config_file`` < ``overrides`` < ``flags`` (nested dicts)."""
    return shared.load_config(EvalConfig, config_file, overrides, flags, example="search.iterations=256", base=base)
