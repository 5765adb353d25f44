"""The strategy grid as a PNG (rebel/play/holdem_grid.py): the file is written with the figure's
size, a node where nobody acts is refused, and without matplotlib the error says how to install it."""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest
from helpers.holdem_spots import CLAIRVOYANCE

from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import load_spot
from rebel.play.holdem_grid import action_colors, plot_strategy_grid, require_matplotlib
from rebel.search.holdem_solve import solve_spot


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def solved():
    spot = load_spot(CLAIRVOYANCE)
    game = build_endgame(spot)
    engine, _ = solve_spot(spot, "dcfr", 500, game=game)
    return spot, game, engine


def test_the_grid_png_has_the_figures_size(solved, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    spot, game, engine = solved
    path = tmp_path / "root.png"
    grid = plot_strategy_grid(engine, game, 0, path, spot=spot)
    assert png_size(path) == (1000, 1100)
    assert grid.actions == ["check", "bet 100"] and grid.combos.sum() == 2.0
    small = tmp_path / "bet.png"
    plot_strategy_grid(engine, game, "bet 100", small, title="IP facing the bet", dpi=50)
    assert png_size(small) == (500, 550)
    with pytest.raises(ValueError, match="is a fold node: nobody acts there"):
        plot_strategy_grid(engine, game, "bet 100, fold", tmp_path / "no.png")
    assert not (tmp_path / "no.png").exists()


def test_without_matplotlib_the_error_says_how_to_install_it(monkeypatch, solved, tmp_path) -> None:
    _, game, engine = solved
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    with pytest.raises(ImportError, match="needs matplotlib, which is not installed: pip install matplotlib"):
        require_matplotlib()
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_strategy_grid(engine, game, 0, tmp_path / "x.png")


def test_action_colours() -> None:
    colors = action_colors(["fold", "call", "raise 300", "raise 700", "all-in"])
    assert colors[0] != colors[1] and len(set(colors[2:])) == 3
    assert action_colors(["check", "bet 120"])[0] == action_colors(["call"])[0]


def test_the_package_and_its_commands_import_no_matplotlib() -> None:
    import os
    import subprocess

    from conftest import REPO_ROOT

    code = ("import sys, rebel; from rebel.cli import build_parser; build_parser(); "
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), cwd=REPO_ROOT)
    assert r.returncode == 0, r.stderr
