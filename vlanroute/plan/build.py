"""The plan: inventory -> topology -> routing -> VLANs -> port plan -> metrics -> verification.

`plan_from_file` is the one entry point every command uses. The result is vendor-neutral;
`Plan.to_json()` is the documented `vlanroute-plan/1` format (docs/plan-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlanroute.routing import routes as R
from vlanroute.routing.budget import Budget, budget_routes, over_budget, vlan_budget
from vlanroute.plan.invariants import check_limits, verify_plan
from vlanroute.errors import PlanError, UserError
from vlanroute.model.hosts import Host, build_hosts
from vlanroute.model.inventory import LoadedInventory, load_inventory
from vlanroute.plan.learning import assign_learning_addresses, learning_address
from vlanroute.plan.schedule import schedule_for
from vlanroute.plan.metrics import Metrics, compute_metrics
from vlanroute.model.platforms import Platform, platform_json
from vlanroute.plan.ports import (Cable, SwitchPlan, apply_vlans, build_port_plan, mgmt_addresses,
                                resolve_platforms)
from vlanroute.routing.balance import balanced_shortest_routes, cable_counts, search_dor_ties, share_trees
from vlanroute.model.topology import Topology, build_topology
from vlanroute.routing.trees import arc_loads, max_load
from vlanroute.plan.vlans import VlanGroup, pack_vlans

FORMAT = "vlanroute-plan/1"


@dataclass
class Plan:
    inventory: LoadedInventory
    topology: Topology
    routes: R.Routes
    vlans: list[VlanGroup]
    hosts: list[Host]
    switches: dict[str, SwitchPlan]
    cabling: list[Cable]
    metrics: Metrics
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inventory.spec.name

    def to_json(self) -> dict[str, Any]:
        spec = self.inventory.spec.topology
        topo: dict[str, Any] = {"kind": spec.kind, "links_per_pair": spec.links_per_pair}
        if self.topology.dims is not None:
            topo["dims"] = list(self.topology.dims)
        if spec.kind in ("ring", "complete", "tree"):
            topo["size"] = len(self.topology.switches)
        if spec.kind == "tree":
            topo["fanout"] = spec.fanout
        return {
            "format": FORMAT,
            "name": self.name,
            "inventory": str(self.inventory.path),
            "topology": topo,
            "routing": {"algorithm": self.routes.algorithm, **self.routes.detail},
            "settings": self.settings,
            "vlans": [{"id": v.id, "sources": v.sources,
                       "switches": sorted(v.switches, key=self.topology.index),
                       "links": sorted(([a, b] for a, b in v.links),
                                       key=lambda l: (self.topology.index(l[0]), self.topology.index(l[1]))),
                       "learning_subnet": v.learning_subnet} for v in self.vlans],
            "hosts": {h.name: {"switch": h.switch, "port": h.port, "vlan": h.vlan, "mac": h.mac,
                               "interface": h.interface,
                               "learning_addresses": {str(v.id): learning_address(v.learning_subnet, h.index)
                                                      for v in sorted(self.vlans, key=lambda v: v.id)}}
                      for h in self.hosts},
            "switches": {s: _switch_json(sp) for s, sp in self.switches.items()},
            "platforms": {name: platform_json(p) for name, p in
                          sorted({sp.platform.name: sp.platform for sp in self.switches.values()}.items())},
            "cabling": [{"a": c.a, "a_port": c.a_port, "b": c.b, "b_port": c.b_port, "a_lag": c.a_lag, "b_lag": c.b_lag}
                        for c in self.cabling],
            "metrics": self.metrics.to_json(),
            "warnings": self.warnings,
        }


def _switch_json(sp: SwitchPlan) -> dict[str, Any]:
    ports = {}
    for p in sp.ports.values():
        entry: dict[str, Any] = {"role": p.role}
        if p.role == "host":
            entry["host"] = p.host
        else:
            entry["neighbor"] = p.neighbor
            entry["lag"] = p.lag
        entry.update(pvid=p.pvid, untagged=p.untagged, tagged=p.tagged)
        ports[p.name] = entry
    return {
        "platform": sp.platform.name, "family": sp.platform.family, "mgmt": sp.mgmt, "ssh_port": sp.ssh_port,
        "coord": list(sp.coord) if sp.coord is not None else None,
        "reserved_ports": sp.reserved, "ports": ports,
        "lags": {str(l.id): {"neighbor": l.neighbor, "members": l.members, "tagged": l.tagged} for l in sp.lags.values()},
    }


def plan_from_file(path: str | Path, sets: tuple[str, ...] | list[str] = ()) -> Plan:
    """Load an inventory (with --set overrides) and build its verified plan."""
    return build_plan(load_inventory(path, sets))


def build_plan(inv: LoadedInventory) -> Plan:
    file = inv.file
    topo = build_topology(inv)
    hosts = build_hosts(inv, topo)
    platforms = resolve_platforms(inv, topo)
    switches, cables = build_port_plan(inv, topo, hosts, platforms)
    settings, warnings = _settings(inv, platforms)

    order = {s: i for i, s in enumerate(topo.switches)}
    host_count = {s: 0 for s in topo.switches}
    for h in hosts:
        host_count[h.switch] += 1

    budget = vlan_budget(inv, platforms, len(hosts))
    routes, vlans = _route_and_pack(inv, topo, host_count, order, budget)
    _assign_ids(inv, vlans)
    apply_vlans(switches, hosts, vlans)
    metrics = compute_metrics(topo, routes, vlans, host_count,
                              {s: sp.platform.mac_capacity for s, sp in switches.items()})
    check_limits(file, vlans, switches, metrics.mac_entries, len(hosts))
    settings["learning"]["prefix_len"] = assign_learning_addresses(inv, hosts, vlans,
                                                                  mgmt_addresses(switches))
    verify_plan(topo, routes, vlans, hosts, switches, cables)
    if routes.algorithm == "budget" and metrics.non_minimal_routes:
        warnings.append(f"routing within {routes.detail.get('max_vlans')} VLANs: {metrics.non_minimal_routes} routes "
                        f"between switches are longer than a shortest path (mean stretch {metrics.mean_stretch:.3f})")
    if not metrics.deadlock_free:
        warnings.append("the routes' channel dependency graph has a cycle: with IEEE 802.3x flow control (PAUSE) "
                        "the network can deadlock under heavy load; routing.algorithm: updown is deadlock-free")
    return Plan(inv, topo, routes, vlans, hosts, switches, cables, metrics, settings, warnings)


def _route_and_pack(inv: LoadedInventory, topo: Topology, host_count: dict[str, int], order: dict[str, int],
                    budget: Budget) -> tuple[R.Routes, list[VlanGroup]]:
    """Routes and their VLANs, within the VLAN budget.

    Minimal algorithms (dor, shortest) try several tie-break rules and keep the lowest
    all-to-all maximum load, then the fewest VLANs (tiebreak.py); up*/down* has one
    routing. Needing more VLANs than the budget is the user's to fix, unless
    routing.algorithm is budget: then at most that many trees are chosen (budget.py).
    """
    spec = inv.spec.routing
    host_switches = {s for s, n in host_count.items() if n}
    default = "shortest" if topo.kind == "custom" else "dor"
    algorithm = spec.algorithm or default
    if spec.root is not None and algorithm != "updown":
        raise UserError("routing.root is only used by algorithm: updown", file=inv.file, field="routing.root",
                        fix="remove it, or set routing.algorithm: updown")
    if algorithm == "updown":
        routes = R.updown_routes(topo, R.updown_root(topo, spec.root, inv.file))
        vlans = pack_vlans(routes, host_switches, order)
    else:
        routes, vlans = _minimal_routes(inv, topo, host_count, order, default if algorithm == "budget" else algorithm)
    if len(vlans) > budget.max_vlans:
        if algorithm != "budget":
            raise over_budget(inv, len(vlans), budget, algorithm)
        routes = budget_routes(topo, host_count, budget.max_vlans, routes)
        vlans = pack_vlans(routes, host_switches, order)
        assert len(vlans) <= budget.max_vlans
    elif algorithm == "budget":
        routes = R.Routes("budget", routes.parents, {"minimal": routes.algorithm, **routes.detail})
    routes.detail.update(max_vlans=budget.max_vlans, max_vlans_limit=budget.binding)
    return routes, vlans


def _minimal_routes(inv: LoadedInventory, topo: Topology, host_count: dict[str, int], order: dict[str, int],
                    algorithm: str) -> tuple[R.Routes, list[VlanGroup]]:
    """The best minimal routing of `algorithm`: least maximum load, then fewest VLANs."""
    spec = inv.spec.routing
    kind = topo.kind
    host_switches = {s for s, n in host_count.items() if n}
    if kind == "tree":
        routes = R.shortest_routes(topo)
        routes.algorithm = algorithm   # a tree has one path per pair; every algorithm gives it
        return routes, pack_vlans(routes, host_switches, order)
    if algorithm == "dor" and kind == "custom":
        raise UserError("dimension-order routing needs a grid (mesh, torus, hyper-crossbar, ring)", file=inv.file,
                        field="routing.algorithm", fix="use algorithm: shortest or updown for a custom topology")
    if kind == "complete":
        routes = R.direct_routes(topo)
        routes.algorithm = algorithm
        return routes, pack_vlans(routes, host_switches, order)
    candidates: list[R.Routes] = []
    peaks: list[float] = []
    cables = cable_counts(topo)

    def consider(c: R.Routes) -> bool:
        """Add a candidate; True if it reaches the distance bound (see _peak_and_mean)."""
        peak, mean = _peak_and_mean(c, host_count, cables)
        candidates.append(c)
        peaks.append(peak)
        return peak <= mean * (1 + 1e-9)

    optimal = False
    if topo.dims is not None:
        orders = R.dor_orders(topo.dims)
        if spec.dimension_order != "auto":
            wanted = tuple(spec.dimension_order)
            active = sorted(d for d, n in enumerate(topo.dims) if n > 1)
            if sorted(wanted) != active and sorted(wanted) != list(range(len(topo.dims))):
                raise UserError(f"{list(wanted)} is not an order of the dimensions {list(range(len(topo.dims)))}",
                                file=inv.file, field="routing.dimension_order",
                                fix="list every dimension index once, e.g. [1, 0], or use auto")
            orders = [tuple(d for d in wanted if topo.dims[d] > 1)]
        # Tie rules only matter on rings of even size (tie_goes_plus).
        even_rings = kind in ("torus", "ring") and any(n % 2 == 0 and n > 2 for n in topo.dims)
        rules = [r for r in R.TIE_RULES if r != "plus"] if even_rings else ["source-parity"]
        for o in orders:
            for rule in rules:
                c = R.dor_routes(topo, o, rule)
                c.algorithm = algorithm
                c.detail["dimension_order_setting"] = (spec.dimension_order if spec.dimension_order == "auto"
                                                       else list(spec.dimension_order))
                if consider(c):
                    optimal = True
                    break   # no minimal routing has a lower maximum; keep the rule that shares most
    if algorithm == "shortest":
        optimal |= consider(R.shortest_routes(topo))
        if not optimal:
            for builder in ("sssp", "bottom-up"):
                consider(balanced_shortest_routes(topo, host_count, builder=builder))
    scored = sorted((round(p, 6), i) for i, p in enumerate(peaks))
    best: tuple[int, R.Routes, list[VlanGroup]] | None = None
    for peak, i in scored:
        if peak > scored[0][0]:
            break
        vlans = pack_vlans(candidates[i], host_switches, order)
        if best is None or len(vlans) < best[0]:
            best = (len(vlans), candidates[i], vlans)
    assert best is not None
    if "dimension_order" in best[1].detail:
        # Single tie decisions where no rule balances (uneven hosts, rings of 4k+2).
        searched = search_dor_ties(topo, best[1], host_count)
        if searched is not best[1] and max_load(searched.parents, host_count, cables) < scored[0][0] - 1e-6:
            best = (0, searched, pack_vlans(searched, host_switches, order))
    if "dimension_order" in best[1].detail:
        # Measured: on meshes, tori and hyper-crossbars no source could move onto another
        # source's tree beyond what the tie rules already share, so skip the search there.
        return best[1], best[2]
    routes = share_trees(best[1], topo, host_count)
    if routes is best[1]:
        return routes, best[2]
    return routes, pack_vlans(routes, host_switches, order)


def _peak_and_mean(routes: R.Routes, host_count: dict[str, int],
                   cables: dict[tuple[str, str], int]) -> tuple[float, float]:
    """The maximum load per cable and direction, and the mean over all of them.

    Every minimal routing carries the same total, so a minimal routing whose maximum is
    the mean (the distance bound) cannot be beaten by another one.
    """
    loads = arc_loads(routes.parents, host_count, cables)
    if not loads:
        return 0.0, 0.0
    return max(loads.values()), sum(x * cables[a] for a, x in loads.items()) / sum(cables.values())


def _assign_ids(inv: LoadedInventory, vlans: list[VlanGroup]) -> None:
    spec = inv.spec.routing
    n = len(vlans)
    if spec.vlan_ids is not None:
        if len(spec.vlan_ids) < n:
            raise PlanError(f"the routing needs {n} VLANs but routing.vlan_ids lists {len(spec.vlan_ids)}",
                            file=inv.file, field="routing.vlan_ids", fix=f"list at least {n} ids, or use first_vlan")
        ids = list(spec.vlan_ids[:n])
    else:
        if spec.first_vlan + n - 1 > 4094:
            raise PlanError(f"the routing needs {n} VLANs; from first_vlan {spec.first_vlan} that runs to "
                            f"{spec.first_vlan + n - 1}, past 4094", file=inv.file, field="routing.first_vlan",
                            fix=f"use a first_vlan of at most {4094 - n + 1}, or a routing with fewer VLANs")
        ids = list(range(spec.first_vlan, spec.first_vlan + n))
    for v, i in zip(vlans, ids):
        v.id = i


def _settings(inv: LoadedInventory, platforms: dict[str, Platform]) -> tuple[dict[str, Any], list[str]]:
    s = inv.spec.settings
    warnings: list[str] = []
    used = {p.name: p for p in platforms.values()}
    aging = s.aging_time if s.aging_time is not None else min(p.aging_max for p in used.values())
    for p in used.values():
        if not p.aging_min <= aging <= p.aging_max:
            raise PlanError(f"aging time {aging} s is outside {p.aging_min}..{p.aging_max} s of {p.name}",
                            file=inv.file, field="settings.aging_time",
                            fix=f"use a value from {p.aging_min} to {p.aging_max}, or leave it out for the maximum")
    if s.eee and not all(p.supports_eee for p in used.values()):
        warnings.append("settings.eee is on but " + ", ".join(p.name for p in used.values() if not p.supports_eee)
                        + " has no EEE setting; ignored there")
    try:
        sched = schedule_for(aging, s.learning.interval, s.learning.splay)
    except UserError as exc:   # the same rule render applies; name the inventory file here
        raise UserError(exc.message, file=inv.file, field=exc.field, fix=exc.fix) from None
    interval, splay = sched.interval_s, sched.splay_s
    return {
        "aging_time": aging, "flow_control": s.flow_control, "eee": s.eee, "lag_hash": s.lag_hash,
        "learning": {"pool": str(s.learning.pool), "method": s.learning.method,
                     "interface_prefix": s.learning.interface_prefix,
                     "interval_s": interval, "splay_s": splay},
    }, warnings
