"""Shared fixtures and the test tiers.

Helper modules beside this file (plancheck, topologies, render_fixtures, push_support,
emulate_support, import_blocker) hold shared functions; no test module imports another test module.

Markers, registered in pyproject.toml and enforced with --strict-markers:
- `vm`: boots the Debian kernel under QEMU (tens of seconds per test);
- `browser`: runs headless Chromium;
- `root`: needs root (network namespaces); skipped when not root;
- `pip_install`: creates a virtual environment and pip-installs the project into it;
- `slow`: takes more than about 10 s. Every `vm`, `browser` and `pip_install` test is
  `slow` as well (added below), so `python -m pytest -q -m "not slow"` is the fast tier
  for development, and `python -m pytest -q` (what .ci/run does) runs everything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from vlanroute.lab import FakeSwitchFarm

SLOW_KINDS = ("vm", "browser", "pip_install")
SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def slow_node_ids() -> set[str]:
    """The node ids tests/slow_tests.txt marks slow (profiled; comments after #)."""
    ids = (line.split("#", 1)[0].strip() for line in SLOW_LIST.read_text().splitlines())
    return {i for i in ids if i}


@pytest.hookimpl(tryfirst=True)   # before `-m` deselects anything
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    listed = slow_node_ids()
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS) or item.nodeid in listed:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def farm() -> Iterator[FakeSwitchFarm]:
    """Emulated PowerConnect 6248 switches (vlanroute.lab), each on its own 127.0.0.x
    address; all are stopped when the test ends."""
    from vlanroute.lab import FakeSwitchFarm
    with FakeSwitchFarm() as f:
        yield f


@pytest.fixture(autouse=True)
def no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables fit $COLUMNS when it is set (commands/tables.py); a test sees no terminal
    width unless it sets one, whoever runs it (a terminal, CI, a pytest-xdist worker)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """push keeps backups and journals under $XDG_STATE_HOME/vlanroute/<plan>: never the
    user's own state directory during tests."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
