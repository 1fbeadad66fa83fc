"""Routing algorithms: for every source switch, its path to every other switch.

Each algorithm returns, per source `s`, a parent map `parent[v]` = the switch before `v`
on the path from `s` to `v` (the source itself has no entry). A parent map *is* a tree
rooted at the source, which is what VLAN routing needs: all frames of one source travel in
one VLAN, and a VLAN's links must be loop-free.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections import deque
from dataclasses import dataclass, field

import networkx as nx

from vlanroute.errors import UserError
from vlanroute.model.topology import Topology

ParentMap = dict[str, str]


@dataclass
class Routes:
    algorithm: str
    parents: dict[str, ParentMap]               # source -> tree
    detail: dict[str, object] = field(default_factory=dict)

    def path(self, src: str, dst: str) -> list[str]:
        """Switches from src to dst inclusive."""
        par = self.parents[src]
        out = [dst]
        while out[-1] != src:
            out.append(par[out[-1]])
        out.reverse()
        return out


# --------------------------------------------------------------------------- DOR


def dor_orders(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Dimension orders worth trying among the dimensions that have links.

    Two dimensions: both orders. More: the natural order, largest first and largest last
    (on a mesh the first dimension's lines share trees, so largest first needs fewest
    VLANs; on a torus the order matters only for uneven sizes); every permutation would
    be 6 or more full routings to compare on a big 3-D grid.
    """
    active = [d for d, n in enumerate(dims) if n > 1]
    if len(active) <= 2:
        return [tuple(p) for p in itertools.permutations(active)] or [()]
    out: list[tuple[int, ...]] = []
    for cand in (tuple(active), tuple(sorted(active, key=lambda d: -dims[d])),
                 tuple(sorted(active, key=lambda d: dims[d]))):
        if cand not in out:
            out.append(cand)
    return out


def line_parents(n: int, start: int, kind: str, tie_plus: bool) -> dict[int, int]:
    """One dimension: for every coordinate b != start, the coordinate before b on the way.

    mesh: walk towards b; torus/ring: the shorter way round, and at exactly n/2 (a tie)
    go '+' when `tie_plus`; hyper-crossbar: one hop, every row is fully connected.
    """
    prev: dict[int, int] = {}
    if kind == "hyper-crossbar":
        return {b: start for b in range(n) if b != start}
    for b in range(n):
        if b == start:
            continue
        if kind == "mesh":
            prev[b] = b - 1 if b > start else b + 1
            continue
        fwd = (b - start) % n          # hops going '+'
        bwd = (start - b) % n          # hops going '-'
        plus = fwd < bwd or (fwd == bwd and tie_plus)
        prev[b] = (b - 1) % n if plus else (b + 1) % n
    return prev


TIE_RULES = ("source-parity", "branch-parity", "checkerboard", "plus")


def tie_goes_plus(rule: str, sc: tuple[int, ...], d: int, u: tuple[int, ...], fixed: tuple[int, ...]) -> bool:
    """At a tie (destination exactly half way round a ring of even size), go '+'?

    `sc` is the source, `u` the switch where the route enters dimension `d`, `fixed` the
    dimensions already fixed before `d`. Balancing the two directions is what brings the
    all-to-all load down to the lower bound (docs/method.md, "Load balance on tori"):
    - source-parity: parity of the source's own coordinate in `d`. Sources 2k and 2k+1 of
      a line then share one tree; exactly balanced on rings of size 4k.
    - branch-parity: parity of the coordinate sum of `u`: alternates between the parallel
      lines a source fans out into, still one decision per line for a whole row of sources.
    - checkerboard: parity of the source's coordinate sum plus the branch's fixed
      coordinates: every line gets half its sources each way, also on rings of size
      4k+2, at the price of fewer shared trees.
    - plus: always '+' (the textbook rule, unbalanced).
    """
    if rule == "plus":
        return True
    if rule == "source-parity":
        return sc[d] % 2 == 0
    if rule == "branch-parity":
        return sum(u) % 2 == 0
    return (sum(sc) + sum(u[e] for e in fixed)) % 2 == 0


