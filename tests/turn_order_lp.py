"""The least maximum load of an all-to-all flow that takes only allowed turns: a floor for
every plan of a turn family, for tests and bench/turn_order_floor.py.

A deadlock-free plan (802.3x PAUSE, no virtual lanes) has an acyclic channel dependency
graph (Dally and Seitz 1987): its turns (a route entering a switch on channel a and leaving
on b) are a subset of an acyclic set of turns. Given such a set, the best *splittable*
routing that uses only its turns is a linear program, and no VLAN routing confined to the
set does better (VLAN routes are unsplit trees, a special case). The LP (scipy's HiGHS):

    minimise L
    per source switch s (one commodity, demands h(s) h(t)), per channel a not into s:
        origin_s(a) [a leaves s] + sum of turn flows into a = delivered_s(a) + sum of turn flows out of a
    per switch t != s:   sum over channels a into t of delivered_s(a) = h(s) h(t)
    per channel a with C(a) cables:   sum over s of the flow on a <= L C(a)

Routes never enter their source again and never U-turn (a VLAN route is a path in a tree).
With every turn allowed it is the LP of vlanroute/routing/optimum.py in another form (a
test checks that they agree).

The families (2-dimensional tori; `dimension_order_cuts` any torus) say which turns are
allowed; each is deadlock-free (acyclic, checked by `acyclic`) except `cuts_only`, the
relaxation that keeps the ring cuts and allows every turn between dimensions.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable

import networkx as nx
import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, csr_matrix, hstack, identity

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.depgraph import DependencyGraph
from vlanroute.routing.order_lp import FlowRows, turns_of  # noqa: F401  (bench/turn_order_*.py use them from here)

Allowed = Callable[[Arc, Arc], bool]


def turn_floor(topo: Topology, host_count: dict[str, int], allowed: Allowed) -> float | None:
    """min L over splittable all-to-all flows using only allowed turns; None if some pair
    of switches with hosts has no route at all."""
    cables = topo.arc_cables()
    arcs = sorted(cables)
    m = len(arcs)
    aid = {a: i for i, a in enumerate(arcs)}
    turns = [(aid[a], aid[b]) for a, b in turns_of(topo) if allowed(a, b)]
    t_in = np.array([i for i, _ in turns], dtype=int)
    t_out = np.array([j for _, j in turns], dtype=int)
    nt = len(turns)
    node = {s: i for i, s in enumerate(topo.switches)}
    head = np.array([node[b] for _, b in arcs])
    tail = np.array([node[a] for a, _ in arcs])
    sources = [s for s in topo.switches if host_count.get(s, 0)]
    block = nt + 2 * m                         # per source: turn flows, deliveries, origins
    nvar = len(sources) * block + 1
    lp = FlowRows(nvar)
    ub_cols: list[np.ndarray] = []
    ub_rows: list[np.ndarray] = []
    for k, s in enumerate(sources):
        demand = [0.0 if v == s else float(host_count[s] * host_count.get(v, 0)) for v in topo.switches]
        turn_vars, origin = lp.add_source(k * block, node[s], t_in, t_out, head, tail, demand)
        ub_rows += [t_out, np.arange(m)]
        ub_cols += [turn_vars, origin]
    ub_rows.append(np.arange(m))
    ub_cols.append(np.full(m, nvar - 1))
    ub_vals = np.concatenate([np.ones(sum(len(c) for c in ub_cols[:-1])),
                              -np.array([float(cables[a]) for a in arcs])])
    a_eq = lp.a_eq(nvar).tocsr()
    a_ub = coo_matrix((ub_vals, (np.concatenate(ub_rows), np.concatenate(ub_cols))), shape=(m, nvar)).tocsr()
    c = np.zeros(nvar)
    c[-1] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=np.array(lp.b_eq),
                  bounds=np.column_stack([np.zeros(nvar), lp.hi]), method="highs-ipm")
    if res.status == 2:                        # infeasible: some pair cannot be routed
        return None
    if res.status != 0:
        raise RuntimeError(f"the turn LP did not solve: {res.message}")
    return float(res.x[-1])


def acyclic(topo: Topology, allowed: Allowed) -> bool:
    """Whether the allowed turns make an acyclic channel dependency graph."""
    g = nx.DiGraph()
    g.add_nodes_from(topo.arc_cables())
    g.add_edges_from((a, b) for a, b in turns_of(topo) if allowed(a, b))
    return nx.is_directed_acyclic_graph(g)


# --------------------------------------------------------------------------- torus families


def direction(topo: Topology, arc: Arc) -> tuple[int, int]:
    """(dimension, +1 or -1) of a torus channel."""
    assert topo.dims is not None
    ca, cb = topo.coords[arc[0]], topo.coords[arc[1]]
    assert ca is not None and cb is not None
    for d, (x, y) in enumerate(zip(ca, cb)):
        if x != y:
            return d, 1 if (y - x) % topo.dims[d] == 1 else -1
    raise ValueError(f"{arc} is not a channel")


Cut = Callable[[tuple[int, ...], int, int], int]


def staggered_cut(topo: Topology, stagger: tuple[int, ...] = ()) -> Cut:
    """The cut switch of the ring through `coord` along dimension d in direction s: the
    '+' cut at (the sum of the other coordinates) x stagger[d] (1: the turns engine's
    placement, 0: all parallel rings cut at the same place), the '-' cut the next switch
    (routing/ringcuts.py)."""
    assert topo.dims is not None
    dims = topo.dims

    def cut(coord: tuple[int, ...], d: int, s: int) -> int:
        k = stagger[d] if d < len(stagger) else 1
        p = (sum(coord) - coord[d]) * k
        return p % dims[d] if s == 1 else (p + 1) % dims[d]
    return cut


def line_position(topo: Topology, arc: Arc, cut: Cut) -> int:
    """Where a channel is on its ring direction cut open at the cut switch: 0 for the
    channel leaving the cut, n - 1 for the channel into it (the turn from n - 1 to 0, straight
    through the cut, is the one a cut forbids)."""
    assert topo.dims is not None
    d, s = direction(topo, arc)
    u = topo.coords[arc[0]]
    assert u is not None
    p = cut(u, d, s)
    return (u[d] - p) % topo.dims[d] if s == 1 else (p - u[d]) % topo.dims[d]


def by_key(key: Callable[[Arc], float]) -> Allowed:
    """The turns that go up a channel order (acyclic by construction)."""
    return lambda a, b: key(a) < key(b)


def dimension_order_key(topo: Topology, order: tuple[int, ...] | None = None,
                        stagger: tuple[int, ...] = ()) -> Callable[[Arc], float]:
    """The channel order of the turns engine: dimension by dimension, each ring direction
    from its cut."""
    assert topo.dims is not None
    rank = {d: i for i, d in enumerate(order if order is not None else range(len(topo.dims)))}
    cut = staggered_cut(topo, stagger)
    return lambda a: rank[direction(topo, a)[0]] * 1000 + line_position(topo, a, cut)


def dimension_order_cuts(topo: Topology, order: tuple[int, ...] | None = None, stagger: tuple[int, ...] = ()) -> Allowed:
    """The turns engine's family: dimensions one after the other, one cut per ring direction."""
    return by_key(dimension_order_key(topo, order, stagger))


