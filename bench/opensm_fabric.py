"""OpenSM's routes on a vlanroute fabric, the pure part (bench/opensm_peer.py runs the programs).

- `ib_fabric` numbers the ports of a fabric (switches, inter-switch cables with parallel
  cables, hosts per switch as one-port HCAs) and `topology_text` writes it in the
  ibnetdiscover-style format ibsim reads (net-examples/ of linux-rdma/ibsim): a record per
  node, `Switch <ports> "<id>"` or `Hca 1 "<id>"`, then `[port] "<remote id>"[remote port]`
  per connected port, each node's GUID set by a `switchguid=` / `caguid=` line before it.
- `parse_lfts` reads OpenSM's `opensm-lfts.dump` (written under --dump_files_dir when the
  log mask has the ROUTING bit, 0x40: opensm/osm_dump.c, dump_ucast_lfts): per switch
  `Unicast lids [0-N] of switch Lid L guid 0x<guid> ('<desc>'):` then `0x<lid> <port> # ...
  portguid 0x<guid>: '<desc>'` per destination LID. `parse_sl2vl` reads
  `opensm-sl2vl.dump` (dump_sl2vl_tbl): per port `in out : <VL of SL 0> ... <VL of SL 15>`.
- `host_paths` follows the tables from every switch with hosts to every HCA: the
  inter-switch hops each destination's packets take (InfiniBand forwards by destination
  LID only, so every host of a switch reaches a destination the same way).
- `cable_loads` is vlanroute's load model (docs/routing-bounds.md, "The traffic model"):
  one unit for every ordered pair of distinct hosts, the load of a cable the units that
  cross it in one direction. OpenSM routes each physical cable on its own, so parallel
  cables are separate channels here (vlanroute's LAG spreads a pair's load over its cables).
- `dependencies` is Dally and Seitz's channel dependency graph (as plan/metrics.py
  computes it for vlanroute's plans): channel a waits for channel b where a route leaves a
  switch on b after arriving on a. On one lane a channel is a directed cable; with virtual
  lanes it is a directed cable and a VL, the VL of each hop given by the path's SL and the
  switch's SL-to-VL table for the (in port, out port) pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

SWITCH_GUID_BASE = 0x0002_0000_0000
HCA_GUID_BASE = 0x0001_0000_0000        # HCA j: node GUID base + 4 j, its port 1: + 1 (ibsim: node GUID + port)

Hop = tuple[str, int]                   # a directed cable: the switch it leaves and that switch's port


class RouteError(Exception):
    """OpenSM's tables do not deliver some host pair (a loop, a hole, a wrong port)."""


@dataclass(frozen=True)
class IbFabric:
    switches: tuple[str, ...]
    hosts: dict[str, int]                            # switch -> hosts on it
    links: dict[Hop, Hop]                            # (switch, port) -> (switch, port) at the cable's far end
    hcas: tuple[tuple[str, str, int], ...]           # (HCA id, its switch, that switch's port), file order
    ports: dict[str, int]                            # switch -> its highest port number

    def switch_guid(self, switch: str) -> int:
        return SWITCH_GUID_BASE + self.switches.index(switch)

    def hca_port_guids(self) -> dict[int, str]:
        """Port GUID -> HCA id (port 1 of each HCA)."""
        return {HCA_GUID_BASE + 4 * j + 1: hca for j, (hca, _, _) in enumerate(self.hcas)}

    def hca_at(self) -> dict[Hop, str]:
        return {(sw, port): hca for hca, sw, port in self.hcas}


