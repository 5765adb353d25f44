"""Brute-force expected value and best response for games with public chance, written from
explicit deal probabilities (not the core's chance factors), to check the vectorised passes.

The game is walked through its bindings (legal_actions, player_to_act, terminal_values); a
policy is the core's child-indexed array policy[child, hand] over a full tree. The test
passes ``chance_prob(history, outcome, h0, h1)``: the probability of a chance outcome given
both private hands, from the game's rules written out independently.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rebel import _core

ChanceProb = Callable[[tuple[int, ...], int, int, int], float]


def payoff(game: _core.Game, history: tuple[int, ...], player: int, hand: int, opp_hand: int) -> float:
    """u_player(hand, opp_hand, z): terminal_values with a one-hot opponent reach gives
    w(hand, opp_hand) * u (the board's removal is in the reaches, which a one-hot leaves out)."""
    one_hot = np.zeros(game.num_hands)
    one_hot[opp_hand] = 1.0
    weight = game.hand_pair_weight(hand, opp_hand)
    return float(game.terminal_values(list(history), player, one_hot)[hand]) / weight


def deal_probability(game: _core.Game, h0: int, h1: int) -> float:
    prior = game.hand_prior
    return float(prior[h0] * prior[h1] * game.hand_pair_weight(h0, h1))


def _walk(game: _core.Game, tree: _core.PublicTree, policy: np.ndarray, chance_prob: ChanceProb,
          history: tuple[int, ...], player: int, hand: int, opp: dict[int, float], best_respond: bool) -> float:
    """Value to `player` holding `hand` at `history`, weighted by `opp`: opponent hand -> joint
    probability of (deal, chance so far, opponent's actions so far)."""
    if game.is_terminal(list(history)):
        return sum(w * payoff(game, history, player, hand, o) for o, w in opp.items())
    node = tree.find(list(history))
    acting = game.player_to_act(list(history))
    first, count = int(tree.first_child[node]), int(tree.num_children[node])
    children = [(c, int(tree.action[c])) for c in range(first, first + count)]
    if acting == _core.CHANCE_PLAYER:
        total = 0.0
        for _c, outcome in children:
            below = {o: w * chance_prob(history, outcome, *((hand, o) if player == 0 else (o, hand)))
                     for o, w in opp.items()}
            below = {o: w for o, w in below.items() if w > 0.0}
            if below:
                total += _walk(game, tree, policy, chance_prob, history + (outcome,), player, hand, below, best_respond)
        return total
    if acting != player:
        total = 0.0
        for c, action in children:
            below = {o: w * policy[c, o] for o, w in opp.items() if w * policy[c, o] > 0.0}
            if below:
                total += _walk(game, tree, policy, chance_prob, history + (action,), player, hand, below, best_respond)
        return total
    values = [_walk(game, tree, policy, chance_prob, history + (a,), player, hand, opp, best_respond)
              for c, a in children]
    if best_respond:
        return max(values)
    return sum(policy[c, hand] * v for (c, _), v in zip(children, values))


def value(game: _core.Game, tree: _core.PublicTree, policy: np.ndarray, chance_prob: ChanceProb, player: int,
          best_respond: bool, deal_prob: Callable[[int, int], float] | None = None) -> float:
    """Expected payoff of `player` (best-responding or following `policy`) against the opponent's
    part of `policy`, from the game's start; ``deal_prob(h0, h1)`` (default: the game's deal)
    weights the private deals."""
    deal = deal_prob or (lambda h0, h1: deal_probability(game, h0, h1))
    total = 0.0
    for hand in range(game.num_hands):
        opp = {o: deal(*((hand, o) if player == 0 else (o, hand))) for o in range(game.num_hands)}
        opp = {o: w for o, w in opp.items() if w > 0.0}
        total += _walk(game, tree, policy, chance_prob, (), player, hand, opp, best_respond)
    return total
