"""Node locking on hold'em endgames by line: from the API, the command line and lock files.

The core (:meth:`rebel._core.HoldemSolver.lock`) fixes the whole strategy of one node of the
expanded game, every hand of its actor; its iterations and its best responses keep it, so the
exploitability measures the rest of the game. :func:`lock_line` locks the node a line names
(:mod:`rebel.games.holdem_lines`), and, when the line skips the dealt cards (``"check, check,
bet 120"`` on the turn), that betting node under every card.

A strategy is one of:

* an array ``(actions, hands)`` of the actor's frequencies, as the core takes it;
* action frequencies for every hand: ``{"call": 0.7, "fold": 0.3}``, the text
  ``"call:0.7, fold:0.3"`` (``70%`` also reads as 0.7) or one action, ``"call"``;
* hand groups to action frequencies: ``{"AA": "raise 300", "AKs, AsKd": {"call": 0.5, "fold":
  0.5}, "*": "fold"}``. A group is range text (:func:`rebel.games.holdem_ranges.parse_range`
  without weights: ``AA``, ``AKs``, ``T9o``, ``AsKd``, ``QQ-88``); a hand named by several
  groups takes the first's. ``*`` is every hand no group names. Without ``*``, the hands no
  group names keep the strategy the solver has at that node when it is locked (its average
  strategy: uniform before any iteration), so the whole node is locked, as in PioSOLVER: lock
  after solving, then solve again (``rebel solve --lock-file`` does both).

Frequencies name the node's actions by their labels (case, spaces and hyphens ignored), each in
[0, 1], summing to 1 within 0.001 (then rescaled); an action not named gets 0.

Command line (:func:`parse_lock_option`): ``LINE=FREQS`` for every hand, several separated by
``;`` (``"bet 120=call:0.7,fold:0.3; check, bet 120=call"``; an empty LINE is the root). Lock
files (:func:`load_lock_file`, YAML or JSON)::

    locks:
      - line: check, bet 120
        strategy: {call: 0.7, fold: 0.3}
      - line: bet 216
        strategy: {"QQ+, AKs": "raise 540", "*": fold}

Every problem is a one-line ValueError naming the lock.
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from rebel import _core
from rebel.games.holdem_lines import LineLike, action_labels, find_nodes, format_line, match_label, split_line
from rebel.games.holdem_ranges import combo_index, parse_range
from rebel.search.holdem_solve import check_same_game

__all__ = ["REST", "Lock", "StrategySpec", "check_lock", "load_lock_file", "lock_line", "lock_matrix",
           "parse_frequencies", "parse_lock_option"]

#: The hand group of every hand no other group names.
REST = "*"
#: How far from 1 a hand's frequencies may sum (they are rescaled to 1).
SUM_TOLERANCE = 1e-3

#: A strategy to lock (module docstring).
StrategySpec = Union[np.ndarray, str, Mapping[str, Any]]


@dataclass(frozen=True)
class Lock:
    """One lock: the line of a node and the strategy (module docstring)."""

    line: LineLike
    strategy: StrategySpec

    @property
    def complete(self) -> bool:
        """Whether the strategy names every hand (an array, action frequencies, or ``*``);
        else the hands it leaves keep the solver's strategy when locked."""
        if _kind(self.strategy, self.line) != "hands":
            return True
        return isinstance(self.strategy, Mapping) and any(str(k).strip() == REST for k in self.strategy)


def _where(line: LineLike) -> str:
    return f"lock {format_line(line)!r}"


def _number(value: Any, where: str) -> float:
    """A frequency: a number or a percentage (``70%``)."""
    if isinstance(value, bool):
        raise ValueError(f"{where}: frequency {value!r} is not a number")
    if isinstance(value, str):
        text = value.strip()
        try:
            x = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ValueError(f"{where}: frequency {value!r} is not a number or a percentage such as 70%") from None
    elif isinstance(value, (int, float, np.integer, np.floating)):
        x = float(value)
    else:
        raise ValueError(f"{where}: frequency {value!r} is not a number")
    if not (math.isfinite(x) and 0.0 <= x <= 1.0):
        raise ValueError(f"{where}: frequency {value!r} is outside [0, 1]")
    return x


def _frequency_items(spec: Any, where: str) -> list[tuple[str, Any]]:
    """(action, frequency) pairs of text (``call:0.7, fold:0.3`` or ``call``) or a mapping."""
    if isinstance(spec, Mapping):
        return [(str(k), v) for k, v in spec.items()]
    if not isinstance(spec, str):
        raise ValueError(f"{where}: a strategy is ACTION:FREQ,... or a mapping, got {spec!r}")
    items: list[tuple[str, Any]] = []
    for part in spec.split(","):
        if not part.strip():
            raise ValueError(f"{where}: empty entry in {spec!r}; write ACTION:FREQ,... (e.g. call:0.7,fold:0.3)")
        action, sep, freq = part.partition(":")
        if not action.strip():
            raise ValueError(f"{where}: entry {part.strip()!r} names no action; write ACTION:FREQ (e.g. call:0.7)")
        items.append((action.strip(), freq.strip() if sep else 1.0))
    if not items:
        raise ValueError(f"{where}: empty strategy; write ACTION:FREQ,... (e.g. call:0.7,fold:0.3)")
    return items


