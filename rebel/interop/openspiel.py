"""OpenSpiel interoperability (optional extra: ``pip install .[openspiel]``).

Converts a rebel full-game policy (the ``(tree.size, num_hands)`` array of
:mod:`rebel.interop.policy_io`) to an OpenSpiel ``TabularPolicy`` of the same game and back, so a
rebel policy can be evaluated with OpenSpiel's exploitability or played against OpenSpiel's
bots, and an OpenSpiel policy (e.g. the average policy of OpenSpiel's CFR) can be scored
by rebel or searched from.

Games (the rules are the same; the action ids too):

* ``kuhn`` <-> ``kuhn_poker``: cards J, Q, K are hands 0, 1, 2 and OpenSpiel's chance
  outcomes 0, 1, 2; actions 0 = pass, 1 = bet.
* ``leduc`` <-> ``leduc_poker``; ``leduc_nolimit(stack=S, ante=A)`` <-> ``universal_poker`` with
  DeepStack-Leduc's gamedef (blinds A A, stacks S S) and the fcpa betting abstraction. Cards
  0..5 (Js, Jh, Qs, Qh, Ks, Kh) are both libraries' deal outcomes; the betting ids are the
  same; the board card c is rebel's public event 3 + c (limit) or 4 + c (no-limit).
* ``liars_dice(num_dice=D, num_faces=F)`` <-> ``liars_dice(numdice=D,dice_sides=F)``:
  bid (quantity q, face f) is action (q-1)*F + f in both (OpenSpiel writes face f as
  f+1), "liar" is 2DF, and the highest face is wild in both. A rebel hand lists a
  player's dice in roll order; OpenSpiel sorts them, so with D >= 2 several rebel hands
  share one OpenSpiel information state. :func:`to_openspiel` then plays their
  reach-weighted mixture there (the same behaviour, so the same exploitability) and
  :func:`from_openspiel` gives each of them the state's policy.

>>> import rebel, rebel.interop.openspiel as ros                       # doctest: +SKIP
>>> game = rebel.make_game("kuhn", {})                          # doctest: +SKIP
>>> result = rebel.solve(game, "lcfr", 1024, progress=False)    # doctest: +SKIP
>>> os_game, os_policy = ros.to_openspiel(game, result.policy)  # doctest: +SKIP
>>> from open_spiel.python.algorithms import exploitability     # doctest: +SKIP
>>> exploitability.exploitability(os_game, os_policy)           # = result.exploitability
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from rebel import _core
from rebel.games import Game
from rebel.interop.policy_io import check_policy

__all__ = ["OPENSPIEL_GAMES", "Counterpart", "available", "from_openspiel", "openspiel_game", "openspiel_game_string",
           "to_openspiel", "RebelBot", "make_rebel_bot"]


def available() -> bool:
    """Whether OpenSpiel (the ``open_spiel`` package) can be imported."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def _pyspiel() -> Any:
    try:
        import pyspiel
    except ImportError:
        raise ImportError("OpenSpiel is not installed: pip install .[openspiel] "
                          "(or bash scripts/install.sh --openspiel)") from None
    return pyspiel


@dataclass(frozen=True)
class Counterpart:
    """How a rebel game corresponds to an OpenSpiel game: OpenSpiel's game string, and its
    chance moves before the first action: ``outcomes`` per player (a player's hand is their
    outcomes as base-``values`` digits, first outcome least significant, as rebel's hands are)
    and whether the two players' outcomes are drawn without replacement (Kuhn's cards)."""

    game_string: Callable[[dict[str, int]], str]
    outcomes: Callable[[dict[str, int]], int]
    values: Callable[[dict[str, int]], int]
    without_replacement: bool
    #: Games with public chance (a board card): rebel's event id of OpenSpiel's outcome at a
    #: public chance node (the board card), given the game's parameters.
    public_outcome: Optional[Callable[[dict[str, int], int], int]] = None