def dor_routes(topo: Topology, order: tuple[int, ...], tie_break: str = "source-parity",
               decisions: dict[tuple[str, int, tuple[int, ...]], bool] | None = None) -> Routes:
    """Dimension-order routing: fix the dimensions in `order`, each the minimal way.

    Ties on rings of even size (two minimal directions) are broken by `tie_break` (see
    `tie_goes_plus`); the default, source parity, balances the two directions and lets
    neighbouring sources share one tree (on the 4x2 torus of the seed paper, 4 VLANs
    instead of 8). `decisions` overrides single ties: (source, dimension, branch) -> '+'?
    """
    by_coord = {c: n for n, c in topo.coords.items()}
    parents = {src: dor_tree(topo, src, order, tie_break, decisions, by_coord) for src in topo.switches}
    detail: dict[str, object] = {"dimension_order": list(order), "tie_break": tie_break}
    if decisions:
        detail["tie_break"] = tie_break + "+searched"
    return Routes("dor", parents, detail)


def dor_tree(topo: Topology, src: str, order: tuple[int, ...], tie_break: str,
             decisions: dict[tuple[str, int, tuple[int, ...]], bool] | None = None,
             by_coord: dict[tuple[int, ...] | None, str] | None = None) -> ParentMap:
    """One source's dimension-order tree; see `dor_routes`."""
    assert topo.dims is not None
    dims = topo.dims
    kind = "torus" if topo.kind == "ring" else topo.kind
    if by_coord is None:
        by_coord = {c: n for n, c in topo.coords.items()}
    sc = topo.coords[src]
    assert sc is not None
    parent: ParentMap = {}
    reached = [sc]
    for k, d in enumerate(order):
        fixed = order[:k]
        new = []
        for u in reached:
            tie_plus = tie_goes_plus(tie_break, sc, d, u, fixed)
            if decisions:
                tie_plus = decisions.get((src, d, u), tie_plus)
            prev = _line(dims[d], u[d], kind, tie_plus)
            for b, a in prev.items():
                v = u[:d] + (b,) + u[d + 1:]
                p = u[:d] + (a,) + u[d + 1:]
                parent[by_coord[v]] = by_coord[p]
                new.append(v)
        reached.extend(new)
    return parent


@functools.lru_cache(maxsize=65536)
def _line(n: int, start: int, kind: str, tie_plus: bool) -> dict[int, int]:
    return line_parents(n, start, kind, tie_plus)


def direct_routes(topo: Topology) -> Routes:
    """Complete graph: every destination is one hop away."""
    parents = {s: {d: s for d in topo.switches if d != s} for s in topo.switches}
    return Routes("dor", parents, {"dimension_order": [], "tie_break": "none"})


# --------------------------------------------------------------------------- shortest


def shortest_routes(topo: Topology) -> Routes:
    """Shortest paths (in hops), one breadth-first tree per source.

    Among equally short parents the one earliest in switch order is taken, the same rule
    for every source, so that sources' trees coincide wherever they can (fewer VLANs).
    """
    g = topo.simple()
    order = {n: i for i, n in enumerate(topo.switches)}
    adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
    parents = {}
    for src in topo.switches:
        dist = {src: 0}
        parent: ParentMap = {}
        frontier = [src]
        while frontier:
            nxt = []
            for u in frontier:           # frontier is in switch order, so first parent wins
                for v in adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        parent[v] = u
                        nxt.append(v)
            frontier = sorted(nxt, key=order.__getitem__)
        parents[src] = parent
    return Routes("shortest", parents, {"tie_break": "lowest-switch-index"})


# --------------------------------------------------------------------------- up*/down*


def updown_root(topo: Topology, requested: str | None, file: str) -> str:
    if requested is not None:
        if requested not in topo.graph:
            raise UserError(f"unknown switch '{requested}'", file=file, field="routing.root",
                            fix="name one of the switches, or leave it out to pick the most central one")
        return requested
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
    return Routes("updown", parents, {"root": root})
