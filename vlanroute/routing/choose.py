"""The default routing (no routing.algorithm): plan with every engine, keep the best.

Every engine of the table that accepts the topology routes it (budget with the plan's VLAN
budget; the other engines' plans must fit that budget too); the plan with the least
all-to-all maximum load per cable wins, then the fewest VLANs, then the table's order.
With IEEE 802.3x flow control on (settings.flow_control, the default) a plan whose
channel dependencies have a cycle can deadlock under PAUSE, so the best deadlock-free
plan wins unless its load is more than DEADLOCK_FREE_COST times the best plan's; then the
best plan wins and the plan warns of the deadlock risk, as an explicit engine's would.

The acyclic engine, which goes last, is told the load it must get under to be taken (the
best plan so far times the allowance: DEADLOCK_FREE_COST with flow control, 1.0 without),
and skips the steps of its search that could not get there (routing/acyclic/engine.py).

Fast paths: a plan at the optimum (routing/optimum.py) cannot be beaten, so the search
stops there; so does a plan at the arrival bound (routing/bounds.py, 6: the floor of any
VLAN routing, above the optimum where pieces cannot split, a leaf-spine's) with at most one
VLAN per switch with hosts; the first minimal engine (dor on grids, the old default) goes first, and
with flow control the deadlock-free engines next.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import networkx as nx

from vlanroute.errors import UserError
from vlanroute.model.topology import Topology
from vlanroute.routing.bounds import arrival_bound
from vlanroute.routing.engine import Engine, Options, Routes, packing_of
from vlanroute.routing.trees import ParentMap, Splits, arc_loads, pruned_parents, senders, spans_exactly

DEADLOCK_FREE_COST = 1.25    # flow control on: a deadlock-free plan may carry up to this much more
# Engines whose search grows fast with the fabric, tried by default only up to this many switches
# (acyclic: about 45 s of CPU on the 8x8 torus, 40 s of it the two searches under shuffled
# names that take it from 1.5x the optimum to 1.36x; 40 to 50 s on an 8x8 torus with cables gone, where
# it tries every escape root and a guided order per root; 40 to 70 s on random 3-regular graphs of
# 48 switches, where it also refines the channel order; 16 s on the 10x10 torus, busy machine);
# named ones always run.
HEAVY = {"acyclic": 64}


@dataclass(frozen=True)
class Candidate:
    engine: str
    routes: Routes
    peak: float            # the all-to-all maximum load per cable and direction
    vlans: int
    deadlock_free: bool


@dataclass(frozen=True)
class Choice:
    routes: Routes
    reason: str            # one line: which engine, and why
    tried: tuple[Candidate, ...]


def deadlock_free(parents: dict[str, ParentMap], host_count: dict[str, int], splits: Splits | None = None) -> bool:
    """Whether the routes between switches with hosts have an acyclic channel dependency
    graph (plan/metrics.py computes the plan's own verdict the same way)."""
    hosts = {s for s, n in host_count.items() if n}
    deps: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    for src, tree, _ in senders(parents, host_count, splits):
        if not spans_exactly(tree, src, hosts):
            tree = pruned_parents(tree, src, hosts)
        for v, p in tree.items():
            if p != src:
                deps.add(((tree[p], p), (p, v)))
    g = nx.DiGraph()
    g.add_edges_from(deps)
    return nx.is_directed_acyclic_graph(g)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a search, back as it was after. The engines make
    millions of short-lived tuples, lists and dicts, freed by reference counting; the
    collector's passes over them found almost nothing to free (5 collections, 704
    objects, on the 8x8 torus with 6 cables gone) and cost about 5 % of the default's CPU.
    Nothing a search computes depends on it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def choose_routes(topo: Topology, host_count: dict[str, int], engines: list[Engine[Any]], options: Options,
                  flow_control: bool, optimum: float) -> Choice:
    """The best plan of `engines` (in the table's order, the old default first)."""
    with collector_paused():
        return _choose_routes(topo, host_count, engines, options, flow_control, optimum)


