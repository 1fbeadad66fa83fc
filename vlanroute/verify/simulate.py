"""Frame-level IEEE 802.1Q simulator: bridges, hosts, cables, one frame at a time.

Bridge semantics (802.1Q-2018 clauses 8.6 and 8.8, independent VLAN learning):
- ingress: an untagged frame is classified into the port's PVID, a tagged one into its
  VID; the frame is dropped if the port does not admit that frame type, if the VLAN is
  not created on the bridge, or if ingress filtering is on and the port is not a member;
- learning: the source MAC is learned per (bridge, VLAN) on the ingress port;
- forwarding: broadcast and unknown unicast are flooded to every member port of the
  VLAN except the ingress port; a known unicast goes to the learned port, and is
  filtered if that is the ingress port;
- egress: the frame leaves untagged if the port is an untagged member, else tagged;
- a LAG is one bridge port; a port that is shut down or blocked by STP neither receives
  nor sends. Spanning tree is not run: a port is forwarding unless the network says so.

`BridgeNetwork.send` follows every copy of one frame (the reference semantics, used by
the unit tests). `MemoisedSimulator` answers the same questions for whole clusters fast,
by memoising what is a pure function of where a frame enters a bridge: a broadcast's
propagation per (bridge, ingress port, tag); learned entries per "attachment signature"
(hosts that entered the network alike are learned alike), and not at all for a VLAN whose
active topology is a clean forest (a learned port is then the next hop towards the
source); and a unicast's path per (bridge, VLAN, destination signature). It is checked against
`send` in tests/test_simulate.py (random networks) and tests/test_verify_mutations.py
(rendered clusters).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict, deque
from dataclasses import dataclass, field, replace

BROADCAST = "ff:ff:ff:ff:ff:ff"


@dataclass(frozen=True)
class BridgePort:
    """Forwarding view of one logical bridge port (physical port or LAG)."""

    pvid: int = 1
    untagged: frozenset[int] = frozenset({1})
    tagged: frozenset[int] = frozenset()
    admit_untagged: bool = True
    admit_tagged: bool = True
    ingress_filtering: bool = True
    forwarding: bool = True              # False: shut down or STP-blocked
    members: frozenset[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", self.untagged | self.tagged)


@dataclass
class Bridge:
    name: str
    vlans: frozenset[int]
    ports: dict[str, BridgePort]
    _members: dict[int, tuple[str, ...]] = field(default_factory=dict, repr=False)

    def ingress(self, port: str, tag: int | None) -> tuple[int | None, str]:
        """The VLAN a frame arriving on `port` with `tag` is classified into, or (None, why)."""
        bp = self.ports[port]
        if not bp.forwarding:
            return None, "port not forwarding"
        if tag is None:
            if not bp.admit_untagged:
                return None, "port admits tagged frames only"
            vid = bp.pvid
            if vid == 0:
                return None, "port has no PVID: untagged frames are dropped"
        else:
            if not bp.admit_tagged:
                return None, "port admits untagged frames only"
            vid = tag
        if vid not in self.vlans:
            return None, f"VLAN {vid} not created"
        if bp.ingress_filtering and vid not in bp.members:
            return None, f"ingress filtering: port not a member of VLAN {vid}"
        return vid, ""

    def members(self, vid: int) -> tuple[str, ...]:
        """Forwarding ports that are members of `vid`, in a fixed order."""
        got = self._members.get(vid)
        if got is None:
            got = tuple(p for p, bp in self.ports.items()
                        if bp.forwarding and vid in bp.members and vid in self.vlans)
            self._members[vid] = got
        return got

    def is_member(self, port: str, vid: int) -> bool:
        """`port in members(vid)`, in constant time and without building that tuple."""
        bp = self.ports[port]
        return bp.forwarding and vid in bp.members and vid in self.vlans

    def egress_tag(self, port: str, vid: int) -> int | None:
        return None if vid in self.ports[port].untagged else vid


@dataclass(frozen=True)
class Host:
    """A host on one bridge port. It receives an untagged frame on its main interface and a
    frame tagged V on its VLAN sub-interface for V (Linux 8021q: a tagged frame with no
    sub-interface for its VID is dropped); `subinterfaces` are those VIDs."""

    name: str
    mac: str
    bridge: str
    port: str
    subinterfaces: frozenset[int] = frozenset()

    def receives(self, tag: int | None) -> bool:
        """Does a frame arriving with `tag` (None: untagged) reach the host's IP stack?"""
        return tag is None or tag in self.subinterfaces


