"""The configuration mechanism shared by every command (solve, eval, train).

A command's configuration is a tree of dataclasses (an omegaconf *structured config*).
Layers are merged onto its defaults in order: a YAML file, dotted ``section.key=value``
overrides, then command-line flags. Omegaconf itself rejects unknown keys and values that
do not convert to the declared type; :func:`merge_layers` turns its exceptions into a
:class:`ConfigError` naming the key and the valid ones. A layer that changes ``game.name``
starts from the new game's own defaults (``game.name=kuhn`` drops ``num_dice``).
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TypeVar

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

from rebel.games import Game, game_from_config, game_param_defaults

__all__ = ["ConfigError", "GameSection", "OutputSection", "yaml_layer", "dotlist_layer", "merge_layers", "load_config",
           "valid_keys", "given_settings"]

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration problem the user can fix (unknown key, wrong type, bad value)."""


@dataclass
class GameSection:
    """``name`` plus the game's parameters; a parameter left null takes the game's default."""

    name: str = "liars_dice"
    num_dice: Optional[int] = None   # Liar's Dice: dice per player (default 1)
    num_faces: Optional[int] = None  # Liar's Dice: faces per die (default 4)
    m: Optional[int] = None          # m,n,k game: rows (default 3)
    n: Optional[int] = None          # m,n,k game: columns (default 3)
    k: Optional[int] = None          # m,n,k game: stones in a row to win (default 3)
    stack: Optional[int] = None      # no-limit Leduc: chips each player starts with (default 1200)
    ante: Optional[int] = None       # no-limit Leduc: each player's ante (default 100)
    fold_without_bet: Optional[int] = None  # no-limit Leduc: 1 = fold always offered (DeepStack's tree)

    def as_dict(self) -> dict[str, Any]:
        """``{"name": ..., **params}`` with the game's defaults filled in (ConfigError if the
        game is unknown or a parameter does not apply to it)."""
        try:
            defaults = game_param_defaults(self.name)
        except ValueError as e:
            raise ConfigError(f"game.name: {e}") from None
        params = (("num_dice", self.num_dice), ("num_faces", self.num_faces), ("m", self.m), ("n", self.n),
                  ("k", self.k), ("stack", self.stack), ("ante", self.ante),
                  ("fold_without_bet", self.fold_without_bet))
        given = {key: value for key, value in params if value is not None}
        unknown = [key for key in given if key not in defaults]
        if unknown:
            accepted = ", ".join(["game.name"] + [f"game.{key}" for key in defaults])
            raise ConfigError(f"unknown config key 'game.{unknown[0]}' for game {self.name!r}; accepted: {accepted}")
        return {"name": self.name, **defaults, **given}

    def make(self) -> Game:
        """The game (ConfigError for unknown games and impossible sizes)."""
        try:
            return game_from_config(self.as_dict())
        except (TypeError, ValueError) as e:
            raise ConfigError(f"game: {e}") from None


@dataclass
class OutputSection:
    """Output settings of the one-shot commands (``rebel solve``, ``rebel eval``)."""

    json: bool = False                # print one JSON object instead of a table
    policy_out: Optional[str] = None  # write the resulting policy here (.json or .npz)
    progress: bool = True             # progress bar on stderr (on a terminal)


def valid_keys(schema: type) -> list[str]:
    """Every dotted ``section.key`` of a two-level structured config."""
    tree = OmegaConf.structured(schema)
    return [f"{section}.{key}" for section in tree for key in tree[section]]


