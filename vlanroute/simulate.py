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

`Network.send` follows every copy of one frame (the reference semantics, used by the unit
tests). `Fabric` answers the same questions for whole clusters fast, by memoising what is
a pure function of where a frame enters a bridge: a broadcast's propagation per
(bridge, ingress port, tag), and a unicast's path per (bridge, ingress port, tag,
"where the destination was learned"). It is checked against `send` in the tests.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

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

    @property
    def members(self) -> frozenset[int]:
        return self.untagged | self.tagged


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

    def egress_tag(self, port: str, vid: int) -> int | None:
        return None if vid in self.ports[port].untagged else vid


@dataclass(frozen=True)
class Host:
    name: str
    mac: str
    bridge: str
    port: str


# An end of a cable: ("bridge", bridge, port) or ("host", host, "").
Endpoint = tuple[str, str, str]


@dataclass
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


class Network:
    """Bridges, hosts and cables; learning tables per (bridge, VLAN)."""

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

    def add_host(self, name: str, mac: str, bridge: str, port: str) -> Host:
        if port not in self.bridges[bridge].ports:
            raise KeyError(f"{bridge} has no port {port}")
        host = Host(name, mac.lower(), bridge, port)
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
            elif out not in bridge.members(vid):
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
# Fast whole-cluster questions, same semantics as Network.send.

@dataclass
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


@dataclass
class PathResult:
    """A unicast followed from one bridge until it reaches the destination's bridge."""

    ok: bool
    bridges: tuple[str, ...]             # bridges passed, first one included
    arrival: tuple[str, str, int | None] | None   # (bridge, port, tag) at the last bridge
    vid: int | None                      # VLAN on the last bridge
    problem: str = ""