#: The games with an OpenSpiel counterpart, by rebel ``Game.name``: the one per-game switch here.
OPENSPIEL_GAMES: dict[str, Counterpart] = {
    "kuhn": Counterpart(game_string=lambda p: "kuhn_poker", outcomes=lambda p: 1, values=lambda p: 3,
                        without_replacement=True),
    "liars_dice": Counterpart(game_string=lambda p: f"liars_dice(numdice={p['num_dice']},dice_sides={p['num_faces']})",
                              outcomes=lambda p: p["num_dice"], values=lambda p: p["num_faces"],
                              without_replacement=False),
    # Cards 0..5 are the same cards in both (OpenSpiel's card ids are rebel's hands); the
    # board card c is rebel's event 3 + c (after fold, call, raise).
    "leduc": Counterpart(game_string=lambda p: "leduc_poker", outcomes=lambda p: 1, values=lambda p: 6,
                         without_replacement=True, public_outcome=lambda p, card: 3 + card),
    # DeepStack-Leduc's no-limit game: universal_poker with the gamedef OpenSpiel uses for it
    # and the fold/call/pot/all-in abstraction, whose action ids 0..3 are rebel's; its deal
    # outcomes are the same six cards; the board card c is rebel's event 4 + c.
    "leduc_nolimit": Counterpart(
        game_string=lambda p: ("universal_poker(betting=nolimit,numPlayers=2,numRounds=2,"
                               f"stack={p['stack']} {p['stack']},blind={p['ante']} {p['ante']},firstPlayer=1 1,"
                               "numSuits=2,numRanks=3,numHoleCards=1,numBoardCards=0 1,bettingAbstraction=fcpa)"),
        outcomes=lambda p: 1, values=lambda p: 6, without_replacement=True,
        public_outcome=lambda p, card: 4 + card),
}


def _counterpart(game: Game) -> Counterpart:
    try:
        return OPENSPIEL_GAMES[game.name]
    except KeyError:
        raise ValueError(f"no OpenSpiel counterpart for {game.description()} "
                         f"(supported: {', '.join(OPENSPIEL_GAMES)})") from None


def openspiel_game_string(game: Game) -> str:
    """The OpenSpiel name of ``game`` with its parameters, e.g. ``liars_dice(numdice=1,dice_sides=4)``."""
    params = dict(game.params)
    if params.get("fold_without_bet"):
        raise ValueError(f"no OpenSpiel counterpart for {game.description()}: universal_poker offers fold only "
                         "when facing a bet (fold_without_bet=0)")
    return _counterpart(game).game_string(params)


def openspiel_game(game: Game) -> Any:
    """The OpenSpiel game with the same rules as ``game``."""
    return _pyspiel().load_game(openspiel_game_string(game))


