"""The project's habits, checked by the suite so `python -m pytest` (the README's command
and CI) covers them: mypy and ruff clean with the configuration in pyproject.toml, the
package typed (py.typed shipped) and licensed as pyproject says."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_mypy_is_clean() -> None:
    # The configuration ([tool.mypy] files = vlanroute) is found in pyproject.toml.
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]


def test_ruff_is_clean() -> None:
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "vlanroute", "tests", "bench"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]


def test_typed_and_licensed() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert (ROOT / "vlanroute" / "py.typed").is_file()
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["vlanroute"]
    assert pyproject["project"]["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the vlanroute authors" in text


def test_the_checkers_are_test_dependencies() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {d.split(">")[0].split("=")[0].split("<")[0] for d in extras["test"]}
    assert {"mypy", "ruff"} <= names
