"""Routing within a VLAN budget (routing.algorithm: budget): at most K spanning trees.

K is the plan's VLAN budget (plan/limits.py: the tightest of routing.max_vlans, the VLAN
table, the VLAN ids and the MAC table). The engine first routes minimally (dor, or
shortest where dor refuses the topology). That routing is kept as it is when it fits in
K VLANs and reaches the distance bound (its maximum load is the mean over all cables: no
routing of any kind carries less). Otherwise the constructions of within_budget.py
compete for at most K trees, every source switch on one of them (K trees never need more
than K VLANs): the search of budget_search.py on any graph, and on tori, rings and
complete graphs the periodic trees of periodic.py. When the minimal routing fits, it
competes too and wins ties, so a larger budget never plans worse than a smaller one (a
budget that fits the minimal routing used to keep it even where searched trees carry
less). Routes may be longer than minimal; what is minimised is the all-to-all maximum
link load, then the total routed hops.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vlanroute.model.topology import Topology
from vlanroute.routing.bounds import budget_lower_bound
from vlanroute.routing.budget_search import BudgetChoices
from vlanroute.routing.dor import DOR, DorParams
from vlanroute.routing.engine import Choices, Engine, Options, Routes, packing_of
from vlanroute.routing.select import peak_and_mean
from vlanroute.routing.shortest import SHORTEST, ShortestParams
from vlanroute.routing.within_budget import route_within_budget, score

__all__ = ["BUDGET", "BudgetChoices", "BudgetEngine", "BudgetParams", "MinimalFits"]


@dataclass(frozen=True)
class BudgetParams:
    max_vlans: int                                       # K: at most this many VLANs
    minimal: DorParams | ShortestParams = DorParams()    # the minimal routing tried first


@dataclass(frozen=True)
class MinimalFits:
    """The minimal routing fitted in the budget and was kept as it is: it reaches the
    distance bound, or nothing searched within the budget carries less."""

    minimal: str          # the engine that made it
    choices: Choices      # its choices

    def record(self) -> dict[str, object]:
        return {"minimal": self.minimal, **self.choices.record()}


class BudgetEngine(Engine[BudgetParams]):
    name = "budget"
    summary = "at most max_vlans trees (the VLAN budget), least maximum load"
    minimal = False
    deadlock_free = False
    reads = frozenset({"dimension_order", "max_vlans"})

    def params(self, topo: Topology, options: Options) -> BudgetParams:
        first = DOR if DOR.refuses(topo) is None else SHORTEST
        return BudgetParams(options.max_vlans, first.params(topo, options))

    def route(self, topo: Topology, host_count: dict[str, int], params: BudgetParams) -> Routes:
        if isinstance(params.minimal, DorParams):
            minimal = DOR.route(topo, host_count, params.minimal)
        else:
            minimal = SHORTEST.route(topo, host_count, params.minimal)
        packing = packing_of(minimal, topo, host_count)
        fits = len(packing) <= params.max_vlans
        peak, mean = peak_and_mean(minimal, host_count, topo.arc_cables())
        if not fits or peak > mean * (1 + 1e-9):
            # D, the distance sum of the bound: the mean load times the cable-directions.
            distance_total = round(mean * 2 * topo.graph.number_of_edges())
            within = monotone_within_budget(topo, host_count, params.max_vlans, minimal, fits, distance_total)
            if within is not minimal:
                return within
        return Routes(self.name, minimal.parents, MinimalFits(minimal.algorithm, minimal.choices), packing)


def ladder(k: int, sources: int) -> list[int]:
    """The budgets searched for a budget of k, ascending: 1, 2, 3, 4, 6, 8, 12, ... up to
    k, and every source on its own tree once k allows it (a larger k changes nothing)."""
    points: set[int] = set()
    a = 1
    while a <= k:
        points.add(min(a, sources))
        if a >= 2 and 3 * a // 2 <= k:
            points.add(min(3 * a // 2, sources))
        a *= 2
    if k >= sources:
        points.add(sources)
    return sorted(points)


def monotone_within_budget(topo: Topology, host_count: dict[str, int], k: int, minimal: Routes, fits: bool,
                           distance_total: int) -> Routes:
    """The best plan over the searches at the ladder budgets up to k (`ladder`). The
    searches are heuristics: one with more trees can end worse than one with fewer (a
    random 3-regular graph: 16 VLANs 512, 32 VLANs 528), so a budget of k takes the best
    of every ladder budget below it, and a larger budget never plans worse: its ladder
    holds the smaller one's. Larger budgets first; a search stops the walk once the best
    plan is at the bound of the next smaller budget (no plan within it can do better)."""
    sources = sum(1 for n in host_count.values() if n)
    best: Routes | None = None
    best_score: tuple[float, int] | None = None
    for b in reversed(ladder(k, sources)):
        if best_score is not None and \
                best_score[0] <= budget_lower_bound(topo, host_count, b, distance_total) * (1 + 1e-9):
            break
        routes = route_within_budget(topo, host_count, b, minimal, fits, distance_total)
        sc = score(routes, host_count, topo)
        if best_score is None or sc < best_score:
            best, best_score = routes, sc
    assert best is not None
    if isinstance(best.choices, BudgetChoices):
        best = replace(best, choices=replace(best.choices, max_vlans=k))
    return best


BUDGET = BudgetEngine()