def ib_fabric(switches: Sequence[str], cables: Iterable[tuple[str, str]], hosts: Mapping[str, int],
              coords: Mapping[str, tuple[int, ...] | None] | None = None,
              dims: Sequence[int] | None = None) -> IbFabric:
    """Number every switch's ports: its cables first, then its hosts (HCA `<switch>-h<k>`).

    On a grid (`coords` and `dims` given) a switch's cables are ordered by dimension, then
    direction (+ before -), as OpenSM's dor engine wants a torus cabled: one port (group)
    per dimension and direction, the same at every switch (doc/current-routing.txt, "DOR
    Routing Algorithm"). Elsewhere they follow the neighbours' order. Parallel cables to one
    neighbour take consecutive ports."""
    order = {s: i for i, s in enumerate(switches)}
    cable_list = list(cables)
    ends: dict[str, list[tuple[tuple[int, ...], int, str]]] = {s: [] for s in switches}
    for c, (a, b) in enumerate(cable_list):
        if a == b or a not in order or b not in order:
            raise ValueError(f"cable {a}-{b}: both ends must be two different switches of the fabric")
        ends[a].append((_direction(a, b, order, coords, dims), c, b))
        ends[b].append((_direction(b, a, order, coords, dims), c, a))
    port_of: dict[tuple[str, int], int] = {}          # (switch, cable index) -> port
    ports: dict[str, int] = {}
    for s in switches:
        for p, (_, c, _) in enumerate(sorted(ends[s]), start=1):
            port_of[(s, c)] = p
        ports[s] = len(ends[s])
    links: dict[Hop, Hop] = {}
    for c, (a, b) in enumerate(cable_list):
        links[(a, port_of[(a, c)])] = (b, port_of[(b, c)])
        links[(b, port_of[(b, c)])] = (a, port_of[(a, c)])
    hcas: list[tuple[str, str, int]] = []
    names = set(switches)
    for s in switches:
        for k in range(hosts.get(s, 0)):
            ports[s] += 1
            hca = f"{s}-h{k + 1}"
            if hca in names:
                raise ValueError(f"HCA id {hca} is also a switch's name")
            hcas.append((hca, s, ports[s]))
    if max(ports.values(), default=0) > 254:
        raise ValueError("a switch with more than 254 ports (cables and hosts) does not fit InfiniBand's NodeInfo")
    return IbFabric(tuple(switches), {s: hosts.get(s, 0) for s in switches}, links, tuple(hcas), ports)


def _direction(a: str, b: str, order: Mapping[str, int], coords: Mapping[str, tuple[int, ...] | None] | None,
               dims: Sequence[int] | None) -> tuple[int, ...]:
    """The sort key of a's cable to b: (dimension, 0 for +, 1 for -) on a grid, else b's index."""
    ca, cb = (coords or {}).get(a), (coords or {}).get(b)
    if ca is not None and cb is not None and dims is not None:
        diff = [d for d in range(len(dims)) if ca[d] != cb[d]]
        if len(diff) == 1:
            d = diff[0]
            return (d, 0 if (cb[d] - ca[d]) % dims[d] == 1 else 1, order[b])
    return (len(dims or ()), order[b])


def topology_text(fab: IbFabric) -> str:
    """The fabric as an ibsim topology file. The first node is the first switch: ibsim
    attaches a client without SIM_HOST there, so OpenSM runs on that switch's port 0."""
    hca_at = fab.hca_at()
    out = [f"# vlanroute fabric: {len(fab.switches)} switches, {len(fab.links) // 2} cables, "
           f"{len(fab.hcas)} hosts (bench/opensm_peer.py)", ""]
    for s in fab.switches:
        out.append(f"switchguid={fab.switch_guid(s):#x}")
        out.append(f'Switch {max(fab.ports[s], 1)} "{s}"')
        for p in range(1, fab.ports[s] + 1):
            if (s, p) in fab.links:
                t, q = fab.links[(s, p)]
                out.append(f'[{p}] "{t}"[{q}]')
            else:
                out.append(f'[{p}] "{hca_at[(s, p)]}"[1]')
        out.append("")
    for j, (hca, s, p) in enumerate(fab.hcas):
        out.append(f"caguid={HCA_GUID_BASE + 4 * j:#x}")
        out.append(f'Hca 1 "{hca}"')
        out.append(f'[1] "{s}"[{p}]')
        out.append("")
    return "\n".join(out)


@dataclass(frozen=True)
class Lfts:
    tables: dict[int, dict[int, int]]      # switch node GUID -> destination LID -> output port
    lid_guid: dict[int, int]               # LID -> the port GUID OpenSM gave it


