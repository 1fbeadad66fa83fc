"""The loop-safe order check and the insertion of extra removals (vlanroute.device.order)."""

from __future__ import annotations

import pytest

from vlanroute.device.order import PortRoles, UnsafeOrder, check_order, insert_fixups
from vlanroute.drivers import FAMILIES
from vlanroute.model.bridge import LagPort

PC62XX = FAMILIES["powerconnect-62xx"]
ROLES = PortRoles(inter_switch=frozenset({LagPort(1), "1/g47", "1/g48", "1/g45"}),
                  host=frozenset({"1/g1", "1/g2"}))
SAFE = ["configure", "vlan database", "vlan 101-102", "exit",
        "interface port-channel 1", "switchport mode general",
        "switchport general allowed vlan add 101 tagged", "exit",
        "interface range ethernet 1/g47-1/g48", "channel-group 1 mode on", "exit",
        "interface ethernet 1/g1", "switchport mode general",
        "switchport general allowed vlan add 101-102 untagged", "switchport general pvid 101",
        "switchport general allowed vlan remove 1", "exit",
        "interface port-channel 1", "switchport general allowed vlan remove 1", "exit",
        "interface port-channel 1", "spanning-tree disable", "exit",
        "bridge aging-time 1000000", "end"]


def test_the_rendered_order_passes():
    check_order(SAFE, ROLES, PC62XX)


@pytest.mark.parametrize("move,before", [
    ("spanning-tree disable", "switchport general allowed vlan remove 1"),   # STP off too early
    ("interface ethernet 1/g1", "vlan database"),                            # host port first
])
def test_out_of_order_lines_are_refused(move, before):
    lines = list(SAFE)
    if move == "spanning-tree disable":
        # Put the STP block before the inter-switch removal block.
        lines = SAFE[:17] + SAFE[20:23] + SAFE[17:20] + SAFE[23:]
    else:
        lines = SAFE[:1] + SAFE[11:17] + SAFE[1:11] + SAFE[17:]
    with pytest.raises(UnsafeOrder):
        check_order(lines, ROLES, PC62XX)


def test_global_stp_off_before_removal_is_refused():
    lines = SAFE[:1] + ["no spanning-tree"] + SAFE[1:]
    with pytest.raises(UnsafeOrder, match="phase"):
        check_order(lines, ROLES, PC62XX)


def test_unmanaged_and_mixed_interfaces_are_refused():
    with pytest.raises(UnsafeOrder, match="not manage"):
        check_order(["interface ethernet 1/g30", "shutdown", "exit"], ROLES, PC62XX)
    with pytest.raises(UnsafeOrder, match="mixes"):
        check_order(["interface range ethernet 1/g1,1/g45", "exit"], ROLES, PC62XX)


def test_fixups_go_to_the_end_of_their_phase():
    host_fix = ["interface ethernet 1/g2", "switchport general allowed vlan remove 300", "exit"]
    inter_fix = ["interface ethernet 1/g45", "switchport general allowed vlan remove 200", "exit"]
    out = insert_fixups(SAFE, ROLES, PC62XX, host_fix, inter_fix)
    assert out[17:20] == host_fix                  # after the host ports, before removals
    assert out[23:26] == inter_fix                 # after the removals, before STP off
    assert out[26:29] == ["interface port-channel 1", "spanning-tree disable", "exit"]
    assert out[:17] + out[20:23] + out[26:] == SAFE
