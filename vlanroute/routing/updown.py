"""up*/down* routing (routing.algorithm: updown, Autonet): deadlock-free on any topology.

Schroeder et al., "Autonet: a high-speed, self-configuring local area network using
point-to-point links", IEEE JSAC 9(8), 1991: the links are directed "up" towards a root;
a legal route takes up links first, then only down links. Under IEEE 802.3x PAUSE a
switch port stops sending when the next one is full, and a cycle of ports each waiting
for the next can stall for ever; routes that never turn from down to up cannot form such
a cycle (their channel dependency graph is acyclic, the criterion of Dally and Seitz), so
the routing is deadlock-free. The price: some routes are longer than shortest paths.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import networkx as nx

from vlanroute.errors import UserError
from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Engine, Options, Routes
from vlanroute.routing.trees import ParentMap


@dataclass(frozen=True)
class UpdownParams:
    root: str | None = None    # the root switch; None: the most central one


@dataclass(frozen=True)
class UpdownChoices:
    root: str

    def record(self) -> dict[str, object]:
        return {"root": self.root}


def central_switch(topo: Topology) -> str:
    """The switch with the least eccentricity (earliest in switch order among equals): a
    central root keeps the up-then-down detours short. Above 2048 switches, where all
    eccentricities cost too much, the first switch."""
    g = topo.simple()
    ecc = nx.eccentricity(g) if g.number_of_nodes() <= 2048 else {n: 0 for n in topo.switches}
    return min(topo.switches, key=lambda n: (ecc[n], topo.index(n)))


def updown_routes(topo: Topology, root: str) -> Routes:
    """up*/down* routing (Autonet): legal paths go up towards the root, then only down.

    Levels are breadth-first distances from the root; a link goes "up" towards the lower
    level, or towards the lower switch index on the same level. A path never takes an up
    link after a down link, so the channel dependency graph is acyclic: deadlock-free
    under 802.3x PAUSE on any topology.

    Per source: first the shortest up-only paths to every ancestor, then every other
    switch by down links from the nearest ancestor. Each switch gets one parent, so the
    routes of a source form a tree; a route may be longer than the shortest path.
    """
    g = topo.simple()
    order = {n: i for i, n in enumerate(topo.switches)}
    level = nx.single_source_shortest_path_length(g, root)

    def is_up(u: str, v: str) -> bool:   # the link u->v goes up
        return (level[v], order[v]) < (level[u], order[u])

    adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
    parents = {}
    for src in topo.switches:
        parent: ParentMap = {}
        dist = {src: 0}
        up_set = [src]
        q = deque([src])
        while q:                          # phase 1: up-only BFS
            u = q.popleft()
            for v in adj[u]:
                if v not in dist and is_up(u, v):
                    dist[v] = dist[u] + 1
                    parent[v] = u
                    up_set.append(v)
                    q.append(v)
        up_set_lookup = set(up_set)
        # phase 2: down-only, multi-source from the up set, nearest first (Dijkstra on hops)
        heap = [(dist[u], order[u], u) for u in up_set]
        heapq.heapify(heap)
        done: set[str] = set()
        while heap:
            d, _, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            for v in adj[u]:
                if v in done or is_up(u, v):
                    continue
                if v not in dist or d + 1 < dist[v]:
                    if v in up_set_lookup:
                        continue          # ancestors keep their up-only path
                    dist[v] = d + 1
                    parent[v] = u
                    heapq.heappush(heap, (d + 1, order[v], v))
        parents[src] = parent
    return Routes("updown", parents, UpdownChoices(root))


class UpdownEngine(Engine[UpdownParams]):
    name = "updown"
    summary = "up*/down* (Autonet): up towards a root, then only down"
    minimal = False
    deadlock_free = True
    reads = frozenset({"root"})

    def params(self, topo: Topology, options: Options) -> UpdownParams:
        if options.root is not None and options.root not in topo.graph:
            raise UserError(f"unknown switch '{options.root}'", field="routing.root",
                            fix="name one of the switches, or leave it out to pick the most central one")
        return UpdownParams(options.root)

    def route(self, topo: Topology, host_count: dict[str, int], params: UpdownParams) -> Routes:
        return updown_routes(topo, params.root if params.root is not None else central_switch(topo))


UPDOWN = UpdownEngine()
