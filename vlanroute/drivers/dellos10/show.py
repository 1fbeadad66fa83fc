"""Dell OS10 show output as vlanroute reads it: the learned-MAC table (`show mac
address-table`), LLDP neighbours (`show lldp neighbors detail`), pre-flight facts (`show
version`, `show interface status`) and the spanning-tree state after a push (`show
spanning-tree active`). Layouts: docs/platforms/dell-os10.md.

`show mac address-table` rows: `VlanId  Mac Address  Type  Interface`, e.g. `54
00:50:56:af:12:f5   dynamic     port-channel1` or `... ethernet1/1/12:1`, after an optional
`Codes:` or `Legend:` line; columns are split on white space (widths differ between
sources). `show lldp neighbors detail`: see parse_lldp_neighbors_detail.
"""

from __future__ import annotations

import re

from vlanroute.drivers.common import normalize_mac
from vlanroute.drivers.family import LldpNeighbor, ShowCommand, StpPortState, StpTable, SwitchFacts
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
# The lines of a `show lldp neighbors detail` block vlanroute reads; `Remote Chassis ID:`
# does not match `Remote Chassis ID Subtype:`. Other lines (the subtypes, TTL, capabilities,
# the indented MAC/PHY and Dell lines, the continuation lines of a multi-line `Remote System
# Desc:`) are skipped.
_DETAIL_FIELD = re.compile(r"^(Remote Chassis ID|Remote Port ID|Local Port ID|Remote System Name):\s*(.*?)\s*$")
_DASHES = re.compile(r"^-{10,}\s*$")


def parse_lldp_neighbors_detail(text: str) -> list[LldpNeighbor]:
    """The neighbours of `show lldp neighbors detail`, as a real S5248F-ON (10.5.6.1) prints
    them [ARC]: one block per neighbour, blocks separated by a dashed line and a blank line,
    the last block without a dashed line after it. A block's lines vlanroute reads:
    `Remote Chassis ID: 0c:29:ef:c3:0b:20`, `Remote Port ID: ethernet1/1/39` (an interface
    name from a switch, a MAC from a server NIC), `Local Port ID: ethernet1/1/47:1` (this
    switch's port as the plan names it) and `Remote System Name: s46r23b-Rack01-TOR-2`,
    printed in full (the summary `show lldp neighbors` cuts it to 17 characters and `...`
    [MFD]); `Not Advertised` is read as no name. The Port ID is kept as sent (the cabling
    check turns it into a plan name with Family.lldp_port_name). A field seen twice in one
    block also starts a new block, in case a separator line is missing; a block without
    `Local Port ID` is not a neighbour and is skipped."""
    out: list[LldpNeighbor] = []
    block: dict[str, str] = {}

    def close() -> None:
        if local := block.get("Local Port ID"):
            ref = port_ref(local)
            name = block.get("Remote System Name", "")
            out.append(LldpNeighbor(local_port=ref if isinstance(ref, str) else local,
                                    chassis_id=block.get("Remote Chassis ID", ""),
                                    port_id=block.get("Remote Port ID", ""),
                                    system_name="" if name == NOT_ADVERTISED else name))
        block.clear()

    for line in text.splitlines():
        if _DASHES.match(line):
            close()
        elif m := _DETAIL_FIELD.match(line):
            if m.group(1) in block:
                close()
            block[m.group(1)] = m.group(2)
    close()
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


STP_COMMAND = "show spanning-tree active"
_STP_PROTOCOL = re.compile(r"^\s*Spanning tree enabled protocol (\S+)", re.IGNORECASE)
_STP_VLAN = re.compile(r"^\s*VLAN (\d+)\s*$")
_PORT_ID = re.compile(r"^\d+\.\d+$")


def parse_spanning_tree_active(text: str, vlans: list[int]) -> StpTable:
    """`show spanning-tree active` -> (port, VLAN) -> state, in the layout of the OS10 User
    Guide's examples [UG10.5], [MXGUIDE]: `Spanning tree enabled protocol rstp ...` (or
    `rapid-pvst`, then one section per VLAN under a `VLAN 1` line), the root and bridge
    lines, then two tables whose rows name the port and, three columns after its `PortID`
    (`128.282`), its state `Sts`: `FWD` (forwarding), `BLK` (blocked), e.g.
    `ethernet1/1/6:4   128.283  128   2000  BLK  0  32768 3417.4455.667f  128.153` and
    `ethernet1/1/6:4   Altr  128.283 128  2000 BLK 0  AUTO  No`. Under RSTP a row holds for
    every VLAN; under RPVST+ for its section's VLAN. The command lists "RSTP-active
    interfaces" only [UG10.5], so a port with `spanning-tree disable` is not in it
    (Family.stp_off_unlisted). Other modes (MST) print no example in a source read: a row
    outside a VLAN section under them is read as blocked, its VLANs not being shown. A
    blank reply (no active port: assumed) lists nothing; a reply that is neither blank nor
    opens with the protocol line is not readable."""
    protocol: str | None = None
    vlan: int | None = None
    states: dict[tuple[PortRef, int], StpPortState] = {}
    for line in text.splitlines():
        if m := _STP_PROTOCOL.match(line):
            protocol = m.group(1).lower()
            continue
        if m := _STP_VLAN.match(line):
            vlan = int(m.group(1))
            continue
        words = line.split()
        port = port_ref(words[0]) if words else None
        at = next((i for i, w in enumerate(words[1:3], start=1) if _PORT_ID.match(w)), None)
        if port is None or at is None or len(words) <= at + 3:
            continue
        sts = words[at + 3]
        if vlan is not None:
            targets = [vlan] if vlan in vlans else []
        else:
            targets = list(vlans)
        for v in targets:
            if vlan is None and protocol != "rstp":
                state = StpPortState("blocked", f"{sts} (spanning-tree mode {protocol or 'unknown'}: the "
                                                "table does not show which VLANs this row is for)")
            else:
                state = StpPortState("forwarding" if sts.upper() == "FWD" else "blocked", sts)
            # A port is in both tables of a section; a disagreement is read as not forwarding.
            prev = states.get((port, v))
            if prev is None or prev.verdict == "forwarding":
                states[(port, v)] = state
    if protocol is None and text.strip():
        first = next(line.strip() for line in text.splitlines() if line.strip())
        return StpTable({}, False, f"`{STP_COMMAND}` did not print `Spanning tree enabled protocol ...` "
                                   f"({first[:80]})")
    return StpTable(states)
