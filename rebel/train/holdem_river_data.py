"""Training data for a river value net of hold'em endgames: random river public belief states
solved exactly (:func:`rebel.search.holdem_river_values.river_values`).

A first recipe that needs no self-play, as DeepStack trained its river-free nets: a river card
drawn at random below a turn spot's board, a (pot, stack) drawn uniformly from the pairs at which
the spot's turn betting reaches the river with chips behind, and each player's beliefs drawn by
:func:`random_beliefs`. Examples are written in shards (``shard_00000.npz``, ...) of a fixed
size, each drawn from its own seed (``(seed, shard)``), written atomically and skipped when
already present: a killed run resumes, and the same seed gives the same files.

A shard holds, for its n examples: ``board`` (n, 5) int8 card numbers, ``pot`` and ``stack``
(n,) int32, ``beliefs`` (n, 2, 1,326) float32 normalised per player, ``values`` (n, 2, 1,326)
float32 (pot units, the opponent's beliefs normalised; 0 on blocked hands), ``iterations`` (n,)
int32 and ``exploitability_pct`` (n,) float32 of each solve.
"""
from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from rebel import _core
from rebel.games.holdem_ranges import COMBOS, NUM_COMBOS, deck_cards
from rebel.games.holdem_spot import Spot
from rebel.search.holdem_river_values import river_situations, river_spot, river_values
from rebel.util.atomic_io import atomic_write_bytes

log = logging.getLogger(__name__)

__all__ = ["RiverDataSettings", "live_mask", "random_beliefs", "read_shards", "sample_river_pbs", "shard_path",
           "write_shard"]


@dataclass(frozen=True)
class RiverDataSettings:
    """How each river PBS is solved: solver, target exploitability (% of the pot), cap."""

    solver: str = "dcfr"
    target_pct: float = 0.5
    max_iterations: int = 2000
    check_every: int = 10


def random_beliefs(board: list[int] | tuple[int, ...], rng: np.random.Generator, ranks: int = 13,
                   suits: int = 4) -> np.ndarray:
    """One player's beliefs (1,326 float64 summing to 1, zero on hands the board or the deck
    rules out) by DeepStack's recursive split: the live hands sorted by their strength on the
    five-card board (ties in ``COMBOS`` order), then each run of hands splits its mass between
    its weaker and its stronger half in a uniform random proportion, down to single hands. Ranges
    so drawn are lumpy in strength, as ranges that betting has filtered are."""
    if len(board) != 5:
        raise ValueError(f"random_beliefs needs a river board of 5 cards, got {len(board)}")
    deck = np.zeros(52, dtype=bool)
    deck[deck_cards(ranks, suits)] = True
    deck[list(board)] = False
    live = np.flatnonzero(deck[COMBOS].all(axis=1))
    seven = np.concatenate([COMBOS[live], np.broadcast_to(np.asarray(board), (len(live), 5))], axis=1)
    order = live[np.argsort(_core.hand_ranks(seven.astype(np.int32)), kind="stable")]
    mass = np.zeros(len(order))
    stack = [(0, len(order), 1.0)]
    while stack:
        lo, hi, m = stack.pop()
        if hi - lo == 1:
            mass[lo] = m
            continue
        mid = (lo + hi) // 2
        p = rng.random()
        stack.append((lo, mid, m * p))
        stack.append((mid, hi, m * (1.0 - p)))
    out = np.zeros(NUM_COMBOS)
    out[order] = mass
    return out / out.sum()


def sample_river_pbs(template: Spot, rng: np.random.Generator,
                     situations: list[tuple[int, int]] | None = None) -> tuple[Spot, np.ndarray]:
    """A random river PBS below a turn spot: a river card uniform over the deck's cards not on the
    board, a (pot, stack) uniform over ``situations`` (default :func:`river_situations`), and
    both players' beliefs from :func:`random_beliefs`. Returns the river spot and (2, 1,326)
    beliefs."""
    if template.street != 1:
        raise ValueError(f"sample_river_pbs needs a turn spot (4 board cards), got {len(template.board)}")
    situations = river_situations(template) if situations is None else situations
    deck = [c for c in deck_cards(template.ranks, template.suits) if c not in template.board]
    board = list(template.board) + [int(rng.choice(deck))]
    pot, stack = situations[int(rng.integers(len(situations)))]
    spot = river_spot(template, board, pot, stack)
    beliefs = np.stack([random_beliefs(board, rng, template.ranks, template.suits) for _ in (0, 1)])
    return spot, beliefs


