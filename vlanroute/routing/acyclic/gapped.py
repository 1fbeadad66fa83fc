"""The stored tori's channel orders on the same tori with cables gone.

A torus with failed or missing cables is a custom fabric to the acyclic engine, and its
search (escape roots, negotiation, order walks) ends at 1.2x to 1.6x the exact optimum
there, where the intact torus has a stored plan at 1.222x (6x6) or 1.250x (8x8)
(acyclic/stored.py). The stored plan's trees all increase in one channel order of the
intact torus; drop the missing cables' channels and the rest is still an order, so every
route that increases in it is still deadlock-free (Dally and Seitz 1987). The trees that
crossed a missing cable are lost, but the order usually still has an increasing route
between every two switches, and the hosts of each switch are then given trees of that
order by column generation and an integer program (acyclic/columns.py), as in the search.

Where the gaps fall in the plan matters: every symmetry of the grid (translations, and
swaps and reflections of dimensions of equal length: 288 on the 6x6 torus, 512 on the
8x8) places the stored order on the fabric differently. The orders that leave some pair
without an increasing route are dropped, the rest ranked by how far their routes go (the
sum over host pairs of the hops of the shortest increasing route, a floor of the total
load: cheap), the shortest few (SCREEN, SCREEN_VARIABLES) solved as order LPs
(routing/order_lp.py, the floor of any routing in the order), and the column step runs on
the lowest ones. The acyclic engine keeps the lighter of this and its search's plan:
the degraded 6x6 tori's default plans from 1.15x-1.30x (three not deadlock-free at all,
`shortest` chosen) to 1.13x-1.21x (1.19x at most since the search also gets the column step
where the stored order's plan is above 1.2x, acyclic/engine.py); the degraded 8x8 tori's full search from 1.15x-1.29x to
1.09x-1.20x (docs/routing-bounds.md, "The stored orders on tori with cables gone").

The fabric is recognised as a stored shape with cables gone when it has that shape's
number of switches, at most GONE of its cables missing (and no other), and networkx's VF2
finds it inside the grid (a monomorphism), after two cheap tests that a random graph of
the same size fails: the degrees, and the number of 4-cycles (a torus has one per square;
a missing cable removes at most the squares it is on).
"""

from __future__ import annotations

import itertools
import json
from importlib.resources import files

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import GraphMatcher

from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.refine import earliest_tree, refine_variables
from vlanroute.routing.acyclic.stored import Coord, decode, plan_name, stored_shapes
from vlanroute.routing.order_lp import OrderLP, OrderSolution, plan_order
from vlanroute.routing.trees import Arc

GONE = 8            # cables missing at most (of 72 on the 6x6 torus, 128 on the 8x8)
# Orders solved as order LPs, the shortest routes first: SCREEN at most, and at most
# SCREEN_VARIABLES variables in all (refine.refine_variables: a 6x6 torus's LP about 17,000,
# 0.4 s; an 8x8's 57,000, 7 s; 2026-11-30)
SCREEN = 8
SCREEN_VARIABLES = 200_000


def _squares(g: nx.Graph) -> int:
    return sum(1 for c in nx.simple_cycles(g, length_bound=4) if len(c) == 4)


def gapped_grid(topo: Topology) -> tuple[tuple[int, ...], dict[str, Coord]] | None:
    """(dims, each switch's coordinates) where `topo` is a custom fabric that is a stored
    torus shape with 1 to GONE cables missing (module docstring); else None."""
    if topo.kind != "custom":
        return None
    g = topo.simple()
    for dims in stored_shapes():
        grid = nx.grid_graph(dim=list(reversed(dims)), periodic=True)
        missing = grid.number_of_edges() - g.number_of_edges()
        if g.number_of_nodes() != grid.number_of_nodes() or not 0 < missing <= GONE:
            continue
        if max((d for _, d in g.degree), default=0) > 2 * len(dims) or not nx.is_connected(g):
            continue
        # every cable of a torus is on as many squares (4 per square, shared alike)
        squares = _squares(grid)
        if _squares(g) < squares - 4 * squares / grid.number_of_edges() * missing:
            continue
        found = next(GraphMatcher(grid, g).subgraph_monomorphisms_iter(), None)
        if found is not None:
            return dims, {str(v): tuple(int(x) for x in c) for c, v in found.items()}
    return None