class _Layout:
    """How the two games' histories and hands correspond."""

    def __init__(self, game: Game) -> None:
        self.game = game
        counterpart, params = _counterpart(game), dict(game.params)
        self.dice = counterpart.outcomes(params)   # chance outcomes per player (Kuhn: 1 card)
        self.faces = counterpart.values(params)    # values of one outcome (Kuhn: 3 cards)
        self.without_replacement = counterpart.without_replacement
        self.chance_actions = 2 * self.dice  # OpenSpiel's chance moves before the first bid
        public_outcome = counterpart.public_outcome
        self.public_event: Optional[Callable[[int], int]] = (
            None if public_outcome is None else (lambda outcome: public_outcome(params, outcome)))

    def rebel_history(self, os_game: Any, os_history: Sequence[int]) -> list[int]:
        """Rebel's public history of an OpenSpiel history (the private deal left out, public
        chance outcomes as rebel's event ids)."""
        if self.public_event is None:
            return [int(a) for a in os_history[self.chance_actions:]]
        state = os_game.new_initial_state()
        out = []
        for i, action in enumerate(os_history):
            if i >= self.chance_actions:
                out.append(self.public_event(int(action)) if state.is_chance_node() else int(action))
            state.apply_action(int(action))
        return out

    def openspiel_event(self, event: int) -> int:
        """OpenSpiel's outcome of rebel's public chance event ``event``."""
        assert self.public_event is not None
        for outcome in range(self.faces):
            if self.public_event(outcome) == event:
                return outcome
        raise ValueError(f"event {event} is no public chance outcome of {self.game.description()}")

    def hand_dice(self, hand: int) -> list[int]:
        """A rebel hand as OpenSpiel chance outcomes (Kuhn: the card; dice in roll order)."""
        return [(hand // self.faces**i) % self.faces for i in range(self.dice)]

    def hands_of(self, outcomes: Sequence[int]) -> list[int]:
        """The rebel hands a player's chance outcomes (in any order: OpenSpiel sorts dice) stand for."""
        wanted = sorted(outcomes)
        return [sum(d * self.faces**i for i, d in enumerate(order))
                for order in sorted(set(itertools.permutations(wanted)))]

    def state(self, os_game: Any, player: int, hand: int, bids: Sequence[int]) -> Any:
        """An OpenSpiel state where ``player`` holds ``hand`` and ``bids`` were played."""
        mine = self.hand_dice(hand)
        # Any outcomes for the other seat do (the state's policy depends on the player's own);
        # drawn without replacement, they must differ from the player's and the board's.
        taken = set(mine) | self._board(bids)
        other = ([next(c for c in range(self.faces) if c not in taken)] * self.dice if self.without_replacement
                 else [0] * self.dice)
        state = os_game.new_initial_state()
        for outcome in (mine + other if player == 0 else other + mine):
            state.apply_action(outcome)
        for event in bids:
            state.apply_action(self.openspiel_event(int(event)) if state.is_chance_node() else int(event))
        return state

    def possible(self, hand: int, bids: Sequence[int]) -> bool:
        """Whether a player can hold ``hand`` at the public history ``bids`` (no board card of it)."""
        return not (self.without_replacement and self._board(bids) & set(self.hand_dice(hand)))

    def _board(self, bids: Sequence[int]) -> set[int]:
        """OpenSpiel's outcomes of the public chance events in ``bids`` (the board cards)."""
        return {self.openspiel_event(int(e)) for e in bids if self._is_public_event(int(e))}

    def _is_public_event(self, event: int) -> bool:
        return self.public_event is not None and any(self.public_event(o) == event for o in range(self.faces))


def _node_index(tree: _core.PublicTree) -> dict[tuple[int, ...], int]:
    return {tuple(tree.history(int(n))): int(n) for n in tree.decision_nodes}


def _own_reach(game: Game, tree: _core.PublicTree, policy: np.ndarray) -> np.ndarray:
    """reach[q, n, h]: the probability that player q, holding h, plays the actions to node n."""
    parent, player = tree.parent.tolist(), tree.player.tolist()
    reach = np.ones((2, len(tree), game.num_hands))
    for n in range(1, len(tree)):
        p = parent[n]
        reach[:, n] = reach[:, p]
        if player[p] in (0, 1):  # chance nodes' children carry no policy
            reach[player[p], n] *= policy[n]
    return reach


def to_openspiel(game: Game, policy: np.ndarray, tree: Optional[_core.PublicTree] = None) -> tuple[Any, Any]:
    """A rebel full-game policy as ``(openspiel_game, TabularPolicy)``.

    Raises ImportError without OpenSpiel and ValueError for an invalid policy or a game
    without an OpenSpiel counterpart.
    """
    from open_spiel.python import policy as os_policy

    tree = tree if tree is not None else _core.build_tree(game)
    check_policy(game, tree, policy)
    os_game = openspiel_game(game)
    layout = _Layout(game)
    nodes = _node_index(tree)
    reach = _own_reach(game, tree, policy)
    first, count, action = tree.first_child, tree.num_children, tree.action
    table = os_policy.TabularPolicy(os_game)
    table.action_probability_array[:] = 0.0
    for row, state in enumerate(table.states):
        player = state.current_player()
        history = state.history()
        outcomes = history[player * layout.dice:(player + 1) * layout.dice]
        node = nodes[tuple(layout.rebel_history(os_game, history))]
        hands = layout.hands_of(outcomes)
        kids = slice(first[node], first[node] + count[node])
        weights = reach[player, node, hands]
        if weights.sum() <= 0.0:  # unreached with every such hand: the plain mean
            weights = np.ones(len(hands))
        mixed = policy[kids][:, hands] @ (weights / weights.sum())
        table.action_probability_array[row, action[kids]] = mixed
    return os_game, table


def from_openspiel(game: Game, os_policy: Any, tree: Optional[_core.PublicTree] = None) -> np.ndarray:
    """An OpenSpiel policy of the same game (anything with ``action_probabilities(state)``,
    e.g. a ``TabularPolicy`` or OpenSpiel CFR's average policy) as a rebel policy array."""
    tree = tree if tree is not None else _core.build_tree(game)
    os_game = openspiel_game(game)
    layout = _Layout(game)
    first, count, action = tree.first_child, tree.num_children, tree.action
    policy = np.zeros((len(tree), game.num_hands))
    for node in tree.decision_nodes.tolist():
        bids = tree.history(node)
        player = int(tree.player[node])
        kids = range(first[node], first[node] + count[node])
        for hand in range(game.num_hands):
            if not layout.possible(hand, bids):  # the board holds the hand's card: no such state
                for c in kids:
                    policy[c, hand] = 1.0 / len(kids)
                continue
            probs = os_policy.action_probabilities(layout.state(os_game, player, hand, bids))
            for c in kids:
                policy[c, hand] = probs.get(int(action[c]), 0.0)
    return check_policy(game, tree, policy)


def make_rebel_bot(game: Game, net: Any, player_id: int, solver: str = "lcfr", depth: int = 2,
                   iterations: int = 1024, seed: int = 0) -> Any:
    """A :class:`RebelBot` (an OpenSpiel ``pyspiel.Bot``) playing ``player_id`` in
    :func:`openspiel_game` ``(game)`` with rebel's test-time search and value net ``net``."""
    return _rebel_bot_class()(game, net, player_id, solver, depth, iterations, seed)


def _rebel_bot_class() -> Any:
    pyspiel = _pyspiel()
    bot_base: Any = pyspiel.Bot

    class RebelBotImpl(bot_base):
        """Plays inside OpenSpiel's own game loop (``evaluate_bots`` and the like) with rebel's
        test-time search: per episode one sampled mode-(b) policy (each subgame stopped at a
        random CFR-D iteration, beliefs carried by that policy), read at the public state the
        OpenSpiel state's bids reach, for the bot's own hand (its dice in roll order)."""

        def __init__(self, game: Game, net: Any, player_id: int, solver: str, depth: int, iterations: int,
                     seed: int) -> None:
            pyspiel.Bot.__init__(self)
            from rebel.play.cards import Table

            if player_id not in (0, 1):
                raise ValueError(f"player_id must be 0 or 1, got {player_id}")
            self.player_id = player_id
            self._table = Table(game, net, solver=solver, depth=depth, iterations=iterations, seed=seed)
            self._layout = _Layout(game)
            self._episode: Optional[tuple[int, ...]] = None  # the chance outcomes of the episode in play
            self._policy: Optional[np.ndarray] = None

        def restart_at(self, state: Any) -> None:
            self._episode, self._policy = None, None

        def restart(self) -> None:
            self._episode, self._policy = None, None

        def inform_action(self, state: Any, player_id: int, action: int) -> None:
            pass

        def provides_policy(self) -> bool:
            return True

        def _policy_at(self, state: Any) -> dict[int, float]:
            layout, table = self._layout, self._table
            history = [int(a) for a in state.history()]
            chance = tuple(history[:layout.chance_actions])
            bids = layout.rebel_history(state.get_game(), history)  # public chance as rebel's events
            # A new episode: after restart_at (OpenSpiel's loops call it), or other dice.
            if self._policy is None or chance != self._episode:
                self._policy = table.search.sampled_policy(int(table.rng.integers(0, 2**63)))
                self._episode = chance
            own = chance[self.player_id * layout.dice:(self.player_id + 1) * layout.dice]
            hand = sum(d * layout.faces**i for i, d in enumerate(own))  # roll order, as rebel's hands
            node = int(table.tree.find(bids))
            first, count = int(table.tree.first_child[node]), int(table.tree.num_children[node])
            probs = {int(table.tree.action[c]): float(self._policy[c, hand]) for c in range(first, first + count)}
            total = sum(probs.values())
            return {a: p / total for a, p in probs.items()} if total > 0 else {a: 1 / len(probs) for a in probs}

        def step_with_policy(self, state: Any) -> tuple[list[tuple[int, float]], int]:
            probs = self._policy_at(state)
            actions = list(probs)
            action = actions[int(self._table.rng.choice(len(actions), p=np.array([probs[a] for a in actions])))]
            return list(probs.items()), action

        def step(self, state: Any) -> int:
            return self.step_with_policy(state)[1]

    return RebelBotImpl


#: The bot class (a ``pyspiel.Bot`` subclass); declared only: ``__getattr__`` makes it on first use.
RebelBot: type


def __getattr__(name: str) -> Any:
    if name == "RebelBot":  # the class needs pyspiel, so it is made on first use
        return _rebel_bot_class()
    raise AttributeError(name)
