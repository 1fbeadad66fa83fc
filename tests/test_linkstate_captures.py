"""drivers/linkstate.py on a real capture of `show interfaces status` (tests/fixtures/README.md
names its source): the state column as a real EOS switch prints it, with a port name that
holds spaces and `!!`, a blank name, and the states inactive, notconnect and errdisabled."""

from __future__ import annotations

from pathlib import Path

from vlanroute.drivers.arista import AristaEos
from vlanroute.drivers.linkstate import parse_link_state

FIXTURES = Path(__file__).with_name("fixtures")


def test_real_eos_interfaces_status() -> None:
    text = (FIXTURES / "eos-show-interfaces-status-ntc.txt").read_text()
    # Read off the capture by eye: only Et3/1/1 says `connected`.
    assert parse_link_state(AristaEos(), text) == {
        "Ethernet3/1/1": True, "Ethernet3/1/4": False, "Ethernet3/2/1": False, "Ethernet3/2/2": False}
