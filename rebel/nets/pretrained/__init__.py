"""Trained value nets shipped with the package: ``--net pretrained:NAME`` wherever a net is taken.

Each net is an exported weights file (docs/weights_format.md) listed in ``index.json`` with
its game, the config and command that trained it, and its measured exploitability under the
paper's protocol (mode (b), depth 2, T, N sampled policies, several evaluation seeds), plus a
small check (N = 16, one seed, fp32) that tests/test_pretrained.py recomputes. ``rebel
pretrained`` lists them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Pretrained", "available", "get", "resolve_net", "PREFIX"]

PREFIX = "pretrained:"
_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Pretrained:
    """One shipped net and what is known about it."""

    name: str
    game: dict[str, Any]          # {"name": ..., params}
    file: str                     # weights file name in this folder
    config: str                   # the training config (configs/NAME.yaml) with its overrides
    command: str                  # the command that reproduces the net
    exploitability: dict[str, Any]  # protocol (depth, iterations, repeats, seeds) and mean / min / max
    check: dict[str, Any]         # a small evaluation (repeats, seed, iterations, precision) and its result
    trained: dict[str, Any]       # epochs, examples, wall minutes of the run

    @property
    def path(self) -> Path:
        return _DIR / self.file

    def game_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.game.items() if k != "name"}


def available() -> list[Pretrained]:
    """Every shipped net, in index order."""
    entries = json.loads((_DIR / "index.json").read_text())["nets"]
    return [Pretrained(**entry) for entry in entries]


def get(name: str) -> Pretrained:
    """The shipped net ``name`` (ValueError naming the available ones)."""
    for net in available():
        if net.name == name:
            return net
    raise ValueError(f"no pretrained net {name!r}; available: {', '.join(n.name for n in available())} "
                     f"(`rebel pretrained` lists them)")


def resolve_net(spec: str) -> str:
    """``pretrained:NAME`` as the path of its weights file; any other net spec unchanged."""
    if spec.startswith(PREFIX):
        return str(get(spec[len(PREFIX):]).path)
    return spec