# An end of a cable: ("bridge", bridge, port) or ("host", host, "").
Endpoint = tuple[str, str, str]


@dataclass(slots=True)
class Delivery:
    host: str
    tag: int | None
    bridge: str
    port: str


@dataclass
class Trace:
    """Everything one frame did."""

    deliveries: list[Delivery] = field(default_factory=list)
    hops: list[tuple[str, str, int]] = field(default_factory=list)   # (bridge, in port, VLAN)
    floods: list[tuple[str, int]] = field(default_factory=list)      # unknown unicast flooded
    drops: list[tuple[str, str, str]] = field(default_factory=list)  # (bridge, port, why)
    loops: list[tuple[str, int]] = field(default_factory=list)       # (bridge, VLAN) revisited

    def delivered_to(self, host: str) -> list[Delivery]:
        return [d for d in self.deliveries if d.host == host]


class BridgeNetwork:
    """Bridges, hosts and cables; learning tables per (bridge, VLAN). `send` follows every
    copy of one frame: the reference semantics that `MemoisedSimulator` must agree with."""

    def __init__(self) -> None:
        self.bridges: dict[str, Bridge] = {}
        self.hosts: dict[str, Host] = {}
        self.links: dict[tuple[str, str], list[Endpoint]] = defaultdict(list)
        self.tables: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)

    def add_bridge(self, name: str, vlans: set[int] | frozenset[int],
                   ports: dict[str, BridgePort]) -> Bridge:
        bridge = Bridge(name, frozenset(vlans) | {1}, dict(ports))
        self.bridges[name] = bridge
        return bridge

    def connect(self, a: str, a_port: str, b: str, b_port: str) -> None:
        """A cable between two bridge ports (a LAG port may get several, one per member)."""
        for bridge, port in ((a, a_port), (b, b_port)):
            if port not in self.bridges[bridge].ports:
                raise KeyError(f"{bridge} has no port {port}")
        self.links[(a, a_port)].append(("bridge", b, b_port))
        self.links[(b, b_port)].append(("bridge", a, a_port))

    def add_host(self, name: str, mac: str, bridge: str, port: str,
                 subinterfaces: frozenset[int] = frozenset()) -> Host:
        if port not in self.bridges[bridge].ports:
            raise KeyError(f"{bridge} has no port {port}")
        host = Host(name, mac.lower(), bridge, port, frozenset(subinterfaces))
        self.hosts[name] = host
        self.links[(bridge, port)].append(("host", name, ""))
        return host

    def peers(self, bridge: str, port: str) -> list[Endpoint]:
        """Distinct far ends of a port; a LAG's member cables to one far port count once."""
        ends = self.links.get((bridge, port), [])
        return list(dict.fromkeys(ends)) if len(ends) > 1 else ends

    def send(self, host: str, dst_mac: str, tag: int | None = None, *,
             learn: bool = True) -> Trace:
        """Inject one frame from `host` (tagged with `tag` or untagged) and follow every copy.

        A copy that reaches a bridge this frame has already passed is recorded as a loop
        and not followed further: in a real network it would circulate (a storm).
        """
        src = self.hosts[host]
        dst_mac = dst_mac.lower()
        trace = Trace()
        seen: set[str] = set()
        queue: deque[tuple[str, str, int | None]] = deque([(src.bridge, src.port, tag)])
        while queue:
            bname, in_port, wire_tag = queue.popleft()
            bridge = self.bridges[bname]
            vid, why = bridge.ingress(in_port, wire_tag)
            if vid is None:
                trace.drops.append((bname, in_port, why))
                continue
            if bname in seen:
                trace.loops.append((bname, vid))
                continue
            seen.add(bname)
            trace.hops.append((bname, in_port, vid))
            table = self.tables[(bname, vid)]
            if learn:
                table[src.mac] = in_port
            out = table.get(dst_mac) if dst_mac != BROADCAST else None
            if out is None:
                if dst_mac != BROADCAST:
                    trace.floods.append((bname, vid))
                egress = [p for p in bridge.members(vid) if p != in_port]
            elif out == in_port:
                trace.drops.append((bname, in_port, "destination learned on the ingress port"))
                continue
            elif not bridge.is_member(out, vid):
                trace.drops.append((bname, out, f"egress port not a member of VLAN {vid}"))
                continue
            else:
                egress = [out]
            for port in egress:
                out_tag = bridge.egress_tag(port, vid)
                for kind, name, far_port in self.peers(bname, port):
                    if kind == "host":
                        trace.deliveries.append(Delivery(name, out_tag, bname, port))
                    else:
                        queue.append((name, far_port, out_tag))
        return trace


