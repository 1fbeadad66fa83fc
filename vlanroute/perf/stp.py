"""Plain Ethernet on the same cables: the one spanning tree of IEEE 802.1D / 802.1w (RSTP).

Root election: the bridge with the lowest bridge id (priority, then MAC address) is the
root. Every other bridge's root port is the port with the lowest root path cost, ties
broken by the lowest designated bridge id, then the lowest port ids (802.1D-2004 clause
17.6, the priority vector). Only root ports and the designated ports facing them forward:
every other cable is blocked, so all traffic follows one tree.

Path costs are 802.1D-2004 table 17-3's recommended values, 20,000,000,000,000 / bit rate
(1 Gb/s -> 20,000; 10 Gb/s -> 2,000). Parallel cables between two switches are either a
static LAG (one logical port, its cost from the summed speed, every member forwarding) or
separate ports, of which STP keeps the lowest-numbered one and blocks the others.

We do not know the switches' MAC addresses: with the default priority 32768 everywhere we
take them as ascending in the inventory's switch order, so the first switch is the root
unless `root` names another (as an engineer sets `spanning-tree priority 4096` on it).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vlanroute.perf.fabric import DEFAULT_SPEED, Fabric, from_links

DEFAULT_PRIORITY = 32768
ROOT_PRIORITY = 4096


def path_cost(gbps: float) -> int:
    """802.1D-2004 table 17-3: 20 Tb/s divided by the link's rate, within 1..200,000,000."""
    return max(1, min(200_000_000, round(2e13 / (gbps * 1e9))))


@dataclass(frozen=True)
class SpanningTree:
    root: str
    parent: dict[str, str]            # bridge -> the bridge its root port leads to
    root_cost: dict[str, int]
    forwarding: dict[tuple[str, str], int]   # tree link (parent, child) -> cables forwarding
    blocked: list[tuple[str, str]]    # one entry per blocked cable, (a, b) in switch order


def spanning_tree(switches: Sequence[str], cables: Mapping[tuple[str, str], int], *,
                  speed: float = DEFAULT_SPEED, lag: bool = True, root: str | None = None) -> SpanningTree:
    """The active topology of 802.1D/802.1w on `cables` (undirected pair -> parallel cables)."""
    order = {s: i for i, s in enumerate(switches)}
    bridge_id = {s: (ROOT_PRIORITY if s == root else DEFAULT_PRIORITY, order[s]) for s in switches}
    adj: dict[str, list[tuple[str, int]]] = {s: [] for s in switches}
    for (a, b), k in cables.items():
        cost = path_cost(speed * k if lag else speed)
        adj[a].append((b, cost))
        adj[b].append((a, cost))
    top = min(switches, key=bridge_id.__getitem__)
    dist = {top: 0}
    heap = [(0, top)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for v, c in adj[u]:
            if d + c < dist.get(v, 1 << 62):
                dist[v] = d + c
                heapq.heappush(heap, (d + c, v))
    parent = {}
    for v in switches:
        if v == top or v not in dist:
            continue
        offers = [u for u, c in adj[v] if dist.get(u, 1 << 62) + c == dist[v]]
        parent[v] = min(offers, key=bridge_id.__getitem__)
    forwarding: dict[tuple[str, str], int] = {}
    blocked: list[tuple[str, str]] = []
    for (a, b), k in sorted(cables.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]])):
        pair = (a, b) if order[a] < order[b] else (b, a)
        if parent.get(b) == a or parent.get(a) == b:
            up, down = (a, b) if parent.get(b) == a else (b, a)
            forwarding[(up, down)] = k if lag else 1
            blocked += [pair] * (0 if lag else k - 1)
        else:
            blocked += [pair] * k
    return SpanningTree(top, parent, dist, forwarding, blocked)


def stp_fabric(switches: Sequence[str], hosts: Sequence[tuple[str, str]], cables: Mapping[tuple[str, str], int], *,
               speed: float = DEFAULT_SPEED, lag: bool = True, root: str | None = None) -> Fabric:
    tree = spanning_tree(switches, cables, speed=speed, lag=lag, root=root)
    label = "spanning tree" + (" (LAGs)" if lag else "")
    return from_links(label, switches, hosts, tree.forwarding, speed=speed)
