"""Arista EOS show output as vlanroute reads it: the learned-MAC table (`show mac
address-table`), LLDP neighbours (`show lldp neighbors`), pre-flight facts (`show
version`, `show interfaces status`) and the spanning-tree state after a push (`show
spanning-tree topology vlan N status | json`). Layouts: docs/platforms/arista-eos.md.

`show mac address-table` rows: `Vlan  Mac Address  Type  Ports  Moves  Last Move`, e.g.
`  22    0013.0100.0002    DYNAMIC     Po300      1       0:10:37 ago` (Last Move may hold
`1 day, 22:18:09 ago`); ports are short names, `Et48`, `Et49/1`, `Po300`; `Cpu`, `Router`
and `Vx1` rows are not bridge ports. `show lldp neighbors`: see parse_lldp_neighbors.
"""

from __future__ import annotations

import json
import re

from vlanroute.drivers.common import normalize_mac
from vlanroute.drivers.family import LldpNeighbor, ShowCommand, StpPortState, StpTable, SwitchFacts
from vlanroute.model.bridge import LagPort, PortRef

_MAC_ROW = re.compile(r"^\s*(\d+)\s+([0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})\s+"
                      r"(DYNAMIC|STATIC)\s+(\S+)(\s.*)?$", re.IGNORECASE)


def long_port(short: str) -> PortRef | None:
    """`Et48` -> `Ethernet48`, `Et49/1` -> `Ethernet49/1`, `Po300` -> LagPort(300); None for
    anything that is not a bridge port (`Cpu`, `Router`, `Vx1`)."""
    if m := re.fullmatch(r"(?:Et|Ethernet)(\d+(?:/\d+)*)", short):
        return f"Ethernet{m.group(1)}"
    if m := re.fullmatch(r"(?:Po|Port-Channel)(\d+)", short):
        return LagPort(int(m.group(1)))
    return None


def parse_address_table(text: str) -> dict[tuple[int, str], PortRef]:
    """(VLAN, MAC aa:bb:cc:dd:ee:ff) -> bridge port, unicast table only."""
    table: dict[tuple[int, str], PortRef] = {}
    for line in text.splitlines():
        if "Multicast Mac Address Table" in line:
            break
        m = _MAC_ROW.match(line)
        if not m:
            continue
        port = long_port(m.group(4))
        if port is not None:
            table[(int(m.group(1)), normalize_mac(m.group(2)))] = port
    return table


def parse_lldp_neighbors(text: str) -> list[LldpNeighbor]:
    """The rows of `show lldp neighbors` [NTC]: a few `Number of table ...` counter lines,
    the header `Port  Neighbor Device ID  Neighbor Port ID  TTL`, a dashed line (absent in
    older releases), then one row per neighbour, e.g. `Et3/1  tg104.sjc.aristanetworks.com
    Ethernet3/2  120`. A port with several neighbours has several rows. The local port is
    printed short (`Et1`, `Et49/1`) and read as the switch's own name (`Ethernet1`); the
    Device ID is the neighbour's system name as it sends it, a domain suffix included (an
    EOS neighbour sends its interface name as Port ID, `Ethernet2`). Names are printed whole
    in the samples seen (28 characters), so no detail command is needed; cells are split on
    white space, since long names push the next column right. The table has no chassis
    column. Management ports (`Ma1`) are kept as printed: no plan cable names them.
    """
    out: list[LldpNeighbor] = []
    started = False
    for line in text.splitlines():
        cells = line.split()
        if not cells:
            continue
        if cells[0] == "Port" and "Neighbor" in cells:
            started = True
            continue
        if not started or set(line.strip()) <= {"-", " "}:
            continue
        if len(cells) >= 4 and cells[-1].isdigit():
            local = long_port(cells[0])
            out.append(LldpNeighbor(local_port=local if isinstance(local, str) else cells[0],
                                    port_id=cells[-2], system_name=" ".join(cells[1:-2])))
    return out


_MODEL = re.compile(r"^Arista (\S+)", re.MULTILINE)
_IMAGE = re.compile(r"^Software image version:\s*(\S+)", re.MULTILINE)
_DEVICE = re.compile(r"^! device: \S+ \(([^,]+), EOS-([^)]+)\)", re.MULTILINE)
_STATUS_PORT = re.compile(r"^(Et\d+(?:/\d+)*)\s", re.MULTILINE)