_LFT_HEADER = re.compile(r"^Unicast lids \[[0-9a-fA-Fx]+-[0-9a-fA-Fx]+\] of switch Lid (\d+) guid 0x([0-9a-fA-F]+)")
_LFT_ENTRY = re.compile(r"^0x([0-9a-fA-F]+) (\d+) [#:] (?:.*? portguid 0x([0-9a-fA-F]+))?")


def parse_lfts(text: str) -> Lfts:
    """OpenSM's dump, or what infiniband-diags' `ibroute LID` prints for each switch (the
    same lines with ':' for '#' and hexadecimal LID ranges): the tables read back from the
    switches themselves."""
    tables: dict[int, dict[int, int]] = {}
    lid_guid: dict[int, int] = {}
    current: dict[int, int] | None = None
    for line in text.splitlines():
        head = _LFT_HEADER.match(line)
        if head:
            current = tables.setdefault(int(head.group(2), 16), {})
            lid_guid[int(head.group(1))] = int(head.group(2), 16)
            continue
        entry = _LFT_ENTRY.match(line)
        if entry and current is not None:
            lid, port = int(entry.group(1), 16), int(entry.group(2))
            current[lid] = port
            if entry.group(3):
                lid_guid[lid] = int(entry.group(3), 16)
    return Lfts(tables, lid_guid)


_SL2VL_HEADER = re.compile(r"^(Switch|Channel Adapter|Router) 0x([0-9a-fA-F]+),")
_SL2VL_ROW = re.compile(r"^(\d+)\s+(\d+)\s+:((?:\s+\d+){16})\s*$")


def parse_sl2vl(text: str) -> dict[int, dict[tuple[int, int], tuple[int, ...]]]:
    """Switch node GUID -> (in port, out port) -> the VL of each of the 16 SLs."""
    out: dict[int, dict[tuple[int, int], tuple[int, ...]]] = {}
    current: dict[tuple[int, int], tuple[int, ...]] | None = None
    for line in text.splitlines():
        head = _SL2VL_HEADER.match(line)
        if head:
            current = out.setdefault(int(head.group(2), 16), {}) if head.group(1) == "Switch" else None
            continue
        row = _SL2VL_ROW.match(line)
        if row and current is not None:
            current[(int(row.group(1)), int(row.group(2)))] = tuple(int(x) for x in row.group(3).split())
    return out


def host_lids(fab: IbFabric, lfts: Lfts) -> dict[str, int]:
    """HCA id -> its LID, from the LID -> port GUID map of the dump."""
    guid_hca = fab.hca_port_guids()
    lids = {guid_hca[g]: lid for lid, g in lfts.lid_guid.items() if g in guid_hca}
    missing = [h for h, _, _ in fab.hcas if h not in lids]
    if missing:
        raise RouteError(f"{len(missing)} hosts have no LID in OpenSM's tables, e.g. {missing[0]}")
    return lids


def host_paths(fab: IbFabric, lfts: Lfts) -> dict[tuple[str, str], tuple[Hop, ...]]:
    """(source switch with hosts, destination HCA) -> the inter-switch hops its packets take."""
    lids = host_lids(fab, lfts)
    table = {s: lfts.tables.get(fab.switch_guid(s)) for s in fab.switches}
    hca_at = fab.hca_at()
    paths: dict[tuple[str, str], tuple[Hop, ...]] = {}
    for src in fab.switches:
        if not fab.hosts[src]:
            continue
        for hca, dst_switch, dst_port in fab.hcas:
            lid, here, hops = lids[hca], src, []
            while True:
                lft = table[here]
                if lft is None or lid not in lft:
                    raise RouteError(f"switch {here} has no route to {hca} (LID {lid})")
                port = lft[lid]
                if (here, port) in fab.links:
                    hops.append((here, port))
                    if len(hops) > len(fab.switches):
                        raise RouteError(f"a forwarding loop from {src} to {hca} (LID {lid}) through {here}")
                    here = fab.links[(here, port)][0]
                    continue
                if here != dst_switch or port != dst_port:
                    raise RouteError(f"switch {here} sends {hca} (LID {lid}) to port {port}, which is "
                                     + (f"host {hca_at[(here, port)]}" if (here, port) in hca_at else "no cable"))
                break
            paths[(src, hca)] = tuple(hops)
    return paths


