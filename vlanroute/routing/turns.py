"""Deadlock-free routing by prohibited turns (routing.algorithm: turns).

With IEEE 802.3x PAUSE a switch stops its neighbour's port when its own buffer fills, so
frames waiting for each other's buffers around a cycle can stop forever. Dally and Seitz
("Deadlock-free message routing in multiprocessor interconnection networks", IEEE Trans.
Computers C-36(5):547-553, 1987): routing is deadlock-free if and only if its channel
dependency graph is acyclic. The channels are the directed links; a route that enters a
switch on channel c and leaves it on channel d makes d depend on c (a "turn" c -> d).
Glass and Ni ("The turn model for adaptive routing", ISCA 1992, pp. 278-287) break every
cycle by prohibiting just enough turns; this engine does that, and keeps to the VLAN
routing constraint that one source's routes form one tree:

- tori and rings: dimension-order routing (the dimensions fixed one after the other,
  so a route never turns from a later dimension back to an earlier one) with one cut
  switch per ring: no route passes straight through it, in either direction. A ring's
  channels in one direction form the only cycle of that dimension, and the cut removes
  the one turn that closes it. A route that would cross the cut goes the other way
  round; a ring then carries its traffic like a line, about twice the torus optimum,
  where up*/down* concentrates everything near its root (bench/quality.py: 8x8 and
  16x16 tori at 2.0 times the distance bound, against 5.7 and 13.9 for up*/down*). The
  cut of each ring is placed at a different position (the sum of the ring's other
  coordinates), so the cuts spread over the grid.
- meshes and hyper-crossbars: plain dimension-order routing is deadlock-free already
  (a mesh line has no cycle; a hyper-crossbar crosses each dimension in one hop); the
  dimension order with the lowest maximum load is kept.
- complete graphs: one hop, no turns at all. Tree topologies: the only routing.
- any other topology: up*/down* (Schroeder et al., "Autonet: a high-speed, self-
  configuring local area network using point-to-point links", IEEE JSAC 9(8), 1991:
  no turn from a down link to an up link), with its two weaknesses reduced: the root is
  the best of the most central switches, and among equally short legal parents each
  switch takes the one whose link carries least so far (the global balance of SSSP
  routing, Hoefler, Schneider, Lumsdaine, HOTI 2009).
"""

from __future__ import annotations

import copy
import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

import networkx as nx

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.ringcuts import ring_splits
from vlanroute.routing.dor import dor_orders, dor_routes
from vlanroute.routing.engine import Engine, Options, Routes
from vlanroute.routing.memo import Store, fabric_key
from vlanroute.routing.packing import pack
from vlanroute.routing.select import forced_routes
from vlanroute.routing.trees import ParentMap, arc_loads, source_arc_loads
from vlanroute.routing.updown import central_switch, updown_routes
from vlanroute.routing.updown_hosts import host_updown

ROOTS = 8          # central switches tried as the up*/down* root
ROUNDS = 3         # rip-up-and-re-route rounds per root
# Arc visits allowed for the balanced roots (roots x rounds x sources x arcs): as many of the
# ROOTS as fit, at least one; counted, never timed, so the plan stays deterministic. All 8
# up to about 16x16 switches; one on a 32x32 torus with a cable gone, where 8 took about
# 40 s of the engine's 180 s and up*/down* carries 16 times the optimum anyway.
ROOT_WORK = 8_000_000
GRIDS = ("torus", "ring", "mesh", "hyper-crossbar")


