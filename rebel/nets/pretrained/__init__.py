"""Trained nets shipped with the package: ``--net pretrained:NAME`` wherever a value net is
taken, ``--policy-net pretrained:NAME`` for a policy net's warm start.

Each net is an exported weights file (docs/weights_format.md) listed in ``index.json`` with
its game, the config and command that trained it, and its measured exploitability under the
paper's protocol (mode (b), depth 2, T, N sampled policies, several evaluation seeds), plus a
small check (N = 16, one seed, fp32) that tests/test_pretrained.py recomputes. ``rebel
pretrained`` lists them.

Policy nets (``policies`` in ``index.json``, docs/policy_format.md) are listed with the
pretrained value net whose self-play gave their training data, the warm-start search their
figure was measured with (solver, depth, T, K, the regret prior) and that figure.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Pretrained", "PretrainedPolicy", "available", "available_policies", "get", "get_policy", "resolve_net",
           "resolve_policy_net", "PREFIX"]

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


@dataclass(frozen=True)
class PretrainedPolicy:
    """One shipped policy net (Algorithm 1's InitializePolicy) and what is known about it."""

    name: str
    game: dict[str, Any]          # {"name": ..., params}
    file: str                     # policy weights file name in this folder
    value_net: str                # the pretrained value net it was trained beside and measured with
    command: str                  # the command that reproduces it
    search: dict[str, Any]        # the warm-start search of the listed figure: solver, depth, iterations,
                                  # warm_start (K) and warm_prior (lambda)
    exploitability: dict[str, Any]  # repeats, seeds, values and mean / min / max under that search
    check: dict[str, Any]         # a small evaluation (repeats, seed, precision) and its result
    trained: dict[str, Any]       # its data (self-play steps, PBSs) and training (epochs, held-out loss)

    @property
    def path(self) -> Path:
        return _DIR / self.file

    def game_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.game.items() if k != "name"}


def _index() -> dict[str, Any]:
    return json.loads((_DIR / "index.json").read_text())


def available() -> list[Pretrained]:
    """Every shipped value net, in index order."""
    return [Pretrained(**entry) for entry in _index()["nets"]]


def available_policies() -> list[PretrainedPolicy]:
    """Every shipped policy net, in index order."""
    return [PretrainedPolicy(**entry) for entry in _index().get("policies", [])]


def _names(entries: list[Any]) -> str:
    return ", ".join(e.name for e in entries) or "none"


def get(name: str) -> Pretrained:
    """The shipped value net ``name`` (ValueError naming the available ones, or saying that
    ``name`` is a policy net)."""
    nets = {n.name: n for n in available()}
    if name in nets:
        return nets[name]
    if name in {p.name for p in available_policies()}:
        raise ValueError(f"pretrained:{name} is a policy net; give it as --policy-net (search.policy_net)")
    raise ValueError(f"no pretrained net {name!r}; available: {_names(list(nets.values()))} "
                     f"(`rebel pretrained` lists them)")


def get_policy(name: str) -> PretrainedPolicy:
    """The shipped policy net ``name`` (ValueError naming the available ones, or saying that
    ``name`` is a value net)."""
    policies = {p.name: p for p in available_policies()}
    if name in policies:
        return policies[name]
    if name in {n.name for n in available()}:
        raise ValueError(f"pretrained:{name} is a value net, not a policy net; give it as --net")
    raise ValueError(f"no pretrained policy net {name!r}; available: {_names(list(policies.values()))} "
                     f"(`rebel pretrained` lists them)")


def resolve_net(spec: str) -> str:
    """``pretrained:NAME`` as the path of its weights file; any other net spec unchanged."""
    if spec.startswith(PREFIX):
        return str(get(spec[len(PREFIX):]).path)
    return spec


def resolve_policy_net(spec: str) -> str:
    """``pretrained:NAME`` as the path of that policy net's file; any other spec unchanged."""
    if spec.startswith(PREFIX):
        return str(get_policy(spec[len(PREFIX):]).path)
    return spec
