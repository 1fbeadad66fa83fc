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

An 8x8 torus's order LP (57,000 variables) takes about 7 s to solve, too long for the
default's few seconds, so there the default takes the best-screened placement without
solving it (`placed_plan`): the stored trees moved onto the fabric, the cut ones completed
by earliest arrival, negotiated and polished in that order, then the column step from
them. The degraded 8x8 tori's default plans go from `shortest`, not deadlock-free, to
deadlock-free plans at 1.12x-1.24x (docs/routing-bounds.md, "The stored orders without
their LPs").

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

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.columns import column_plan
from vlanroute.routing.acyclic.negotiate import negotiate
from vlanroute.routing.acyclic.polish import polish
from vlanroute.routing.acyclic.refine import complete_by_earliest, earliest_tree, refine_variables
from vlanroute.routing.acyclic.stored import Coord, decode, plan_name, stored_shapes
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.order_lp import OrderLP, OrderSolution, plan_order
from vlanroute.routing.packing import pack
from vlanroute.routing.trees import ParentMap, Share

# A placement of the stored order: (the sum over host pairs of their shortest increasing
# routes' hops, the order as the ranks of the sorted channels, the order, the fabric's
# switch at each stored-plan switch)
Placement = tuple[int, tuple[int, ...], dict[Arc, int], dict[str, str]]

GONE = 8            # cables missing at most (of 72 on the 6x6 torus, 128 on the 8x8)
# Orders solved as order LPs, the shortest routes first: SCREEN at most, and at most
# SCREEN_VARIABLES variables in all (refine.refine_variables: a 6x6 torus's LP about 17,000,
# 0.4 s; an 8x8's 57,000, 7 s; 2026-11-30)
SCREEN = 8
SCREEN_VARIABLES = 200_000
UNREACHED = 1 << 20     # increasing_hops' hops where no increasing route reaches


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


def increasing_hops(n: int, tails: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The hops of every source's shortest routes under many channel orders at once:
    hops[o, s, t] is the hops of source s's shortest route to switch t that increases in
    order o (UNREACHED where none; 0 for t = s). Order o is the channels
    tails[o, k] -> heads[o, k] for k = 0, 1, ... (switch numbers below n; a tail of -1 is a
    channel the order leaves out).

    One pass over the channels in order: a channel u -> v extends the shortest route that
    reached u by an earlier channel. A route with a U-turn (v -> u -> v) is never the
    shortest: the part that stops at the first v arrived earlier, so every later channel
    out of v extends it too; the shortest routes have none. The pass runs for every order
    and source at once in arrays: the screen of `gapped_orders` runs it over all 512
    placements of an 8x8 torus's order in a fraction of a second, where a pass per
    placement and source in Python took 7 to 11 s (2026-11-30, slow machine)."""
    orders, steps = tails.shape
    best = np.full((orders, n, n), UNREACHED, dtype=np.int32)     # [order, switch, source]
    row = np.arange(orders)
    for source in range(n):
        best[:, source, source] = 0
    for k in range(steps):
        live = tails[:, k] >= 0
        o, tail, head = row[live], tails[live, k], heads[live, k]
        best[o, head] = np.minimum(best[o, head], best[o, tail] + 1)
    return np.minimum(best, UNREACHED).transpose(0, 2, 1)


def _stored_on_grid(dims: tuple[int, ...]) -> tuple[dict[Coord, str], dict[str, ParentMap], dict[Arc, int]] | None:
    """The stored plan of `dims` on the intact grid, switches named by their coordinates:
    (the names, its trees, the channel order they increase in); None if it does not decode."""
    saved = json.loads(files("vlanroute.routing.acyclic").joinpath("plans", plan_name(dims)).read_text())
    name = {c: "x".join(map(str, c)) for c in itertools.product(*(range(d) for d in dims))}
    full = nx.grid_graph(dim=list(reversed(dims)), periodic=True)
    intact = Topology.from_links(sorted(name.values()),
                                 sorted((min(name[a], name[b]), max(name[a], name[b])) for a, b in full.edges))
    trees = decode(intact, saved["trees"], (dims, {v: c for c, v in name.items()}))
    if trees is None:
        return None
    return name, trees, plan_order(trees, sorted(intact.arc_cables()))


def screened_orders(topo: Topology, host_count: dict[str, int]
                    ) -> tuple[str, dict[str, ParentMap], list[Placement]] | None:
    """The stored plan's file name, its trees (on the intact grid, `_stored_on_grid`) and
    every placement of its order (the grid's symmetries) that leaves every pair an
    increasing route, the lowest sum of hops first (module docstring; `Placement`); None
    where `topo` is not a stored torus shape with cables gone."""
    grid = gapped_grid(topo)
    if grid is None:
        return None
    dims, coord_of = grid
    stored = _stored_on_grid(dims)
    if stored is None:
        return None
    name, trees, base = stored
    at = {v: c for c, v in name.items()}
    switch_at = {c: s for s, c in coord_of.items()}
    arcs = sorted(topo.arc_cables())
    index = {s: i for i, s in enumerate(topo.switches)}
    syms = symmetries(dims)
    # each placement's order as channel numbers, in the stored order (-1: the cable is gone)
    placed = [{v: index[switch_at[_moved(at[v], dims, sym)]] for v in name.values()} for sym in syms]
    in_base = sorted(base, key=base.__getitem__)
    live = {(index[a], index[b]) for a, b in arcs}
    tails = np.full((len(syms), len(in_base)), -1, dtype=np.int64)
    heads = np.full((len(syms), len(in_base)), -1, dtype=np.int64)
    for o, at_switch in enumerate(placed):
        for k, (a, b) in enumerate(in_base):
            arc = (at_switch[a], at_switch[b])
            if arc in live:
                tails[o, k], heads[o, k] = arc
    hops = increasing_hops(len(topo.switches), tails, heads)
    weight = np.array([host_count.get(s, 0) for s in topo.switches], dtype=np.int64)
    screened: list[Placement] = []
    for o in range(len(syms)):
        if (hops[o] >= UNREACHED).any():
            continue            # some pair has no increasing route
        at_switch = placed[o]
        rank = {(topo.switches[at_switch[a]], topo.switches[at_switch[b]]): r for (a, b), r in base.items()}
        mine = {a: rank[a] for a in arcs}
        # the sum over host pairs of their shortest increasing routes' hops (module docstring);
        # ties broken by the order itself: the same orders whichever monomorphism VF2 found
        total = int(weight @ hops[o].astype(np.int64) @ weight)
        screened.append((total, tuple(mine[a] for a in arcs), mine,
                         {v: topo.switches[i] for v, i in at_switch.items()}))
    screened.sort(key=lambda x: x[:2])
    return plan_name(dims), trees, screened


def gapped_orders(topo: Topology, host_count: dict[str, int],
                  keep: int) -> tuple[str, OrderLP, list[tuple[OrderSolution, dict[Arc, int]]]] | None:
    """The stored plan's file name, the fabric's order LP, and the `keep` lowest (order LP's
    solution, channel order) of the stored order under the grid's symmetries, on a stored
    torus shape with cables gone (module docstring), the lowest first; None where the fabric
    is not one or no symmetry's order routes every pair."""
    found = screened_orders(topo, host_count)
    if found is None:
        return None
    name, _, screened = found
    lp = OrderLP(topo, host_count)
    solved: list[tuple[float, tuple[int, ...], OrderSolution, dict[Arc, int]]] = []
    for _, ident, mine, _ in screened[:max(1, min(SCREEN, SCREEN_VARIABLES // refine_variables(topo, host_count)))]:
        sol = lp.solve(np.array([float(mine[a]) for a in lp.arcs]))
        if sol is not None:
            solved.append((round(sol.load, 9), ident, sol, mine))
    solved.sort(key=lambda x: x[:2])
    if not solved:
        return None
    return name, lp, [(sol, mine) for _, _, sol, mine in solved[:keep]]


def placed_trees(topo: Topology, placement: Placement, trees: dict[str, ParentMap]) -> dict[str, ParentMap]:
    """The stored plan's `trees` moved onto the fabric by `placement`: each source keeps the
    part of its tree still joined to it by live cables, and the switches cut off go on their
    earliest-arrival paths in the placement's order (refine.complete_by_earliest), so every
    tree still increases in that order."""
    _, _, rank, switch_of = placement
    order = sorted(rank, key=rank.__getitem__)
    out: dict[str, ParentMap] = {}
    for src, tree in trees.items():
        s = switch_of[src]
        moved = {switch_of[v]: switch_of[p] for v, p in tree.items()}
        kept: ParentMap = {}
        for v in moved:
            x = v
            while x != s and (moved[x], x) in rank:
                x = moved[x]
            if x == s:
                kept[v] = moved[v]
        out[s] = complete_by_earliest(topo, s, kept, earliest_tree(s, order, rank))
    return out


def placed_plan(topo: Topology, host_count: dict[str, int], rounds: int, nodes: int, keep: float,
                max_vlans: int, again: int = 0, above: float = float("inf"),
                below: float = float("inf")) -> tuple[str, float, dict[str, ParentMap], dict[str, tuple[Share, ...]]] | None:
    """The stored plan's file name and (max load, parents, splits) of its order on a stored
    torus shape with cables gone, without the order LPs that `gapped_orders` ranks the
    placements by: where those are too large for the default (an 8x8 torus's, 57,000
    variables, about 7 s each on the usual machine), the best-screened placement alone
    (module docstring), the stored trees moved onto the fabric (`placed_trees`), negotiated
    and polished in its order (acyclic/negotiate.py, acyclic/polish.py), then the column
    step from them (acyclic/columns.py, `rounds` pricing rounds, an integer program of
    `nodes` nodes on the columns within `keep`), and where its plan carries more than
    `above` and at most `below`, the pricing continued to `again` rounds, the lighter plan
    kept (columns.column_plan's `more`). None where the fabric is not such a torus, no
    placement routes every pair, or the plan needs more than `max_vlans` VLANs."""
    found = screened_orders(topo, host_count)
    if not found or not found[2]:
        return None
    name, trees, placements = found
    placement = placements[0]
    rank = placement[2]
    scale = optimum_bound(topo, host_count).value
    _, negotiated = negotiate(topo, host_count, rank, placed_trees(topo, placement, trees), scale)
    _, polished = polish(topo, host_count, rank, negotiated)
    got = column_plan(topo, host_count, rank, [(polished, {})], rounds=rounds, nodes=nodes, keep=keep,
                      more=max(again - rounds, 0), above=above, below=below)
    if got is None:
        return None
    load, parents, splits, _ = got
    hosted = {s for s, n in host_count.items() if n}
    if len(pack(parents, hosted, {s: i for i, s in enumerate(topo.switches)}, splits)) > max_vlans:
        return None
    return name, load, parents, splits
