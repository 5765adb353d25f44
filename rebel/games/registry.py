"""Building games from Python by name and parameters, and decoding their hands.

The C++ registry (:func:`rebel._core.make_game`) takes a name and a dict of integer
parameters. This module adds keyword-argument and config-dict front ends whose error
messages name the offending key, plus Liar's Dice hand encoding helpers (the ids: faces
0..F-1; what a player reads is :mod:`rebel.games.names`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rebel import _core

Game = _core.Game

__all__ = [
    "game_config",
    "game_from_config",
    "game_names",
    "game_param_defaults",
    "list_games",
    "liars_dice_dice",
    "liars_dice_hand",
    "make",
]


def list_games() -> list[dict[str, Any]]:
    """Registered games: ``[{"name", "summary", "params": {param: default}}]``."""
    return [dict(g) for g in _core.list_games()]


def game_names() -> list[str]:
    """Names of the registered games, sorted."""
    return sorted(g["name"] for g in _core.list_games())


def game_param_defaults(name: str) -> dict[str, int]:
    """Accepted parameters of game ``name`` with their defaults.

    Raises:
        ValueError: ``name`` is not a registered game (the message lists the known ones).
    """
    for g in _core.list_games():
        if g["name"] == name:
            return dict(g["params"])
    raise ValueError(f"unknown game {name!r}; known games: {', '.join(game_names())}")


def make(name: str, **params: int) -> Game:
    """Creates a game, e.g. ``make("liars_dice", num_dice=1, num_faces=4)``.

    Missing parameters take the game's defaults. Unknown games or parameters and
    out-of-range values raise ``ValueError``; non-integer values raise ``TypeError``.
    """
    return game_from_config({"name": name, **params})


def game_from_config(config: Mapping[str, Any]) -> Game:
    """Creates a game from ``{"name": ..., <param>: <int>, ...}``.

    Every key other than ``name`` must be a parameter of that game; unknown keys are
    rejected with a ``ValueError`` that names them and the accepted ones.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"game config must be a mapping, got {type(config).__name__}")
    if "name" not in config:
        raise ValueError("game config has no 'name' key")
    name = config["name"]
    if not isinstance(name, str):
        raise TypeError(f"game name must be a string, got {type(name).__name__}")
    defaults = game_param_defaults(name)
    params = {str(k): v for k, v in config.items() if k != "name"}
    unknown = sorted(k for k in params if k not in defaults)
    if unknown:
        accepted = ", ".join(defaults) if defaults else "(none)"
        raise ValueError(
            f"game {name!r} has no parameter(s) {', '.join(map(repr, unknown))}; accepted: {accepted}"
        )
    for key, value in params.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"game parameter {key!r} must be an int, got {value!r}")
        if not -(2**31) <= value < 2**31:
            raise ValueError(f"game parameter {key!r} = {value} is out of range")
    return _core.make_game(name, params)


def game_config(game: Game) -> dict[str, Any]:
    """The config dict of a game: ``{"name": name, **params}`` (all parameters explicit)."""
    return {"name": game.name, **dict(game.params)}


def liars_dice_dice(hand: int, num_dice: int, num_faces: int) -> tuple[int, ...]:
    """Faces of a Liar's Dice hand id: die ``i`` is ``(hand // num_faces**i) % num_faces``."""
    if num_dice < 1 or num_faces < 2:
        raise ValueError(f"need num_dice >= 1 and num_faces >= 2, got {num_dice}, {num_faces}")
    if not 0 <= hand < num_faces**num_dice:
        raise ValueError(f"hand id {hand} out of range [0, {num_faces ** num_dice})")
    return tuple((hand // num_faces**i) % num_faces for i in range(num_dice))


def liars_dice_hand(dice: Sequence[int], num_faces: int) -> int:
    """Inverse of :func:`liars_dice_dice`: the hand id of an ordered tuple of faces."""
    if not dice:
        raise ValueError("a hand needs at least one die")
    hand = 0
    for i, face in enumerate(dice):
        if not 0 <= face < num_faces:
            raise ValueError(f"die {i} shows {face}, outside [0, {num_faces})")
        hand += face * num_faces**i
    return hand

