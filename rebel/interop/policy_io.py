"""Export and import of full-game policies as JSON or NumPy ``.npz`` files.

In memory a policy is the core's flat layout over the full public tree: a float64 array of
shape ``(tree.size, game.num_hands)`` where ``policy[c, h]`` is the probability that the
player acting at ``parent(c)``, holding hand ``h``, takes the action leading to ``c``.

JSON layout (docs/policy_format.md)::

    {"game": {"name": "liars_dice", "num_dice": 1, "num_faces": 4},
     "policy": {"<hand>|<comma-separated action ids played so far>":
                    [one probability per action id; illegal actions 0], ...}}

``<hand>`` is the acting player's hand id (Liar's Dice: die i = (h // F**i) % F). Every
decision point (decision node x hand of the acting player) is present. Floats are written
with ``repr`` precision, so export then import reproduces the array bit for bit.

The ``.npz`` layout holds ``game`` (JSON text of the game config), ``policy`` (the array
above) and the tree's ``parent`` and ``action`` arrays, which pin the node order.

Files are written atomically (temporary file, fsync, ``os.replace``). Imports are strict:
every problem raises ``ValueError`` with a message naming it.
"""
from __future__ import annotations

import io
import json
import os
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from rebel import _core
from rebel.games import Game, game_config, game_from_config
from rebel.util.atomic_io import atomic_write_bytes

PathLike = Union[str, "os.PathLike[str]"]

#: Allowed deviation of a decision point's probabilities from summing to 1.
SUM_TOLERANCE = 1e-6

_KEY_RE = re.compile(r"^(0|[1-9][0-9]*)\|((0|[1-9][0-9]*)(,(0|[1-9][0-9]*))*)?$")
_NPZ_KEYS = ("game", "policy", "parent", "action")

__all__ = [
    "LoadedPolicy",
    "SUM_TOLERANCE",
    "check_policy",
    "load_policy",
    "load_policy_json",
    "load_policy_npz",
    "policy_from_arrays",
    "policy_from_json_dict",
    "policy_to_arrays",
    "policy_to_json_dict",
    "save_policy",
    "save_policy_json",
    "save_policy_npz",
    "sniff_policy_format",
]


@dataclass(frozen=True)
class LoadedPolicy:
    """A policy read from a file, with the game and full tree it lives on."""

    game: Game
    tree: _core.PublicTree
    policy: np.ndarray  # (tree.size, game.num_hands) float64


# --------------------------------------------------------------------------- helpers


def _full_tree(game: Game, tree: _core.PublicTree | None) -> _core.PublicTree:
    if tree is None:
        return _core.build_tree(game)
    if tree.history(0) != [] or len(tree.pseudo_leaves) != 0:
        raise ValueError("policy files describe full-game policies; got a depth-limited or non-root tree")
    return tree


def _histories(tree: _core.PublicTree) -> list[str]:
    """Comma-separated action history of every node (parents precede children)."""
    parent, action = tree.parent.tolist(), tree.action.tolist()
    out = [""] * len(tree)
    for n in range(1, len(tree)):
        p = parent[n]
        out[n] = f"{out[p]},{action[n]}" if out[p] else str(action[n])
    return out


