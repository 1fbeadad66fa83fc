"""The cables between emulated switches, as their LLDP neighbour tables show them.

A fake switch has no real cables: its LLDP table (`show lldp remote-device all` on the
Dell CLIs, `show lldp neighbors` on EOS and OS10, `show lldp neighbors detail` on OS10)
lists what a cabling file says is plugged into each port (a file in the layout of OUTDIR/cabling.csv,
bundle.cables). An inter-switch cable a:pa - b:pb makes a hear b (chassis b's MAC, Port ID
pb, system name b) on pa, and b hear a on pb, as switches send their interface name as
Port ID. A host cable makes the switch hear the host as lldpd sends it by default: the
host's MAC as chassis and Port ID, its host name as system name [LLDPD]. Tests swap cables
by editing the file; `vlanroute lab up --cabling FILE` does the same for people.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from vlanroute.bundle.reader import Cable
from vlanroute.bundle.cables import HOST
from vlanroute.lab.state import LldpEntry


def chassis_mac(switch: str) -> str:
    """A fixed, locally administered MAC per switch name (upper case, as OS6 prints it)."""
    digest = hashlib.sha256(switch.encode()).digest()
    return ":".join(f"{b:02X}" for b in (0x02, *digest[:5]))


def lldp_tables(cables: Iterable[Cable], host_macs: Mapping[str, str]) -> dict[str, list[LldpEntry]]:
    """switch -> the neighbours it hears, one per cable end on it."""
    tables: dict[str, list[LldpEntry]] = {}
    for c in cables:
        if c.kind == HOST:
            mac = host_macs.get(c.b, "").upper()
            tables.setdefault(c.a, []).append(LldpEntry(c.a_port, mac, mac, c.b))
            continue
        tables.setdefault(c.a, []).append(LldpEntry(c.a_port, chassis_mac(c.b), c.b_port, c.b))
        tables.setdefault(c.b, []).append(LldpEntry(c.b_port, chassis_mac(c.a), c.a_port, c.a))
    return tables


def wire(switches: Mapping[str, object], cables: Iterable[Cable], host_macs: Mapping[str, str]) -> None:
    """Replace every fake switch's LLDP table with what `cables` put on its ports.
    `switches`: name -> FakeSwitch (vlanroute.lab.server)."""
    tables = lldp_tables(cables, host_macs)
    for name, sw in switches.items():
        entries = tables.get(name, [])
        order = {p: i for i, p in enumerate(sw.state.ports)}           # type: ignore[attr-defined]
        sw.state.lldp[:] = sorted(entries, key=lambda e: order.get(e.port, len(order)))  # type: ignore[attr-defined]
