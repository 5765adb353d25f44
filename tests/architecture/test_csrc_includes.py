"""csrc/'s folders are layers too: a file includes project headers only from its own folder
and the folders below it (docs/layout.md lists them bottom up)."""
from __future__ import annotations

import re
from pathlib import Path

CSRC = Path(__file__).resolve().parents[2] / "csrc"
LAYERS = ["util", "core", "games", "solvers", "nets", "search", "perfect_info", "bindings", "bench"]


def includes(path: Path) -> list[str]:
    return re.findall(r'^\s*#include\s+"([^"]+)"', path.read_text(), re.M)


def test_every_folder_is_a_layer():
    assert sorted(p.name for p in CSRC.iterdir() if p.is_dir()) == sorted(LAYERS)


def test_no_include_from_a_layer_above():
    upward = []
    for path in sorted(CSRC.rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        own = LAYERS.index(path.parent.name)
        for header in includes(path):
            folder = header.split("/")[0]
            if folder in LAYERS and LAYERS.index(folder) > own and folder != "bench":
                upward.append(f"{path.relative_to(CSRC)} includes {header}")
    assert not upward, upward