@dataclass(frozen=True)
class TurnsChoices:
    """The turn rule (plan.json routing.turns): one cut per ring direction (tori, rings), dimension
    order (meshes, hyper-crossbars), one hop (complete graphs), tree (tree topologies) or
    up*/down* (any other graph); with the dimension order or the up*/down* root it used."""

    turns: str
    dimension_order: tuple[int, ...] | None = None
    root: str | None = None

    def record(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.dimension_order is not None:
            out["dimension_order"] = list(self.dimension_order)
        if self.root is not None:
            out["root"] = self.root
        out["turns"] = self.turns
        return out


@dataclass(frozen=True)
class TurnsParams:
    max_vlans: int = 4094      # the VLAN budget, for up*/down* below the switch
    below: bool = True         # each host on its own tree where that carries less (graphs other than grids)


class TurnsEngine(Engine[TurnsParams]):
    name = "turns"
    summary = "dimension order, one cut per ring direction; else balanced up*/down*"
    minimal = False            # a route that would cross a ring's cut goes the long way round
    deadlock_free = True       # acyclic channel dependencies on every topology (module doc)
    # No settings: every dimension order is tried on grids, the up*/down* root is chosen.

    def params(self, topo: Topology, options: Options) -> TurnsParams:
        return TurnsParams(options.max_vlans)

    def route(self, topo: Topology, host_count: dict[str, int], params: TurnsParams) -> Routes:
        routes = turn_routes(topo, host_count)
        if not params.below or topo.kind in GRIDS or topo.kind in ("tree", "complete"):
            return routes
        # Kept for the same fabric, hosts and budget, as turn_routes is: the default plan
        # asks twice (this engine in the chooser, the deadlock warning's advice when the
        # plan it chose has a cycle: 0.1 to 0.2 s each on 64 switches). A deep copy for each
        # caller: trees of its own, shared between parents and splits as the first had them.
        got = _BELOW.get((fabric_key(topo, host_count), params),
                         lambda: below_the_switch(topo, host_count, routes, params.max_vlans))
        return copy.deepcopy(got)


def turn_routes(topo: Topology, host_count: dict[str, int]) -> Routes:
    """Per source a tree, all together with an acyclic channel dependency graph. Kept for
    the same fabric and hosts (routing/memo.py): the default plan asks three times (this
    engine, the acyclic engine's start, the deadlock warning's advice); each caller gets
    trees of its own."""
    got = _ROUTED.get(fabric_key(topo, host_count), lambda: _turn_routes(topo, host_count))
    return replace(got, parents={s: dict(t) for s, t in got.parents.items()})


_ROUTED: Store[Routes] = Store()
_BELOW: Store[Routes] = Store()


def _turn_routes(topo: Topology, host_count: dict[str, int]) -> Routes:
    cables = topo.arc_cables()
    if topo.kind in ("tree", "complete"):
        forced = forced_routes(topo, TurnsEngine.name)     # the one minimal routing: no turn closes a cycle
        assert forced is not None
        return Routes(TurnsEngine.name, forced.parents, TurnsChoices("tree" if topo.kind == "tree" else "one hop"))
    if topo.kind in GRIDS:
        assert topo.dims is not None
        candidates: list[tuple[float, int, Routes]] = []
        for order in dor_orders(topo.dims):
            if topo.kind in ("torus", "ring"):
                r = cut_dor_routes(topo, order)
            else:
                r = Routes(TurnsEngine.name, dor_routes(topo, order, "plus").parents,
                           TurnsChoices("dimension order", order))
            candidates.append((round(max(arc_loads(r.parents, host_count, cables).values(), default=0.0), 6),
                               len(candidates), r))
        return min(candidates, key=lambda c: c[:2])[2]
    return balanced_updown_routes(topo, host_count)


TURNS = TurnsEngine()


# --------------------------------------------------------------------------- tori: one cut per ring


def cut_line(n: int, start: int, cut: int) -> dict[int, int]:
    """One ring of n switches, entered at `start`: the coordinate before each other one.

    No route passes through `cut` (it may start or end there), so the way round is the
    one without the cut inside it; the cut itself, and every switch when the route starts
    at the cut, go the shorter way ('+' on a tie). Rings of 2 or fewer have no cycle.
    """
    prev: dict[int, int] = {}
    splits = ring_splits(n)
    if splits is not None:
        # The '+' cut at `cut`, the '-' cut at the next switch, each source's split exact
        # (routing/ringcuts.py): lower max loads than one cut for both ways.
        reach = splits[(start - cut) % n]
        return {b: (b - 1) % n if (b - start) % n <= reach else (b + 1) % n for b in range(n) if b != start}
    for b in range(n):
        if b == start:
            continue
        fwd, bwd = (b - start) % n, (start - b) % n
        if n <= 2 or start == cut or b == cut:
            plus = fwd <= bwd
        else:
            plus = (cut - start) % n > fwd      # the cut is not strictly inside the '+' way
        prev[b] = (b - 1) % n if plus else (b + 1) % n
    return prev


def cut_position(coord: tuple[int, ...], d: int, n: int) -> int:
    """Where the ring through `coord` along dimension d is cut: spread over the grid."""
    return (sum(coord) - coord[d]) % n


def cut_dor_routes(topo: Topology, order: tuple[int, ...]) -> Routes:
    """Dimension-order routes on a torus or ring with one cut switch per ring: along each
    dimension a route goes the way round that does not pass through the ring's cut switch
    (`cut_line`). No turn from a later dimension back to an earlier one, and no ring's
    channels close a cycle (the cut removes the one turn that would): deadlock-free."""
    assert topo.dims is not None
    dims = topo.dims
    by_coord = {c: s for s, c in topo.coords.items()}
    parents: dict[str, ParentMap] = {}
    for src in topo.switches:
        sc = topo.coords[src]
        assert sc is not None
        parent: ParentMap = {}
        reached = [sc]
        for d in order:
            new = []
            for u in reached:
                for b, a in cut_line(dims[d], u[d], cut_position(u, d, dims[d])).items():
                    v = u[:d] + (b,) + u[d + 1:]
                    parent[by_coord[v]] = by_coord[u[:d] + (a,) + u[d + 1:]]
                    new.append(v)
            reached.extend(new)
        parents[src] = parent
    return Routes(TurnsEngine.name, parents, TurnsChoices("one cut per ring direction", order))


# --------------------------------------------------------------------------- other graphs: up*/down*


def below_the_switch(topo: Topology, host_count: dict[str, int], routes: Routes, max_vlans: int) -> Routes:
    """`routes` (one up*/down* tree per switch), or each host on its own up*/down* tree
    (routing/updown_hosts.py) where that carries less within `max_vlans` VLANs. Kept apart
    from `turn_routes`, which the acyclic engine starts from with one tree per switch."""
    cables = topo.arc_cables()
    peak = max(arc_loads(routes.parents, host_count, cables).values(), default=0.0)
    roots = [central_switch(topo), *_central_roots(topo, host_count)]
    got = host_updown(topo, host_count, roots, max_vlans)
    if got is None or round(got[0], 6) >= round(peak, 6):
        return routes
    _, root, trees, splits = got
    order = {s: i for i, s in enumerate(topo.switches)}
    vlans = len(pack(routes.parents, {s for s, n in host_count.items() if n}, order))
    parents = {s: trees.get(s, tree) for s, tree in routes.parents.items()}
    return Routes(TurnsEngine.name, parents, TurnsChoices("up*/down* below the switch", root=root),
                  splits=splits, unspread=(peak, vlans))


def _central_roots(topo: Topology, host_count: dict[str, int]) -> list[str]:
    """The ROOTS switches with the least host-weighted distance sum (the balanced roots).
    Kept for the same fabric and hosts (one BFS per switch): `turn_routes` and
    `below_the_switch` both ask."""
    return list(_ROOTS.get(fabric_key(topo, host_count), lambda: _closeness_roots(topo, host_count)))


_ROOTS: Store[list[str]] = Store()


def _closeness_roots(topo: Topology, host_count: dict[str, int]) -> list[str]:
    g = topo.simple()
    order = {s: i for i, s in enumerate(topo.switches)}
    weight = {s: host_count.get(s, 0) or 1 for s in topo.switches}
    closeness = {s: sum(weight[t] * d for t, d in nx.single_source_shortest_path_length(g, s).items())
                 for s in topo.switches} if len(topo.switches) <= 2048 else {s: 0 for s in topo.switches}
    return sorted(topo.switches, key=lambda s: (closeness[s], order[s]))[:ROOTS]


def balanced_updown_routes(topo: Topology, host_count: dict[str, int]) -> Routes:
    """up*/down* from the best of the ROOTS most central switches, ties balanced."""
    g = topo.simple()
    order = {s: i for i, s in enumerate(topo.switches)}
    roots = _central_roots(topo, host_count)
    cables = topo.arc_cables()
    # Plain up*/down* from its usual root too: the balanced choices are greedy, and this
    # engine must never be worse than the updown engine.
    root = central_switch(topo)
    plain = Routes(TurnsEngine.name, updown_routes(topo, root).parents, TurnsChoices("up*/down*", root=root))
    per_root = ROUNDS * len(topo.switches) * len(cables)
    roots = roots[:max(1, ROOT_WORK // max(per_root, 1))]
    candidates = [plain] + [_updown_balanced(topo, g, root, host_count, cables, order) for root in roots]
    scored = [(round(max(arc_loads(r.parents, host_count, cables).values(), default=0.0), 6), i, r)
              for i, r in enumerate(candidates)]
    return min(scored, key=lambda t: t[:2])[2]


def _updown_balanced(topo: Topology, g: nx.Graph, root: str, host_count: dict[str, int],
                     cables: dict[Arc, int], order: dict[str, int]) -> Routes:
    """up*/down* (see updown.updown_routes for the rule), each switch's parent the least
    loaded of its equally near legal ones; sources with most hosts first."""
    level = nx.single_source_shortest_path_length(g, root)

    def is_up(u: str, v: str) -> bool:
        return (level[v], order[v]) < (level[u], order[u])

    adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
    load: dict[Arc, float] = {}
    parents: dict[str, ParentMap] = {}
    placed: dict[str, list[tuple[Arc, float]]] = {}
    best: tuple[float, dict[str, ParentMap]] | None = None
    sources = sorted(topo.switches, key=lambda s: (-host_count.get(s, 0), order[s]))
    for _ in range(ROUNDS):           # rip up and re-route each source against all others
        for src in sources:
            for arc, x in placed.pop(src, []):
                load[arc] -= x
            parents[src] = _updown_tree(src, adj, is_up, load, order)
            placed[src] = [(arc, x / cables[arc]) for arc, x in source_arc_loads(parents[src], src, host_count)]
            for arc, x in placed[src]:
                load[arc] = load.get(arc, 0.0) + x
        peak = max(load.values(), default=0.0)
        if best is not None and peak >= best[0] - 1e-9:
            break
        best = (peak, dict(parents))
    assert best is not None
    return Routes(TurnsEngine.name, best[1], TurnsChoices("up*/down*", root=root))


def _updown_tree(src: str, adj: dict[str, list[str]], is_up: Callable[[str, str], bool], load: dict[Arc, float],
                 order: dict[str, int]) -> ParentMap:
    """One source's up*/down* tree, ties to the least loaded link."""
    parent: ParentMap = {}
    dist = {src: 0}
    up_set = [src]
    q = deque([src])
    while q:                                   # shortest up-only paths to the ancestors
        u = q.popleft()
        for v in adj[u]:
            if is_up(u, v) and (v not in dist or dist[v] == dist[u] + 1 and
                                    load.get((u, v), 0.0) < load.get((parent[v], v), 0.0)):
                if v not in dist:
                    up_set.append(v)
                    q.append(v)
                dist[v] = dist[u] + 1
                parent[v] = u
    ancestors = set(up_set)
    heap = [(dist[u], order[u], u) for u in up_set]
    heapq.heapify(heap)
    done: set[str] = set()
    while heap:                                # then down links only, nearest first
        d, _, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v in adj[u]:
            if v in done or v in ancestors or is_up(u, v):
                continue
            if v not in dist or d + 1 < dist[v] or (d + 1 == dist[v] and
                                                    load.get((u, v), 0.0) < load.get((parent[v], v), 0.0)):
                dist[v] = d + 1
                parent[v] = u
                heapq.heappush(heap, (d + 1, order[v], v))
    return parent