class Fabric:
    """Learning broadcasts and all-pairs unicast checks for a whole network, memoised.

    Learning state is kept per *attachment*: hosts that entered the network the same way
    (same bridge, same bridge ports' behaviour, same broadcasts) are learned on the same
    ports everywhere except their own bridge, so their remote entries are stored once.
    """

    def __init__(self, net: Network) -> None:
        self.net = net
        self._nodes: dict[tuple[str, str, int | None], FloodNode] = {}
        self._remote_floods: dict[tuple, FloodResult] = {}
        # Learned state after `learn`: per host its own-bridge entries, and a shared
        # remote table per attachment signature.
        self.local: dict[str, dict[tuple[str, int], str]] = {}
        self.signature: dict[str, int] = {}
        self.remote: list[dict[tuple[str, int], str]] = []
        self._sig_index: dict[tuple, int] = {}
        self._paths: dict[tuple[str, str, int | None, int], PathResult] = {}

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

    def broadcast(self, host: str, tag: int | None) -> FloodResult:
        """One broadcast from `host`: learned entries, deliveries, loops (no state change)."""
        h = self.net.hosts[host]
        first = self.node(h.bridge, h.port, tag)
        if first.vid is None:
            return FloodResult({}, [], [], [(h.bridge, h.port, first.why)])
        below = self._flood_below(h.bridge, first.vid, tuple(first.children))
        learned = {(h.bridge, first.vid): h.port}
        # a loop back to the host's own bridge re-learns it there, as send() would not;
        # the loop itself is reported, which is what matters.
        learned.update(below.learned)
        return FloodResult(learned, first.hosts + below.deliveries, below.loops, below.drops)

    def learn(self, broadcasts: dict[str, list[int | None]]) -> dict[str, list[FloodResult]]:
        """Every host sends its broadcasts in order; the tables are left as they would be."""
        results: dict[str, list[FloodResult]] = {}
        for host in sorted(broadcasts):
            h = self.net.hosts[host]
            local: dict[tuple[str, int], str] = {}
            sig_parts: list[tuple] = []
            per_host: list[FloodResult] = []
            for tag in broadcasts[host]:
                first = self.node(h.bridge, h.port, tag)
                if first.vid is None:
                    per_host.append(FloodResult({}, [], [], [(h.bridge, h.port, first.why)]))
                    continue
                local[(h.bridge, first.vid)] = h.port
                children = tuple(first.children)
                sig_parts.append((first.vid, children))
                below = self._flood_below(h.bridge, first.vid, children)
                per_host.append(FloodResult({**{(h.bridge, first.vid): h.port}, **below.learned},
                                            first.hosts + below.deliveries, below.loops,
                                            below.drops))
            sig = (h.bridge, tuple(sig_parts))
            idx = self._sig_index.get(sig)
            if idx is None:
                table: dict[tuple[str, int], str] = {}
                for vid, children in sig_parts:
                    table.update(self._flood_below(h.bridge, vid, children).learned)
                idx = len(self.remote)
                self.remote.append(table)
                self._sig_index[sig] = idx
            self.signature[host] = idx
            # own-bridge entries: learned on the host's port unless a loop overwrote them
            self.local[host] = {k: v for k, v in local.items() if k not in self.remote[idx]}
            results[host] = per_host
        return results

    def table_sizes(self) -> dict[str, int]:
        """Learned MAC entries per bridge, counting (VLAN, MAC) pairs."""
        per_sig: dict[int, int] = defaultdict(int)
        for idx in self.signature.values():
            per_sig[idx] += 1
        sizes: dict[str, int] = {b: 0 for b in self.net.bridges}
        for idx, count in per_sig.items():
            for (bridge, _vid) in self.remote[idx]:
                sizes[bridge] += count
        for entries in self.local.values():
            for (bridge, _vid) in entries:
                sizes[bridge] += 1
        return sizes

    def lookup(self, bridge: str, vid: int, dst: str) -> str | None:
        """The port `bridge` learned host `dst` on in VLAN `vid`, if any."""
        port = self.local[dst].get((bridge, vid))
        if port is None:
            port = self.remote[self.signature[dst]].get((bridge, vid))
        return port

    # -- unicast ------------------------------------------------------------------------
    def path(self, bridge: str, port: str, tag: int | None, dst: str) -> PathResult:
        """Follow a unicast to host `dst` from its arrival at (bridge, port, tag) until it
        arrives at dst's bridge. Memoised on dst's attachment: beyond dst's own bridge,
        hosts with the same signature are learned on the same ports."""
        target = self.net.hosts[dst].bridge
        sig = self.signature[dst]
        key = (bridge, port, tag, sig)
        got = self._paths.get(key)
        if got is not None:
            return got
        # Walk forward, remembering the keys passed, then fill the memo backwards.
        walked: list[tuple[tuple[str, str, int | None, int], str, int]] = []
        seen: set[str] = set()
        result: PathResult | None = None
        cur = (bridge, port, tag)
        while True:
            b, p, t = cur
            k = (b, p, t, sig)
            hit = self._paths.get(k)
            if hit is not None:
                result = hit
                break
            bridge_obj = self.net.bridges[b]
            vid, why = bridge_obj.ingress(p, t)
            if vid is None:
                result = PathResult(False, (b,), None, None, f"dropped at {b} port {p}: {why}")
                break
            if b == target:
                result = PathResult(True, (b,), cur, vid)
                break
            if b in seen:
                result = PathResult(False, (b,), None, vid, f"loop: returns to {b} in VLAN {vid}")
                break
            seen.add(b)
            out = self.remote[sig].get((b, vid))
            if out is None:
                result = PathResult(False, (b,), None, vid,
                                    f"flooded at {b} in VLAN {vid}: destination not learned")
                break
            if out == p:
                result = PathResult(False, (b,), None, vid,
                                    f"filtered at {b}: destination learned on ingress port {p}")
                break
            if out not in bridge_obj.members(vid):
                result = PathResult(False, (b,), None, vid,
                                    f"dropped at {b}: egress port {out} not a member of VLAN {vid}")
                break
            ends = self.net.peers(b, out)
            bridges_far = [e for e in ends if e[0] == "bridge"]
            if len(ends) != 1 or not bridges_far:
                what = "no cable" if not ends else f"{len(ends)} far ends" if len(ends) > 1 else "a host"
                result = PathResult(False, (b,), None, vid,
                                    f"at {b} port {out} (learned for the destination) has {what}")
                break
            walked.append((k, b, vid))
            _, far, far_port = bridges_far[0]
            cur = (far, far_port, bridge_obj.egress_tag(out, vid))
        for k, b, vid in reversed(walked):
            result = PathResult(result.ok, (b,) + result.bridges, result.arrival, result.vid,
                                result.problem)
            self._paths[k] = result
        return result

    def deliver_local(self, arrival: tuple[str, str, int | None], dst: str) -> tuple[list[Delivery], str]:
        """Last bridge: forward the unicast to dst's port; returns deliveries or a problem."""
        b, p, t = arrival
        bridge = self.net.bridges[b]
        vid, why = bridge.ingress(p, t)
        if vid is None:
            return [], f"dropped at {b} port {p}: {why}"
        out = self.lookup(b, vid, dst)
        if out is None:
            return [], f"flooded at {b} in VLAN {vid}: destination not learned"
        if out == p:
            return [], f"filtered at {b}: destination learned on ingress port {p}"
        if out not in bridge.members(vid):
            return [], f"dropped at {b}: egress port {out} not a member of VLAN {vid}"
        tag = bridge.egress_tag(out, vid)
        got: list[Delivery] = []
        for kind, name, _ in self.net.peers(b, out):
            if kind != "host":
                return [], f"at {b} port {out} (learned for the destination) leads to bridge {name}"
            got.append(Delivery(name, tag, b, out))
        return got, ""
