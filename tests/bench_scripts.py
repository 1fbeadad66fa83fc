"""The bench scripts as modules, for the tests of their functions (bench/ is no package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "bench"


def bench_module(script: str, name: str) -> ModuleType:
    """bench/`script` imported as module `name` (kept in sys.modules, as a dataclass needs)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
