"""ntc-templates (installed with netmiko) as an independent reader of the `show` outputs
vlanroute reads, where it has a template: the project's own readers must agree with the
community's on the same text. Where ntc-templates has no template (Dell OS10) or one that
does not fit the switch's real output (the PowerConnect 62xx address table: the template
wants `xx:xx:..` MACs and a lower-case `dynamic`, the 62xx prints `0013.C601.53A7` and
`Dynamic` [FS], [NM]), the project's reader stands alone (docs/architecture.md)."""

from __future__ import annotations

import pytest
from test_eos_os10_families import EOS_LLDP, EOS_MAC

from vlanroute.drivers import FAMILIES
from vlanroute.drivers.common import normalize_mac
from vlanroute.model.bridge import LagPort

ntc = pytest.importorskip("ntc_templates.parse")
EOS = FAMILIES["arista-eos"]


def _eos_port(short: str) -> object:
    """ntc-templates keeps the table's short names; vlanroute's are the config's."""
    if short.startswith("Po"):
        return LagPort(int(short[2:]))
    return "Ethernet" + short[2:] if short.startswith("Et") else short


def test_eos_address_table_agrees_with_ntc_templates():
    rows = ntc.parse_output(platform="arista_eos", command="show mac address-table", data=EOS_MAC)
    theirs = {(int(r["vlan_id"]), normalize_mac(r["mac_address"])): _eos_port(r["destination_port"][0])
              for r in rows if r["type"] == "DYNAMIC"}
    assert theirs and EOS.parse_address_table(EOS_MAC) == theirs


def test_eos_lldp_neighbours_agree_with_ntc_templates():
    rows = ntc.parse_output(platform="arista_eos", command="show lldp neighbors", data=EOS_LLDP)
    theirs = [(_eos_port(r["local_interface"]), r["neighbor_name"], r["neighbor_interface"]) for r in rows]
    ours = [(n.local_port, n.system_name, n.port_id) for n in EOS.parse_lldp(EOS_LLDP)]
    assert theirs and ours == theirs
