"""Hold'em endgame spots as OpenSpiel ``universal_poker`` games (optional extra: ``pip install .[openspiel]``).

The independent check of the hold'em endgame solver (issue 92): a short-deck spot whose betting
is universal_poker's fold / call / pot / all-in abstraction (``fcpa``) is written as the
universal_poker game with the same rules (:func:`universal_poker_game_string`), our solved average
strategy is exported as an OpenSpiel policy (:func:`export_policy`: one entry per universal_poker
information state), and OpenSpiel's own exact best response scores it (:func:`openspiel_values`).
The exact best response enumerates every deal, so only short decks fit (a river spot of 6 ranks x
3 suits or a turn spot of 6 x 2 takes about 6 s per policy, one of 5 x 2 under a second).

>>> from rebel.interop import openspiel_holdem as oh                      # doctest: +SKIP
>>> spot = oh.fcpa_spot("2c3d4c5d", pot=10, stack=30, ranks=5, suits=2)   # doctest: +SKIP
>>> engine, _ = solve_spot(spot, "dcfr", 100)                              # doctest: +SKIP
>>> os_game, table = oh.export_policy(spot, build_endgame(spot), engine)   # doctest: +SKIP
>>> oh.openspiel_values(spot, os_game, table)["exploitability"]            # = engine.exploitability()

The rules and how each one is made equal (docs/holdem_spots.md, "OpenSpiel's universal_poker"):

* **Starting pot.** universal_poker's ``potSize`` parameter cannot be used: it sets each player's
  chips in to ``potSize / 2`` but leaves the ACPC state's largest commitment (``maxSpent``) and
  minimum raise at the blinds' (and blinds must be at least 1 chip), so a check *lowers* the
  checker's chips in to the blind and the pot action is computed from the wrong commitment. The
  pot is instead posted as two equal blinds of ``pot / 2``: with equal blinds the first player
  faces nothing (check, pot or all-in, no fold), and a street closes after check-check or a call,
  as ours. An odd pot doubles every amount (blinds ``pot``, stacks ``2 * stack + pot``):
  :func:`chip_scale` is then 2 and OpenSpiel's chips are half-chips of ours.
* **Stacks.** ACPC's ``stack`` is a player's whole money in the hand, blinds included: ``stack +
  pot / 2`` (ours is the stack behind the pot).
* **Utilities.** universal_poker's returns are the chips won against the start of the hand
  (blinds included): the winner gains what the loser put in, half the starting pot included, a
  tie 0. That is our reference point, so the values agree without an offset (times
  :func:`chip_scale`).
* **Streets.** ``numRounds`` is the number of streets the spot plays (river 1, turn 2, flop 3);
  ``numBoardCards`` is the board's length then 1 per later street; ``boardCards`` is the board;
  ``firstPlayer`` is 1 on every round (ACPC counts players from 1: our player 0, OOP, acts first
  on every street); ``numHoleCards`` 2; ``numRanks``/``numSuits`` the short deck (the lowest
  ranks from 2 and the first suits of c, d, h, s, as ours). A one-round game's list parameters
  (``firstPlayer=1``) would parse as an integer in OpenSpiel's game string and be refused, so
  every list value is written with a trailing space (``firstPlayer=1 ``), which OpenSpiel keeps
  as text.
* **Betting.** fcpa's pot action raises to ``maxSpent + (pot + to call)``, i.e. the bet faced
  plus the pot after calling it: our ``100%`` bet and raise. It is offered when it is at least
  the minimum raise (always: the pot after a call is at least the last increment) and at most
  the stack; equal to the stack it is the one all-in action (OpenSpiel then offers action 2,
  "pot", and no 3), above the stack only the all-in remains. Our ``100%`` clamped to the stack
  and merged with ``a`` gives the same set, so the spot's sizes are ``100%, a`` for bets and
  raises on every street, with no add-all-in, force-all-in or merging threshold (each 0) and no
  donk sizes. Facing an all-in both offer fold and call only. ACPC's ``maxRaises`` per round
  counts bets and raises: our ``raise_cap`` (none: 255, ACPC's default, never reached).
* **Deals.** universal_poker deals each player's two hole cards uniformly from the deck less the
  board (player 0's first), then each later street's card uniformly from what is left. Our spot
  weights every pair of hands that share no card by ``w0 * w1``; with uniform ranges (``full``)
  that is the same distribution, and a river card is dealt uniformly from the cards outside the
  board and both hands in both. universal_poker's ``handReaches`` (ranges) exists only for the
  full 52-card deck, so spots with other ranges are refused.
* **Cards and hand ranks.** Both number a card ``rank * 4 + suit``; OpenSpiel's chance outcome
  ``i`` is the ``i``-th card of the short deck in that order (:func:`deck_outcomes`). Its source
  warns that ``numSuits < 4`` breaks ``ChanceOutcomeToCard``; in open_spiel 2.0.2 the outcome
  indexes ``CardSet::ToCardArray`` of the short deck, which is this order (the tests check it by
  the card names OpenSpiel shows). Both rank the best five of the seven cards
  with standard hold'em ranks whatever the deck (no short-deck rules; a straight needs its
  five ranks in the deck, the wheel an ace).
* **Information states.** A universal_poker information state is the player, the hole cards
  (unordered), the board and the betting sequence with amounts: one per (player, hand, public
  node of the expanded tree), so the exported table holds each of our strategy rows once.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations
from typing import Any, Optional, Union

import numpy as np

from rebel import _core
from rebel.games.holdem_bets import BetSize, BetSizes
from rebel.games.holdem_ranges import cards_name, deck_cards, parse_cards
from rebel.games.holdem_spot import STREETS, Spot
from rebel.games.holdem_tree import CHANCE, DECISION, FOLD, KIND_NAMES, ActionTree, build_action_tree
from rebel.interop.openspiel import _pyspiel

log = logging.getLogger(__name__)

__all__ = ["FCPA_SIZES", "chip_scale", "check_fcpa_spot", "deck_outcomes", "export_policy", "fcpa_spot",
           "openspiel_values", "universal_poker_game", "universal_poker_game_string", "universal_poker_params"]

#: The sizes of universal_poker's fcpa abstraction in our syntax: the pot-sized bet or raise and all-in.
FCPA_SIZES = BetSizes.from_text("100%, a", "100%, a")
#: OpenSpiel's fcpa action ids: fold, check or call, pot-sized bet or raise, all-in.
FOLD_ACTION, CALL_ACTION, POT_ACTION, ALL_IN_ACTION = 0, 1, 2, 3
#: ACPC's default cap on raises per round (UINT8_MAX), written when the spot has no raise cap.
_NO_CAP = 255

#: An OpenSpiel tabular policy: information-state string -> [(action, probability), ...].
PolicyTable = dict[str, list[tuple[int, float]]]


def _size_key(size: BetSize) -> tuple[str, float, int, float, int]:
    return (size.kind, size.value, size.streets, size.max_pot, size.cap)


def _same_sizes(a: Sequence[BetSize], b: Sequence[BetSize]) -> bool:
    return sorted(map(_size_key, a)) == sorted(map(_size_key, b))


def fcpa_spot(board: Union[str, Sequence[Union[int, str]]], pot: int, stack: int, ranks: int, suits: int,
              raise_cap: Optional[int] = None, description: str = "universal_poker fcpa") -> Spot:
    """The spot whose betting tree is universal_poker's fcpa: bets and raises ``100%, a`` on every
    street the board leaves, full ranges, no thresholds, no donk sizes (ValueError as ``Spot``)."""
    cards = tuple(parse_cards(board))
    street = len(cards) - 3
    streets = [(FCPA_SIZES, FCPA_SIZES) if s >= street else (BetSizes(), BetSizes()) for s in range(3)]
    return Spot(board=cards, pot=pot, stack=stack, ranges=("full", "full"), bets=(streets[0], streets[1], streets[2]),
                raise_cap=raise_cap, ranks=ranks, suits=suits, description=description)


def check_fcpa_spot(spot: Spot) -> None:
    """ValueError (one line, naming the first difference) unless ``spot`` has universal_poker's rules:
    fcpa sizes on every street it plays, no thresholds or donk sizes, uniform ranges."""
    for street in range(spot.street, 3):
        for player, name in enumerate(("oop", "ip")):
            sizes = spot.bets[street][player]
            for kind, have, want in (("bet", sizes.bet, FCPA_SIZES.bet), ("raise", sizes.raise_, FCPA_SIZES.raise_)):
                if not _same_sizes(have, want):
                    raise ValueError(f"bets.{STREETS[street]}.{name}.{kind} is "
                                     f"{', '.join(map(str, have)) or 'empty'}; universal_poker's fcpa abstraction "
                                     "needs '100%, a' (the pot-sized bet or raise and all-in)")
    for name in ("add_all_in_threshold", "force_all_in_threshold", "merging_threshold"):
        if getattr(spot, name) != 0:
            raise ValueError(f"{name} is {getattr(spot, name)}; universal_poker's fcpa has none (0)")
    if any(d is not None for d in spot.donk):
        raise ValueError("donk sizes: universal_poker's fcpa offers OOP the same sizes after a call")
    deck = set(deck_cards(spot.ranks, spot.suits)) - set(spot.board)
    for player, name in enumerate(("oop", "ip")):
        hands, weights = spot.hands(player)
        if len(hands) != len(deck) * (len(deck) - 1) // 2 or np.ptp(weights) != 0:
            raise ValueError(f"ranges.{name}: universal_poker deals every hand alike (handReaches needs the full "
                             "52-card deck), so the range must be 'full' (one weight for every hand)")


def chip_scale(spot: Spot) -> int:
    """OpenSpiel's chips per chip of ours: 1, or 2 for an odd pot (blinds are whole chips)."""
    return 1 if spot.pot % 2 == 0 else 2


