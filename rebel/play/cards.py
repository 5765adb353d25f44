"""Playing hands against the search bot (what ``rebel play`` runs), without any terminal I/O.

The bot plays what the paper's test-time search plays (mode (b)): at every public state it
solves the depth-limited subgame from the beliefs the play so far induces, stops CFR-D at a
random iteration (linear weights) and plays that iteration's policy; the next subgame starts
from the beliefs this policy implies. One such sampled policy
(:meth:`rebel._core.TestTimeSearch.sampled_policy`) is drawn per hand, so within a hand the
bot's play and its beliefs come from one consistent policy.

:class:`Table` deals hands from the game's own chance distribution (prior x prior x the
pair's weight, e.g. no two equal Kuhn cards), deals the public chance events of games that
have them (Leduc's board card, given both hands), keeps the public history, answers the legal
actions, draws the bot's actions, tells what the bot believes about a hand (also after an
action its policy never takes) and what its strategy is at a public state, both from the
public events alone (never revealing the bot's own hand), scores a finished hand for both seats and keeps the running
score with its 95% interval (:mod:`rebel.util.stats`). Actions and hands are shown as
:mod:`rebel.games.names` labels them (Liar's Dice faces 1..F, the wild face marked).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from rebel import _core
from rebel.games.names import action_label, action_spellings
from rebel.util.stats import PLAY, MeanInterval, mean_interval

__all__ = ["QUIT_WORDS", "Belief", "Table", "Score", "display_action", "is_quit", "parse_action", "search_roots"]


def display_action(game: _core.Game, action: int, history: Optional[Sequence[int]] = None) -> str:
    """An action as a player reads it (:func:`rebel.games.names.action_label`): ``bid 2 x 3``
    or ``liar`` in Liar's Dice (faces 1..F), else the core's name; given the ``history`` it is
    taken at, poker actions as players say them there (``check``, ``bet``, ``call``, ``raise``,
    ``fold``, ``bet pot (to 300)``)."""
    return action_label(game, action, history)


#: What ends a ``rebel play`` session at any prompt (case and spaces ignored), as EOF does;
#: no game names an action so.
QUIT_WORDS = ("q", "quit", "exit")


def is_quit(text: str) -> bool:
    """Whether ``text`` (a line read at a prompt) asks to end the session: ``q``, ``quit`` or ``exit``."""
    return _normal(text) in QUIT_WORDS


def _normal(text: str) -> str:
    return "".join(text.lower().split())


def parse_action(game: _core.Game, legal: list[int], text: str,
                 history: Optional[Sequence[int]] = None) -> Optional[int]:
    """The legal action ``text`` names (its number in the list, or one of its spellings of
    :func:`rebel.games.names.action_spellings` at ``history`` when given, e.g. ``bid 2 x 3``
    or ``2x3``, Leduc's ``check``; spaces and case ignored), or None."""
    t = _normal(text)
    if not t:
        return None
    if t.isdigit():
        i = int(t)
        return legal[i - 1] if 1 <= i <= len(legal) else None
    for a in legal:
        if t in {_normal(s) for s in action_spellings(game, a, history)}:
            return a
    return None


def search_roots(game: _core.Game, history: Sequence[int], depth: int) -> list[int]:
    """The positions i (0 <= i <= len(history)) along ``history`` where test-time search starts
    a subgame, as TestTimeSearch's constructor places them (csrc/search/test_time_search.cc):
    the decision nodes whose round depth (events since the betting round began: the game's
    start or the last public chance event; a chance node's child has round depth 0) is a
    multiple of ``depth``. Without public chance: every ``depth`` actions. A subgame ends at a
    deal even short of ``depth`` (the dealt outcome is the next root) and a deal at its depth
    limit is expanded (the child after the deal is the next root, not the deal)."""
    history = list(history)
    roots = []
    round_depth = 0
    for i in range(len(history) + 1):
        if i > 0:
            round_depth = 0 if game.player_to_act(history[:i - 1]) == _core.CHANCE_PLAYER else round_depth + 1
        prefix = history[:i]
        if game.is_terminal(prefix):
            break
        if round_depth % depth == 0 and game.player_to_act(prefix) != _core.CHANCE_PLAYER:
            roots.append(i)
    return roots


@dataclass
class Score:
    """The human's payoffs, one per finished hand, and their mean with its 95% interval.

    The interval is Student's t with n - 1 degrees of freedom and is shown only from
    :data:`rebel.util.stats.MIN_HANDS` (10) hands on: from two or three hands the sample
    standard deviation is no estimate (two lost hands give 0, an interval of zero width);
    see :mod:`rebel.util.stats` for the rule and the one matches use.
    """

    payoffs: list[float] = field(default_factory=list)

    def add(self, payoff: float) -> None:
        self.payoffs.append(payoff)

    @property
    def hands(self) -> int:
        return len(self.payoffs)

    @property
    def total(self) -> float:
        return float(sum(self.payoffs))

    def interval(self) -> MeanInterval:
        """The mean payoff per hand with its 95% half-width (inf before 10 hands)."""
        return mean_interval(self.payoffs, PLAY)

    def mean_and_interval(self) -> tuple[float, float]:
        """Mean payoff per hand (0 before the first hand) and the half-width of its 95% interval
        (inf with too few hands)."""
        r = self.interval()
        return (r.mean if r.n else 0.0), r.half_width

    def line(self) -> str:
        r = self.interval()
        mean = r.mean if r.n else 0.0
        if r.shown:
            interval = f" +- {r.half_width:.3f} (95%)"
        elif r.n:
            interval = f" ({r.n} hand{'s' * (r.n != 1)}, too few for an interval)"
        else:
            interval = ""
        hands = f"{self.hands} hand{'s' * (self.hands != 1)}"
        return f"after {hands}: you {self.total:+g} in all, {mean:+.3f} per hand{interval}"


@dataclass
class Belief:
    """What the bot believes about one player's hand (:meth:`Table.belief`).

    ``probs``: the belief given the public actions and the bot's own hand (normalised; all
    zero when no hand is left). ``public``: the belief the search itself carries, from the
    public events alone (not conditioned on the bot's hand, so it tells nothing about it: what
    ``rebel play --explain`` shows). ``off_path``: the positions in the history of that
    player's actions after which the policy reaches the public state with probability 0 with
    every hand (it never takes the action with any hand that could still be there).
    ``restarted``: whether, after the last of them, a search has started from the fallback
    belief of the off-path mode (``skip``: every hand equally likely); until then the bot has
    no belief (``probs`` and ``public`` are zero).
    """

    probs: np.ndarray
    public: np.ndarray
    off_path: list[int]
    restarted: bool


class Table:
    """One game against the bot: the search, the public tree, the deal and the current hand."""

    def __init__(self, game: _core.Game, net: _core.ValueNet, solver: str = "lcfr", depth: int = 2,
                 iterations: int = 1024, seed: int = 0, off_path: str = "skip",
                 chance_leaves: str = "after_deal") -> None:
        self.game = game
        self.depth = depth
        self.search = _core.TestTimeSearch(game, net, solver, depth, iterations, off_path=off_path,
                                           chance_leaves=chance_leaves)
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
        self._chance = game.has_public_chance

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
        """0 or 1, or :data:`rebel._core.CHANCE_PLAYER` where the table deals a public event
        (:meth:`deal_public`)."""
        return int(self.game.player_to_act(self.history))

    @property
    def board(self) -> list[int]:
        """The public chance outcomes dealt so far, in order (action ids; Leduc: the board card)."""
        return [a for i, a in enumerate(self.history)
                if self._chance and self.game.player_to_act(self.history[:i]) == _core.CHANCE_PLAYER]

    def public_chance_probs(self) -> dict[int, float]:
        """At a public chance node, each outcome's probability given both dealt hands:
        P(b | h0, h1) = f_b(h0) f_b(h1) (the game's chance factors), normalised."""
        if self.finished or self.to_act != _core.CHANCE_PLAYER:
            raise ValueError("no public chance event here")
        h0, h1 = self.hands
        weights = {}
        for b in self.legal():
            f = self.game.chance_factors(self.history, b)
            weights[b] = float(f[h0] * f[h1])
        total = sum(weights.values())
        return {b: w / total for b, w in weights.items()}

    def deal_public(self) -> int:
        """Deals the public chance event here (it must be chance's turn) from
        :meth:`public_chance_probs` with the table's rng, plays it and returns it."""
        probs = self.public_chance_probs()
        outcomes = list(probs)
        outcome = outcomes[int(self.rng.choice(len(outcomes), p=np.array([probs[b] for b in outcomes])))]
        self.play(outcome)
        return outcome

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
        if self.finished or self.to_act not in (0, 1):
            raise ValueError("no player acts here")
        hand = self.hands[self.to_act]
        probs = {a: float(self.policy[self._child(a), hand]) for a in self.legal()}
        total = sum(probs.values())
        return {a: p / total for a, p in probs.items()} if total > 0 else {a: 1 / len(probs) for a in probs}

    def strategy_by_hand(self) -> dict[int, dict[int, float]]:
        """The policy of the seat to act here for every hand it may hold given the public events
        alone (its :attr:`Belief.public` above 0; every hand the public events leave possible
        when that belief is empty), each hand's probabilities normalised: the same whatever
        hand the seat holds."""
        assert self.policy is not None
        if self.finished or self.to_act not in (0, 1):
            raise ValueError("no player acts here")
        belief = self._public_range(self.to_act)
        out = {}
        for hand in np.flatnonzero(belief > 0):
            probs = {a: float(self.policy[self._child(a), hand]) for a in self.legal()}
            total = sum(probs.values())
            out[int(hand)] = ({a: p / total for a, p in probs.items()} if total > 0
                              else {a: 1 / len(probs) for a in probs})
        return out

    def public_action_probs(self) -> dict[int, float]:
        """The probabilities of the seat to act's actions here given the public events alone:
        its policy averaged over the public belief about its hand (:attr:`Belief.public`).
        It does not depend on (so does not reveal) the hand the seat holds."""
        belief = self._public_range(self.to_act)
        by_hand = self.strategy_by_hand()
        probs = {a: 0.0 for a in self.legal()}
        for hand, hand_probs in by_hand.items():
            for a, p in hand_probs.items():
                probs[a] += float(belief[hand]) * p
        total = sum(probs.values())
        return {a: p / total for a, p in probs.items()}

    def _public_range(self, player: int) -> np.ndarray:
        """The public belief about ``player``'s hand; where it is empty (no belief between an
        off-path action and the next search), every hand the public events leave possible,
        equally likely."""
        public = self.belief(player).public
        if public.sum() > 0:
            return public
        possible = np.asarray(self.game.hand_prior, dtype=np.float64) > 0
        for i, a in enumerate(self.history):
            if self.game.player_to_act(self.history[:i]) == _core.CHANCE_PLAYER:
                possible &= np.asarray(self.game.chance_factors(self.history[:i], a)) > 0
        return possible / possible.sum()

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
        hand's policy, normalised (:meth:`belief` tells also about off-path actions)."""
        return self.belief(player).probs

    def belief(self, player: int) -> Belief:
        """The bot's belief about ``player``'s hand, as its search forms it.

        Along the history, the belief is the prior times ``player``'s reach under this hand's
        policy and, at a public chance node, times the outcome's chance factors f_b (Bayes'
        rule for the board card), renormalised at every search root (:func:`search_roots`:
        every ``depth`` events of a betting round, and the state after each deal), as the
        search passes beliefs from one subgame to the next. A root reached with no mass starts
        from every hand the dealt public events leave possible, equally likely (test-time
        search's ``normalize_beliefs`` and ``keep_possible``). When ``player`` takes an action the
        policy never takes with any hand still believed possible (an off-path action), the
        reach is zero for every hand and the search does what its ``off_path`` mode says at the
        next search root (csrc/search/test_time_search.cc, ``leaf_beliefs``):

        * ``skip`` (the default, what ``rebel play`` uses): the beliefs are normalised with the
          uniform fallback of ``normalize_beliefs``: every hand equally likely. Exact.
        * ``floor``, ``conditional``: the search keeps each zero-probability action as a
          tremble of order eps and normalises the lowest order. Here each tremble has weight
          1 for every hand (as ``conditional`` counts it); ``floor`` weighs first-order
          trembles by regret-matching terms the played policy does not carry, so for it the
          belief shown is that approximation.

        Between the off-path action and the next search root the bot acts from the subgame
        it solved before, which did not reach this public state: it has no belief then.

        In ``floor`` and ``conditional`` a hand with belief 0 at a search root (e.g. the board
        card) is impossible here, while the solver keeps it as a first-order tremble with
        coefficient 1; the two differ only where such a hand alone would lead a later root.
        """
        assert self.policy is not None
        H = self.game.num_hands
        prior = np.asarray(self.game.hand_prior, dtype=np.float64)
        coef = prior.copy()
        order = np.where(prior > 0, 0.0, np.inf)  # trembles on the path (inf: impossible)
        off_path: list[int] = []
        restarted = True
        roots = set(search_roots(self.game, self.history, self.depth))
        possible = np.ones(H, dtype=bool)  # the hands the public events dealt so far leave possible
        node = 0
        for i in range(len(self.history) + 1):
            if i > 0 and i in roots:
                # a search root: the beliefs the search starts from
                coef, order = self._restart(coef, order, possible if self._chance else None)
                restarted = True
            if i == len(self.history):
                break
            action = self.history[i]
            first = int(self.tree.first_child[node])
            child = next(c for c in range(first, first + int(self.tree.num_children[node]))
                         if int(self.tree.action[c]) == action)
            if int(self.tree.player[node]) == _core.CHANCE_PLAYER:
                f = np.asarray(self.tree.chance_factors(node))[child - first]
                coef = coef * f  # both players' reaches take the outcome's factors
                possible &= f > 0
                if self.search.off_path != "skip":
                    order = np.where(f > 0, order, np.inf)  # ruled out by the card, not a tremble
            elif int(self.tree.player[node]) == player:
                p = self.policy[child]
                alive = np.isfinite(order) & (coef > 0)
                reached = alive & (order == 0)  # hands the policy plays to here with positive probability
                if reached.any() and not (reached & (p > 0)).any():
                    off_path.append(i)
                    restarted = False
                if self.search.off_path == "skip":
                    coef = coef * p
                else:
                    tremble = alive & (p <= 0)
                    order = order + tremble
                    coef = np.where(tremble, coef, coef * p)
            node = child
        if self.search.off_path != "skip":
            coef = self._lowest_order(coef, order)
        public = coef / coef.sum() if coef.sum() > 0 else np.zeros(H)
        if not restarted:
            public = np.zeros(H)
        other_hand = self.hands[1 - player]
        weights = np.array([self.game.hand_pair_weight(h, other_hand) for h in range(H)])
        probs = public * weights
        total = probs.sum()
        return Belief(probs / total if total > 0 else probs, public, off_path, restarted)

    def _lowest_order(self, coef: np.ndarray, order: np.ndarray) -> np.ndarray:
        live = np.isfinite(order) & (coef > 0)
        if not live.any():
            return np.zeros_like(coef)
        lowest = order[live].min()
        return np.where(live & (order == lowest), coef, 0.0)

    def _restart(self, coef: np.ndarray, order: np.ndarray,
                 possible: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The beliefs a search root starts from, given the reach terms from the one above and,
        in a game with public chance, the hands its public events leave possible."""
        H = self.game.num_hands
        if self.search.off_path != "skip":
            coef = self._lowest_order(coef, order)
        total = coef.sum()
        coef = coef / total if total > 0 else np.full(H, 1.0 / H)  # normalize_beliefs' fallback
        if possible is not None:  # keep_possible: no mass on a hand the board holds
            coef = np.where(possible, coef, 0.0)
            mass = coef.sum()
            if not mass > 0:
                coef = np.where(possible, 1.0, 0.0)
                mass = coef.sum()
            coef = coef / mass
        return coef, np.where(coef > 0, 0.0, np.inf)

    def payoff(self, player: int) -> float:
        """``player``'s payoff in the finished hand."""
        if not self.finished:
            raise ValueError("the hand is not over")
        mine, theirs = self.hands[player], self.hands[1 - player]
        reach = np.zeros(self.game.num_hands)
        reach[theirs] = 1.0
        value = float(self.game.terminal_values(self.history, player, reach)[mine])
        # Rounded off the float noise of the pair weight's division (Leduc: 1.2 * 7 / 1.2).
        return round(value / self.game.hand_pair_weight(mine, theirs), 9)
