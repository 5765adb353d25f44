"""Games: building a registered game by name and parameters, and naming its hands.

The rules themselves live in the C++ core (csrc/games/); :mod:`rebel.games.registry` is the
Python front end to its registry.
"""
from rebel.games.registry import (  # noqa: F401  (the layer's API)
    Game,
    game_config,
    game_from_config,
    game_names,
    game_param_defaults,
    hand_label,
    liars_dice_dice,
    liars_dice_hand,
    list_games,
    make,
)

__all__ = ["Game", "game_config", "game_from_config", "game_names", "game_param_defaults", "hand_label",
           "liars_dice_dice", "liars_dice_hand", "list_games", "make"]