def direction_classes(topo: Topology, classes: tuple[tuple[int, int], ...]) -> Allowed:
    """Turn-model classes (Glass and Ni 1992): the directions one after the other (e.g.
    negative-first: (0, -1), (1, -1), (0, 1), (1, 1)), each ring direction cut."""
    rank = {c: i for i, c in enumerate(classes)}
    cut = staggered_cut(topo)
    return by_key(lambda a: rank[direction(topo, a)] * 1000 + line_position(topo, a, cut))


def odd_even(topo: Topology, stagger: tuple[int, ...]) -> Allowed:
    """Chiu's odd-even turn model (IEEE TPDS 11(7), 2000) on the mesh inside the torus: no
    east-to-north/south turn in an even column, no north/south-to-west turn in an odd one;
    plus one cut per ring direction. Acyclic only with one dimension's cuts aligned
    (stagger 0 there: `acyclic` says)."""
    cut = staggered_cut(topo, stagger)

    def allowed(a: Arc, b: Arc) -> bool:
        da, db = direction(topo, a), direction(topo, b)
        if da[0] == db[0]:
            return line_position(topo, a, cut) < line_position(topo, b, cut)
        col = topo.coords[a[1]]
        assert col is not None
        if da == (0, 1) and col[0] % 2 == 0:
            return False
        return not (db == (0, -1) and col[0] % 2 == 1)
    return allowed


