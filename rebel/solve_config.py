"""Configuration of ``rebel solve``: built-in defaults, an optional YAML file (omegaconf),
dotted ``key=value`` overrides and command-line flags, applied in that order.

The file ``configs/solve.yaml`` holds the same defaults as :data:`DEFAULTS`. Sections:

* ``game``: ``name`` plus that game's integer parameters. A layer that changes the game's
  name starts from that game's own defaults, so ``game.name=kuhn`` does not inherit
  ``num_dice`` from Liar's Dice.
* ``solver``: ``name``, ``iterations``, ``optimistic``, ``dcfr_alpha``, ``dcfr_beta``,
  ``dcfr_gamma``, ``off_path`` (skip, floor or conditional; CFR solvers only).
* ``output``: ``json``, ``policy_out``, ``progress``.

Unknown sections or keys are rejected with :class:`ConfigError` naming them.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rebel.games import game_from_config, game_param_defaults
from rebel.solve import DEFAULT_OFF_PATH, OFF_PATH_MODES

__all__ = ["ConfigError", "DEFAULTS", "SolveConfig", "load_solve_config"]


class ConfigError(ValueError):
    """A configuration problem the user can fix (unknown key, wrong type, bad value)."""


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
class OutputSection:
    json: bool = False
    policy_out: Optional[str] = None
    progress: bool = True


@dataclass
class SolveConfig:
    """The resolved configuration of one ``rebel solve`` run."""

    game: dict[str, Any] = field(default_factory=lambda: {"name": "liars_dice", "num_dice": 1, "num_faces": 4})
    solver: SolverSection = field(default_factory=SolverSection)
    output: OutputSection = field(default_factory=OutputSection)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULTS: dict[str, Any] = SolveConfig().to_dict()
_SECTIONS = {"solver": SolverSection, "output": OutputSection}


def _layer_from_file(path: str) -> dict[str, Any]:
    try:
        layer = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except FileNotFoundError:
        raise ConfigError(f"config file {path!r} not found") from None
    except (OmegaConfBaseException, OSError, ValueError) as e:  # yaml errors are ValueErrors here too
        raise ConfigError(f"cannot read config file {path!r}: {e}") from None
    except Exception as e:  # yaml.YAMLError does not derive from ValueError
        raise ConfigError(f"config file {path!r} is not valid YAML: {e}") from None
    if layer is None:
        return {}
    if not isinstance(layer, dict):
        raise ConfigError(f"config file {path!r} must hold a mapping of sections, got {type(layer).__name__}")
    return layer


def _layer_from_overrides(overrides: Sequence[str]) -> dict[str, Any]:
    for item in overrides:
        key = item.split("=", 1)[0]
        if "=" not in item or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"override {item!r} must look like section.key=value, e.g. solver.iterations=256")
    try:
        return OmegaConf.to_container(OmegaConf.from_dotlist(list(overrides)), resolve=True)  # type: ignore[return-value]
    except Exception as e:
        raise ConfigError(f"cannot parse overrides {list(overrides)}: {e}") from None


def _apply_game(game: dict[str, Any], layer: Any, where: str) -> dict[str, Any]:
    if not isinstance(layer, Mapping):
        raise ConfigError(f"{where}: 'game' must be a mapping with a 'name' and the game's parameters")
    name = layer.get("name", game["name"])
    if not isinstance(name, str):
        raise ConfigError(f"{where}: game.name must be a string, got {name!r}")
    if name != game["name"]:
        try:
            game = {"name": name, **game_param_defaults(name)}
        except ValueError as e:
            raise ConfigError(f"{where}: {e}") from None
    accepted = game_param_defaults(name)
    for key, value in layer.items():
        if key == "name":
            continue
        if key not in accepted:
            known = ", ".join(["game.name"] + [f"game.{k}" for k in accepted])
            raise ConfigError(f"{where}: unknown config key 'game.{key}' for game {name!r}; accepted: {known}")
        game[key] = value
    return game


def _apply_section(current: Any, section: str, layer: Any, where: str) -> Any:
    schema = _SECTIONS[section]
    if not isinstance(layer, Mapping):
        raise ConfigError(f"{where}: '{section}' must be a mapping")
    known = list(schema.__dataclass_fields__)
    for key in layer:
        if key not in known:
            raise ConfigError(f"{where}: unknown config key '{section}.{key}'; accepted: "
                              + ", ".join(f"{section}.{k}" for k in known))
    try:
        merged = OmegaConf.merge(OmegaConf.structured(current), dict(layer))
    except OmegaConfBaseException as e:
        first_line = str(e).splitlines()[0]
        raise ConfigError(f"{where}: bad value in section '{section}': {first_line}") from None
    return OmegaConf.to_object(merged)


def _apply_layer(cfg: SolveConfig, layer: Mapping[str, Any], where: str) -> SolveConfig:
    unknown = [k for k in layer if k not in ("game", "solver", "output")]
    if unknown:
        raise ConfigError(f"{where}: unknown config section(s) {', '.join(map(repr, unknown))}; "
                          "accepted: game, solver, output")
    if "game" in layer:
        cfg.game = _apply_game(dict(cfg.game), layer["game"], where)
    for section in _SECTIONS:
        if section in layer:
            setattr(cfg, section, _apply_section(getattr(cfg, section), section, layer[section], where))
    return cfg


def load_solve_config(
    config_file: Optional[str] = None,
    overrides: Sequence[str] = (),
    flags: Optional[Mapping[str, Any]] = None,
) -> SolveConfig:
    """Resolves defaults < ``config_file`` < dotted ``overrides`` < ``flags`` (a nested dict).

    The game section is checked by building the game, so unknown games, unknown parameters
    and out-of-range values (e.g. ``num_dice: 0``) surface here as :class:`ConfigError`.
    """
    cfg = SolveConfig()
    layers: list[tuple[str, Mapping[str, Any]]] = []
    if config_file:
        layers.append((f"config file {config_file!r}", _layer_from_file(config_file)))
    if overrides:
        layers.append(("overrides", _layer_from_overrides(overrides)))
    if flags:
        layers.append(("command line", flags))
    for where, layer in layers:
        cfg = _apply_layer(cfg, layer, where)
    try:
        game_from_config(cfg.game)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None
    if cfg.solver.off_path not in OFF_PATH_MODES:
        raise ConfigError(f"solver.off_path must be one of {', '.join(OFF_PATH_MODES)}, got {cfg.solver.off_path!r}")
    return cfg
