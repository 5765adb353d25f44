"""A value net at river public belief states of hold'em endgames (issue 93): both players'
beliefs over the 1,326 hands in, both players' values per hand out.

Input row (float32, :data:`RIVER_INPUT_SIZE`): the five board cards one-hot (52), the stack to
pot ratio as ``log1p(spr)`` and ``1 / (1 + spr)`` (values are in units of the pot, so the pot
itself is not a feature), then each player's normalised beliefs (2 x 1,326, ``COMBOS`` order).
Output (2, 1,326): each hand's value in pot units given the opponent's normalised beliefs, the
targets of :mod:`rebel.train.holdem_river_data`; the net's raw output is multiplied by the live
hands' mask, so hands the board blocks read exactly 0.

Suit symmetry: permuting the four suits of a river PBS (board, both beliefs) permutes its
values the same way; :func:`permute_suits` applies one of the 24 permutations to a batch, for
augmentation.
"""
from __future__ import annotations

import itertools

import numpy as np
import torch
from torch import nn

from rebel.games.holdem_ranges import COMBOS, NUM_COMBOS, combo_index
from rebel.nets.value_mlp import ValueMLP

__all__ = ["RIVER_FEATURES", "RIVER_INPUT_SIZE", "RIVER_OUTPUT_SHAPE", "RiverValueNet", "SUIT_PERMUTATIONS",
           "permute_suits", "river_inputs"]

RIVER_FEATURES = 52 + 2
RIVER_INPUT_SIZE = RIVER_FEATURES + 2 * NUM_COMBOS
RIVER_OUTPUT_SHAPE = (2, NUM_COMBOS)

#: The 24 permutations of the suits (c, d, h, s).
SUIT_PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(4)))


def _combo_maps() -> tuple[np.ndarray, np.ndarray]:
    cards = np.zeros((24, 52), dtype=np.int64)
    combos = np.zeros((24, NUM_COMBOS), dtype=np.int64)
    for k, perm in enumerate(SUIT_PERMUTATIONS):
        cards[k] = [(c // 4) * 4 + perm[c % 4] for c in range(52)]
        combos[k] = [combo_index(int(cards[k, a]), int(cards[k, b])) for a, b in COMBOS]
    return cards, combos


_CARD_MAP, _COMBO_MAP = _combo_maps()


def permute_suits(board: np.ndarray, beliefs: np.ndarray, values: np.ndarray | None,
                  which: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Row i's board, beliefs and values with the suits permuted by ``SUIT_PERMUTATIONS[which[i]]``:
    board (n, 5) card numbers, beliefs and values (n, 2, 1,326) (values may be None)."""
    which = np.asarray(which, dtype=np.int64)
    new_board = _CARD_MAP[which[:, None], board.astype(np.int64)]
    dest = _COMBO_MAP[which]  # (n, 1,326): where each hand goes
    rows = np.arange(len(which))[:, None]

    def move(a: np.ndarray) -> np.ndarray:
        out = np.empty_like(a)
        for p in (0, 1):
            out[rows, p, dest] = a[:, p, :]
        return out

    return new_board, move(beliefs), None if values is None else move(values)


def river_inputs(board: np.ndarray, pot: np.ndarray, stack: np.ndarray, beliefs: np.ndarray) -> np.ndarray:
    """Input rows (n, :data:`RIVER_INPUT_SIZE`) float32 from boards (n, 5), pots and stacks (n,)
    and beliefs (n, 2, 1,326) (normalised per player here)."""
    n = len(board)
    x = np.zeros((n, RIVER_INPUT_SIZE), dtype=np.float32)
    np.put_along_axis(x[:, :52], board.astype(np.int64), 1.0, axis=1)
    spr = np.asarray(stack, dtype=np.float64) / np.asarray(pot, dtype=np.float64)
    x[:, 52] = np.log1p(spr)
    x[:, 53] = 1.0 / (1.0 + spr)
    b = np.asarray(beliefs, dtype=np.float64)
    x[:, RIVER_FEATURES:] = (b / b.sum(axis=2, keepdims=True)).reshape(n, 2 * NUM_COMBOS)
    return x


class RiverValueNet(nn.Module):
    """:class:`ValueMLP` blocks (Linear, LayerNorm, GELU) from an input row to (2, 1,326) values
    in pot units, zero on the hands the row's board blocks."""

    def __init__(self, hidden: int = 512, layers: int = 3) -> None:
        super().__init__()
        self.mlp = ValueMLP(RIVER_INPUT_SIZE, 2 * NUM_COMBOS, hidden=hidden, layers=layers)
        self.register_buffer("card1", torch.from_numpy(COMBOS[:, 0].astype(np.int64)), persistent=False)
        self.register_buffer("card2", torch.from_numpy(COMBOS[:, 1].astype(np.int64)), persistent=False)

    def live(self, x: torch.Tensor) -> torch.Tensor:
        """(n, 1,326) 1.0 where no board card of the row blocks the hand, else 0.0."""
        board = x[:, :52]
        card1, card2 = self.card1, self.card2
        assert isinstance(card1, torch.Tensor) and isinstance(card2, torch.Tensor)
        return 1.0 - torch.clamp(board[:, card1] + board[:, card2], max=1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (n, :data:`RIVER_INPUT_SIZE`) -> (n, 2, 1,326) values in pot units."""
        if x.dim() != 2 or x.shape[1] != RIVER_INPUT_SIZE:
            raise ValueError(f"river net input must have shape (n, {RIVER_INPUT_SIZE}), got {tuple(x.shape)}")
        out = self.mlp(x).view(-1, 2, NUM_COMBOS)
        return out * self.live(x)[:, None, :]