def rows_in_sequence(topo: Topology) -> Allowed:
    """X in row 0, +Y, X in row 1, +Y, ... (X in several rows, in row order), then -Y last:
    a route may cross X in any row it climbs through. Rows cut staggered, the +Y rings all
    cut between the last row and row 0, the -Y rings all at the same row (staggered -Y cuts
    leave some pairs without a route)."""
    cut = staggered_cut(topo, (1, 0))

    def key(a: Arc) -> float:
        d, s = direction(topo, a)
        x, y = topo.coords[a[0]] or (0, 0)
        if d == 0:
            return 100 * y + line_position(topo, a, cut)
        if s == 1:
            return 100 * y + 50 + 0.01 * x
        return 100_000 + line_position(topo, a, cut)
    return by_key(key)


def x_y_x(topo: Topology, stagger: tuple[int, ...] = (0, 1)) -> Allowed:
    """X, then Y, then X again: each X ring direction's line in halves, the first half before
    every Y channel and the second after, so a route may cross X in its source row, turn
    to Y, and finish X in its destination row. Some pairs have no route unless the X cuts
    are aligned (stagger 0 in X)."""
    assert topo.dims is not None
    half = topo.dims[0] // 2
    cut = staggered_cut(topo, stagger)

    def key(a: Arc) -> float:
        p = line_position(topo, a, cut)
        if direction(topo, a)[0] == 1:
            return 1000 + p
        return p if p < half else 2000 + p
    return by_key(key)


def with_extra_turns(topo: Topology, base: Allowed, seed: int) -> Allowed:
    """`base` and every other turn, in a random order, that keeps the channel dependency
    graph acyclic (a maximal acyclic superset of `base`)."""
    arcs = sorted(topo.arc_cables())
    aid = {a: i for i, a in enumerate(arcs)}
    graph = DependencyGraph(len(arcs))
    chosen: set[tuple[Arc, Arc]] = set()
    rest = []
    for a, b in turns_of(topo):
        if base(a, b):
            assert graph.try_add(aid[a], aid[b]), "the base family is acyclic"
            chosen.add((a, b))
        else:
            rest.append((a, b))
    random.Random(seed).shuffle(rest)
    chosen.update(t for t in rest if graph.try_add(aid[t[0]], aid[t[1]]))
    return lambda a, b: (a, b) in chosen


def cuts_only(topo: Topology) -> Allowed:
    """NOT deadlock-free (a relaxation): the ring cuts, and every turn between dimensions."""
    cut = staggered_cut(topo)

    def allowed(a: Arc, b: Arc) -> bool:
        da, db = direction(topo, a), direction(topo, b)
        return da != db or line_position(topo, a, cut) < line_position(topo, b, cut)
    return allowed


# --------------------------------------------------------------------------- diagonal symmetry

DIRECTIONS = ((0, 1), (0, -1), (1, 1), (1, -1))