def shard_path(folder: Path | str, shard: int) -> Path:
    """The file of shard ``shard`` in ``folder``."""
    return Path(folder) / f"shard_{shard:05d}.npz"


def write_shard(template: Spot, folder: Path | str, shard: int, size: int, seed: int,
                settings: RiverDataSettings = RiverDataSettings()) -> Path:
    """Draws and solves shard ``shard`` (``size`` examples from the seed ``(seed, shard)``) and
    writes it atomically; returns its path. An existing shard is left as it is."""
    path = shard_path(folder, shard)
    if path.exists():
        return path
    rng = np.random.default_rng([seed, shard])
    situations = river_situations(template)
    arrays: dict[str, list[np.ndarray]] = {k: [] for k in ("board", "pot", "stack", "beliefs", "values", "iterations",
                                                           "exploitability_pct")}
    for _ in range(size):
        spot, beliefs = sample_river_pbs(template, rng, situations)
        solved = river_values(spot, beliefs, solver=settings.solver, target_pct=settings.target_pct,
                              max_iterations=settings.max_iterations, check_every=settings.check_every)
        arrays["board"].append(np.asarray(spot.board, dtype=np.int8))
        arrays["pot"].append(np.int32(spot.pot))
        arrays["stack"].append(np.int32(spot.stack))
        arrays["beliefs"].append(beliefs.astype(np.float32))
        arrays["values"].append(solved.values.astype(np.float32))
        arrays["iterations"].append(np.int32(solved.iterations))
        arrays["exploitability_pct"].append(np.float32(solved.exploitability_pct))
    buffer = io.BytesIO()
    # numpy's stub lets **kwds fill savez's allow_pickle (bool): every key here is an array name.
    np.savez(buffer, **{k: np.stack(v) for k, v in arrays.items()})  # type: ignore[arg-type]
    Path(folder).mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buffer.getvalue())
    return path


_SHARD_KEYS = {"board": (np.int8, 5), "pot": (np.int32, None), "stack": (np.int32, None),
               "beliefs": (np.float32, (2, NUM_COMBOS)), "values": (np.float32, (2, NUM_COMBOS)),
               "iterations": (np.int32, None), "exploitability_pct": (np.float32, None)}


def read_shards(paths: list[Path]) -> Iterator[dict[str, np.ndarray]]:
    """The shards' arrays, one dict per file; ValueError naming the file for a truncated or
    malformed shard (a missing key, a wrong dtype or shape)."""
    for path in paths:
        try:
            with np.load(path, allow_pickle=False) as data:
                shard = {k: data[k] for k in data.files}
        except Exception as e:  # zipfile.BadZipFile, EOFError, OSError, ValueError: all mean a bad file
            raise ValueError(f"{path}: not a readable river data shard ({type(e).__name__}: {e})") from None
        n = None
        for key, (dtype, tail) in _SHARD_KEYS.items():
            if key not in shard:
                raise ValueError(f"{path}: missing array {key!r}")
            a = shard[key]
            want = (a.shape[0],) + (() if tail is None else ((tail,) if isinstance(tail, int) else tail))
            if a.dtype != dtype or a.shape != want or (n is not None and a.shape[0] != n):
                raise ValueError(f"{path}: array {key!r} has dtype {a.dtype} and shape {a.shape}")
            n = a.shape[0]
        yield shard


def live_mask(board: np.ndarray) -> np.ndarray:
    """(n, 1,326) bool: the hands no card of each row's board blocks (full deck)."""
    blocked = np.zeros((len(board), 52), dtype=bool)
    np.put_along_axis(blocked, board.astype(np.int64), True, axis=1)
    return ~(blocked[:, COMBOS[:, 0]] | blocked[:, COMBOS[:, 1]])