def closest_keys_hint(key: str, valid: Sequence[str]) -> str:
    """``did you mean 'trainer.lr'?`` for a mistyped dotted key (the nearest key of its section);
    else the keys of its section, or the sections: never the whole list of keys on one line."""
    section, _, name = key.partition(".")
    same = [k.split(".", 1)[1] for k in valid if k.split(".", 1)[0] == section]
    close = difflib.get_close_matches(name, same, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{section}.{close[0]}'?"
    if same:
        return f"the keys of {section!r}: {', '.join(same)}"
    return f"the sections: {', '.join(dict.fromkeys(k.split('.', 1)[0] for k in valid))}"


def _one_line(e: BaseException) -> str:
    """An exception's message on one line (yaml's span several: problem, context, position)."""
    return " ".join(str(e).split())


def yaml_layer(path: str) -> DictConfig:
    """A YAML file as a layer (ConfigError if missing, unreadable or not a mapping)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {path!r} not found")
    try:
        layer = OmegaConf.load(p)
    except Exception as e:  # yaml errors derive from neither ValueError nor OSError
        raise ConfigError(f"config file {path!r} is not valid YAML: {_one_line(e)}") from None
    if not isinstance(layer, DictConfig):
        raise ConfigError(f"config file {path!r} must hold a mapping of sections")
    return layer


def dotlist_layer(overrides: Sequence[str], example: str = "solver.iterations=256") -> DictConfig:
    """``section.key=value`` overrides as a layer."""
    for item in overrides:
        key = item.split("=", 1)[0]
        if "=" not in item or key.count(".") != 1 or not all(key.split(".")):
            raise ConfigError(f"override {item!r} must look like section.key=value, e.g. {example}")
    try:
        return OmegaConf.from_dotlist(list(overrides))
    except Exception as e:
        raise ConfigError(f"cannot parse overrides {list(overrides)}: {_one_line(e)}") from None


def _describe(e: OmegaConfBaseException, schema: type) -> str:
    key = str(getattr(e, "full_key", "") or "")
    first = str(e).splitlines()[0]
    if isinstance(e, ConfigKeyError) or "not in struct" in first:
        if key and "." not in key:
            sections = ", ".join(OmegaConf.structured(schema).keys())
            return f"unknown config section(s) {key!r}; accepted: {sections}"
        return f"unknown config key {key!r}; {closest_keys_hint(key, valid_keys(schema))}"
    return f"bad value for {key!r}: {first}" if key else first


def merge_layers(schema: type[T], layers: Sequence[tuple[str, Any]]) -> T:
    """Merges ``(where, layer)`` pairs (DictConfig or plain nested dicts) onto the defaults
    of ``schema`` and returns the resulting dataclass instance."""
    cfg = OmegaConf.structured(schema)
    for where, layer in layers:
        if isinstance(layer, Mapping) and not isinstance(layer, DictConfig):
            layer = OmegaConf.create(dict(layer))
        try:
            game = layer.get("game") if isinstance(layer, DictConfig) else None
            if (isinstance(game, Mapping) and "name" in game and "game" in cfg and game["name"] != cfg.game.name
                    and OmegaConf.get_type(cfg, "game") is GameSection):
                cfg.game = OmegaConf.structured(GameSection)  # a new game starts from its own defaults
            cfg = OmegaConf.merge(cfg, layer)
        except OmegaConfBaseException as e:
            raise ConfigError(f"{where}: {_describe(e, schema)}") from None
    try:  # resolves ${...} interpolations: a missing key or a wrong type shows only here
        return OmegaConf.to_object(cfg)  # type: ignore[return-value]
    except OmegaConfBaseException as e:
        raise ConfigError(f"configuration: {_describe(e, schema)}") from None


def load_config(schema: type[T], config_file: Optional[str] = None, overrides: Sequence[str] = (),
                flags: Optional[Mapping[str, Any]] = None, example: str = "solver.iterations=256",
                base: Optional[tuple[str, Mapping[str, Any]]] = None) -> T:
    """Defaults of ``schema`` < ``base`` (``(where, nested dict)``: e.g. a net's own game) <
    ``config_file`` < dotted ``overrides`` < ``flags`` (a nested dict of the command-line flags
    that were given). The game section, if any, is checked by building the game."""
    layers: list[tuple[str, Any]] = [base] if base else []
    if config_file:
        layers.append((f"config file {config_file!r}", yaml_layer(config_file)))
    flag_game = (flags or {}).get("game") or {}
    if "name" in flag_game:
        # --game names the game that the dotted game.* overrides then change (applied after it,
        # as they would be without --game); a game.name override that disagrees is a mistake
        layers.append(("command line", {"game": {"name": flag_game["name"]}}))
    if overrides:
        override_layer = dotlist_layer(overrides, example)
        named = _unresolved(override_layer).get("game", {}).get("name")
        if "name" in flag_game and named is not None and named != flag_game["name"]:
            raise ConfigError(f"--game {flag_game['name']} and the override game.name={named} disagree; give one")
        layers.append(("overrides", override_layer))
    if flags:
        layers.append(("command line", dict(flags)))
    config = merge_layers(schema, layers)
    game = getattr(config, "game", None)
    if isinstance(game, GameSection):
        game.make()
    return config


def _unresolved(layer: Any) -> dict[str, Any]:
    """A layer as plain nested dicts, ``${...}`` interpolations left as written (they resolve,
    or fail with a ConfigError, only when the layers are merged)."""
    if isinstance(layer, DictConfig):
        return OmegaConf.to_container(layer, resolve=False)  # type: ignore[return-value]
    return dict(layer)


def given_settings(config_file: Optional[str] = None, overrides: Sequence[str] = (),
                   flags: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The dotted ``section.key`` settings a user gave in a config file, overrides or flags (the
    layers :func:`load_config` merges, the later winning), unchecked: the settings a net's own
    must not replace, read before the configuration is resolved."""
    given: dict[str, Any] = {}
    layers: list[Any] = [yaml_layer(config_file)] if config_file else []
    layers += [dotlist_layer(overrides)] if overrides else []
    layers += [dict(flags)] if flags else []
    for layer in layers:
        for section, values in _unresolved(layer).items():
            if isinstance(values, Mapping):
                given.update((f"{section}.{key}", value) for key, value in values.items())
    return given


def from_yaml_text(schema: type[T], text: str, overrides: Sequence[str] = (), example: str = "run.epochs=40") -> T:
    """A configuration saved by :func:`to_yaml` (of ``schema``), then ``overrides``."""
    try:
        layer = OmegaConf.create(text)
    except Exception as e:
        raise ConfigError(f"not a valid configuration: {e}") from None
    layers: list[tuple[str, Any]] = [("saved configuration", layer)]
    if overrides:
        layers.append(("overrides", dotlist_layer(overrides, example)))
    return merge_layers(schema, layers)


def to_yaml(config: Any) -> str:
    """A configuration object as YAML text."""
    return OmegaConf.to_yaml(OmegaConf.structured(config))