def diagonal_orbit(topo: Topology, arc: Arc) -> int:
    """The class of a channel of a k x k torus under the diagonal shift (x, y) -> (x+1, y+1):
    its direction and x - y mod k (4 k classes)."""
    assert topo.dims is not None
    c = topo.coords[arc[0]]
    assert c is not None
    return DIRECTIONS.index(direction(topo, arc)) * topo.dims[0] + (c[0] - c[1]) % topo.dims[0]


def diagonal_floor(topo: Topology, per: int, orbit_key: list[float], excess_over: float | None = None) -> float | None:
    """`turn_floor` for a channel order that is the same from every switch of a diagonal
    (a key per `diagonal_orbit`; channels of one class never meet in a turn, so the order is
    acyclic), on a k x k torus with `per` hosts on every switch. The shift maps the allowed
    turns onto themselves, so averaging an optimal flow over the k shifts gives an optimal
    flow that is the same from every switch of a diagonal: one commodity per diagonal (the
    switches of row 0), and a channel's load is the sum of those commodities' flows over
    its class (as the symmetric LP of routing/optimum.py does with every translation).
    With `excess_over` X: the least total load above X over all channel classes instead
    (0 when the floor is at most X), a smoother guide for a search."""
    assert topo.dims is not None and len(topo.dims) == 2 and topo.dims[0] == topo.dims[1]
    k = topo.dims[0]
    arcs = sorted(topo.arc_cables())
    m = len(arcs)
    aid = {a: i for i, a in enumerate(arcs)}
    orbit = np.array([diagonal_orbit(topo, a) for a in arcs])
    turns = [(aid[a], aid[b]) for a, b in turns_of(topo) if orbit_key[orbit[aid[a]]] < orbit_key[orbit[aid[b]]]]
    t_in = np.array([i for i, _ in turns], dtype=int)
    t_out = np.array([j for _, j in turns], dtype=int)
    nt = len(turns)
    node = {s: i for i, s in enumerate(topo.switches)}
    head = np.array([node[b] for _, b in arcs])
    tail = np.array([node[a] for a, _ in arcs])
    reps = [s for s in topo.switches if (topo.coords[s] or (0, 0))[1] == 0]
    block = nt + 2 * m
    nvar = len(reps) * block + 1
    lp = FlowRows(nvar)
    ub_rows: list[np.ndarray] = []
    ub_cols: list[np.ndarray] = []
    for i, s in enumerate(reps):
        demand = [0.0 if v == s else float(per * per) for v in topo.switches]
        turn_vars, origin = lp.add_source(i * block, node[s], t_in, t_out, head, tail, demand)
        ub_rows += [orbit[t_out], orbit]
        ub_cols += [turn_vars, origin]
    classes = 4 * k
    ub_rows.append(np.arange(classes))
    ub_cols.append(np.full(classes, nvar - 1))
    ub_vals = np.concatenate([np.ones(sum(len(c) for c in ub_cols[:-1])), -np.ones(classes)])
    a_eq = lp.a_eq(nvar).tocsr()
    a_ub = coo_matrix((ub_vals, (np.concatenate(ub_rows), np.concatenate(ub_cols))), shape=(classes, nvar)).tocsr()
    c = np.zeros(nvar)
    c[-1] = 1.0
    b_ub = np.zeros(classes)
    bounds = np.column_stack([np.zeros(nvar), lp.hi])
    if excess_over is not None:
        # the max-load column becomes the fixed level X; one excess variable per class
        a_ub = hstack([a_ub[:, :nvar - 1], csr_matrix((classes, 1)), -identity(classes)]).tocsr()
        a_eq = hstack([a_eq, csr_matrix((a_eq.shape[0], classes))]).tocsr()
        c = np.concatenate([np.zeros(nvar), np.ones(classes)])
        b_ub = np.full(classes, excess_over)
        bounds = np.vstack([bounds, np.column_stack([np.zeros(classes), np.full(classes, np.inf)])])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.array(lp.b_eq), bounds=bounds, method="highs-ipm")
    if res.status == 2:
        return None
    if res.status != 0:
        raise RuntimeError(f"the turn LP did not solve: {res.message}")
    return float(res.fun) if excess_over is not None else float(res.x[-1])


