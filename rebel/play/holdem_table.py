"""A hold'em endgame table against a solved strategy (what ``rebel play --game holdem_endgame``
runs), without any terminal I/O.

:class:`HoldemTable` deals both hands from the spot's two ranges, jointly: P(h0, h1) is
proportional to w0(h0) w1(h1) over pairs that share no card (card removal), drawn as h0 from its
marginal, then h1 given h0. It walks the solved game's expanded tree
(:func:`rebel.games.holdem_endgame.build_endgame`): at a decision it takes the human's action or
samples the bot's from the solver's average strategy for the bot's hand; at a chance node it
deals the next card uniformly from the cards neither hand holds (public chance). A finished
hand pays each player in chips from the start of the spot: a fold loses the folder's chips in
the pot (half the starting pot included), a showdown wins the loser's (a tie pays 0), as the
solver's values count them. Everything random comes from one seeded generator, so a seed
replays the same deals and bot actions given the same human actions.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from rebel import _core
from rebel.games.holdem_lines import action_labels, match_label
from rebel.games.holdem_ranges import card_name
from rebel.search.holdem_results import hand_names, opponent_mass

__all__ = ["HoldemTable"]


class HoldemTable:
    """One game against a solved hold'em endgame: the deal, the current node and the payoffs."""

    def __init__(self, game: _core.HoldemEndgame, engine: _core.HoldemSolver, stack: int, seed: int = 0) -> None:
        self.game, self.engine, self.stack = game, engine, stack
        self.rng = np.random.default_rng(seed)
        self.names = (hand_names(game, 0), hand_names(game, 1))
        self._cards = (game.hands(0), game.hands(1))
        self._weights = (np.asarray(game.weights(0), dtype=np.float64), np.asarray(game.weights(1), dtype=np.float64))
        marginal = self._weights[0] * opponent_mass(game, 0, self._weights[1])
        self._first = marginal / marginal.sum()
        self.hands = (0, 0)
        self.node = 0

    # ------------------------------------------------------------------ the deal
    def deal(self) -> tuple[int, int]:
        """Both hands, indices into each player's hands (module docstring)."""
        h0 = int(self.rng.choice(len(self._first), p=self._first))
        a, b = (int(c) for c in self._cards[0][h0])
        theirs = self._cards[1]
        free = (theirs[:, 0] != a) & (theirs[:, 0] != b) & (theirs[:, 1] != a) & (theirs[:, 1] != b)
        w = np.where(free, self._weights[1], 0.0)
        h1 = int(self.rng.choice(len(w), p=w / w.sum()))
        return h0, h1

    def new_hand(self) -> tuple[int, int]:
        """Deals a new hand and goes to the root; returns the hands (of OOP, of IP)."""
        self.hands = self.deal()
        self.node = 0
        return self.hands

    # ------------------------------------------------------------------ the state
    @property
    def info(self) -> dict:
        return self.game.node(self.node)

    @property
    def finished(self) -> bool:
        return self.info["kind"] in ("fold", "showdown")

    @property
    def to_act(self) -> Optional[int]:
        """0 or 1 at a decision, None elsewhere (a chance node or the end)."""
        info = self.info
        return int(info["player"]) if info["kind"] == "decision" else None

    @property
    def dealing(self) -> bool:
        return self.info["kind"] == "chance"

    @property
    def board(self) -> list[str]:
        return [card_name(c) for c in self.info["board"]]

    @property
    def pot(self) -> float:
        return float(sum(self.info["invested"]))

    def behind(self, player: int) -> float:
        """The chips ``player`` has behind (not in the pot)."""
        start = float(self.game.node(0)["invested"][player])
        return self.stack - (float(self.info["invested"][player]) - start)

    def to_call(self, player: int) -> float:
        invested = self.info["invested"]
        return max(0.0, float(invested[1 - player]) - float(invested[player]))

    def hand_name(self, player: int) -> str:
        return self.names[player][self.hands[player]]

    def actions(self) -> list[str]:
        """The labels of the actions here (a decision)."""
        return action_labels(self.game, self.node)

    # ------------------------------------------------------------------ moves
    def parse_action(self, text: str) -> Optional[int]:
        """The action ``text`` names here, as its index: the menu number (from 1), the label
        (``bet 120``, ``all-in``; case, spaces and hyphens ignored) or its first word when only
        one action starts so (``bet``, ``raise``); None if none."""
        t = text.strip()
        actions = self.actions()
        if t.isdigit():
            return int(t) - 1 if 1 <= int(t) <= len(actions) else None
        i = match_label(t, actions)
        if i is not None:
            return i
        first = [k for k, a in enumerate(actions) if a.split()[0] == t.lower()]
        return first[0] if len(first) == 1 else None

    def play(self, index: int) -> str:
        """The player to act takes action ``index``; returns its label."""
        info = self.info
        if info["kind"] != "decision" or not 0 <= index < len(info["children"]):
            raise ValueError(f"no action {index} here")
        label = self.actions()[index]
        self.node = int(info["children"][index])
        return label

    def strategy(self, player: int) -> dict[str, float]:
        """The solver's average strategy here for ``player``'s hand (``player`` must act here)."""
        if self.to_act != player:
            raise ValueError("that player does not act here")
        column = np.asarray(self.engine.average_strategy(self.node), dtype=np.float64)[:, self.hands[player]]
        total = column.sum()
        probs = column / total if total > 0 else np.full(len(column), 1.0 / len(column))
        return dict(zip(self.actions(), probs.tolist()))

    def range_strategy(self) -> dict[str, float]:
        """The actor's action frequencies here over its whole range (each hand weighted by its
        reach): public, the same whatever hand it holds."""
        player = self.to_act
        if player is None:
            raise ValueError("nobody acts here")
        reach = np.asarray(self.engine.node_report(self.node)[("oop", "ip")[player]]["reach"])
        strategy = np.asarray(self.engine.average_strategy(self.node), dtype=np.float64)
        total = reach.sum()
        freqs = strategy @ reach / total if total > 0 else np.full(len(strategy), 1.0 / len(strategy))
        return dict(zip(self.actions(), freqs.tolist()))

    def bot_move(self) -> str:
        """Samples the actor's action from the solver's strategy for its hand and plays it."""
        player = self.to_act
        assert player is not None
        probs = np.array(list(self.strategy(player).values()))
        return self.play(int(self.rng.choice(len(probs), p=probs / probs.sum())))

    def deal_card(self) -> str:
        """At a chance node: deals a card neither hand holds, uniformly; returns its name."""
        info = self.info
        if info["kind"] != "chance":
            raise ValueError("no card is dealt here")
        held = {int(c) for p in (0, 1) for c in self._cards[p][self.hands[p]]}
        children = [int(c) for c in info["children"] if self.game.node(c)["board"][-1] not in held]
        self.node = children[int(self.rng.integers(len(children)))]
        return card_name(self.info["board"][-1])

    # ------------------------------------------------------------------ the end
    def payoff(self, player: int) -> float:
        """``player``'s chips won (or lost) in the finished hand, from the start of the spot."""
        info = self.info
        invested = [float(x) for x in info["invested"]]
        if info["kind"] == "fold":
            folder = int(info["player"])
            return -invested[player] if folder == player else invested[1 - player]
        if info["kind"] != "showdown":
            raise ValueError("the hand is not over")
        board = list(info["board"])
        ranks = [_core.hand_rank(board + [int(c) for c in self._cards[p][self.hands[p]]]) for p in (0, 1)]
        mine, theirs = ranks[player], ranks[1 - player]
        return invested[1 - player] if mine > theirs else -invested[player] if mine < theirs else 0.0