def _child_ranges(tree: _core.PublicTree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(internal nodes, first child of each, whether a player decides there); the internal
    nodes' child ranges tile nodes 1..size-1 (chance nodes' children carry no policy)."""
    nodes = np.asarray(tree.internal_nodes)
    starts = np.asarray(tree.first_child)[nodes]
    counts = np.asarray(tree.num_children)[nodes]
    order = np.argsort(starts, kind="stable")
    nodes, starts, counts = nodes[order], starts[order], counts[order]
    if len(nodes) and (starts[0] != 1 or np.any(starts[1:] != starts[:-1] + counts[:-1])
                       or starts[-1] + counts[-1] != len(tree)):
        raise RuntimeError("unexpected public tree layout: child ranges do not tile the nodes")
    return nodes, starts, np.asarray(tree.player)[nodes] != _core.CHANCE_PLAYER


def _game_label(game: Game) -> str:
    return game.description()


def check_policy(game: Game, tree: _core.PublicTree, policy: Any) -> np.ndarray:
    """Validates a policy array on the full tree and returns it as a float64 array.

    Raises ``TypeError`` for a non-array or non-float64 dtype and ``ValueError`` for a wrong
    shape, non-finite or negative entries, or a decision point that does not sum to 1
    (within :data:`SUM_TOLERANCE`); messages name the decision point.
    """
    if not isinstance(policy, np.ndarray):
        raise TypeError(f"policy must be a numpy array, got {type(policy).__name__}")
    if policy.dtype != np.float64:
        raise TypeError(f"policy must have dtype float64, got {policy.dtype}")
    expected = (len(tree), game.num_hands)
    if policy.shape != expected:
        raise ValueError(f"policy has shape {policy.shape}, expected {expected} (nodes x hands)")
    bad = ~np.isfinite(policy) | (policy < 0)
    if bad.any():
        n, h = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"policy entry at node {n} ({_node_desc(tree, n)}), hand {h} is "
                         f"{policy[n, h]!r}; probabilities must be finite and non-negative")
    nodes, starts, decides = _child_ranges(tree)
    if len(nodes):
        sums = np.add.reduceat(policy[1:], starts - 1, axis=0)  # (internal nodes, hands)
        off = (np.abs(sums - 1.0) > SUM_TOLERANCE) & decides[:, None]
        if off.any():
            i, h = (int(x) for x in np.argwhere(off)[0])
            raise ValueError(f"policy at decision point '{h}|{','.join(map(str, tree.history(int(nodes[i]))))}' "
                             f"sums to {sums[i, h]!r}, not 1")
    return policy


def _node_desc(tree: _core.PublicTree, n: int) -> str:
    return "history [" + ",".join(map(str, tree.history(n))) + "]"


def _game_from_file_config(config: Any, expected: Game | None, source: str) -> Game:
    if not isinstance(config, dict):
        raise ValueError(f"{source}: 'game' must be an object like {{\"name\": ..., ...}}")
    try:
        game = game_from_config(config)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{source}: bad game description: {e}") from None
    if expected is not None and game_config(game) != game_config(expected):
        raise ValueError(f"{source}: policy is for {_game_label(game)}, expected {_game_label(expected)}")
    return game


# ------------------------------------------------------------------------------ JSON


def policy_to_json_dict(game: Game, policy: np.ndarray, tree: _core.PublicTree | None = None) -> dict[str, Any]:
    """The JSON document of a full-game policy (see the module docstring)."""
    tree = _full_tree(game, tree)
    check_policy(game, tree, policy)
    histories = _histories(tree)
    first, count, action = tree.first_child.tolist(), tree.num_children.tolist(), tree.action.tolist()
    H, A = game.num_hands, game.num_actions
    entries: dict[str, list[float]] = {}
    for n in tree.decision_nodes.tolist():
        kids = range(first[n], first[n] + count[n])
        rows = np.zeros((H, A))
        rows[:, [action[c] for c in kids]] = policy[first[n]:first[n] + count[n]].T
        for h, row in enumerate(rows.tolist()):
            entries[f"{h}|{histories[n]}"] = row
    return {"game": game_config(game), "policy": entries}


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-finite number {name} is not a probability")


def policy_from_json_dict(doc: Any, expected_game: Game | None = None, source: str = "policy") -> LoadedPolicy:
    """Parses and strictly validates a JSON policy document (already decoded)."""
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: top level must be an object with keys 'game' and 'policy'")
    missing_top = [k for k in ("game", "policy") if k not in doc]
    extra_top = sorted(set(doc) - {"game", "policy"})
    if missing_top or extra_top:
        parts = ([f"missing key(s) {missing_top}"] if missing_top else []) + \
                ([f"unknown key(s) {extra_top}"] if extra_top else [])
        raise ValueError(f"{source}: " + "; ".join(parts))
    game = _game_from_file_config(doc["game"], expected_game, source)
    entries = doc["policy"]
    if not isinstance(entries, dict):
        raise ValueError(f"{source}: 'policy' must be an object mapping '<hand>|<actions>' to lists")

    tree = _core.build_tree(game)
    histories = _histories(tree)
    first, count, action = tree.first_child.tolist(), tree.num_children.tolist(), tree.action.tolist()
    H, A = game.num_hands, game.num_actions
    expected_keys = {f"{h}|{histories[n]}": (n, h) for n in tree.decision_nodes.tolist() for h in range(H)}

    unexpected = [k for k in entries if k not in expected_keys]
    if unexpected:
        k = unexpected[0]
        why = "is malformed (expected '<hand>|<action ids>')" if not _KEY_RE.match(k) else \
              "is not a decision point of this game (bad hand, illegal or terminal history)"
        raise ValueError(f"{source}: key {k!r} {why}; {len(unexpected)} unexpected key(s) in all")
    if len(entries) != len(expected_keys):
        missing = [k for k in expected_keys if k not in entries]
        raise ValueError(f"{source}: {len(missing)} of {len(expected_keys)} decision points missing, "
                         f"first {missing[0]!r} (the file may be truncated)")

    keys = list(expected_keys)  # decision node major, hand minor
    for key in keys:
        row = entries[key]
        if not isinstance(row, list) or len(row) != A:
            got = f"a list of {len(row)}" if isinstance(row, list) else type(row).__name__
            raise ValueError(f"{source}: {key!r} must be a list of {A} probabilities (one per action id), got {got}")
        if not {type(x) for x in row} <= {int, float}:
            raise ValueError(f"{source}: {key!r} holds a non-number: {row!r}")
    probs = np.array([entries[k] for k in keys], dtype=np.float64).reshape(len(keys), A)

    def fail(mask: np.ndarray, what: str) -> None:
        i = int(np.flatnonzero(mask)[0])
        raise ValueError(f"{source}: {keys[i]!r} {what}: {entries[keys[i]]!r}")

    bad = ~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1)
    if bad.any():
        fail(np.asarray(bad), "has a negative or non-finite probability")
    legal = np.zeros((len(keys), A), dtype=bool)
    for i, n in enumerate(tree.decision_nodes.tolist()):
        legal[i * H:(i + 1) * H, action[first[n]:first[n] + count[n]]] = True
    illegal = (probs != 0) & ~legal
    if illegal.any():
        i = int(np.flatnonzero(illegal.any(axis=1))[0])
        n = expected_keys[keys[i]][0]
        raise ValueError(f"{source}: {keys[i]!r} puts mass on illegal action(s) "
                         f"{np.flatnonzero(illegal[i]).tolist()} (legal: {action[first[n]:first[n] + count[n]]})")
    off = np.abs(probs.sum(axis=1) - 1.0) > SUM_TOLERANCE
    if off.any():
        fail(off, f"does not sum to 1 (tolerance {SUM_TOLERANCE:g})")

    policy = np.zeros((len(tree), H))
    for i, n in enumerate(tree.decision_nodes.tolist()):
        kids = slice(first[n], first[n] + count[n])
        policy[kids, :] = probs[i * H:(i + 1) * H][:, action[kids]].T
    return LoadedPolicy(game, tree, policy)


def save_policy_json(path: PathLike, game: Game, policy: np.ndarray, tree: _core.PublicTree | None = None) -> None:
    """Writes a full-game policy as JSON (one decision point per line), atomically."""
    doc = policy_to_json_dict(game, policy, tree)
    lines = [f'{{"game": {json.dumps(doc["game"])},', ' "policy": {']
    items = list(doc["policy"].items())
    for i, (key, row) in enumerate(items):
        sep = "," if i + 1 < len(items) else ""
        lines.append(f"  {json.dumps(key)}: {json.dumps(row, allow_nan=False)}{sep}")
    lines.append(" }}\n")
    atomic_write_bytes(path, "\n".join(lines).encode("utf-8"))


def load_policy_json(path: PathLike, expected_game: Game | None = None) -> LoadedPolicy:
    """Reads and validates a JSON policy file; see :func:`policy_from_json_dict`."""
    source = str(path)
    raw = Path(path).read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except UnicodeDecodeError as e:
        raise ValueError(f"{source}: not UTF-8 text ({e})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{source}: not valid JSON, the file may be truncated or corrupted ({e})") from None
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
    return policy_from_json_dict(doc, expected_game, source)


# ----------------------------------------------------------------------------- NumPy


def policy_to_arrays(game: Game, policy: np.ndarray, tree: _core.PublicTree | None = None) -> dict[str, np.ndarray]:
    """The ``.npz`` arrays of a full-game policy: game (JSON text), policy, parent, action."""
    tree = _full_tree(game, tree)
    check_policy(game, tree, policy)
    return {
        "game": np.array(json.dumps(game_config(game))),
        "policy": np.array(policy, dtype=np.float64, copy=True),
        "parent": np.asarray(tree.parent, dtype=np.int32),
        "action": np.asarray(tree.action, dtype=np.int32),
    }


def policy_from_arrays(arrays: Any, expected_game: Game | None = None, source: str = "policy") -> LoadedPolicy:
    """Validates the arrays of :func:`policy_to_arrays` (a dict or an open ``NpzFile``)."""
    names = set(arrays.keys())
    missing, extra = [k for k in _NPZ_KEYS if k not in names], sorted(names - set(_NPZ_KEYS))
    if missing or extra:
        parts = ([f"missing array(s) {missing}"] if missing else []) + ([f"unknown array(s) {extra}"] if extra else [])
        raise ValueError(f"{source}: " + "; ".join(parts))
    game_text = arrays["game"]
    if not isinstance(game_text, np.ndarray) or game_text.dtype.kind != "U" or game_text.shape != ():
        raise ValueError(f"{source}: 'game' must be a 0-d string array holding the game config as JSON")
    try:
        config = json.loads(str(game_text))
    except json.JSONDecodeError as e:
        raise ValueError(f"{source}: 'game' is not valid JSON ({e})") from None
    game = _game_from_file_config(config, expected_game, source)
    tree = _core.build_tree(game)
    for name in ("parent", "action"):
        arr = arrays[name]
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "iu" or arr.shape != (len(tree),) \
                or not np.array_equal(arr, np.asarray(getattr(tree, name))):
            raise ValueError(f"{source}: '{name}' does not match the public tree of {_game_label(game)} "
                             f"({len(tree)} nodes); the file was written for a different tree layout")
    policy = arrays["policy"]
    try:
        check_policy(game, tree, policy)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{source}: {e}") from None
    return LoadedPolicy(game, tree, np.array(policy, dtype=np.float64, copy=True))


def save_policy_npz(path: PathLike, game: Game, policy: np.ndarray, tree: _core.PublicTree | None = None) -> None:
    """Writes a full-game policy as a compressed ``.npz`` file, atomically."""
    buffer = io.BytesIO()
    # numpy's stub lets **kwds fill savez_compressed's allow_pickle (bool): every key here is an array name.
    np.savez_compressed(buffer, **policy_to_arrays(game, policy, tree))  # type: ignore[arg-type]
    atomic_write_bytes(path, buffer.getvalue())


def load_policy_npz(path: PathLike, expected_game: Game | None = None) -> LoadedPolicy:
    """Reads and validates a ``.npz`` policy file (never unpickles anything)."""
    source = str(path)
    raw = Path(path).read_bytes()
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError) as e:  # zlib: corrupt members
        raise ValueError(f"{source}: not a readable .npz archive, "
                         f"the file may be truncated or corrupted ({e})") from None
    return policy_from_arrays(arrays, expected_game, source)


# ------------------------------------------------------------------------- by suffix


def _format_of(path: PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in (".json", ".npz"):
        raise ValueError(f"policy file {str(path)!r} must end in .json or .npz")
    return suffix


def save_policy(path: PathLike, game: Game, policy: np.ndarray, tree: _core.PublicTree | None = None) -> None:
    """Writes a policy as JSON or ``.npz`` depending on the file's suffix."""
    if _format_of(path) == ".json":
        save_policy_json(path, game, policy, tree)
    else:
        save_policy_npz(path, game, policy, tree)


def sniff_policy_format(path: PathLike) -> str:
    """``.npz`` or ``.json`` by the file's first bytes (a zip archive starts with ``PK``), whatever
    its name says; ValueError for a file that is neither (OSError if it cannot be read)."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b"PK"):
        return ".npz"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[")):
        return ".json"
    if not head:
        raise ValueError(f"{str(path)!r} is empty: not a policy file")
    raise ValueError(f"{str(path)!r} is neither a JSON policy nor an .npz archive (it starts with {head[:8]!r})")


def load_policy(path: PathLike, expected_game: Game | None = None) -> LoadedPolicy:
    """Reads a JSON or ``.npz`` policy file, the format told by its content (a JSON policy named
    ``x.npz`` still reads; a log named ``x.json`` is refused as neither). The name must still
    end in ``.json`` or ``.npz``, as written."""
    _format_of(path)
    if sniff_policy_format(path) == ".json":
        return load_policy_json(path, expected_game)
    return load_policy_npz(path, expected_game)