# ---------------------------------------------------------------------------------------
# Fast whole-cluster questions, same semantics as BridgeNetwork.send.

@dataclass(slots=True)
class FloodNode:
    """A broadcast copy arriving at (bridge, port, tag): what the bridge does with it."""

    bridge: str
    port: str
    vid: int | None                      # None: dropped
    why: str
    hosts: list[Delivery]                # copies that leave towards hosts
    children: list[tuple[str, str, int | None]]   # copies that reach other bridges


@dataclass
class FloodResult:
    """The effect of one broadcast, seen from the bridge it entered."""

    learned: dict[tuple[str, int], str]  # (bridge, VLAN) -> port the source was learned on
    deliveries: list[Delivery]
    loops: list[tuple[str, int, str]]    # (bridge, VLAN, port the repeated copy came in)
    drops: list[tuple[str, str, str]]


@dataclass(slots=True)
class PathResult:
    """A unicast followed from one bridge until it reaches the destination's bridge."""

    ok: bool
    bridges: tuple[str, ...]             # bridges passed, first one included
    arrival: tuple[str, str, int] | None  # (bridge, ingress port, VLAN) at the last bridge
    vid: int | None                      # VLAN on the last bridge
    problem: str = ""
    first_out: str | None = None         # egress port on the first bridge


@dataclass(slots=True)
class Broadcast:
    """One learning broadcast of one host: where it entered and what it did below."""

    tag: int | None
    port: str                            # the host's port
    vid: int | None                      # VLAN on the host's own bridge; None: dropped there
    why: str                             # why it was dropped
    children: tuple[tuple[str, str, int | None], ...]   # copies leaving the own bridge
    below: FloodResult | None            # what those copies did (shared between hosts)
    forest: _Forest | None             # set when the flood is exactly a forest traversal


