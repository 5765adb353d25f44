"""The linter (ruff) and the type check (mypy) are clean, as configured in pyproject.toml.

Both run as CI's lint step too (.ci/run); here they make the README's test command check them.
Skipped where the tool is not installed (scripts/install.sh installs both). mypy keeps its
cache in .mypy_cache, so a rerun after a small change takes seconds.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

#: What ruff checks (pyproject.toml's [tool.ruff] says how); mypy checks `files` of [tool.mypy].
RUFF_PATHS = ["rebel", "tests", "benchmarks", "experiments", "scripts", "setup.py"]


def _run_tool(module: str, args: list[str], timeout: float) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (scripts/install.sh installs it)")
    proc = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=timeout)
    report = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, f"{module} {' '.join(args)} found problems:\n{report}"


def test_ruff_is_clean():
    _run_tool("ruff", ["check", "--no-cache", *RUFF_PATHS], timeout=120)


def test_mypy_is_clean():
    _run_tool("mypy", [], timeout=900)  # the first run (no cache) reads torch's and numpy's stubs