def _range_error(text: str) -> str:
    try:
        parse_range(text)
    except ValueError as e:
        return str(e)
    return ""


def parse_frequencies(spec: Any, actions: Sequence[str], where: str = "lock", keys_may_be_hands: bool = False
                      ) -> np.ndarray:
    """Frequencies over ``actions`` (float64, summing to 1) from text or a mapping (module
    docstring). ``keys_may_be_hands``: an unknown key is said to be no hand group either."""
    out = np.zeros(len(actions))
    seen: set[int] = set()
    for action, value in _frequency_items(spec, where):
        i = match_label(action, actions)
        if i is None:
            close = difflib.get_close_matches(action, list(actions), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            if keys_may_be_hands and isinstance(spec, Mapping):
                raise ValueError(f"{where}: {action!r} is neither an action here (actions: {', '.join(actions)})"
                                 f"{hint} nor a hand group ({_range_error(action)})")
            raise ValueError(f"{where}: {action!r} is not an action here (actions: {', '.join(actions)}){hint}")
        if i in seen:
            raise ValueError(f"{where}: action {actions[i]!r} given twice")
        seen.add(i)
        out[i] = _number(value, where)
    total = float(out.sum())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"{where}: frequencies sum to {total:.6g}, not 1")
    return out / total


def _is_hand_group(key: str) -> bool:
    if key == REST:
        return True
    try:
        parse_range(key)
    except ValueError:
        return False
    return True


def _kind(strategy: Any, line: LineLike) -> str:
    """``'array'``, ``'actions'`` (frequencies for every hand) or ``'hands'`` (hand groups)."""
    if isinstance(strategy, np.ndarray):
        return "array"
    if isinstance(strategy, str):
        return "actions"
    if not isinstance(strategy, Mapping) or not strategy:
        raise ValueError(f"{_where(line)}: a strategy is an array, ACTION:FREQ text or a non-empty mapping, "
                         f"got {strategy!r}")
    groups = [_is_hand_group(str(k)) for k in strategy]
    if all(groups):
        return "hands"
    if not any(groups):
        return "actions"
    keys = list(strategy)
    other = str(keys[groups.index(False)])
    raise ValueError(f"{_where(line)}: the strategy mixes hand groups ({keys[groups.index(True)]!r}) and actions "
                     f"or bad hand groups ({other!r}: {_range_error(other)}); give {{GROUP: {{ACTION: FREQ}}}} or "
                     "{ACTION: FREQ}")


def _group_mask(game: _core.HoldemEndgame, player: int, key: str, where: str) -> np.ndarray:
    """Which of ``player``'s hands the hand group ``key`` names."""
    if ":" in key:
        raise ValueError(f"{where}: hand group {key!r} has a weight; name hands only (e.g. AA, AKs, AsKd, QQ-88)")
    try:
        weights = parse_range(key, game.node(0)["board"])
    except ValueError as e:
        raise ValueError(f"{where}: hand group {key!r}: {e}") from None
    index = np.array([combo_index(int(a), int(b)) for a, b in game.hands(player)], dtype=np.int64)
    mask = weights[index] > 0
    if not mask.any():
        who = ("OOP", "IP")[player]
        raise ValueError(f"{where}: hand group {key!r} holds none of {who}'s hands")
    return mask


def lock_matrix(game: _core.HoldemEndgame, node: int, strategy: StrategySpec,
                base: np.ndarray | None = None, line: LineLike | None = None) -> np.ndarray:
    """The ``(actions, hands)`` float32 strategy to lock at decision ``node``; ``base``: the
    rows of the hands a hand-group strategy leaves (default uniform)."""
    line = line if line is not None else str(node)
    where = _where(line)
    actions = action_labels(game, node)
    player = int(game.node(node)["player"])
    H = game.num_hands(player)
    kind = _kind(strategy, line)
    if kind == "array":
        out = np.asarray(strategy, dtype=np.float64)
        if out.shape != (len(actions), H):
            raise ValueError(f"{where}: strategy of shape {out.shape}, expected (actions, hands) = {(len(actions), H)}")
    elif kind == "actions":
        out = np.repeat(parse_frequencies(strategy, actions, where, keys_may_be_hands=True)[:, None], H, axis=1)
    else:
        assert isinstance(strategy, Mapping)
        out = np.full((len(actions), H), 1.0 / len(actions)) if base is None else np.array(base, dtype=np.float64)
        named = np.zeros(H, dtype=bool)
        rest = None
        for key, value in strategy.items():
            key = str(key).strip()
            freqs = parse_frequencies(value, actions, f"{where}, hands {key!r}")
            if key == REST:
                rest = freqs
                continue
            mask = _group_mask(game, player, key, where) & ~named  # the first group naming a hand wins
            out[:, mask] = freqs[:, None]
            named |= mask
        if rest is not None:
            out[:, ~named] = rest[:, None]
    if not np.all(np.isfinite(out)) or (out < 0).any():
        raise ValueError(f"{where}: frequencies must be finite and >= 0")
    sums = out.sum(axis=0)
    if (np.abs(sums - 1.0) > SUM_TOLERANCE).any():
        h = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(f"{where}: hand {h}'s frequencies sum to {sums[h]:.6g}, not 1")
    return (out / sums).astype(np.float32)


