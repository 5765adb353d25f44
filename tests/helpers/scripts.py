"""Loading the experiment scripts (experiments/*.py, not a package) as modules for the tests."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def load(name: str) -> ModuleType:
    """experiments/NAME.py as module ``NAME`` (registered in sys.modules, as a script's own
    dataclasses and pickling need)."""
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
