"""Units of published poker figures, so ours can be reported beside them.

Our exploitability is (BR_0 + BR_1) / 2 in the game's chips per hand, with the private deal's
true probabilities (OpenSpiel's NashConv / 2). DeepStack-Leduc's tree evaluation
(Source/Tree/tree_values.lua) starts both players from ranges of 1/6 per card and does not
renormalise for the two cards' removal, so every figure it prints carries the deal's pair
mass 30/36 = 5/6: its "a bit over 175 chips" for the uniform-random strategy is our 210.625
times 5/6 = 175.52 on its tree, where fold is offered at every decision
(``leduc_nolimit(fold_without_bet=1)``; tests/games/test_leduc_solvers.py reproduces it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from rebel._core import Game

#: DeepStack-Leduc chips per our chip of exploitability (the pair mass of its 1/6 ranges).
DEEPSTACK_LEDUC_SCALE = 30.0 / 36.0


def deepstack_leduc_chips(exploitability: float) -> float:
    """Our no-limit Leduc exploitability (chips per hand) in DeepStack-Leduc's convention."""
    return exploitability * DEEPSTACK_LEDUC_SCALE


def value_unit(game: "Game") -> float:
    """The natural unit of ``game``'s values, the value net's output unit by default: the ante
    of no-limit Leduc (its values run to the 1,200-chip stacks), 1 for every other game (whose
    values are a few units at most)."""
    if game.name == "leduc_nolimit":
        return float(game.params["ante"])
    return 1.0
