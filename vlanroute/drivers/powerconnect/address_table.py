"""The learned-MAC table of PowerConnect 62xx (`show bridge address-table`) and Dell OS6
(`show mac address-table`), as `vlanroute audit` reads it.

62xx rows: `Vlan  Mac Address  Port  Type`, e.g. `4063  0013.C601.53A7  1/g22  Dynamic`,
a LAG printed `ch1`. OS6 rows: `Vlan  Mac Address  Type  Port`, a LAG printed `Po22`
(docs/platforms.md). Either column order is read; MACs in any of the usual spellings.
"""

from __future__ import annotations

import re

from vlanroute.drivers.common import normalize_mac
from vlanroute.drivers.powerconnect.cli import lag_from_show
from vlanroute.model.bridge import PortRef

_TYPES = {"dynamic", "static", "management", "self", "learned", "permanent"}
_ROW = re.compile(r"^\s*(\d+)\s+([0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|"
                  r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})\s+(\S+)\s+(\S+)\s*$")


def parse_address_table(text: str, lag_prefix: str) -> dict[tuple[int, str], PortRef]:
    """(VLAN, mac) -> bridge port; a port named `<lag_prefix>N` is LAG N."""
    table: dict[tuple[int, str], PortRef] = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        a, b = m.group(3), m.group(4)
        port = b if a.lower() in _TYPES else a
        table[(int(m.group(1)), normalize_mac(m.group(2)))] = lag_from_show(port, lag_prefix) or port
    return table
