"""Lexical helpers for the PowerConnect 62xx CLI: VLAN lists, interface ranges, LAG names.

Used by the 62xx family (push, audit) and the fake switch (vlanroute.lab), so all of them
read and write one syntax: VLAN ids and N-M ranges separated by commas, no spaces; ports
`1/g5`, ranges `1/g1-1/g28`; a LAG is `port-channel 1` in config and `ch1` in show output
and prompts (`sw1(config-if-ch1)#`). Dell OS6 prints a LAG as `Po1`.
"""

from __future__ import annotations

import re

from vlanroute.model.bridge import LagPort, PortRef
from vlanroute.vlanlist import VlanListError, format_vlan_list, parse_vlan_list


# VLAN lists are the same syntax everywhere: one implementation, in vlanlist.py.
CliSyntaxError = VlanListError
parse_vlan_ids = parse_vlan_list
format_vlan_ids = format_vlan_list


_PORT = re.compile(r"^(\d+)/(g|xg)(\d+)$")


def expand_port_range(text: str) -> tuple[str, ...]:
    """'1/g1-1/g3,1/xg1' -> ('1/g1', '1/g2', '1/g3', '1/xg1')."""
    ports: list[str] = []
    for part in text.split(","):
        first, sep, last = part.partition("-")
        m1 = _PORT.match(first)
        m2 = _PORT.match(last) if sep else m1
        if not m1 or not m2 or m1.group(1, 2) != m2.group(1, 2):
            raise CliSyntaxError(f"bad interface range {text!r}")
        lo, hi = int(m1.group(3)), int(m2.group(3))
        if lo > hi:
            raise CliSyntaxError(f"bad interface range {part!r}")
        ports.extend(f"{m1.group(1)}/{m1.group(2)}{n}" for n in range(lo, hi + 1))
    return tuple(ports)


# Global lines of a Dell running config that open a block closed by `exit`: the list Dell's
# own OS6 config parser keeps (ansible-collections/dellemc.os6 module_utils/network/os6.py
# os6_parse) plus the 62xx blocks of real captures (`stack`, `line ...`; r2lab 6248 and a
# 6224 config). `interface vlan N` and the other interface forms are handled by the parsers.
BLOCK_OPEN = (r"stack|line (console|telnet|ssh)|ip dhcp pool .*|ip vrf (?!forwarding )\S+|"
              r"(ip|ipv6|mac|management|arp) access-list .*|ipv6 dhcp pool .*|ipv6 router .*|"
              r"mail-server .*|vpc domain \d+|router .*|route-map .*|policy-map .*|class-map .*|"
              r"captive-portal|admin-profile .*|link-dependency group \d+|openflow|support-assist|"
              r"template .*|address-family .*|spanning-tree mst configuration|"
              r"logging (\d[\d.]*|[0-9a-fA-F]*:[0-9a-fA-F:]*)|radius-server host .*|radius server .*|"
              r"tacacs-server host .*|crypto certificate .*")
# Blocks nested in an interface block (an N-series capture: priority flow control).
IF_BLOCK_OPEN = r"datacenter-bridging"
# Interface lines of real configs that do not change which frames a port forwards or in
# which VLAN: descriptions, speed, MTU, LLDP, spanning-tree edge settings, storm control
# (rate limits only), the `no` forms of port security and 802.1X, DHCP snooping trust.
HARMLESS_IF = (r"(description|name|speed|duplex|mtu|negotiation|no negotiation|lacp|"
               r"(no )?spanning-tree (portfast|cost|port-priority|edgeport|auto-portfast|bpdu\S*|"
               r"tcnguard|loopguard|rootguard|guard)|(no )?lldp|(no )?snmp|(no )?storm-control|"
               r"no switchport port-security|no port-security|no dot1x|"
               r"dot1x port-control force-authorized|(no )?ip dhcp snooping|(no )?ip igmp|"
               r"(no )?flowcontrol|(no )?green-mode|(no )?classofservice|(no )?mdix|"
               r"(no )?priority-flow-control|(no )?load-interval)\b")


def lag_label_62xx(lag_id: int) -> str:
    """The name 62xx show output and prompts use for a LAG."""
    return f"ch{lag_id}"


def lag_label_os6(lag_id: int) -> str:
    """The name OS6 show output and prompts use for a LAG (`show mac address-table`: Po22)."""
    return f"Po{lag_id}"


def lag_from_show(text: str, prefix: str) -> LagPort | None:
    """`ch3` (prefix "ch") or `Po3` (prefix "Po") -> LagPort(3); None for anything else."""
    m = re.fullmatch(re.escape(prefix) + r"(\d+)", text)
    return LagPort(int(m.group(1))) if m else None


def interface_command(port: PortRef) -> str:
    """Enter the interface sub-mode of one port (`1/g5`) or LAG."""
    if isinstance(port, LagPort):
        return f"interface port-channel {port.id}"
    return f"interface ethernet {port}"