def _acpc_list(values: Sequence[int]) -> str:
    # A trailing space keeps a one-number list text in OpenSpiel's game string (module docstring);
    # longer lists are text anyway (a trailing space there would be an empty stack).
    return " ".join(str(v) for v in values) + (" " if len(values) == 1 else "")


def universal_poker_params(spot: Spot) -> dict[str, Union[int, str]]:
    """universal_poker's parameters for ``spot`` (module docstring); ValueError for a spot whose
    rules universal_poker cannot play (:func:`check_fcpa_spot`)."""
    check_fcpa_spot(spot)
    scale = chip_scale(spot)
    rounds = 3 - spot.street
    blind = spot.pot * scale // 2
    stack = spot.stack * scale + blind
    return {"betting": "nolimit", "numPlayers": 2, "numRounds": rounds,
            "blind": _acpc_list([blind, blind]), "stack": _acpc_list([stack, stack]),
            "firstPlayer": _acpc_list([1] * rounds),
            "maxRaises": _acpc_list([_NO_CAP if spot.raise_cap is None else spot.raise_cap] * rounds),
            "numSuits": spot.suits, "numRanks": spot.ranks, "numHoleCards": 2,
            "numBoardCards": _acpc_list([len(spot.board)] + [1] * (rounds - 1)),
            "boardCards": cards_name(spot.board), "bettingAbstraction": "fcpa"}