def check_lock(game: _core.HoldemEndgame, line: LineLike, strategy: StrategySpec) -> list[int]:
    """The decision nodes a lock applies to, its strategy checked against them (nothing locked)."""
    nodes = find_nodes(game, line)
    kinds = {game.node(n)["kind"] for n in nodes}
    if kinds != {"decision"}:
        raise ValueError(f"{_where(line)}: the line ends at a {sorted(kinds - {'decision'})[0]} node; lock a "
                         "node where a player acts")
    lock_matrix(game, nodes[0], strategy, line=line)
    return nodes


def lock_line(engine: _core.HoldemSolver, game: _core.HoldemEndgame, line: LineLike,
              strategy: StrategySpec) -> list[int]:
    """Locks the node ``line`` names (under every dealt card the line skips) to ``strategy``
    (module docstring); returns the locked node ids. Hands a hand-group strategy leaves keep
    the solver's average strategy there."""
    check_same_game(engine, game)
    nodes = check_lock(game, line, strategy)
    for node in nodes:
        engine.lock(node, lock_matrix(game, node, strategy, engine.average_strategy(node), line))
    return nodes


def parse_lock_option(text: str) -> list[Lock]:
    """Locks from the command line's ``LINE=FREQS;LINE=FREQS`` (module docstring)."""
    locks = []
    for entry in text.split(";"):
        if not entry.strip():
            continue
        line, sep, freqs = entry.partition("=")
        if not sep or not freqs.strip():
            raise ValueError(f"lock {entry.strip()!r} must be LINE=ACTION:FREQ,... (e.g. 'check, bet 120=call:0.7,"
                             "fold:0.3')")
        split_line(line)  # checks for empty steps
        for _, value in _frequency_items(freqs.strip(), _where(line)):
            _number(value, _where(line))
        locks.append(Lock(line.strip(), freqs.strip()))
    if not locks:
        raise ValueError(f"lock {text!r} names no node; write LINE=ACTION:FREQ,...")
    return locks


_KEYS = ("line", "strategy")


def load_lock_file(path: Union[str, Path]) -> list[Lock]:
    """Locks from a YAML or JSON file of ``locks: [{line: ..., strategy: ...}, ...]`` (module docstring)."""
    from omegaconf import OmegaConf

    where = f"lock file {str(path)!r}"
    if not Path(path).is_file():
        raise ValueError(f"{where} not found")
    try:
        data = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except Exception as e:  # yaml's errors derive from neither ValueError nor OSError
        raise ValueError(f"{where}: not valid YAML or JSON: {' '.join(str(e).split())}") from None
    if not isinstance(data, Mapping) or set(data) != {"locks"} or not isinstance(data["locks"], list) \
            or not data["locks"]:
        raise ValueError(f"{where}: expected one key, locks: a list of {{line: LINE, strategy: STRATEGY}}")
    locks = []
    for i, item in enumerate(data["locks"]):
        at = f"{where}: locks[{i}]"
        if not isinstance(item, Mapping):
            raise ValueError(f"{at} must be a mapping of line and strategy, got {item!r}")
        for key in item:
            if key not in _KEYS:
                close = difflib.get_close_matches(str(key), _KEYS, n=1, cutoff=0.6)
                raise ValueError(f"{at}: unknown key {key!r}; " + (f"did you mean {close[0]!r}?" if close
                                                                     else "the keys are line and strategy"))
        if "line" not in item or "strategy" not in item:
            raise ValueError(f"{at}: needs both line and strategy")
        line = item["line"] if item["line"] is not None else ""
        if not isinstance(line, (str, list)):
            raise ValueError(f"{at}.line must be text or a list of steps, got {line!r}")
        try:
            split_line(line)
            _kind(item["strategy"], line)
        except ValueError as e:
            raise ValueError(f"{at}: {e}") from None
        locks.append(Lock(line, item["strategy"]))
    return locks

