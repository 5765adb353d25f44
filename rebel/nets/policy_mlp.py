"""The ReBeL policy network (Algorithm 1's second net): an MLP from a PBS query row to a
policy per hand of the acting player.

Input rows are the value net's query rows (``csrc/core/value_net.h``, length
``game.query_size``; row[1] names the acting player). The output holds
``num_hands * num_actions`` logits laid out ``[hand][action]``; the policy of a hand is the
softmax of its logits over the legal actions of the public state (illegal actions get
exactly 0). The body is :class:`rebel.nets.value_mlp.ValueMLP`'s (Linear -> LayerNorm ->
GELU blocks, then a linear head), and the weights file is the value net's format
(``docs/weights_format.md``) with output size ``num_hands * num_actions``: what the native
:class:`rebel._core.MlpPolicyNet` loads (:func:`to_native_policy`).

Training target (the paper's D_pi): at each node of a solved subgame where a player acts,
the subgame's average policy per hand of that player. :func:`policy_loss` is the cross
entropy of that target under the masked softmax, weighted per hand by the actor's beliefs.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

import numpy as np
import torch

from rebel.nets.value_mlp import ValueMLP, fill_parameters, parameter_arrays, query_size
from rebel.nets.weights_io import check_policy_shape, payload_from_bytes, read_header, weights_from_arrays
from rebel.util.atomic_io import atomic_write_bytes

if TYPE_CHECKING:  # pragma: no cover
    from rebel._core import Game, MlpPolicyNet

__all__ = ["PolicyMLP", "masked_log_softmax", "policy_probabilities", "policy_loss", "policy_loss_references",
           "policy_weights_to_bytes", "policy_weights_from_bytes", "export_policy_weights", "load_policy_weights",
           "check_policy_shape",
           "to_native_policy", "update_native_policy"]

PathLike = Union[str, "os.PathLike[str]"]


class PolicyMLP(ValueMLP):
    """The value MLP's body with a head of ``num_hands * num_actions`` logits.

    Args:
        input_size: length of a query row (``game.query_size``).
        num_hands: hands of a player (``game.num_hands``).
        num_actions: actions of the game (``game.num_actions``).
        hidden: width of every hidden block.
        layers: number of hidden blocks (0 gives a plain linear model).
        layer_norm_eps: epsilon of every LayerNorm.

    :meth:`forward` returns the logits as ``[batch, num_hands, num_actions]``.
    """

    def __init__(self, input_size: int, num_hands: int, num_actions: int, hidden: int = 256, layers: int = 2,
                 layer_norm_eps: float = 1e-5) -> None:
        for name, value in (("num_hands", num_hands), ("num_actions", num_actions)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        super().__init__(input_size, num_hands * num_actions, hidden=hidden, layers=layers,
                         layer_norm_eps=layer_norm_eps)
        self.num_hands = num_hands
        self.num_actions = num_actions

    @classmethod
    def for_game(cls, game: "Game", hidden: int = 256, layers: int = 2,
                 value_scale: float = 1.0, stake_relative: bool = False) -> "PolicyMLP":
        """A policy network sized for ``game``'s query rows, hands and actions (``value_scale``
        and ``stake_relative`` are accepted for the signature's sake and must keep their
        defaults: logits have no unit)."""
        if value_scale != 1.0:
            raise ValueError("a policy net has no value scale (its outputs are logits)")
        if stake_relative:
            raise ValueError("a policy net has no stake-relative output (its outputs are logits)")
        return cls(query_size(game), int(game.num_hands), int(game.num_actions), hidden=hidden, layers=layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: [batch, input_size] -> logits [batch, num_hands, num_actions]."""
        return self.head(self.body(x)).reshape(x.shape[0], self.num_hands, self.num_actions)


def masked_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Log-softmax of ``logits`` [B, H, A] over the legal actions ``legal`` [B, A] (bool).

    Illegal actions get -inf (probability exactly 0). Every row needs a legal action.
    """
    if logits.ndim != 3 or legal.shape != (logits.shape[0], logits.shape[2]):
        raise ValueError(f"logits {tuple(logits.shape)} and legal {tuple(legal.shape)} do not fit [B, H, A], [B, A]")
    mask = legal.to(torch.bool)
    if not bool(mask.any(dim=1).all()):
        raise ValueError("masked_log_softmax: a row has no legal action")
    masked = logits.masked_fill(~mask[:, None, :], float("-inf"))
    return torch.log_softmax(masked, dim=2)


def policy_probabilities(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The masked softmax: policies [B, H, A], 0 on illegal actions, each hand's row summing to 1."""
    return masked_log_softmax(logits, legal).exp()


