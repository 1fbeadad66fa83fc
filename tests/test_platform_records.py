"""Every built-in platform's full record is what it was before the family records
(model/platforms.py's Family) gave the shared facts one home: tests/fixtures/platform-records.json
was dumped from the records as they stood, and its values checked by hand against the
docs/platforms pages (port lists, pools, units, VLAN ids, aging, MAC and LAG limits)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from vlanroute.model.platforms import PLATFORMS, Platform
from vlanroute.model.portlist import format_port_list

FIXTURE = Path(__file__).parent / "fixtures" / "platform-records.json"
BEFORE: dict[str, dict[str, object]] = json.loads(FIXTURE.read_text())


def record(p: Platform) -> dict[str, object]:
    """The dump the fixture was written with: every field, port lists as patterns."""
    d = dataclasses.asdict(p)
    d["ports"] = format_port_list(p.ports)
    d["auto_ports"] = None if p.auto_ports is None else format_port_list(p.auto_ports)
    d["confirmed"] = list(p.confirmed)
    return d


def test_the_same_platforms() -> None:
    assert sorted(PLATFORMS) == sorted(BEFORE)


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_record_unchanged(name: str) -> None:
    assert record(PLATFORMS[name]) == BEFORE[name]


def test_the_dump_covers_every_field() -> None:
    # A field added to Platform later must be added to the fixture too.
    fields = {f.name for f in dataclasses.fields(Platform)}
    assert all(set(r) == fields for r in BEFORE.values())


def test_a_record_change_is_seen() -> None:
    changed = dataclasses.replace(PLATFORMS["dell-s5248f-on"], aging_default=300)
    assert record(changed) != BEFORE["dell-s5248f-on"]
