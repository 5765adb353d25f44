"""docs/layout.md stays current: every module of rebel/ and every source file of csrc/ is
named there, and everything it names exists."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "layout.md"


def _named() -> set[str]:
    """Paths in backticks, e.g. `rebel/search/evaluate.py`, `csrc/solvers/` or `csrc/nets/mlp.{h,cc}`."""
    names: set[str] = set()
    for token in re.findall(r"`([^`\s]+)`", DOC.read_text()):
        match = re.fullmatch(r"(.*)\.\{([^}]*)\}", token)
        if match:
            names.update(f"{match.group(1)}.{ext}" for ext in match.group(2).split(","))
        else:
            names.add(token)
    return names


def _sources() -> list[str]:
    files = [p for p in (ROOT / "rebel").rglob("*.py") if p.name != "__init__.py" or p.parent.name != "rebel"]
    files = [p for p in files if p.name != "__init__.py"]
    files += [p for p in (ROOT / "csrc").rglob("*") if p.suffix in (".h", ".cc")]
    return sorted(str(p.relative_to(ROOT)) for p in files)


def test_every_module_is_described():
    named = _named()
    missing = [path for path in _sources() if path not in named]
    assert not missing, f"docs/layout.md does not describe: {missing}"


def test_every_named_path_exists():
    stale = [name for name in _named() if name.startswith(("rebel/", "csrc/", "tests/", "docs/", "experiments/",
                                                              "benchmarks/", "scripts/", "configs"))
             and not (ROOT / name.rstrip("/")).exists()]
    assert not stale, f"docs/layout.md names paths that do not exist: {stale}"