def policy_loss(logits: torch.Tensor, targets: torch.Tensor, legal: torch.Tensor,
                weights: torch.Tensor) -> torch.Tensor:
    """Cross entropy of the target policies under the masked softmax, weighted per hand.

    ``loss = sum_{b,h} w[b,h] * (-sum_{a legal} t[b,h,a] log p[b,h,a]) / sum_{b,h} w[b,h]``
    with ``p`` = :func:`policy_probabilities`. ``targets`` [B, H, A] (0 on illegal actions),
    ``legal`` [B, A], ``weights`` [B, H] >= 0: the actor's beliefs, so hands that do not reach
    the node do not count. Its minimum over the logits is the weighted entropy of the targets,
    reached at ``logits = log targets`` (the KL divergence is then 0).
    """
    if targets.shape != logits.shape or weights.shape != logits.shape[:2]:
        raise ValueError(f"policy_loss: logits {tuple(logits.shape)}, targets {tuple(targets.shape)} and weights "
                         f"{tuple(weights.shape)} do not fit [B, H, A], [B, H, A], [B, H]")
    log_p = masked_log_softmax(logits, legal)
    mask = legal.to(torch.bool)[:, None, :].expand_as(log_p)
    # 0 * log p where the target or the action's legality is 0 (no -inf * 0 = nan).
    terms = torch.where(mask & (targets > 0), targets * log_p, torch.zeros_like(log_p))
    per_hand = -terms.sum(dim=2)
    total = weights.sum()
    return (weights * per_hand).sum() / total.clamp_min(torch.finfo(per_hand.dtype).tiny)


def policy_loss_references(targets: np.ndarray, legal: np.ndarray, weights: np.ndarray) -> dict[str, float]:
    """Two reference values of :func:`policy_loss` on a set of D_pi nodes (numpy, [n, H, A],
    [n, A], [n, H]): ``target_entropy``, the loss of a perfect net (the targets' weighted
    entropy, its minimum), and ``uniform``, the loss of the uniform policy over the legal
    actions (the weighted mean of log(#legal))."""
    t, w = np.asarray(targets, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0).sum(axis=2)
    uniform = np.log(np.asarray(legal).sum(axis=1))[:, None] * np.ones_like(w)
    total = w.sum()
    return {"target_entropy": float((w * entropy).sum() / total), "uniform": float((w * uniform).sum() / total)}


# ------------------------------------------------------------------ weights file conversion


def policy_weights_to_bytes(model: PolicyMLP, metadata: Optional[Mapping[str, Any]] = None) -> bytes:
    """Serialises ``model`` in the weights file format (any device or dtype; stored as float32);
    with ``metadata`` (:func:`rebel.nets.weights_io.net_metadata`) as format version 3."""
    if not isinstance(model, PolicyMLP):
        raise TypeError(f"model must be a rebel.nets.policy_mlp.PolicyMLP, got {type(model).__name__}")
    return weights_from_arrays(model.input_size, model.output_size, model.hidden, model.layers,
                               parameter_arrays(model), model.layer_norm_eps, metadata=metadata)


def policy_weights_from_bytes(data: bytes, game: "Game") -> PolicyMLP:
    """Rebuilds a :class:`PolicyMLP` (float32, CPU) of ``game`` from serialised weights
    (ValueError if malformed or sized for another game, or a value net's)."""
    header = read_header(bytes(data))
    check_policy_shape(header.input_size, header.output_size, game, header.stake_column)
    header, payload = payload_from_bytes(data)
    model = PolicyMLP(header.input_size, int(game.num_hands), int(game.num_actions),
                      hidden=max(header.hidden_size, 1), layers=header.num_layers,
                      layer_norm_eps=header.layer_norm_eps)
    fill_parameters(model, payload)
    return model


def export_policy_weights(model: PolicyMLP, path: PathLike, metadata: Optional[Mapping[str, Any]] = None) -> None:
    """Writes ``model``'s weights (and ``metadata``) to ``path`` atomically."""
    atomic_write_bytes(path, policy_weights_to_bytes(model, metadata))


def load_policy_weights(path: PathLike, game: "Game") -> PolicyMLP:
    """Reads a policy weights file of ``game`` back into a :class:`PolicyMLP` (ValueError if it does not fit)."""
    with open(path, "rb") as f:
        return policy_weights_from_bytes(f.read(), game)


def to_native_policy(model: PolicyMLP, game: "Game", isa: str = "auto", precision: str = "fp32") -> "MlpPolicyNet":
    """A C++ :class:`rebel._core.MlpPolicyNet` with ``model``'s current weights (ValueError if
    the model does not fit ``game`` or the precision cannot run on this CPU)."""
    from rebel._core import MlpPolicyNet

    check_policy_shape(model.input_size, model.output_size, game)
    return MlpPolicyNet(game, policy_weights_to_bytes(model), isa=isa, precision=precision)


def update_native_policy(net: "MlpPolicyNet", model: PolicyMLP) -> None:
    """Replaces ``net``'s weights with ``model``'s (safe while solvers run)."""
    net.set_weights_bytes(policy_weights_to_bytes(model))
