"""The package's layers: no module imports from a layer above its own, and no import cycles.

Every ``import`` statement of every module under rebel/ counts, function-local ones
included (a cycle hidden inside a function is still a cycle). ``from rebel import _core``
is an import of the extension, not of the package facade (rebel/__init__.py re-exports the
public API and is above every layer).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "rebel"

#: Bottom to top. A module may import from its own layer and the layers below it.
LAYERS = ["util", "games", "nets", "search", "play", "alphazero", "interop", "distributed", "config", "train", "cli"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """The rebel.* modules a file imports (resolved to modules, not names inside them)."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("rebel"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("rebel"):
            for alias in node.names:  # `from rebel.x import y`: y may be a submodule
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
    return found


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p) for p in FILES} | {"rebel._core"}
GRAPH = {module_name(p): imports_of(p) for p in FILES}


def layer_of(module: str) -> int | None:
    """The layer index of a module; None for the facade (rebel, rebel.__main__) and the extension."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] in ("_core", "__main__"):
        return None
    return LAYERS.index(parts[1])


def test_every_module_is_in_a_layer():
    stray = [m for m in GRAPH if layer_of(m) is None and m not in ("rebel", "rebel.__main__")]
    stray += [m for m in GRAPH if len(m.split(".")) == 2 and m.split(".")[1] not in LAYERS + ["__main__"]]
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_import_from_a_layer_above(module):
    own = layer_of(module)
    if own is None:
        return
    above = sorted(m for m in GRAPH[module] if m != "rebel" and (layer_of(m) or -1) > own)
    assert not above, f"{module} (layer {LAYERS[own]}) imports from higher layers: {above}"
    # The facade (rebel/__init__.py) re-exports from several layers: only the CLI may use it.
    assert "rebel" not in GRAPH[module] or LAYERS[own] == "cli", f"{module} imports the package facade"


def test_no_import_cycles():
    # Tarjan's strongly connected components over the module graph.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH or w == "rebel":
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_checker_sees_function_local_imports(tmp_path):
    """A known violation in a scratch file is found: the checker can fail."""
    f = tmp_path / "scratch.py"
    f.write_text("def f():\n    from rebel.cli.main import main\n    import rebel.train.run\n")
    assert imports_of(f) == {"rebel.cli.main", "rebel.train.run"}
