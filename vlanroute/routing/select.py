"""Choosing a minimal routing: nothing to choose on trees and complete graphs; elsewhere
the candidate with the least all-to-all maximum link load, then the fewest VLANs.

Two topologies leave a minimal routing no choice at all, and every minimal engine routes
them the same way (`forced_routes`):
- a tree: there is one path between any two switches; the breadth-first trees are it;
- a complete graph: every switch is one hop from every other; the direct link is the one
  shortest path.

Elsewhere a minimal engine builds candidate routings (tie rules, dimension orders,
balanced trees) and keeps the best (`Candidates`): least maximum load per cable and
direction under all-to-all traffic, then fewest VLANs (a VLAN costs VLAN-table and MAC
entries on every switch), then the earliest candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Routes
from vlanroute.routing.packing import SharedTree, pack
from vlanroute.routing.trees import arc_loads, bfs_tree


@dataclass(frozen=True)
class TreeChoices:
    """A tree's only routing. plan.json records it as the breadth-first trees that give it
    (tie_break lowest-switch-index, as the shortest engine's: a tree has no ties)."""

    def record(self) -> dict[str, object]:
        return {"tie_break": "lowest-switch-index"}


@dataclass(frozen=True)
class DirectChoices:
    """A complete graph's direct links. plan.json records it as dimension order [] (no
    dimension to order: every destination is one hop away) and tie_break none."""

    def record(self) -> dict[str, object]:
        return {"dimension_order": [], "tie_break": "none"}


def forced_routes(topo: Topology, algorithm: str) -> Routes | None:
    """The one minimal routing of a tree or a complete graph, or None for other topologies."""
    if topo.kind == "tree":
        g = topo.simple()
        order = {n: i for i, n in enumerate(topo.switches)}
        adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
        return Routes(algorithm, {src: bfs_tree(adj, src, order) for src in topo.switches}, TreeChoices())
    if topo.kind == "complete":
        parents = {s: {d: s for d in topo.switches if d != s} for s in topo.switches}
        return Routes(algorithm, parents, DirectChoices())
    return None


class Candidates:
    """Candidate minimal routings of one topology and traffic, and the best of them."""

    def __init__(self, topo: Topology, host_count: dict[str, int]) -> None:
        self.topo = topo
        self.host_count = host_count
        self.cables: dict[Arc, int] = topo.arc_cables()
        self.routes: list[Routes] = []
        self.peaks: list[float] = []

    def add(self, routes: Routes) -> bool:
        """Add a candidate; True if it reaches the distance bound (see `peak_and_mean`):
        then no minimal routing has a lower maximum load, and trying more is pointless."""
        peak, mean = peak_and_mean(routes, self.host_count, self.cables)
        self.routes.append(routes)
        self.peaks.append(peak)
        return peak <= mean * (1 + 1e-9)

    def best(self) -> tuple[Routes, float]:
        """The candidate with the least maximum load (to 6 decimals), then the fewest VLANs,
        then the earliest; returned with its VLAN packing and its maximum load."""
        scored = sorted((round(p, 6), i) for i, p in enumerate(self.peaks))
        host_switches = {s for s, n in self.host_count.items() if n}
        order = {s: i for i, s in enumerate(self.topo.switches)}
        best: tuple[int, Routes, tuple[SharedTree, ...]] | None = None
        for peak, i in scored:
            if peak > scored[0][0]:
                break
            packing = pack(self.routes[i].parents, host_switches, order, self.routes[i].splits)
            if best is None or len(packing) < best[0]:
                best = (len(packing), self.routes[i], packing)
        assert best is not None
        return replace(best[1], packing=best[2]), scored[0][0]


def peak_and_mean(routes: Routes, host_count: dict[str, int], cables: dict[Arc, int]) -> tuple[float, float]:
    """The maximum load per cable and direction, and the mean over all of them.

    Every minimal routing carries the same total (each host pair crosses as many links as
    its distance), so a minimal routing whose maximum is the mean (the distance bound)
    cannot be beaten by another one.
    """
    loads = arc_loads(routes.parents, host_count, cables, routes.splits)
    if not loads:
        return 0.0, 0.0
    return max(loads.values()), sum(x * cables[a] for a, x in loads.items()) / sum(cables.values())