class _Forest:
    """A VLAN whose active topology is a forest and never changes VLAN or drops a copy.

    Then a broadcast entering bridge s in this VLAN reaches every bridge of s's tree once
    and each learns the source on its port towards s: a next-hop query, no stored table.
    """

    def __init__(self, vid: int, adj: dict[str, dict[str, str]]) -> None:
        self.vid = vid
        self.adj = adj                               # bridge -> neighbour -> port towards it
        self.comp: dict[str, str] = {}               # bridge -> the root of its tree
        self.members: dict[str, list[str]] = defaultdict(list)
        for root in sorted(adj):
            if root in self.comp:
                continue
            self.comp[root] = root
            stack = [root]
            while stack:
                b = stack.pop()
                self.members[root].append(b)
                for nb in adj[b]:
                    if nb not in self.comp:
                        self.comp[nb] = root
                        stack.append(nb)
        # the next-hop index, built on the first `toward` (a large clean fabric checked by
        # equivalence classes never asks: 512 VLANs x 1,024 bridges of it are not kept)
        self.tin: dict[str, int] = {}
        self.tout: dict[str, int] = {}
        self.up: dict[str, str] = {}                 # bridge -> port towards its parent
        self.down: dict[str, list[tuple[int, int, str]]] = {}   # (tin, tout, port) of children
        self._indexed = False

    def is_edge_port(self, bridge: str, port: str) -> bool:
        """The port carries one of this forest's links."""
        return port in self.adj.get(bridge, {}).values()

    def _index(self) -> None:
        adj = self.adj
        clock = 0
        seen: set[str] = set()
        for root in sorted(adj):
            if root in seen:
                continue
            seen.add(root)
            stack: list[tuple[str, str | None]] = [(root, None)]
            order: list[str] = []
            while stack:
                b, parent = stack.pop()
                self.tin[b] = clock
                clock += 1
                order.append(b)
                for nb in sorted(adj[b], reverse=True):
                    if nb != parent:
                        seen.add(nb)
                        stack.append((nb, b))
            # tout: the largest tin in the subtree, filled bottom-up in reverse preorder
            parent_of: dict[str, str | None] = {root: None}
            for b in order:
                for nb in adj[b]:
                    if nb not in parent_of:
                        parent_of[nb] = b
            for b in reversed(order):
                self.tout[b] = max([self.tin[b]] + [self.tout[c] for c in adj[b] if parent_of.get(c) == b])
            for b in order:
                par = parent_of[b]
                if par is not None:
                    self.up[b] = adj[b][par]
                self.down[b] = sorted((self.tin[c], self.tout[c], adj[b][c])
                                      for c in adj[b] if parent_of.get(c) == b)
        self._indexed = True

    def toward(self, bridge: str, target: str) -> str | None:
        """The port of `bridge` that leads to `target` in this forest, None if unconnected."""
        if bridge == target or self.comp.get(bridge) != self.comp.get(target) or bridge not in self.comp:
            return None
        if not self._indexed:
            self._index()
        t = self.tin[target]
        if self.tin[bridge] < t <= self.tout[bridge]:
            kids = self.down[bridge]
            i = bisect_right(kids, (t, _BIG, "")) - 1
            return kids[i][2]
        return self.up[bridge]


_BIG = 1 << 62


