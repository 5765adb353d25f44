"""The policy net in torch: masked softmax, the loss against hand-computed values, the
weights file round trip and its shape checks, and the native net against torch."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import rebel
from rebel import _core
from rebel.nets.policy_mlp import (
    PolicyMLP,
    export_policy_weights,
    load_policy_weights,
    masked_log_softmax,
    policy_loss,
    policy_probabilities,
    policy_weights_from_bytes,
    policy_weights_to_bytes,
)
from rebel.nets.value_mlp import ValueMLP, weights_to_bytes

HAS_POLICY_BINDINGS = hasattr(_core, "MlpPolicyNet")


def test_masked_softmax_is_exactly_zero_on_illegal_actions():
    torch.manual_seed(0)
    logits = torch.randn(3, 2, 4) * 10
    legal = torch.tensor([[True, False, True, False], [False, False, False, True], [True, True, True, True]])
    p = policy_probabilities(logits, legal)
    assert torch.all(p[~legal[:, None, :].expand_as(p)] == 0.0)
    assert torch.allclose(p.sum(dim=2), torch.ones(3, 2, dtype=p.dtype))
    assert torch.all(p[1, :, 3] == 1.0)  # the only legal action
    # Equal to the softmax over the legal entries alone.
    expected = torch.softmax(logits[0][:, [0, 2]], dim=1)
    assert torch.allclose(p[0][:, [0, 2]], expected)
    with pytest.raises(ValueError, match="no legal action"):
        masked_log_softmax(logits, torch.zeros(3, 4, dtype=torch.bool))


def test_policy_loss_is_the_hand_computed_weighted_cross_entropy():
    # One node, two hands, three actions of which the last is illegal.
    logits = torch.tensor([[[0.0, math.log(3.0), 5.0], [math.log(2.0), 0.0, -1.0]]], dtype=torch.float64)
    legal = torch.tensor([[True, True, False]])
    targets = torch.tensor([[[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]], dtype=torch.float64)
    weights = torch.tensor([[0.25, 0.75]], dtype=torch.float64)
    # Hand 0: p = (1/4, 3/4): CE = -(0.5 log 1/4 + 0.5 log 3/4). Hand 1: p = (2/3, 1/3): CE = -log 2/3.
    ce0 = -(0.5 * math.log(0.25) + 0.5 * math.log(0.75))
    ce1 = -math.log(2.0 / 3.0)
    expected = (0.25 * ce0 + 0.75 * ce1) / 1.0
    assert policy_loss(logits, targets, legal, weights).item() == pytest.approx(expected, abs=1e-12)
    # Weights are normalised by their total; a hand of weight 0 does not count at all.
    assert policy_loss(logits, targets, legal, 4 * weights).item() == pytest.approx(expected, abs=1e-12)
    only0 = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    assert policy_loss(logits, targets, legal, only0).item() == pytest.approx(ce0, abs=1e-12)


def test_policy_loss_is_minimised_by_the_log_targets():
    """At logits = log targets the cross entropy is the targets' weighted entropy (KL 0) and
    its gradient vanishes; any other logits give more."""
    rng = np.random.default_rng(3)
    legal = torch.tensor(rng.random((4, 5)) < 0.6)
    legal[:, 0] = True
    raw = torch.tensor(rng.random((4, 3, 5)) + 0.1) * legal[:, None, :]
    targets = raw / raw.sum(dim=2, keepdim=True)
    weights = torch.tensor(rng.random((4, 3)))
    logits = torch.where(legal[:, None, :], targets.clamp_min(1e-300).log(), torch.zeros_like(targets))
    logits.requires_grad_(True)
    loss = policy_loss(logits, targets, legal, weights)
    loss.backward()
    entropy = -(torch.where(targets > 0, targets * targets.clamp_min(1e-300).log(), 0.0)).sum(dim=2)
    assert loss.item() == pytest.approx(((weights * entropy).sum() / weights.sum()).item(), abs=1e-12)
    assert logits.grad is not None and float(logits.grad.abs().max()) < 1e-12
    worse = policy_loss(logits.detach() + torch.tensor(rng.normal(size=(4, 3, 5))), targets, legal, weights)
    assert worse.item() > loss.item()


def test_policy_loss_gradient_is_finite_with_illegal_actions():
    logits = torch.zeros(2, 3, 4, requires_grad=True)
    legal = torch.tensor([[True, True, False, False], [False, True, True, True]])
    targets = policy_probabilities(torch.randn(2, 3, 4), legal)
    policy_loss(logits, targets, legal, torch.ones(2, 3)).backward()
    assert logits.grad is not None and torch.all(torch.isfinite(logits.grad))
    assert torch.all(logits.grad[~legal[:, None, :].expand(2, 3, 4)] == 0)


def test_weights_round_trip_bit_exact_and_sizes_checked(tmp_path):
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    torch.manual_seed(1)
    model = PolicyMLP.for_game(game, hidden=16, layers=2)
    assert model.output_size == game.num_hands * game.num_actions
    x = torch.randn(5, game.query_size)
    assert model(x).shape == (5, game.num_hands, game.num_actions)
    data = policy_weights_to_bytes(model)
    back = policy_weights_from_bytes(data, game)
    for a, b in zip(model.state_dict().values(), back.state_dict().values()):
        assert torch.equal(a, b)
    assert policy_weights_to_bytes(back) == data
    export_policy_weights(model, tmp_path / "policy.bin")
    assert (tmp_path / "policy.bin").read_bytes() == data
    assert torch.equal(load_policy_weights(tmp_path / "policy.bin", game)(x), model(x))
    # A value net's file, and a policy net of another game, are refused by name.
    value = weights_to_bytes(ValueMLP.for_game(game, hidden=8, layers=1))
    with pytest.raises(ValueError, match="look like a value net"):
        policy_weights_from_bytes(value, game)
    with pytest.raises(ValueError, match="do not fit a policy net"):
        policy_weights_from_bytes(data, rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4}))


@pytest.mark.skipif(not HAS_POLICY_BINDINGS, reason="the extension has no MlpPolicyNet yet")
def test_native_policy_net_matches_torch():
    from rebel.nets.policy_mlp import to_native_policy

    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    torch.manual_seed(2)
    model = PolicyMLP.for_game(game, hidden=32, layers=2)
    net = to_native_policy(model, game)
    assert (net.input_size, net.output_size, net.num_actions) == (game.query_size,
                                                                  game.num_hands * game.num_actions,
                                                                  game.num_actions)
    rng = np.random.default_rng(0)
    histories = [[], [0], [0, 2], [1, 4]]
    b0 = rng.random((len(histories), game.num_hands)) + 0.1
    b1 = rng.random((len(histories), game.num_hands)) + 0.1
    native = np.asarray(_core.policy_net_policies(net, game, histories, b0, b1))
    assert native.shape == (len(histories), game.num_hands, game.num_actions)
    rows, legal = [], []
    for h, p0, p1 in zip(histories, b0, b1):
        player = game.player_to_act(h)
        rows.append(np.concatenate([[player, player], game.public_features(h), p0 / p0.sum(), p1 / p1.sum()]))
        mask = np.zeros(game.num_actions, bool)
        mask[game.legal_actions(h)] = True
        legal.append(mask)
    with torch.no_grad():
        expected = policy_probabilities(model(torch.tensor(np.array(rows), dtype=torch.float32)),
                                        torch.tensor(np.array(legal))).numpy()
    np.testing.assert_allclose(native, expected, atol=2e-5)
    assert np.all(native[~np.array(legal)[:, None, :].repeat(game.num_hands, 1)] == 0)
