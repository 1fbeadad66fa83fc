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

Where the budget allows every source switch a tree of its own (K at least the sources),
the best plan's trees then get branch moves (acyclic/polish.py, with no channel order: these
routes need not be deadlock-free): one switch of one source's tree hangs from another
neighbour when that takes load off the most loaded links. Searched trees leave a few
links one destination too heavy where an exact assignment is needed: on a leaf-spine of
16 leaves and 8 spines the moves took the plan from 1.600 to 1.067 times the exact
optimum, on a random 4-regular graph of 64 switches from 1.257 to 1.057, on an 8x8 torus
with 6 cables gone from 1.107 to 1.012 (bench/quality.py), for about 2 s of CPU there. Up to
POLISH_UP_TO switches.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.polish import polish
from vlanroute.routing.bounds import budget_lower_bound
from vlanroute.routing.budget_search import BudgetChoices
from vlanroute.routing.dor import DOR, DorParams
from vlanroute.routing.engine import Choices, Engine, Options, Routes, packing_of
from vlanroute.routing.packing import SharedTree
from vlanroute.routing.memo import Store, fabric_key
from vlanroute.routing.select import peak_and_mean
from vlanroute.routing.shortest import SHORTEST, ShortestParams
from vlanroute.routing.trees import distinct_trees
from vlanroute.routing.within_budget import route_within_budget, score

__all__ = ["BUDGET", "BudgetChoices", "BudgetEngine", "BudgetParams", "MinimalFits"]

POLISH_UP_TO = 64    # switches: the branch moves took about 2 s of CPU on 64 (bench/quality.py)


@dataclass(frozen=True)
class BudgetParams:
    max_vlans: int                                       # K: at most this many VLANs
    minimal: DorParams | ShortestParams = DorParams()    # the minimal routing tried first
    # Branch moves on the best plan when K allows a tree per source (module docstring). The
    # acyclic engine's guide goes without: its guided orders did worse from polished plans
    # on two of three random 3-regular graphs of 24 switches (1.57x against at most 1.5x).
    branch_moves: bool = True


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
        if DOR.refuses(topo) is None:
            return BudgetParams(options.max_vlans, DOR.params(topo, options))
        # its searches start from one tree per switch: the shortest engine without routing
        # below the switch (which competes as an engine of its own)
        return BudgetParams(options.max_vlans, replace(SHORTEST.params(topo, options), spread=False))

    def route(self, topo: Topology, host_count: dict[str, int], params: BudgetParams) -> Routes:
        sources = sum(1 for n in host_count.values() if n)
        # The acyclic engine's guide is this search without branch moves: kept for the same
        # fabric, budget ladder and minimal routing (routing/memo.py), searched once per plan.
        minimal_key = replace(params.minimal, max_vlans=0) if isinstance(params.minimal, ShortestParams) \
            else params.minimal
        key = (fabric_key(topo, host_count), tuple(ladder(params.max_vlans, sources)), minimal_key)
        searched = _SEARCHED.get(key, lambda: self._search(topo, host_count, params))
        best = searched.routes
        if searched.searched and params.branch_moves and params.max_vlans >= sources \
                and len(topo.switches) <= POLISH_UP_TO:
            best = polished(topo, host_count, best, searched.peak)
        if isinstance(best.choices, BudgetChoices):
            best = replace(best, choices=replace(best.choices, max_vlans=params.max_vlans))
        return best

    def _search(self, topo: Topology, host_count: dict[str, int], params: BudgetParams) -> _Searched:
        """The plan before branch moves: the minimal routing where it fits and reaches the
        distance bound, else the best of the searches up to the budget."""
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
            within = searched_within_budget(topo, host_count, params.max_vlans, minimal, fits, distance_total)
            routes = within if within is not minimal else self._kept(minimal, packing)
            return _Searched(routes, score(within, host_count, topo)[0], True)
        return _Searched(self._kept(minimal, packing), round(peak, 6), False)

    def _kept(self, minimal: Routes, packing: tuple[SharedTree, ...]) -> Routes:
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


@dataclass(frozen=True)
class _Searched:
    """The budget engine's plan before branch moves, its all-to-all maximum load (as `score`
    rounds it), and whether the searches ran (else the minimal routing reached the distance
    bound within the budget, and is kept as it is)."""

    routes: Routes
    peak: float
    searched: bool


_SEARCHED: Store[_Searched] = Store()


def searched_within_budget(topo: Topology, host_count: dict[str, int], k: int, minimal: Routes, fits: bool,
                           distance_total: int) -> Routes:
    """`monotone_within_budget` without the branch moves (they follow in the engine)."""
    return monotone_within_budget(topo, host_count, k, minimal, fits, distance_total, branch_moves=False)


def monotone_within_budget(topo: Topology, host_count: dict[str, int], k: int, minimal: Routes, fits: bool,
                           distance_total: int, branch_moves: bool = True) -> Routes:
    """The best plan over the searches at the ladder budgets up to k (`ladder`). The
    searches are heuristics: one with more trees can end worse than one with fewer (a
    random 3-regular graph: 16 VLANs 512, 32 VLANs 528), so a budget of k takes the best
    of every ladder budget below it, and a larger budget never plans worse: its ladder
    holds the smaller one's. Larger budgets first; a search stops the walk once the best
    plan is at the bound of the next smaller budget (no plan within it can do better).
    When k allows a tree per source, the best plan is then `polished` (every k from the
    sources up has the same ladder, and the moves never raise the load, so a larger
    budget still never plans worse); kept only if that lowers its load, so a plan that
    needs fewer VLANs for the same load stays."""
    sources = sum(1 for n in host_count.values() if n)
    best: Routes | None = None
    best_score: tuple[float, int] | None = None
    minimal_score = score(minimal, host_count, topo) if fits else None
    for b in reversed(ladder(k, sources)):
        if best_score is not None and \
                best_score[0] <= budget_lower_bound(topo, host_count, b, distance_total) * (1 + 1e-9):
            break
        routes, sc = route_within_budget(topo, host_count, b, minimal, fits, distance_total, minimal_score)
        if best_score is None or sc < best_score:
            best, best_score = routes, sc
    assert best is not None
    if branch_moves and k >= sources and len(topo.switches) <= POLISH_UP_TO:
        assert best_score is not None
        best = polished(topo, host_count, best, best_score[0])
    if isinstance(best.choices, BudgetChoices):
        best = replace(best, choices=replace(best.choices, max_vlans=k))
    return best


BUDGET = BudgetEngine()


def polished(topo: Topology, host_count: dict[str, int], routes: Routes, peak: float) -> Routes:
    """`routes` (all-to-all maximum load `peak`, as `score` rounds it) after branch moves
    with no channel order (acyclic/polish.py), if they lower that load; every source keeps a
    spanning tree, so the plan needs at most one VLAN per source switch (the caller's
    budget allows that many)."""
    load, trees = polish(topo, host_count, None, routes.parents)
    if round(load, 6) >= peak:
        return routes
    senders = [s for s, n in host_count.items() if n]
    used = distinct_trees(trees[s] for s in senders)
    origin = routes.choices.trees if isinstance(routes.choices, BudgetChoices) else "minimal-trees"
    return Routes("budget", trees, BudgetChoices(len(senders), origin, used, polished=True))
