"""Shortest-path routing (routing.algorithm: shortest), on any topology.

Every route is a shortest path in hops; among the many shortest-path trees of a source
the engine picks the ones that balance the all-to-all load best, then share most:
- on grids, the dimension-order routings are shortest-path routings too, and compete;
- breadth-first trees with ties to the lowest switch index, the same rule for every
  source, so that sources' trees coincide wherever they can (fewer VLANs);
- unless one of those already reaches the distance bound, balanced trees
  (routing/balance.py: SSSP-style and bottom-up);
the best by least maximum load, then fewest VLANs (routing/select.py). Then sources move
onto other sources' trees where those are shortest for them too and the maximum load
does not rise (`balance.share_trees`; not for a dimension-order winner, whose tie search
is the better step). Trees and complete graphs have one minimal routing
(select.forced_routes).

Then routing below the switch (routing/spread.py), where the VLAN budget allows and it
lowers the maximum load: the hosts of a switch on several shortest-path trees, either
shared trees of switches spread over the fabric (a leaf-spine's spines) or each group of a
switch's hosts routed on its own; the least loaded, then the fewest VLANs, wins. On a
leaf-spine of 8 leaves, 4 spines and 4 hosts per leaf: 1.714x the optimum with one tree
per leaf, 1.000x with each leaf's hosts on the 4 spines' trees (4 VLANs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vlanroute.model.topology import Topology
from vlanroute.routing.balance import balanced_shortest_parents, share_trees
from vlanroute.routing.dor import DorChoices, DorParams, add_dor_candidates, check_order, searched_ties
from vlanroute.routing.engine import Engine, Options, Routes, packing_of
from vlanroute.routing.select import Candidates, forced_routes
from vlanroute.routing.spread import shared_trees, spread
from vlanroute.routing.trees import bfs_tree


SPREAD_UP_TO = 256     # switches: routing below the switch is tried up to this many


@dataclass(frozen=True)
class ShortestParams:
    dimension_order: tuple[int, ...] | None = None   # on grids: the dimension-order candidates' order
    max_vlans: int = 4094       # the VLAN budget routing below the switch must fit
    spread: bool = True         # try routing below the switch (routing/spread.py)


@dataclass(frozen=True)
class ShortestChoices:
    tie_break: str          # lowest-switch-index, balanced-sssp or balanced-bottom-up
    shared: bool = False    # some sources moved onto other sources' trees
    # routing below the switch: "shared-trees" (hosts on the trees of switches spread over
    # the fabric) or "routed" (each group of a switch's hosts on a tree of its own); None: not
    spread: str | None = None

    def record(self) -> dict[str, object]:
        return {"tie_break": self.tie_break, **({"shared": True} if self.shared else {}),
                **({"spread": self.spread} if self.spread else {})}


def shortest_routes(topo: Topology, algorithm: str = "shortest") -> Routes:
    """Shortest paths (in hops), one breadth-first tree per source.

    Among equally short parents the one earliest in switch order is taken, the same rule
    for every source, so that sources' trees coincide wherever they can (fewer VLANs).
    """
    g = topo.simple()
    order = {n: i for i, n in enumerate(topo.switches)}
    adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
    parents = {src: bfs_tree(adj, src, order) for src in topo.switches}
    return Routes(algorithm, parents, ShortestChoices("lowest-switch-index"))


class ShortestEngine(Engine[ShortestParams]):
    name = "shortest"
    summary = "shortest paths, balanced over equal ones, trees shared"
    minimal = True
    deadlock_free = False
    reads = frozenset({"dimension_order", "max_vlans"})

    def params(self, topo: Topology, options: Options) -> ShortestParams:
        check_order(topo, options.dimension_order)
        return ShortestParams(options.dimension_order, options.max_vlans)

    def route(self, topo: Topology, host_count: dict[str, int], params: ShortestParams) -> Routes:
        forced = forced_routes(topo, self.name)
        if forced is not None:
            return forced
        candidates = Candidates(topo, host_count)
        optimal = False
        if topo.dims is not None:
            optimal = add_dor_candidates(candidates, topo, DorParams(params.dimension_order), self.name)
        optimal |= candidates.add(shortest_routes(topo, self.name))
        if not optimal:
            for builder in ("sssp", "bottom-up"):
                parents = balanced_shortest_parents(topo, host_count, builder=builder)
                candidates.add(Routes(self.name, parents, ShortestChoices("balanced-" + builder)))
        best, peak = candidates.best()
        if isinstance(best.choices, DorChoices):
            # Measured: on meshes, tori and hyper-crossbars no source could move onto another
            # source's tree beyond what the tie rules already share, so skip that search.
            return searched_ties(topo, best, peak, host_count, candidates.cables)
        assert isinstance(best.choices, ShortestChoices)
        shared = share_trees(best.parents, topo, host_count)
        if shared is not None:
            best = Routes(self.name, shared, replace(best.choices, shared=True))
        if not params.spread or optimal or len(topo.switches) > SPREAD_UP_TO:
            return best
        return spread_routes(topo, host_count, best, params.max_vlans)


def spread_routes(topo: Topology, host_count: dict[str, int], best: Routes, max_vlans: int) -> Routes:
    """`best` (one shortest-path tree per switch), or the hosts of its switches spread over
    several shortest-path trees if that lowers the maximum load within `max_vlans` VLANs
    (routing/spread.py): shared trees, or each group of hosts routed; the least loaded,
    then the fewest VLANs."""
    assert isinstance(best.choices, ShortestChoices)
    found = Candidates(topo, host_count)
    found.add(best)
    base = (found.peaks[0], len(packing_of(best, topo, host_count)))
    got = shared_trees(topo, host_count, max_vlans, best.parents)
    if got is not None and found.add(Routes(best.algorithm, got[1], replace(best.choices, spread="shared-trees"),
                                            splits=got[2], unspread=base)):
        return found.best()[0]          # at the distance bound: no minimal routing carries less
    got = spread(topo, host_count, best.parents, max_vlans, minimal=True)
    if got is not None:
        found.add(Routes(best.algorithm, got[1], replace(best.choices, spread="routed"), splits=got[2],
                         unspread=base))
    return found.best()[0]


SHORTEST = ShortestEngine()
