"""Playing hands against the search bot (what ``rebel play`` runs), without any terminal I/O.

The bot plays what the paper's test-time search plays (mode (b)): at every public state it
solves the depth-limited subgame from the beliefs the play so far induces, stops CFR-D at a
random iteration (linear weights) and plays that iteration's policy; the next subgame starts
from the beliefs this policy implies. One such sampled policy
(:meth:`rebel._core.TestTimeSearch.sampled_policy`) is drawn per hand, so within a hand the
bot's play and its beliefs come from one consistent policy.

:class:`Table` deals hands from the game's own chance distribution (prior x prior x the
pair's weight, e.g. no two equal Kuhn cards), keeps the public history, answers the legal
actions, draws the bot's actions, scores a finished hand for both seats and keeps the
running score with its 95% interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from rebel import _core

__all__ = ["Table", "Score", "display_action", "parse_action"]


def display_action(game: _core.Game, action: int) -> str:
    """An action as a player reads it: ``bid 2 x 3`` or ``liar`` in Liar's Dice, else the core's name."""
    name = game.action_name(action)
    if game.name == "liars_dice" and "x" in name:
        quantity, face = name.split("x", 1)
        return f"bid {quantity} x {face}"
    return name


def parse_action(game: _core.Game, legal: list[int], text: str) -> Optional[int]:
    """The legal action ``text`` names (its number in the list, its display name or the core's
    name; spaces and case ignored), or None."""
    t = "".join(text.lower().split())
    if not t:
        return None
    if t.isdigit():
        i = int(t)
        return legal[i - 1] if 1 <= i <= len(legal) else None
    for a in legal:
        names = {"".join(display_action(game, a).lower().split()), game.action_name(a).lower().replace(" ", "")}
        if t in names or ("bid" + t) in names:
            return a
    return None


@dataclass
class Score:
    """The human's payoffs, one per finished hand."""

    payoffs: list[float] = field(default_factory=list)

    def add(self, payoff: float) -> None:
        self.payoffs.append(payoff)

    @property
    def hands(self) -> int:
        return len(self.payoffs)

    @property
    def total(self) -> float:
        return float(sum(self.payoffs))

    def mean_and_interval(self) -> tuple[float, float]:
        """Mean payoff per hand and the half-width of its 95% interval (normal approximation;
        inf with fewer than two hands)."""
        n = len(self.payoffs)
        if n == 0:
            return 0.0, math.inf
        mean = self.total / n
        if n < 2:
            return mean, math.inf
        sd = float(np.std(self.payoffs, ddof=1))
        return mean, 1.96 * sd / math.sqrt(n)

    def line(self) -> str:
        mean, half = self.mean_and_interval()
        interval = f" +- {half:.3f} (95%)" if math.isfinite(half) else ""
        return f"after {self.hands} hand{'s' * (self.hands != 1)}: you {self.total:+g} in all, {mean:+.3f} per hand{interval}"


class Table:
    """One game against the bot: the search, the public tree, the deal and the current hand."""

    def __init__(self, game: _core.Game, net: _core.ValueNet, solver: str = "lcfr", depth: int = 2,
                 iterations: int = 1024, seed: int = 0, off_path: str = "skip") -> None:
        self.game = game
        self.search = _core.TestTimeSearch(game, net, solver, depth, iterations, off_path=off_path)
        self.tree = self.search.full_tree
        self.rng = np.random.default_rng(seed)
        H = game.num_hands
        prior = np.asarray(game.hand_prior, dtype=np.float64)
        weights = np.array([[game.hand_pair_weight(h, o) for o in range(H)] for h in range(H)])
        joint = prior[:, None] * prior[None, :] * weights
        self._deal_p = (joint / joint.sum()).ravel()
        self.hands = (0, 0)
        self.history: list[int] = []
        self.node = 0
        self.policy: Optional[np.ndarray] = None

    # ------------------------------------------------------------------ a hand
    def deal(self) -> tuple[int, int]:
        """Both hands, drawn from the game's chance distribution: (hand of player 0, of player 1)."""
        H = self.game.num_hands
        k = int(self.rng.choice(H * H, p=self._deal_p))
        return k // H, k % H

    def new_hand(self) -> tuple[int, int]:
        """Deals both hands and draws the bot's policy for this hand; returns (hand of player 0, of player 1)."""
        self.hands = self.deal()
        self.history, self.node = [], 0
        self.policy = self.search.sampled_policy(int(self.rng.integers(0, 2**63)))
        return self.hands

    @property
    def finished(self) -> bool:
        return self.game.is_terminal(self.history)

    @property
    def to_act(self) -> int:
        return int(self.game.player_to_act(self.history))

    def legal(self) -> list[int]:
        return [int(a) for a in self.game.legal_actions(self.history)]

    def _child(self, action: int) -> int:
        first, count = int(self.tree.first_child[self.node]), int(self.tree.num_children[self.node])
        for c in range(first, first + count):
            if int(self.tree.action[c]) == action:
                return c
        raise ValueError(f"action {action} is not legal here")

    def play(self, action: int) -> None:
        """The player to act takes ``action`` (ValueError if it is not legal)."""
        if action not in self.legal():
            raise ValueError(f"action {action} is not legal here")
        self.node = self._child(action)
        self.history.append(action)

    def bot_action_probs(self) -> dict[int, float]:
        """The bot's probabilities over the legal actions here (its hand, this hand's policy)."""
        assert self.policy is not None
        hand = self.hands[self.to_act]
        probs = {a: float(self.policy[self._child(a), hand]) for a in self.legal()}
        total = sum(probs.values())
        return {a: p / total for a, p in probs.items()} if total > 0 else {a: 1 / len(probs) for a in probs}

    def bot_move(self) -> int:
        """Draws the bot's action (it must be the bot's turn) and plays it."""
        probs = self.bot_action_probs()
        actions = list(probs)
        action = actions[int(self.rng.choice(len(actions), p=np.array([probs[a] for a in actions])))]
        self.play(action)
        return action

    def belief_about(self, player: int) -> np.ndarray:
        """What the other seat's policy implies about ``player``'s hand given the public actions
        and the other seat's own hand: prior x pair weight x ``player``'s reach under this
        hand's policy, normalised."""
        assert self.policy is not None
        other_hand = self.hands[1 - player]
        H = self.game.num_hands
        weights = np.array([self.game.hand_pair_weight(h, other_hand) for h in range(H)])
        belief = np.asarray(self.game.hand_prior, dtype=np.float64) * weights
        node = 0
        for action in self.history:
            child = next(c for c in range(int(self.tree.first_child[node]),
                                          int(self.tree.first_child[node]) + int(self.tree.num_children[node]))
                         if int(self.tree.action[c]) == action)
            if int(self.tree.player[node]) == player:
                belief = belief * self.policy[child]
            node = child
        total = belief.sum()
        return belief / total if total > 0 else belief

    def payoff(self, player: int) -> float:
        """``player``'s payoff in the finished hand."""
        if not self.finished:
            raise ValueError("the hand is not over")
        mine, theirs = self.hands[player], self.hands[1 - player]
        reach = np.zeros(self.game.num_hands)
        reach[theirs] = 1.0
        value = float(self.game.terminal_values(self.history, player, reach)[mine])
        return value / self.game.hand_pair_weight(mine, theirs)
