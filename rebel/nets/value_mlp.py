"""The ReBeL value network: an MLP from a public-belief-state query row to values per hand.

Input rows follow the layout of ``csrc/core/value_net.h`` (length ``game.query_size``
= 2 + feature_size + 2 * num_hands): acting player, queried player, public features,
normalised beliefs of player 0, normalised beliefs of player 1. The output holds one
value per hand of the queried player (``game.num_hands``).

The same network runs natively (C++, no torch) inside the solvers: :func:`to_native` hands
it over, and :func:`weights_to_bytes` / :func:`weights_from_bytes` / :func:`export_weights` /
:func:`load_weights` convert it to and from the weights file format of :mod:`rebel.nets.weights_io`.
"""
from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple, Union

import numpy as np
import torch
from torch import nn

from rebel.nets.weights_io import payload_from_bytes, weights_from_arrays
from rebel.util.atomic_io import atomic_write_bytes

if TYPE_CHECKING:  # pragma: no cover
    from rebel._core import Game, MlpValueNet


def query_size(game: "Game") -> int:
    """Length of one value-net input row for ``game`` (2 + features + 2 * num_hands)."""
    return int(game.query_size)


class ValueMLP(nn.Module):
    """``layers`` blocks of Linear -> LayerNorm -> GELU (exact erf), then a Linear head.

    Args:
        input_size: length of a query row (``game.query_size``).
        output_size: values per row (``game.num_hands``).
        hidden: width of every hidden block.
        layers: number of hidden blocks (0 gives a plain linear model).
        layer_norm_eps: epsilon of every LayerNorm (torch's default 1e-5).
        value_scale: the unit of the outputs: the head's outputs are multiplied by it, so a
            game whose values run to hundreds of chips (no-limit Leduc) trains a head of
            order one. It is folded into the head when the weights are exported (the weights
            file has no scale; a net read back from one has value_scale 1).
        stake_column: an input column (-1: none) whose value, times ``stake_scale``, multiplies
            every output of its row: the head then predicts values per unit of stake (poker:
            per chip of the pot per player, ``game.stake_feature``), so pots of every size ask
            the same range of it. Kept in the weights file (format version 2).
        stake_scale: see ``stake_column``.
    """

    def __init__(
        self,
        input_size: int,
        output_size: int,
        hidden: int = 256,
        layers: int = 2,
        layer_norm_eps: float = 1e-5,
        value_scale: float = 1.0,
        stake_column: int = -1,
        stake_scale: float = 1.0,
    ) -> None:
        super().__init__()
        for name, value, low in (("input_size", input_size, 1), ("output_size", output_size, 1),
                                 ("hidden", hidden, 1), ("layers", layers, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if not layer_norm_eps > 0:
            raise ValueError(f"layer_norm_eps must be > 0, got {layer_norm_eps!r}")
        if not (isinstance(value_scale, (int, float)) and math.isfinite(value_scale) and value_scale > 0):
            raise ValueError(f"value_scale must be a finite number > 0, got {value_scale!r}")
        self.input_size = input_size
        self.output_size = output_size
        self.hidden = hidden
        self.layers = layers
        self.layer_norm_eps = float(layer_norm_eps)
        self.value_scale = float(value_scale)
        if not (isinstance(stake_column, int) and -1 <= stake_column < input_size):
            raise ValueError(f"stake_column must be -1 or an input column (< {input_size}), got {stake_column!r}")
        if not (isinstance(stake_scale, (int, float)) and math.isfinite(stake_scale) and stake_scale > 0):
            raise ValueError(f"stake_scale must be a finite number > 0, got {stake_scale!r}")
        self.stake_column = stake_column
        self.stake_scale = float(stake_scale)

        blocks: List[nn.Module] = []
        width = input_size
        for _ in range(layers):
            blocks += [nn.Linear(width, hidden), nn.LayerNorm(hidden, eps=layer_norm_eps), nn.GELU()]
            width = hidden
        self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(width, output_size)

    @classmethod
    def for_game(cls, game: "Game", hidden: int = 256, layers: int = 2, value_scale: float = 1.0,
                 stake_relative: bool = False) -> "ValueMLP":
        """A network sized for ``game``'s query rows and hands; ``stake_relative``: its outputs
        are multiplied by the stake of the query's public state (``game.stake_feature``, in
        units of ``value_scale``). ValueError if the game has no stake feature."""
        stake_column, stake_scale = -1, 1.0
        if stake_relative:
            stake = game.stake_feature
            if stake is None:
                raise ValueError(f"{game.description()} has no stake feature for a stake-relative value net "
                                 "(only the poker games have one)")
            stake_column, stake_scale = 2 + int(stake[0]), float(stake[1]) / value_scale
        return cls(query_size(game), int(game.num_hands), hidden=hidden, layers=layers, value_scale=value_scale,
                   stake_column=stake_column, stake_scale=stake_scale)

    def blocks(self) -> List[Tuple[nn.Linear, nn.LayerNorm]]:
        """The (Linear, LayerNorm) pair of every hidden block, input side first."""
        modules = list(self.body)
        return [(modules[i], modules[i + 1]) for i in range(0, len(modules), 3)]  # type: ignore[misc]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: [batch, input_size] -> [batch, output_size], in the game's units."""
        out = self.head(self.body(x))
        if self.stake_column >= 0:
            out = out * (x[:, self.stake_column: self.stake_column + 1] * self.stake_scale)
        return out if self.value_scale == 1.0 else out * self.value_scale


def to_native(model: ValueMLP, game: "Game", isa: str = "auto", precision: str = "fp32") -> "MlpValueNet":
    """A C++ :class:`rebel._core.MlpValueNet` with ``model``'s current weights (no temp file).

    ``precision``: one of :data:`rebel.nets.precision.PRECISIONS`; ``isa``: "auto" or a kernel of that precision.
    Raises ValueError if the model does not fit ``game`` (input size ``game.query_size``,
    output size ``game.num_hands``) or the precision cannot run on this CPU.
    """
    from rebel._core import MlpValueNet

    return MlpValueNet(game, weights_to_bytes(model), isa=isa, precision=precision)


def update_native(net: "MlpValueNet", model: ValueMLP) -> None:
    """Atomically replaces ``net``'s weights with ``model``'s (safe while solvers run)."""
    net.set_weights_bytes(weights_to_bytes(model))


# ------------------------------------------------------------------ weights file conversion

PathLike = Union[str, "os.PathLike[str]"]


def parameters_in_order(model: ValueMLP) -> List[torch.Tensor]:
    """Parameters in file order: per block W, b, LayerNorm weight, bias; then head W, b."""
    tensors: List[torch.Tensor] = []
    for linear, norm in model.blocks():
        tensors += [linear.weight, linear.bias, norm.weight, norm.bias]
    return tensors + [model.head.weight, model.head.bias]


def parameter_arrays(model: ValueMLP) -> List[np.ndarray]:
    """The parameters as flat float32 CPU arrays, in file order (no output scale applied)."""
    with torch.no_grad():
        return [t.detach().to("cpu", torch.float32).contiguous().reshape(-1).numpy()
                for t in parameters_in_order(model)]


def fill_parameters(model: ValueMLP, payload: np.ndarray) -> None:
    """Copies a weights file's flat payload (file order) into ``model``'s parameters."""
    offset = 0
    with torch.no_grad():
        for tensor in parameters_in_order(model):
            n = tensor.numel()
            tensor.copy_(torch.from_numpy(np.ascontiguousarray(payload[offset: offset + n])).reshape(tensor.shape))
            offset += n


def weights_to_bytes(model: ValueMLP, metadata: Optional[Mapping[str, Any]] = None) -> bytes:
    """Serialises ``model`` (any device or dtype; stored as float32); with ``metadata``
    (:func:`rebel.nets.weights_io.net_metadata`: its game and search) as format version 3."""
    if not isinstance(model, ValueMLP):
        raise TypeError(f"model must be a rebel.nets.value_mlp.ValueMLP, got {type(model).__name__}")
    with torch.no_grad():
        arrays = parameter_arrays(model)
        if model.value_scale != 1.0:  # fold the output unit into the head (its W and b)
            arrays[-2] = arrays[-2] * np.float32(model.value_scale)
            arrays[-1] = arrays[-1] * np.float32(model.value_scale)
    return weights_from_arrays(model.input_size, model.output_size, model.hidden, model.layers, arrays,
                               model.layer_norm_eps, model.stake_column, model.stake_scale, metadata)


def weights_from_bytes(data: bytes) -> ValueMLP:
    """Rebuilds a :class:`ValueMLP` (float32, CPU) from serialised weights (ValueError if malformed)."""
    header, payload = payload_from_bytes(data)
    model = ValueMLP(header.input_size, header.output_size, hidden=max(header.hidden_size, 1),
                     layers=header.num_layers, layer_norm_eps=header.layer_norm_eps,
                     stake_column=header.stake_column, stake_scale=header.stake_scale)
    fill_parameters(model, payload)
    return model


def export_weights(model: ValueMLP, path: PathLike, metadata: Optional[Mapping[str, Any]] = None) -> None:
    """Writes ``model``'s weights (and ``metadata``, see :func:`weights_to_bytes`) to ``path``
    atomically (the old file or the new, never a partial one)."""
    atomic_write_bytes(path, weights_to_bytes(model, metadata))


def load_weights(path: PathLike) -> ValueMLP:
    """Reads a weights file back into a :class:`ValueMLP` (ValueError if malformed)."""
    with open(path, "rb") as f:
        return weights_from_bytes(f.read())