class MemoisedSimulator:
    """Learning broadcasts and all-pairs unicast checks for a whole `BridgeNetwork`, memoised.

    Learning state is kept per *attachment signature*: hosts that entered the network the
    same way (same bridge, same broadcasts, same first copies) are learned on the same
    ports everywhere except their own bridge, so their remote entries are stored once.
    A broadcast in a VLAN whose active topology is a clean forest stores nothing: its
    entries are next-hop queries on the forest (`_Forest`).
    """

    def __init__(self, net: BridgeNetwork) -> None:
        self.net = net
        self._nodes: dict[tuple[str, str, int | None], FloodNode] = {}
        self._remote_floods: dict[tuple, FloodResult] = {}
        self._forests: dict[int, _Forest | None] = {}
        self._forest_links: dict[int, tuple[list[str], list[tuple[str, str, str, str]], bool]] | None = None
        self._linked_ports: dict[str, list[str]] = {}
        self._linked_sets: dict[str, frozenset[str]] = {}
        # Learned state after `learn`: per host its own-bridge entries, and per signature
        # the forest VLANs (vid -> broadcast index) and the stored remote entries
        # ((bridge, vid) -> (broadcast index, port)); the later broadcast wins.
        self.local: dict[str, frozenset[int]] = {}    # VLANs learned on the host's own port
        self.signature: dict[str, int] = {}
        self.sig_forests: list[dict[int, int]] = []
        self.sig_tables: list[dict[tuple[str, int], tuple[int, str]]] = []
        self._sig_index: dict[tuple, int] = {}
        self._paths: dict[tuple[str, int, int], PathResult] = {}

    # -- broadcasts --------------------------------------------------------------------
    def node(self, bridge: str, port: str, tag: int | None) -> FloodNode:
        key = (bridge, port, tag)
        got = self._nodes.get(key)
        if got is not None:
            return got
        b = self.net.bridges[bridge]
        vid, why = b.ingress(port, tag)
        hosts: list[Delivery] = []
        children: list[tuple[str, str, int | None]] = []
        if vid is not None:
            for out in b.members(vid):
                if out == port:
                    continue
                out_tag = b.egress_tag(out, vid)
                for kind, name, far_port in self.net.peers(bridge, out):
                    if kind == "host":
                        hosts.append(Delivery(name, out_tag, bridge, out))
                    else:
                        children.append((name, far_port, out_tag))
        got = FloodNode(bridge, port, vid, why, hosts, children)
        self._nodes[key] = got
        return got

    def _linked_set(self, bridge: str) -> frozenset[str]:
        got = self._linked_sets.get(bridge)
        if got is None:
            got = self._linked_sets[bridge] = frozenset(self._linked(bridge))
        return got

    def _linked(self, bridge: str) -> list[str]:
        """The bridge's ports with a cable to another bridge, in port order."""
        got = self._linked_ports.get(bridge)
        if got is None:
            got = [p for p in self.net.bridges[bridge].ports
                   if any(e[0] == "bridge" for e in self.net.peers(bridge, p))]
            self._linked_ports[bridge] = got
        return got

    def forest(self, vid: int) -> _Forest | None:
        """The VLAN's active topology if it is a clean forest (see `_Forest`), else None."""
        if vid in self._forests:
            return self._forests[vid]
        if self._forest_links is None:
            self._forest_links = self._links_by_vlan()
        bridges, directed, clean = self._forest_links.pop(vid, ([], [], True))
        adj: dict[str, dict[str, str]] = {b: {} for b in bridges}
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            # path halving: each lookup shortens the chain, so a VLAN's 1,023 unions on a
            # 32x32 torus do not walk ever longer chains
            while (up := parent.get(x, x)) != x:
                parent[x] = parent.get(up, up)
                x = parent[x]
            return x

        if clean:
            both = set(directed)
            for (a, ap, b, bp) in directed:
                if (b, bp, a, ap) not in both or a == b:
                    clean = False
                    break
        if clean:
            for (a, ap, b, bp) in sorted(directed):
                if a > b:
                    continue
                if b in adj[a]:          # a second link between the same two bridges
                    clean = False
                    break
                ra, rb = find(a), find(b)
                if ra == rb:
                    clean = False
                    break
                parent[ra] = rb
                adj[a][b] = ap
                adj[b][a] = bp
        result = _Forest(vid, adj) if clean else None
        self._forests[vid] = result
        return result

    def _links_by_vlan(self) -> dict[int, tuple[list[str], list[tuple[str, str, str, str]], bool]]:
        """Per VLAN: the bridges that have it, the directed links (bridge, port, far bridge,
        far port) whose near end forwards it into a cable to one other bridge that takes the
        copy in the same VLAN, and whether every forwarding member port with a cable to a
        bridge is such a link (False: a port with several far ends, or a copy that changes
        VLAN or is dropped on the far side, so no clean forest).

        One pass over the port memberships for all VLANs, instead of every linked port of
        every bridge per VLAN (2 M membership tests on a 32x32 torus with 512 VLANs)."""
        out: dict[int, tuple[list[str], list[tuple[str, str, str, str]], bool]] = {}
        for bname, bridge in self.net.bridges.items():
            for vid in bridge.vlans:
                got = out.get(vid)
                if got is None:
                    out[vid] = ([bname], [], True)
                else:
                    got[0].append(bname)
        unclean: set[int] = set()
        for bname, bridge in self.net.bridges.items():
            for port in self._linked(bname):
                bp = bridge.ports[port]
                if not bp.forwarding:
                    continue                                    # a member of nothing
                vids = bp.members & bridge.vlans
                ends = self.net.peers(bname, port)
                if len(ends) != 1:
                    unclean |= vids
                    continue
                _, far, far_port = ends[0]
                fb = self.net.bridges[far]
                fp = fb.ports[far_port]
                # Sent tagged (not an untagged member): the far side classifies it by its
                # tag, so it stays in the VLAN exactly when Bridge.ingress admits that tag.
                tagged = vids - bp.untagged
                if fp.forwarding and fp.admit_tagged:
                    same = tagged & fb.vlans
                    if fp.ingress_filtering:
                        same &= fp.members
                else:
                    same = frozenset()
                unclean |= tagged - same
                # Sent untagged: the far side's PVID decides, as Bridge.ingress says.
                for vid in vids & bp.untagged:
                    if fb.ingress(far_port, None)[0] == vid:
                        same = same | {vid}
                    else:
                        unclean.add(vid)
                link = (bname, port, far, far_port)
                for vid in same:
                    out[vid][1].append(link)
        for vid in unclean:
            out[vid] = (out[vid][0], [], False)
        return out

    def _flood_below(self, start: str, vid: int,
                     children: tuple[tuple[str, str, int | None], ...]) -> FloodResult:
        """Propagation of a broadcast's copies that left bridge `start` for other bridges."""
        key = (start, vid, children)
        got = self._remote_floods.get(key)
        if got is not None:
            return got
        learned: dict[tuple[str, int], str] = {}
        deliveries: list[Delivery] = []
        loops: list[tuple[str, int, str]] = []
        drops: list[tuple[str, str, str]] = []
        seen = {start}
        queue = deque(children)
        while queue:
            n = self.node(*queue.popleft())
            if n.vid is None:
                drops.append((n.bridge, n.port, n.why))
                continue
            if n.bridge in seen:
                loops.append((n.bridge, n.vid, n.port))
                continue
            seen.add(n.bridge)
            learned[(n.bridge, n.vid)] = n.port
            deliveries.extend(n.hosts)
            queue.extend(n.children)
        got = FloodResult(learned, deliveries, loops, drops)
        self._remote_floods[key] = got
        return got

    def _send_broadcast(self, host: Host, tag: int | None) -> Broadcast:
        bridge = self.net.bridges[host.bridge]
        vid, why = bridge.ingress(host.port, tag)
        if vid is None:
            return Broadcast(tag, host.port, None, why, (), None, None)
        # the forest is usually built already (half a million calls on a 32x32 torus)
        forest = self._forests[vid] if vid in self._forests else self.forest(vid)
        if forest is not None and (host.port not in self._linked_set(host.bridge)
                                   or not forest.is_edge_port(host.bridge, host.port)):
            # a clean forest, entered from outside it: nothing loops, nothing is dropped,
            # every bridge of the tree learns the host towards host.bridge
            return Broadcast(tag, host.port, vid, "", (), None, forest)
        first = self.node(host.bridge, host.port, tag)
        children = tuple(first.children)
        return Broadcast(tag, host.port, vid, "", children,
                         self._flood_below(host.bridge, vid, children), None)

    def broadcast(self, host: str, tag: int | None) -> FloodResult:
        """One broadcast from `host`, fully expanded (no state change; for tests/messages)."""
        h = self.net.hosts[host]
        first = self.node(h.bridge, h.port, tag)
        if first.vid is None:
            return FloodResult({}, [], [], [(h.bridge, h.port, first.why)])
        below = self._flood_below(h.bridge, first.vid, tuple(first.children))
        learned = {(h.bridge, first.vid): h.port}
        learned.update(below.learned)
        return FloodResult(learned, first.hosts + below.deliveries, below.loops, below.drops)

    def learn(self, broadcasts: dict[str, list[int | None]]) -> dict[str, list[Broadcast]]:
        """Every host sends its broadcasts in order; the tables are left as they would be.

        Returns per host the broadcasts that were dropped on its own bridge or flooded
        outside a clean forest (the only ones that can show a problem)."""
        results: dict[str, list[Broadcast]] = {}
        # Hosts on one bridge whose ports are configured alike and carry no cable to another
        # bridge, sending the same tags, send the same copies: computed once per class.
        same: dict[tuple, tuple[list[Broadcast], int, frozenset[int]]] = {}
        for host in sorted(broadcasts):
            h = self.net.hosts[host]
            tags = tuple(broadcasts[host])
            klass = (h.bridge, self.net.bridges[h.bridge].ports[h.port], tags)
            plain = h.port not in self._linked(h.bridge)
            hit = same.get(klass) if plain else None
            if hit is not None:
                records, self.signature[host], self.local[host] = hit
                results[host] = [replace(r, port=h.port) for r in records if r.forest is None]
                continue
            local: set[int] = set()
            records = [self._send_broadcast(h, tag) for tag in tags]
            parts: list[tuple] = []
            for rec in records:
                if rec.vid is None:
                    continue
                local.add(rec.vid)
                parts.append((rec.vid, rec.children, rec.forest is not None))
            sig = (h.bridge, tuple(parts))
            idx = self._sig_index.get(sig)
            if idx is None:
                forests: dict[int, int] = {}
                table: dict[tuple[str, int], tuple[int, str]] = {}
                for i, rec in enumerate(r for r in records if r.vid is not None):
                    if rec.forest is not None:
                        forests[rec.forest.vid] = i
                    elif rec.below is not None:
                        for k, port in rec.below.learned.items():
                            table[k] = (i, port)
                idx = len(self.sig_tables)
                self.sig_forests.append(forests)
                self.sig_tables.append(table)
                self._sig_index[sig] = idx
            self.signature[host] = idx
            self.local[host] = frozenset(local)
            if plain:
                same[klass] = (records, idx, self.local[host])
            # a clean forest flood cannot loop or drop: nothing to report, nothing kept
            results[host] = [r for r in records if r.forest is None]
        return results

    def learned_port(self, bridge: str, vid: int, dst: str) -> str | None:
        """The port `bridge` learned `dst` on in VLAN `vid`, for a bridge other than dst's."""
        return self._remote(bridge, vid, dst)

    def _remote(self, bridge: str, vid: int, dst: str) -> str | None:
        sig = self.signature[dst]
        stored = self.sig_tables[sig].get((bridge, vid))
        f_index = self.sig_forests[sig].get(vid)
        if f_index is not None and (stored is None or stored[0] < f_index):
            port = self._forests[vid].toward(bridge, self.net.hosts[dst].bridge)  # type: ignore[union-attr]
            if port is not None:
                return port
        return stored[1] if stored is not None else None

    def lookup(self, bridge: str, vid: int, dst: str) -> str | None:
        """The port `bridge` learned host `dst` on in VLAN `vid`, if any."""
        host = self.net.hosts[dst]
        if bridge == host.bridge and vid in self.local[dst]:
            return host.port
        return self._remote(bridge, vid, dst)

    def table_sizes(self) -> dict[str, int]:
        """Learned MAC entries per bridge, counting (VLAN, MAC) pairs."""
        sizes: dict[str, int] = {b: 0 for b in self.net.bridges}
        hosts_per_sig: dict[int, list[str]] = defaultdict(list)
        for host, idx in self.signature.items():
            hosts_per_sig[idx].append(host)
        # forest VLANs: every bridge of the source's tree (but its own) holds one entry,
        # unless a stored entry for the same (bridge, VLAN) exists (counted below)
        per_tree: dict[tuple[int, str], int] = defaultdict(int)
        for idx, hosts in hosts_per_sig.items():
            own = self.net.hosts[hosts[0]].bridge
            for vid in self.sig_forests[idx]:
                forest = self._forests[vid]
                assert forest is not None
                if own in forest.comp:
                    per_tree[(vid, forest.comp[own])] += len(hosts)
                    sizes[own] -= len(hosts)
        for (vid, root), count in per_tree.items():
            for b in self._forests[vid].members[root]:  # type: ignore[union-attr]
                sizes[b] += count
        for idx, hosts in hosts_per_sig.items():
            own = self.net.hosts[hosts[0]].bridge
            for (b, vid) in self.sig_tables[idx]:
                forest = self._forests.get(vid)
                shadowed = (vid in self.sig_forests[idx] and forest is not None
                            and forest.comp.get(b) is not None
                            and forest.comp.get(b) == forest.comp.get(own) and b != own)
                if not shadowed:
                    sizes[b] += len(hosts)
        for host, vids in self.local.items():
            sizes[self.net.hosts[host].bridge] += len(vids)
        return sizes

    # -- unicast ------------------------------------------------------------------------
    def path(self, bridge: str, port: str, tag: int | None, dst: str) -> PathResult:
        """Follow a unicast to host `dst` from its arrival at (bridge, port, tag) until it
        arrives at dst's bridge (no learning). Memoised per (bridge, VLAN, dst's
        signature): beyond dst's own bridge, hosts with one signature are learned on the
        same ports, and a bridge forwards a known unicast the same way whatever port it
        came in on, except that it filters it if it would go back out of that port."""
        first_vid, why = self.net.bridges[bridge].ingress(port, tag)
        if first_vid is None:
            return PathResult(False, (bridge,), None, None, f"dropped at {bridge} port {port}: {why}")
        vid = first_vid
        target = self.net.hosts[dst].bridge
        sig = self.signature[dst]
        walked: list[tuple[tuple[str, int, int], str, str | None]] = []   # (memo key, bridge, out)
        seen: set[str] = set()
        memoise = True
        b, p = bridge, port
        while True:
            if b == target:
                result = PathResult(True, (b,), (b, p, vid), vid)
                break
            if b in seen:
                result = PathResult(False, (b,), None, vid, f"loop: returns to {b} in VLAN {vid}")
                memoise = False
                break
            key = (b, vid, sig)
            hit = self._paths.get(key)
            if hit is not None:
                if hit.first_out == p:
                    result = PathResult(False, (b,), None, vid,
                                        f"filtered at {b}: destination learned on ingress port {p}")
                elif seen.intersection(hit.bridges):
                    result = PathResult(False, hit.bridges, None, vid, "loop: returns to a bridge "
                                        f"already passed ({' '.join(hit.bridges)})")
                    memoise = False
                else:
                    result = hit
                break
            seen.add(b)
            out = self._remote(b, vid, dst)
            if out == p:
                result = PathResult(False, (b,), None, vid,
                                    f"filtered at {b}: destination learned on ingress port {p}")
                break
            hop = self._next_hop(b, vid, out)
            if isinstance(hop, str):
                result = PathResult(False, (b,), None, vid, hop, out)
                self._paths[key] = result
                break
            walked.append((key, b, out))
            b, p, vid = hop
        if memoise:
            for key, wb, out in reversed(walked):
                result = PathResult(result.ok, (wb,) + result.bridges, result.arrival, result.vid,
                                    result.problem, out)
                self._paths[key] = result
        else:
            for _key, wb, out in reversed(walked):
                result = PathResult(result.ok, (wb,) + result.bridges, result.arrival, result.vid,
                                    result.problem, out)
        return result

    def _next_hop(self, b: str, vid: int, out: str | None) -> tuple[str, str, int] | str:
        """Where a known unicast sent from bridge `b` out of port `out` in VLAN `vid`
        arrives (bridge, port, VLAN), or why it does not (a problem line)."""
        if out is None:
            return f"flooded at {b} in VLAN {vid}: destination not learned"
        bridge_obj = self.net.bridges[b]
        if not bridge_obj.is_member(out, vid):
            return f"dropped at {b}: egress port {out} not a member of VLAN {vid}"
        ends = self.net.peers(b, out)
        if len(ends) != 1 or ends[0][0] != "bridge":
            what = ("no cable" if not ends else f"{len(ends)} far ends" if len(ends) > 1
                    else f"host {ends[0][1]}")
            return f"at {b} port {out} (learned for the destination) has {what}"
        _, far, far_port = ends[0]
        far_vid, why = self.net.bridges[far].ingress(far_port, bridge_obj.egress_tag(out, vid))
        if far_vid is None:
            return f"sent from {b} port {out}, dropped at {far} port {far_port}: {why}"
        return far, far_port, far_vid

    def deliver_local(self, arrival: tuple[str, str, int], dst: str) -> tuple[list[Delivery], str]:
        """Last bridge: forward the unicast to dst's port; returns deliveries or a problem."""
        b, p, vid = arrival
        bridge = self.net.bridges[b]
        out = self.lookup(b, vid, dst)
        if out is None:
            return [], f"flooded at {b} in VLAN {vid}: destination not learned"
        if out == p:
            return [], f"filtered at {b}: destination learned on ingress port {p}"
        if not bridge.is_member(out, vid):
            return [], f"dropped at {b}: egress port {out} not a member of VLAN {vid}"
        tag = bridge.egress_tag(out, vid)
        got: list[Delivery] = []
        for kind, name, _ in self.net.peers(b, out):
            if kind != "host":
                return [], f"at {b} port {out} (learned for the destination) leads to bridge {name}"
            got.append(Delivery(name, tag, b, out))
        return got, ""