def universal_poker_game_string(spot: Spot) -> str:
    """The universal_poker game string of ``spot``, e.g. ``universal_poker(betting=nolimit,...)``."""
    params = universal_poker_params(spot)
    return "universal_poker(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")"


def universal_poker_game(spot: Spot) -> Any:
    """The OpenSpiel game of ``spot`` (ImportError without OpenSpiel)."""
    return _pyspiel().load_game(universal_poker_game_string(spot))


def deck_outcomes(spot: Spot) -> list[int]:
    """Our card of each OpenSpiel deal outcome: outcome ``i`` is the ``i``-th card of the short
    deck, ranks from 2 up, suits c, d, h, s within a rank."""
    return deck_cards(spot.ranks, spot.suits)


#: A decision met by the walk: OpenSpiel's state, our betting-tree node, the board, OpenSpiel's action -> our child.
_Decision = tuple[Any, int, tuple[int, ...], dict[int, int]]


class _Walk:
    """Walks OpenSpiel's game and our betting tree together, one player's hand at a time."""

    def __init__(self, spot: Spot, os_game: Any, tree: ActionTree) -> None:
        self.spot, self.os_game, self.tree = spot, os_game, tree
        self.scale = chip_scale(spot)
        self.deck = deck_outcomes(spot)
        self.outcome = {card: i for i, card in enumerate(self.deck)}

    def state(self, player: int, hand: tuple[int, int], actions: Sequence[int], board: Sequence[int]) -> Any:
        """OpenSpiel's state where ``player`` holds ``hand`` after ``actions`` (betting actions and
        later board cards' outcomes); the other player holds any two cards that fit."""
        taken = set(hand) | set(board)
        other = tuple(c for c in self.deck if c not in taken)[:2]
        state = self.os_game.new_initial_state()
        for card in (hand + other if player == 0 else other + hand):
            state.apply_action(self.outcome[card])
        for action in actions:
            state.apply_action(action)
        return state

    def children(self, state: Any, node: int) -> dict[int, int]:
        """Our child of each OpenSpiel action at decision ``node``, matched by the chips each
        player has in after it (ValueError where the two games offer different actions)."""
        tree = self.tree
        kids = tree.children_of(node).tolist()
        line = " / ".join(tree.line(node)) or "the root"
        if state.current_player() != tree.player[node]:
            raise ValueError(f"at {line}: OpenSpiel's player {state.current_player()} acts, ours {tree.player[node]}")
        out: dict[int, int] = {}
        for action in state.legal_actions():
            after = state.child(action)
            if action == FOLD_ACTION:
                match = [k for k in kids if tree.kind[k] == FOLD]
            else:
                chips = np.array(after.to_struct().player_contributions, dtype=np.float64) / self.scale
                match = [k for k in kids if tree.kind[k] != FOLD and np.array_equal(tree.invested[k], chips)]
            name = state.action_to_string(action)
            if len(match) != 1:
                raise ValueError(f"at {line}: OpenSpiel's action {name} has no single counterpart among ours "
                                 f"({', '.join(tree.labels[k] for k in kids)})")
            kind = int(tree.kind[match[0]])
            same = (after.is_chance_node() if kind == CHANCE else
                    after.current_player() == tree.player[match[0]] if kind == DECISION else after.is_terminal())
            if not same:
                raise ValueError(f"at {line}: after OpenSpiel's action {name} its game goes on otherwise than ours "
                                 f"({KIND_NAMES[kind]} after {tree.labels[match[0]]})")
            out[action] = match[0]
        if sorted(out.values()) != sorted(kids):
            raise ValueError(f"at {line}: OpenSpiel offers {len(out)} actions, we offer {len(kids)} "
                             f"({', '.join(tree.labels[k] for k in kids)})")
        return out

    def decisions(self, player: int, hand: tuple[int, int]) -> Iterator[_Decision]:
        """Every decision below the root with ``player`` holding ``hand``: (OpenSpiel state, our
        betting-tree node, the board, OpenSpiel action -> our child)."""
        tree = self.tree
        stack: list[tuple[int, list[int], tuple[int, ...]]] = [(0, [], tuple(self.spot.board))]
        while stack:
            node, actions, board = stack.pop()
            kind = int(tree.kind[node])
            if kind == CHANCE:
                child = int(tree.children_of(node)[0])
                for card in self.deck:
                    if card not in board and card not in hand:
                        stack.append((child, actions + [self.outcome[card]], board + (card,)))
                continue
            if kind != DECISION:
                continue
            state = self.state(player, hand, actions, board)
            kids = self.children(state, node)
            yield state, node, board, kids
            for action, child in kids.items():
                stack.append((child, actions + [action], board))


