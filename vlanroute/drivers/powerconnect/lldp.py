"""The LLDP neighbour table of Dell OS6 and PowerConnect 62xx: `show lldp remote-device all`
(summary) and `show lldp remote-device detail PORT` (one port in full).

OS6 summary [NPD], [OS6F]: a title `LLDP Remote Device Summary`, a line `Local`, the header
`Interface RemID   Chassis ID          Port ID           System Name`, a dashed line, then
one row per neighbour, e.g. `Te1/0/21  202     00:41:D2:17:2F:00   Gi1/0/1             switch2-loc123...`.
Rows do not keep to the header's columns (the system name starts two columns right of its
header when the Port ID is a name), so a row is split on white space, not sliced by
column. The system name is cut to 14 characters and `...`; the detail command prints it in
full (`System Name: switch2-loc123.example.com`). A neighbour without LLDP system name (a
server NIC's own agent) has a MAC as Port ID and no name. The FASTPATH sibling lists every
port, a port without a neighbour as its bare name, and a port once per neighbour [M4300]:
both are read. The 62xx FW 3.x layout is not in any public source: assumed to be the same.
"""

from __future__ import annotations

import re

from vlanroute.drivers.family import LldpNeighbor

# An interface name as the first cell: 1/g5, 1/xg1 (62xx), Te1/0/5, Gi1/0/5 (OS6), 0/7 (FASTPATH).
_INTERFACE = re.compile(r"^[A-Za-z]{0,3}\d+(/[A-Za-z]{0,2}\d+)+$")
_NAME = re.compile(r"^\s*System Name:\s*(.*?)\s*$", re.MULTILINE)


def parse_remote_devices(text: str) -> list[LldpNeighbor]:
    """Every neighbour row of the summary; bare-port rows (no neighbour) are skipped."""
    out: list[LldpNeighbor] = []
    for line in text.splitlines():
        cells = line.split()
        if len(cells) < 4 or not _INTERFACE.match(cells[0]) or not cells[1].isdigit():
            continue
        out.append(LldpNeighbor(local_port=cells[0], chassis_id=cells[2], port_id=cells[3],
                                system_name=" ".join(cells[4:])))
    return out


def parse_detail_name(text: str) -> str | None:
    """`System Name: NAME` of the detail output; None if missing or empty."""
    m = _NAME.search(text)
    return m.group(1) if m and m.group(1) else None
