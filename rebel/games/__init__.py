"""Games: building a registered game by name and parameters, and naming its hands.

The rules themselves live in the C++ core (csrc/games/); :mod:`rebel.games.registry` is the
Python front end to its registry; :mod:`rebel.games.names` gives the labels a player reads
(Liar's Dice faces 1..F with the wild face marked), one entry per game that needs them;
:mod:`rebel.games.units` converts our poker figures to published conventions.
"""
from rebel.games.names import action_label, action_spellings, hand_label, rules_note  # noqa: F401
from rebel.games.registry import (  # noqa: F401  (the layer's API)
    Game,
    game_config,
    game_from_config,
    game_names,
    game_param_defaults,
    liars_dice_dice,
    liars_dice_hand,
    list_games,
    make,
)

__all__ = ["Game", "action_label", "action_spellings", "game_config", "game_from_config", "game_names",
           "game_param_defaults", "hand_label", "liars_dice_dice", "liars_dice_hand", "list_games", "make",
           "rules_note"]