def _decision_index(game: _core.HoldemEndgame) -> dict[tuple[int, tuple[int, ...]], int]:
    """(betting-tree node, board) -> the expanded game's decision node."""
    index = {}
    for i in range(game.num_nodes):
        node = game.node(i)
        if node["kind"] == "decision":
            index[(int(node["action"]), tuple(node["board"]))] = i
    return index


def export_policy(spot: Spot, game: _core.HoldemEndgame,
                  strategy: Union[_core.HoldemSolver, Callable[[int], np.ndarray]],
                  tree: Optional[ActionTree] = None, os_game: Any = None) -> tuple[Any, PolicyTable]:
    """Our strategy as OpenSpiel's ``(game, table)``: ``table`` maps every information state of
    :func:`universal_poker_game` to ``[(action, probability), ...]`` (``pyspiel.TabularPolicy(table)``
    makes it a policy; ``pyspiel.exploitability(game, table)`` scores it).

    ``strategy``: a solver (its average strategy) or a function of an expanded decision node giving
    (actions, hands of the actor), as ``HoldemSolver.average_strategy``. ``game`` and ``tree``: the
    spot's expanded game and betting tree (built from ``spot`` unless given). Each row is
    normalised in float64. ValueError where the spot or its tree differ from universal_poker's.
    """
    tree = build_action_tree(spot) if tree is None else tree
    os_game = universal_poker_game(spot) if os_game is None else os_game
    rows: Callable[[int], np.ndarray] = (strategy.average_strategy if isinstance(strategy, _core.HoldemSolver)
                                         else strategy)
    walk = _Walk(spot, os_game, tree)
    expanded = _decision_index(game)
    live = [c for c in walk.deck if c not in spot.board]
    table: PolicyTable = {}
    for player in (0, 1):
        hand_index = {tuple(int(c) for c in h): i for i, h in enumerate(game.hands(player))}
        cache: dict[int, np.ndarray] = {}
        for hand in combinations(live, 2):
            h = hand_index[hand]
            for state, node, board, kids in walk.decisions(player, hand):
                if tree.player[node] != player:
                    continue
                e = expanded[(node, board)]
                sigma = cache.get(e)
                if sigma is None:
                    sigma = cache[e] = np.asarray(rows(e), dtype=np.float64)
                position = {int(k): a for a, k in enumerate(tree.children_of(node))}
                probs = np.array([sigma[position[k], h] for k in kids.values()])
                probs /= probs.sum()
                table[state.information_state_string(player)] = list(zip(kids, probs.tolist()))
    log.info("exported %d information states of %s", len(table), spot.describe())
    return os_game, table


def openspiel_values(spot: Spot, os_game: Any, table: PolicyTable, detail: bool = False) -> dict[str, Any]:
    """OpenSpiel's evaluation of ``table``, in our chips (OpenSpiel's divided by :func:`chip_scale`):
    ``exploitability`` (``pyspiel.exploitability``: (BR value of player 0 + that of player 1) / 2),
    and with ``detail`` (each enumerates the game again) ``best_response_values``
    (``pyspiel.TabularBestResponse`` of each player) and ``values`` (both players' expected
    returns, ``pyspiel.expected_returns``)."""
    pyspiel = _pyspiel()
    scale = chip_scale(spot)
    out: dict[str, Any] = {"exploitability": pyspiel.exploitability(os_game, table) / scale}
    if detail:
        root = os_game.new_initial_state()
        out["best_response_values"] = tuple(
            pyspiel.TabularBestResponse(os_game, p, table).value_from_state(root) / scale for p in (0, 1))
        returns = pyspiel.expected_returns(root, pyspiel.TabularPolicy(table), -1, True)
        out["values"] = tuple(v / scale for v in returns)
    return out