def symmetries(dims: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...], Coord]]:
    """Every symmetry of the torus grid of `dims` as (dimension permutation, signs, shift):
    coordinate c goes to shift + signs * c permuted, modulo dims. Only dimensions of equal
    length are swapped."""
    out = []
    for perm in itertools.permutations(range(len(dims))):
        if any(dims[p] != dims[i] for i, p in enumerate(perm)):
            continue
        for signs in itertools.product((1, -1), repeat=len(dims)):
            for shift in itertools.product(*(range(d) for d in dims)):
                out.append((perm, signs, shift))
    return out


def _moved(c: Coord, dims: tuple[int, ...], sym: tuple[tuple[int, ...], tuple[int, ...], Coord]) -> Coord:
    perm, signs, shift = sym
    return tuple((shift[i] + signs[i] * c[perm[i]]) % dims[i] for i in range(len(dims)))


def _route_hops(src: str, order: list[Arc]) -> dict[str, int]:
    """Hops of src's shortest route to every switch it reaches increasing in `order` (no
    U-turn). Per switch the two best arrivals from different
    neighbours are enough: a route leaving towards one of them takes the other."""
    best: dict[str, list[tuple[int, str]]] = {}
    hops: dict[str, int] = {src: 0}
    for u, v in order:
        if v == src:
            continue
        if u == src:
            h = 1
        else:
            came = [x for x in best.get(u, ()) if x[1] != v]
            if not came:
                continue
            h = came[0][0] + 1
        mine = best.setdefault(v, [])
        for i, (hh, w) in enumerate(mine):
            if w == u:
                if h < hh:
                    mine[i] = (h, u)
                break
        else:
            mine.append((h, u))
        mine.sort()
        del mine[2:]
        if h < hops.get(v, h + 1):
            hops[v] = h
    return hops


def gapped_orders(topo: Topology, host_count: dict[str, int],
                  keep: int) -> tuple[str, OrderLP, list[tuple[OrderSolution, dict[Arc, int]]]] | None:
    """The stored plan's file name, the fabric's order LP, and the `keep` lowest (order LP's
    solution, channel order) of the stored order under the grid's symmetries, on a stored
    torus shape with cables gone (module docstring), the lowest first; None where the fabric
    is not one or no symmetry's order routes every pair."""
    grid = gapped_grid(topo)
    if grid is None:
        return None
    dims, coord_of = grid
    saved = json.loads(files("vlanroute.routing.acyclic").joinpath("plans", plan_name(dims)).read_text())
    # The stored plan on the intact grid, switches named by their coordinates.
    name = {c: "x".join(map(str, c)) for c in itertools.product(*(range(d) for d in dims))}
    full = nx.grid_graph(dim=list(reversed(dims)), periodic=True)
    intact = Topology.from_links(sorted(name.values()),
                                 sorted((min(name[a], name[b]), max(name[a], name[b])) for a, b in full.edges))
    trees = decode(intact, saved["trees"], (dims, {v: c for c, v in name.items()}))
    if trees is None:
        return None
    base = plan_order(trees, sorted(intact.arc_cables()))
    at = {v: c for c, v in name.items()}
    switch_at = {c: s for s, c in coord_of.items()}
    arcs = sorted(topo.arc_cables())
    hosted = [s for s in topo.switches if host_count.get(s, 0)]
    screened: list[tuple[int, tuple[int, ...], dict[Arc, int]]] = []
    for sym in symmetries(dims):
        rank = {(switch_at[_moved(at[a], dims, sym)], switch_at[_moved(at[b], dims, sym)]): r
                for (a, b), r in base.items()}
        mine = {a: rank[a] for a in arcs}
        order = sorted(arcs, key=mine.__getitem__)
        if any(len(earliest_tree(s, order, mine)) < len(topo.switches) - 1 for s in topo.switches):
            continue
        total = 0
        for s in hosted:
            hops = _route_hops(s, order)
            total += sum(host_count[s] * host_count.get(t, 0) * h for t, h in hops.items())
        # ties broken by the order itself: the same orders whichever monomorphism VF2 found
        screened.append((total, tuple(mine[a] for a in arcs), mine))
    screened.sort(key=lambda x: x[:2])
    lp = OrderLP(topo, host_count)
    solved: list[tuple[float, tuple[int, ...], OrderSolution, dict[Arc, int]]] = []
    for _, ident, mine in screened[:max(1, min(SCREEN, SCREEN_VARIABLES // refine_variables(topo, host_count)))]:
        sol = lp.solve(np.array([float(mine[a]) for a in lp.arcs]))
        if sol is not None:
            solved.append((round(sol.load, 9), ident, sol, mine))
    solved.sort(key=lambda x: x[:2])
    if not solved:
        return None
    return plan_name(dims), lp, [(sol, mine) for _, _, sol, mine in solved[:keep]]
