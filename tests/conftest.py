"""Shared fixtures: games, full trees and solver runs, each built once per test session."""
from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rebel
from rebel.games import make
from rebel.search.solve import SolveResult, solve

REPO_ROOT = Path(rebel.__file__).resolve().parent.parent

def _denormals_flushed() -> bool:
    """Whether this thread's floating-point unit flushes denormals (numpy's float32 division)."""
    import numpy as np

    return float(np.float32(1e-38) / np.float32(4.0)) == 0.0


@pytest.fixture(autouse=True)
def ieee_denormals():
    """Every test starts with IEEE denormals on the main thread. An in-process ``rebel train``
    calls flush_denormals() (torch's flush-to-zero, which stays on for the process), and the
    tests after it would otherwise see flushed arithmetic: the native kernels' denormal tests
    and Hypothesis (which refuses to run without subnormals) among them."""
    torch = sys.modules.get("torch")
    if torch is not None and _denormals_flushed():
        torch.set_flush_denormal(False)
    yield


#: (num_dice, num_faces) of the paper's four Liar's Dice games.
PAPER_GAMES = [(1, 4), (1, 5), (1, 6), (2, 3)]


@functools.lru_cache(maxsize=None)
def liars_dice(num_dice: int, num_faces: int) -> rebel.Game:
    return make("liars_dice", num_dice=num_dice, num_faces=num_faces)


@functools.lru_cache(maxsize=None)
def kuhn() -> rebel.Game:
    return make("kuhn")


@functools.lru_cache(maxsize=None)
def full_tree(game: rebel.Game) -> rebel.PublicTree:
    return rebel.build_tree(game)


@functools.lru_cache(maxsize=None)
def solved(game: rebel.Game, solver: str, iterations: int, optimistic: bool = False) -> SolveResult:
    """A cached full-game solve (solvers are deterministic, so sharing is safe)."""
    return solve(game, solver, iterations, optimistic=optimistic, progress=False, tree=full_tree(game))


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``python -m rebel ARGS`` in a subprocess using this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)]
                                        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "rebel", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=REPO_ROOT)


def default_sigint() -> None:
    """preexec_fn for a child that must see Ctrl-C: a shell's background job (pytest started
    with `&`, as CI scripts may) runs with SIGINT ignored, which children inherit, and Python
    then installs no KeyboardInterrupt handler at all."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def cli():
    return run_cli


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow (minutes each; CI runs them)")


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (.ci/run does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
