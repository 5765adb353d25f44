"""Small hold'em endgame spots whose solutions can be checked by hand, as `load_spot` mappings.

* :data:`CLAIRVOYANCE`: the river, OOP holds the nuts (KK, a set on Ks Qd 7h 4c 2s) or air (53)
  with equal weight, IP a bluff catcher (AA); pot 100, one pot-sized bet (100), no raises. OOP
  bets every KK and half its 53, IP calls half the time: OOP wins 25 chips a deal, KK 100 and 53
  -50 each; IP's AA -25.
* :data:`NARROW_TURN`: postflop-solver's example turn board with narrow ranges (19 vs 22
  hands): 60% (120) on the turn, 75% and all-in on the river; solves to 0.5% of the pot in
  under a second.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CLAIRVOYANCE: dict[str, Any] = {
    "description": "clairvoyance game",
    "board": "KsQd7h4c2s", "pot": 100, "stack": 1000,
    "ranges": {"oop": "KdKc, 5d3h", "ip": "AhAc"},
    "bets": {"river": {"bet": "100%"}},
}

NARROW_TURN: dict[str, Any] = {
    "description": "narrow turn spot",
    "board": "Td9d6h Qc", "pot": 200, "stack": 900,
    "ranges": {"oop": "AA,KK,QJs,87s", "ip": "QQ,JJ,AKs,KQo"},
    "bets": {"turn": {"bet": "60%"}, "river": {"bet": "75%, a"}},
}


def write_spot(folder: Path, spot: dict[str, Any], name: str = "spot.yaml") -> Path:
    """The spot written as a YAML file in ``folder``."""
    path = folder / name
    path.write_text(yaml.safe_dump(spot))
    return path
