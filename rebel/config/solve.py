"""Configuration of ``rebel solve``: built-in defaults, an optional YAML file, dotted
``key=value`` overrides and command-line flags, applied in that order by the mechanism of
:mod:`rebel.config` (shared with ``rebel train``).

The file ``configs/solve.yaml`` holds the same defaults as :data:`DEFAULTS`. Sections:

* ``game``: ``name`` plus that game's integer parameters. A layer that changes the game's
  name starts from that game's own defaults, so ``game.name=kuhn`` does not inherit
  ``num_dice`` from Liar's Dice.
* ``solver``: ``name``, ``iterations``, ``optimistic``, ``dcfr_alpha``, ``dcfr_beta``,
  ``dcfr_gamma``, ``off_path`` (skip, floor or conditional; CFR solvers only).
* ``output``: ``json``, ``policy_out``, ``progress``.

Unknown sections or keys and values of the wrong type are rejected with
:class:`ConfigError` naming them.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from rebel.config import common as shared
from rebel.config.common import ConfigError, GameSection, OutputSection
from rebel.search.solve import DEFAULT_OFF_PATH, OFF_PATH_MODES

__all__ = ["ConfigError", "DEFAULTS", "SolveConfig", "load_solve_config"]


@dataclass
class SolverSection:
    name: str = "lcfr"
    iterations: int = 1024
    optimistic: bool = False
    dcfr_alpha: float = 1.5
    dcfr_beta: float = 0.0
    dcfr_gamma: float = 2.0
    off_path: str = DEFAULT_OFF_PATH


@dataclass
class SolveConfig:
    """The resolved configuration of one ``rebel solve`` run."""

    game: GameSection = field(default_factory=GameSection)
    solver: SolverSection = field(default_factory=SolverSection)
    output: OutputSection = field(default_factory=OutputSection)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict, with the game's parameters explicit."""
        return {**asdict(self), "game": self.game.as_dict()}


DEFAULTS: dict[str, Any] = SolveConfig().to_dict()


def load_solve_config(
    config_file: Optional[str] = None,
    overrides: Sequence[str] = (),
    flags: Optional[Mapping[str, Any]] = None,
) -> SolveConfig:
    """Resolves defaults < ``config_file`` < dotted ``overrides`` < ``flags`` (a nested dict).

    The game section is checked by building the game, so unknown games, unknown parameters
    and out-of-range values (e.g. ``num_dice: 0``) surface here as :class:`ConfigError`.
    """
    cfg = shared.load_config(SolveConfig, config_file, overrides, flags)
    if cfg.solver.off_path not in OFF_PATH_MODES:
        raise ConfigError(f"solver.off_path must be one of {', '.join(OFF_PATH_MODES)}, got {cfg.solver.off_path!r}")
    return cfg
