"""Run Python code in a fresh interpreter whose import system refuses one package, as if it
were not installed (for the optional extras: lab's asyncssh, draw's matplotlib)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def blocker(package: str) -> str:
    """Source that, run first, makes `import package` (and its submodules) fail."""
    return f"""\
import sys

class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == {package!r} or name.startswith({package + "."!r}):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _Block())
"""


def run_without(package: str, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", blocker(package) + code], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
