"""Dell OS10 show output as vlanroute reads it: the learned-MAC table (`show mac
address-table`), LLDP neighbours (`show lldp neighbors`), pre-flight facts (`show
version`, `show interface status`). Layouts: docs/platforms/dell-os10.md.

`show mac address-table` rows: `VlanId  Mac Address  Type  Interface`, e.g. `54
00:50:56:af:12:f5   dynamic     port-channel1` or `... ethernet1/1/12:1`, after an optional
`Codes:` or `Legend:` line; columns are split on white space (widths differ between
sources). `show lldp neighbors`: see parse_lldp_neighbors.
"""

from __future__ import annotations

import re

from vlanroute.drivers.common import normalize_mac
from vlanroute.drivers.family import LldpNeighbor, ShowCommand, SwitchFacts
from vlanroute.model.bridge import LagPort, PortRef

_MAC = r"[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}"
_MAC_ROW = re.compile(rf"^\s*(\d+)\s+({_MAC})\s+(dynamic|static)\s+(\S+)\s*$", re.IGNORECASE)


def port_ref(text: str) -> PortRef | None:
    """`ethernet1/1/5` -> itself, `port-channel1` / `Po 1` -> LagPort(1); None otherwise."""
    if m := re.fullmatch(r"(?:ethernet|Eth ?)(\d+/\d+/\d+(?::\d+)?)", text):
        return f"ethernet{m.group(1)}"
    if m := re.fullmatch(r"(?:port-channel|Po ?)(\d+)", text):
        return LagPort(int(m.group(1)))
    return None


def parse_address_table(text: str) -> dict[tuple[int, str], PortRef]:
    table: dict[tuple[int, str], PortRef] = {}
    for line in text.splitlines():
        m = _MAC_ROW.match(line)
        if m and (port := port_ref(m.group(4))) is not None:
            table[(int(m.group(1)), normalize_mac(m.group(2)))] = port
    return table


NOT_ADVERTISED = "Not Advertised"


def parse_lldp_neighbors(text: str) -> list[LldpNeighbor]:
    """The rows of `show lldp neighbors` [MFD]: the header `Loc PortID  Rem Host Name  Rem
    Port Id  Rem Chassis Id`, a dashed line, then one row per neighbour, e.g.
    `ethernet1/1/31  B-R03-U23-Mellano...  Eth1/32  24:8a:07:bb:cc:aa`. The local port is
    the switch's own name (`ethernet1/1/3:1` for a breakout lane); a host name longer than
    its column is cut to 17 characters and `...` (the cabling check matches it by a unique
    prefix of a switch name); a neighbour that sends no name prints `Not Advertised` (read
    as no name). The Port ID is as sent: a MAC from a server NIC, an interface name from a
    switch. The chassis id is the last cell (itself cut at the line's end); cells are split
    on white space, the host name being everything between the local port and the last two.
    """
    out: list[LldpNeighbor] = []
    started = False
    for line in text.splitlines():
        if line.startswith("---"):
            started = True
            continue
        cells = line.split()
        if not started or len(cells) < 4:
            continue
        local = port_ref(cells[0])
        system = " ".join(cells[1:-2])
        out.append(LldpNeighbor(local_port=local if isinstance(local, str) else cells[0],
                                chassis_id=cells[-1], port_id=cells[-2],
                                system_name="" if system == NOT_ADVERTISED else system))
    return out


_TYPE = re.compile(r"^System Type:\s*(\S+)", re.MULTILINE)
_VERSION = re.compile(r"^OS Version:\s*(\S+)", re.MULTILINE)
_STATUS = re.compile(r"^Eth ?(\d+/\d+/\d+(?::\d+)?)\s", re.MULTILINE)


def facts(running_config: str, show: ShowCommand) -> SwitchFacts:
    """`show version`: `System Type: S5248F-ON`, `OS Version: 10.5.2.0` (the banner changed
    name over the releases, these two lines did not); ports: `show interface status`,
    first column `Eth 1/1/1`."""
    sources: dict[str, str] = {}
    version = show("show version")
    model = firmware = None
    if m := _TYPE.search(version):
        model, sources["model"] = m.group(1), "show version (System Type)"
    if m := _VERSION.search(version):
        firmware, sources["firmware"] = m.group(1), "show version (OS Version)"
    ports = tuple(dict.fromkeys(f"ethernet{p}" for p in _STATUS.findall(show("show interface status")))) or None
    if ports:
        sources["ports"] = "show interface status"
    return SwitchFacts(model=model, firmware=firmware, ports=ports, sources=sources)
