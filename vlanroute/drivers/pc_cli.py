"""Lexical helpers for the PowerConnect 62xx CLI: VLAN lists and interface ranges.

Used by push (rollback and removal commands), audit and the fake switch, so all of them
read and write one syntax: VLAN ids and N-M ranges separated by commas, no spaces;
ports `1/g5`, ranges `1/g1-1/g28`, LAGs `ch1` / `port-channel 1`.
"""

from __future__ import annotations

import re

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


def lag_port_name(lag_id: int) -> str:
    """The name `show` output uses for a LAG (also the bridge-model port name)."""
    return f"ch{lag_id}"


def interface_command(port: str) -> str:
    """Enter the interface sub-mode of one port or LAG ('ch1' or '1/g5')."""
    if port.startswith("ch"):
        return f"interface port-channel {port[2:]}"
    return f"interface ethernet {port}"
