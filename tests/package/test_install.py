"""scripts/install.sh on a stock distribution's python3, in a fresh copy of the repository.

The copy has no venv, no build folder and no compiled extension. The script runs with
``PYTHON=/usr/bin/python3`` (the distribution's interpreter, marked externally managed by
PEP 668 on Debian 12 and Ubuntu 24.04) and a PATH without pyenv; then the README's two
commands' second halves run from the venv it created, and a second run of the script
must not recompile anything.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

DISTRO_PYTHON = Path("/usr/bin/python3")
IGNORED = (".venv", "build", "runs", ".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "*.so",
           "*.egg-info")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYENV", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".pyenv" not in p)
    env["PYTHON"] = str(DISTRO_PYTHON)
    return env


def _run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.slow
def test_install_sh_with_the_distribution_python(tmp_path):
    if not DISTRO_PYTHON.is_file():
        pytest.skip(f"no distribution python3 at {DISTRO_PYTHON}")
    repo = tmp_path / "checkout"
    shutil.copytree(REPO_ROOT, repo, ignore=shutil.ignore_patterns(*IGNORED))

    first = _run(["bash", "scripts/install.sh"], repo, timeout=1500)
    steps = [line for line in first.stdout.splitlines() if line.startswith("install.sh: ")]
    assert steps[0].startswith("install.sh: creating the virtual environment"), first.stdout
    assert steps[-1] == f"install.sh: rebel 0.1.0 is ready: {repo}/.venv/bin/rebel"
    py = repo / ".venv" / "bin" / "python"
    base = _run([str(py), "-c", "import sys, rebel; print(sys.base_prefix, rebel.__file__)"], tmp_path, 60)
    assert base.stdout.split() == ["/usr", str(repo / "rebel" / "__init__.py")]

    # README command 1's second half, then a CLI check against a known value.
    quick = _run([str(repo / ".venv/bin/rebel"), "train", "quick", "run.dir=" + str(tmp_path / "runs"),
                  "--json"], repo, timeout=900)
    summary = json.loads(quick.stdout)
    assert summary["evaluation"]["exploitability"] < summary["references"]["zero_net_exploitability"]
    kuhn = _run([str(repo / ".venv/bin/rebel"), "solve", "--game", "kuhn", "--iters", "2000", "--json"], repo, 120)
    assert abs(json.loads(kuhn.stdout)["game_value"] + 1 / 18) < 1e-3
    # README command 2's second half, on the CLI tests.
    _run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/cli/test_cli.py"], repo, timeout=900)

    start = time.perf_counter()
    second = _run(["bash", "scripts/install.sh"], repo, timeout=600)
    seconds = time.perf_counter() - start
    assert "install.sh: using the virtual environment" in second.stdout
    assert "rebel._core is up to date" in second.stdout + second.stderr
    assert seconds < 60, f"a re-run without changes took {seconds:.0f} s"