def facts(running_config: str, show: ShowCommand) -> SwitchFacts:
    """Model and firmware from `show version` (`Arista DCS-7050SX-64`, `Software image
    version: 4.28.9M`), else the running config's `! device:` header; ports from `show
    interfaces status` (short names, first column)."""
    sources: dict[str, str] = {}
    model = firmware = None
    version = show("show version")
    if m := _MODEL.search(version):
        model, sources["model"] = m.group(1), "show version"
    if m := _IMAGE.search(version):
        firmware, sources["firmware"] = m.group(1), "show version (Software image version)"
    if (model is None or firmware is None) and (m := _DEVICE.search(running_config)):
        model = model or m.group(1)
        firmware = firmware or m.group(2)
        sources.setdefault("model", "the running config's `! device:` line")
        sources.setdefault("firmware", "the running config's `! device:` line")
    found = [long_port(p) for p in _STATUS_PORT.findall(show("show interfaces status"))]
    ports = tuple(dict.fromkeys(p for p in found if isinstance(p, str))) or None
    if ports:
        sources["ports"] = "show interfaces status"
    return SwitchFacts(model=model, firmware=firmware, ports=ports, sources=sources)


def stp_topology_command(vlan: int) -> str:
    """The spanning-tree state of every port in one VLAN, as JSON: the command of Arista's
    own test `VerifySTPForwardingPorts` [ANTA], with the `| json` pipe NAPALM's EOS driver
    adds to every command it sends over SSH [NAPALM] (`_run_commands`)."""
    return f"show spanning-tree topology vlan {vlan} status | json"


def parse_stp_topology(replies: list[str], vlans: list[int]) -> StpTable:
    """The replies to `stp_topology_command(v)` for each v of `vlans` -> (port, VLAN) ->
    state. The JSON [ANTA] (`tests/units/anta_tests/test_stp.py`): `{"unmappedVlans": [],
    "topologies": {"Mst10": {"vlans": [10], "interfaces": {"Ethernet10": {"state":
    "forwarding"}, ...}}}}`; a topology is `MstN`, `Cist`, `VlN` or `NoStp` (the VLANs
    spanning tree does not run in, its ports printed `forwarding`); a blocked port reads
    `"state": "discarding"`. The topology of VLAN v is the one whose `vlans` list holds v
    (as ANTA reads it); if none lists v, a reply of one topology without a `vlans` list is
    taken as v's, since the command asked for v alone. Interfaces that are not bridge ports
    of the plan (`Cpu`, `Vxlan1`, `PeerEthernet3`) are passed over. A reply that is not
    such JSON is not readable; `{"topologies": {}}` (no instance for v, as ANTA treats it)
    lists no port."""
    states: dict[tuple[PortRef, int], StpPortState] = {}
    for vlan, reply in zip(vlans, replies):
        text = reply.strip()
        try:
            data = json.loads(text[text.find("{"):text.rfind("}") + 1] if "{" in text else text)
            topologies = data["topologies"]
            if not isinstance(topologies, dict):
                raise TypeError("topologies is not a mapping")
        except (ValueError, KeyError, TypeError) as exc:
            return StpTable(states, False, f"`{stp_topology_command(vlan)}` did not answer the JSON of "
                                           f"`topologies` ({type(exc).__name__}: {str(exc)[:80]})")
        chosen = [t for t in topologies.values() if isinstance(t, dict) and vlan in (t.get("vlans") or [])]
        if not chosen and len(topologies) == 1:
            only = next(iter(topologies.values()))
            chosen = [only] if isinstance(only, dict) and "vlans" not in only else []
        for topology in chosen:
            for name, info in (topology.get("interfaces") or {}).items():
                port = long_port(name)
                state = info.get("state") if isinstance(info, dict) else None
                if port is None or not isinstance(state, str):
                    continue
                states[(port, vlan)] = StpPortState("forwarding" if state == "forwarding" else "blocked", state)
    return StpTable(states)