def _choose_routes(topo: Topology, host_count: dict[str, int], engines: list[Engine[Any]], options: Options,
                   flow_control: bool, optimum: float) -> Choice:
    cables = topo.arc_cables()
    tried: list[Candidate] = []
    # The default's searches are the engines' quick ones (Options.quick: fixed counts, a few
    # seconds); the heavy engines go last, so that they start from what the others found
    # (the budget engine's tree search is the acyclic engine's guide, routing/memo.py) and
    # are skipped once a plan reaches the optimum.
    options = replace(options, quick=True)
    sources = sum(1 for n in host_count.values() if n)
    floor = max(optimum, arrival_bound(topo, host_count))       # no plan carries less
    order = sorted(engines, key=lambda e: (3 if e.name in HEAVY else 0 if e.minimal
                                           else 1 if (flow_control and e.deadlock_free) else 2))
    for engine in order:
        if engine.refuses(topo) is not None or len(topo.switches) > HEAVY.get(engine.name, len(topo.switches)):
            continue
        if not engine.deadlock_free and any(c.peak <= floor * (1 + 1e-9) and c.vlans <= sources for c in tried):
            # cannot beat a plan at the floor (only tie it with fewer VLANs, below one per
            # switch with hosts: what a plan routed below the switch may need more than)
            continue
        if tried:
            # A plan is taken only below the best so far times the allowance (1.0 without
            # flow control: there a deadlock-free plan must be lighter outright), so a search
            # may skip what cannot get under it.
            best_peak = min(c.peak for c in tried)
            allowance = DEADLOCK_FREE_COST if flow_control else 1.0
            options = replace(options, worth_below=best_peak * allowance * (1 + 1e-9))
        try:
            routes = engine.route(topo, host_count, engine.params(topo, options))
        except UserError:
            continue                          # a setting this engine cannot use: not a candidate
        vlans = len(packing_of(routes, topo, host_count))
        if vlans > options.max_vlans:
            continue
        peak = max(arc_loads(routes.parents, host_count, cables, routes.splits).values(), default=0.0)
        free = engine.deadlock_free or deadlock_free(routes.parents, host_count, routes.splits)
        tried.append(Candidate(engine.name, routes, peak, vlans, free))
        at_floor = peak <= optimum * (1 + 1e-9) or (peak <= floor * (1 + 1e-9) and vlans <= sources)
        if at_floor and (free or not flow_control):
            break                             # at the floor (and deadlock-free if it must be)
    if not tried:
        raise UserError("no routing engine fits this fabric within the VLAN budget", field="routing.algorithm",
                        fix="raise routing.max_vlans or name an engine with routing.algorithm")
    best = min(tried, key=lambda c: (round(c.peak, 6), c.vlans))
    ratio = f"x{best.peak / optimum:.3f} of the optimum" if optimum else "no traffic"
    if not flow_control:
        return Choice(best.routes, f"{best.engine}: the least max link load of {len(tried)} engines tried "
                      f"({ratio})", tuple(tried))
    free_ones = [c for c in tried if c.deadlock_free]
    if best.deadlock_free:
        return Choice(best.routes, f"{best.engine}: the least max link load of {len(tried)} engines tried "
                      f"({ratio}), and deadlock-free under 802.3x PAUSE", tuple(tried))
    safe = min(free_ones, key=lambda c: (round(c.peak, 6), c.vlans)) if free_ones else None
    if safe is not None and safe.peak <= best.peak * DEADLOCK_FREE_COST * (1 + 1e-9):
        return Choice(safe.routes, f"{safe.engine}: deadlock-free under 802.3x PAUSE, its max link load "
                      f"x{safe.peak / best.peak:.3f} that of {best.engine} (at most x{DEADLOCK_FREE_COST} "
                      "accepted for deadlock freedom)", tuple(tried))
    why = (f"the best deadlock-free plan ({safe.engine}) carries x{safe.peak / best.peak:.3f} its load, "
           f"above x{DEADLOCK_FREE_COST}") if safe else "no deadlock-free engine fits"
    return Choice(best.routes, f"{best.engine}: the least max link load ({ratio}); {why}", tuple(tried))
