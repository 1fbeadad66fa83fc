"""Shared fixtures. Helper modules beside this file (plancheck, topologies, render_fixtures,
push_support, emulate_support) hold shared functions; no test module imports another
test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from vlanroute.lab import FakeSwitchFarm


@pytest.fixture
def farm() -> Iterator[FakeSwitchFarm]:
    """Emulated PowerConnect 6248 switches (vlanroute.lab), each on its own 127.0.0.x
    address; all are stopped when the test ends."""
    from vlanroute.lab import FakeSwitchFarm
    with FakeSwitchFarm() as f:
        yield f
