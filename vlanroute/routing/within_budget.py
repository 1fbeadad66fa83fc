"""Routing within a VLAN budget: the best of the constructions we have, judged against the bound.

The budget engine (budget.py) gives at most k trees (k = the VLAN budget). Two constructions:
- periodic.py: on tori, rings and complete graphs with equal hosts per switch, one tree per
  block of the grid, all shifts of one searched tree;
- budget_search.py: on any graph, k candidate trees (the best minimal routing's, balanced breadth-
  first ones) with sources assigned to them and the trees improved by local search.
Both are heuristics; the better plan wins: lower all-to-all maximum load per cable, then
fewer routed hops in total. The lower bound of routing/bounds.py says when to stop looking:
a plan at the bound cannot be beaten. budget_search.py's search costs sources x trees x switches
per round, seconds on grids of hundreds of switches, and never beat the periodic trees on a
torus in bench/quality.py, so there it runs only on small grids (at most SMALL switches).
"""

from __future__ import annotations

from vlanroute.model.topology import Topology
from vlanroute.routing.bounds import budget_lower_bound
from vlanroute.routing.budget_search import budget_routes
from vlanroute.routing.engine import Routes
from vlanroute.routing.periodic import periodic_routes
from vlanroute.routing.trees import arc_loads, tree_depths

SMALL = 64


def route_within_budget(topo: Topology, host_count: dict[str, int], k: int, minimal: Routes,
                        minimal_fits: bool = False, distance_total: int | None = None,
                        minimal_score: tuple[float, int] | None = None) -> tuple[Routes, tuple[float, int]]:
    """At most k trees, every source switch on one of them: the best plan found, and its
    `score`.

    `minimal` is the best minimal routing (budget_search.py starts from its trees); when it fits
    in the budget itself (`minimal_fits`), it is a candidate too and wins ties, so that a
    larger budget never plans worse than a smaller one; `minimal_score`, its score if the
    caller has it (the budget ladder asks once per budget). `distance_total` (the bound's D)
    saves a breadth-first search from every switch when the caller knows it."""
    target = budget_lower_bound(topo, host_count, k, distance_total)
    scored: list[tuple[tuple[float, int], int, Routes]] = []
    if minimal_fits:
        scored.append((minimal_score or score(minimal, host_count, topo), 0, minimal))

    def done() -> bool:
        return bool(scored) and min(scored)[0][0] <= target * (1 + 1e-9)

    if not done():
        periodic = periodic_routes(topo, host_count, k, target)
        if periodic is not None:
            scored.append((score(periodic, host_count, topo), 1, periodic))
        if not done() and (periodic is None or len(topo.switches) <= SMALL):
            generic = budget_routes(topo, host_count, k, minimal)
            scored.append((score(generic, host_count, topo), 2, generic))
    best = min(scored, key=lambda t: t[:2])
    return best[2], best[0]


def score(routes: Routes, host_count: dict[str, int], topo: Topology) -> tuple[float, int]:
    """(all-to-all maximum load per cable, rounded; total routed hops over host pairs)."""
    loads = arc_loads(routes.parents, host_count, topo.arc_cables(), routes.splits)
    hops = 0
    for src, par, hs in routes.senders(host_count):
        hops += hs * sum(host_count.get(v, 0) * d for v, d in tree_depths(par, src).items())
    return round(max(loads.values(), default=0.0), 6), hops