# --------------------------------------------------------------------------- rounding into VLAN trees


def order_trees(topo: Topology, host_count: dict[str, int], key: Callable[[Arc], float],
                rounds: int = 4, sharpness: float = 4.0) -> dict[str, dict[str, str]] | None:
    """One tree per source whose every path goes up the channel order `key` (so all trees
    together keep the channel dependencies acyclic), grown greedily against the loads of the
    others (link weight 1 + (load / optimum) ** sharpness, as routing/acyclic/engine.py weighs
    them), then `rounds` passes of rip-up and re-route; the passes' best. A source whose
    greedy tree gets stuck takes its earliest-arrival tree; None if even that cannot reach
    every switch (some pair has no path up the order)."""
    from vlanroute.routing.optimum import optimum_bound
    from vlanroute.routing.trees import source_arc_loads
    cables = topo.arc_cables()
    scale = max(optimum_bound(topo, host_count).value, 1e-9)
    adj: dict[str, list[str]] = {s: [] for s in topo.switches}
    for a, b in sorted(cables):
        adj[a].append(b)
    load: dict[Arc, float] = {}

    def grow(src: str) -> dict[str, str] | None:
        def weight(a: Arc) -> float:
            return 1.0 + (load.get(a, 0.0) / cables[a] / scale) ** sharpness
        parent: dict[str, str] = {}
        done = {src}
        heap = [(weight((src, w)), i, w, src) for i, w in enumerate(adj[src])]
        heapq.heapify(heap)
        count = len(heap)
        cost = {src: 0.0}
        while heap and len(done) < len(topo.switches):
            c, _, w, v = heapq.heappop(heap)
            if w in done:
                continue
            done.add(w)
            cost[w] = c
            parent[w] = v
            for x in adj[w]:
                if x not in done and key((w, x)) > key((v, w)):
                    heapq.heappush(heap, (c + weight((w, x)), count, x, w))
                    count += 1
        return parent if len(done) == len(topo.switches) else foremost(src)

    def foremost(src: str) -> dict[str, str] | None:
        # Every switch at its earliest arrival (the smallest key of the channel into it): a
        # path's prefix arrives no later than the path, so the earliest arrivals form a tree
        # that reaches every switch any path up the order reaches (foremost journeys of
        # temporal graphs). The fallback when the load-led greedy gets stuck.
        parent: dict[str, str] = {}
        arrival = {src: float("-inf")}
        heap = [(key((src, w)), w, src) for w in adj[src]]
        heapq.heapify(heap)
        while heap:
            k, w, v = heapq.heappop(heap)
            if w in arrival:
                continue
            arrival[w] = k
            parent[w] = v
            for x in adj[w]:
                if x not in arrival and key((w, x)) > k:
                    heapq.heappush(heap, (key((w, x)), x, w))
        return parent if len(arrival) == len(topo.switches) else None

    def place(src: str, tree: dict[str, str], sign: float) -> None:
        for arc, x in source_arc_loads(tree, src, host_count):
            load[arc] = load.get(arc, 0.0) + sign * x / cables[arc]

    trees: dict[str, dict[str, str]] = {}
    best: tuple[float, dict[str, dict[str, str]]] | None = None
    sources = sorted(topo.switches, key=lambda s: (-host_count.get(s, 0), topo.index(s)))
    for _ in range(rounds + 1):
        for s in sources:
            if s in trees:
                place(s, trees[s], -1.0)
            tree = grow(s)
            if tree is None:
                if s not in trees:
                    return None
                tree = trees[s]
            trees[s] = tree
            place(s, tree, 1.0)
        peak = max(load.values(), default=0.0)
        if best is None or peak < best[0] - 1e-9:
            best = (peak, dict(trees))
    assert best is not None
    return best[1]
