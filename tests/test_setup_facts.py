"""The README's set-up facts stay true: every Debian package the tests need (.ci/packages.txt)
is named in the README, and the Python version it states is the one pyproject.toml requires."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _packages() -> list[str]:
    lines = (ROOT / ".ci" / "packages.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_readme_names_every_package_the_tests_need() -> None:
    setup = (ROOT / "README.md").read_text().split("\n## ", 1)[0]      # the part before the first section
    packages = _packages()
    assert {"iputils-ping", "busybox-static", "iproute2", "qemu-system-x86"} <= set(packages)
    missing = [p for p in packages if not re.search(rf"(?<![\w.-]){re.escape(p)}(?![\w-]|\.\w)", setup)]
    assert missing == [], f"add to the README's set-up paragraph: {missing}"


def test_readme_states_the_python_version_pyproject_requires() -> None:
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    version = re.fullmatch(r">=\s*(\d+\.\d+)", required)
    assert version, required
    setup = " ".join((ROOT / "README.md").read_text().split("\n## ", 1)[0].split())
    assert f"Python {version.group(1)} or newer" in setup
