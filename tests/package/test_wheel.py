"""A wheel of the package installs and runs outside the checkout: the shipped configs and
nets are package data, so ``rebel train quick`` works from an empty folder.

The wheel is built from this checkout (``pip wheel .``, no build isolation: the extension is
the checkout's up-to-date build) and installed without dependencies into a fresh venv whose
only other entry on sys.path is the test venv's site-packages, for torch, numpy and omegaconf
(a plain path: its editable-install hooks do not run, so the checkout cannot leak in).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import REPO_ROOT


def _run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.slow
def test_wheel_installs_and_trains_from_an_empty_folder(tmp_path):
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels),
          str(REPO_ROOT)], REPO_ROOT, timeout=900)
    (wheel,) = wheels.glob("rebel-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "rebel/configs/quick.yaml" in names and "rebel/nets/pretrained/index.json" in names
    assert any(n.startswith("rebel/_core") and n.endswith(".so") for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path, 60).stdout.strip())
    (site / "test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], tmp_path, timeout=300)

    empty = tmp_path / "empty"
    empty.mkdir()
    where = _run([str(py), "-c", "import rebel; print(rebel.__file__)"], empty, 60).stdout.strip()
    assert where.startswith(str(site)), where  # the installed wheel, not the checkout
    quick = _run([str(env_dir / "bin" / "rebel"), "train", "quick", "run.epochs=2", "evaluation.repeats=16",
                  "--json", "--no-progress"], empty, timeout=600)
    summary = json.loads(quick.stdout)
    assert 0 <= summary["evaluation"]["exploitability"] <= 1
    assert (empty / "runs").is_dir()  # the run folder lands where the user is
    pretrained = _run([str(env_dir / "bin" / "rebel"), "pretrained", "--json"], empty, 60)
    assert "1x4f" in pretrained.stdout