def cable_loads(fab: IbFabric, paths: Mapping[tuple[str, str], Sequence[Hop]]) -> dict[Hop, float]:
    """All-to-all load per directed cable: every host of the source switch sends one unit to
    the destination host (hosts of one switch never cross a cable to each other)."""
    load: dict[Hop, float] = {}
    for (src, _), hops in paths.items():
        for hop in hops:
            load[hop] = load.get(hop, 0.0) + fab.hosts[src]
    return load


Channel = tuple[str, int, int]          # a directed cable and a virtual lane


def dependencies(fab: IbFabric, paths: Mapping[tuple[str, str], Sequence[Hop]],
                 sl_of: Mapping[tuple[str, str], int] | None = None,
                 sl2vl: Mapping[int, Mapping[tuple[int, int], Sequence[int]]] | None = None,
                 ) -> set[tuple[Channel, Channel]]:
    """The channel dependency graph's edges. Without `sl_of` every hop is on VL 0 (one lane).
    With it (host pair (source HCA, destination HCA) -> the SL OpenSM's SA gave the pair)
    each hop's VL is the SL-to-VL table's of the switch it leaves, for the port the packet
    came in on (the source host's port at the first switch); `sl2vl` is parse_sl2vl's."""
    edges: set[tuple[Channel, Channel]] = set()
    if sl_of is None:
        for hops in paths.values():
            for (a, pa), (b, pb) in zip(hops, hops[1:]):
                edges.add(((a, pa, 0), (b, pb, 0)))
        return edges
    assert sl2vl is not None
    port_of = {hca: (sw, port) for hca, sw, port in fab.hcas}
    for (src_hca, dst_hca), sl in sl_of.items():
        src_switch, in_port = port_of[src_hca]
        hops = paths[(src_switch, dst_hca)]
        prev: Channel | None = None
        for sw, out_port in hops:
            vl = sl2vl[fab.switch_guid(sw)][(in_port, out_port)][sl]
            channel = (sw, out_port, vl)
            if prev is not None:
                edges.add((prev, channel))
            prev = channel
            in_port = fab.links[(sw, out_port)][1]
    return edges


def is_acyclic(edges: Iterable[tuple[Channel, Channel]]) -> bool:
    """No cycle of channels (Kahn's algorithm: repeatedly drop channels nothing waits behind)."""
    succ: dict[Channel, list[Channel]] = {}
    indeg: dict[Channel, int] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        indeg[b] = indeg.get(b, 0) + 1
        indeg.setdefault(a, 0)
    ready = [c for c, n in indeg.items() if n == 0]
    seen = 0
    while ready:
        c = ready.pop()
        seen += 1
        for d in succ.get(c, ()):
            indeg[d] -= 1
            if indeg[d] == 0:
                ready.append(d)
    return seen == len(indeg)


def lanes_used(fab: IbFabric, paths: Mapping[tuple[str, str], Sequence[Hop]],
               sl_of: Mapping[tuple[str, str], int],
               sl2vl: Mapping[int, Mapping[tuple[int, int], Sequence[int]]]) -> tuple[int, int]:
    """(SLs, VLs on inter-switch cables) the host pairs use."""
    vls = {c[2] for edge in dependencies(fab, paths, sl_of, sl2vl) for c in edge}
    port_of = {hca: (sw, port) for hca, sw, port in fab.hcas}
    for (src_hca, dst_hca), sl in sl_of.items():      # one-hop routes make no dependency
        sw, in_port = port_of[src_hca]
        hops = paths[(sw, dst_hca)]
        if len(hops) == 1:
            vls.add(sl2vl[fab.switch_guid(sw)][(in_port, hops[0][1])][sl])
    return len(set(sl_of.values())), len(vls)
