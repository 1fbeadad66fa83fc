"""A rendered bundle's plan.json as a `Plan`, for what is shown or measured from a bundle
(`vlanroute report OUTDIR`): a repaired bundle, or the one about to be pushed, has no
inventory that plans it.

Everything comes from plan.json as render wrote it: the switches with their ports, LAGs,
platforms and host attachment; the VLANs with their trees and sources; the hosts; the
cables; the settings, routing record and warnings. Each source switch's route is the path
in its VLAN's tree, as in the plan. The metrics are plan.json's figures, and the per-cable
loads and per-switch MAC entries the pictures need are computed from those trees by
plan/metrics.py, as the plan computed them. The inventory part of the result (`Plan.inventory`)
holds only what is shown: the plan's name, the path of plan.json itself, the topology's
kind and cables per pair, and the acknowledged syntax; it is never planned again.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.platforms import resolve_platforms
from vlanroute.model.hosts import Host
from vlanroute.model.inventory import Inventory, LoadedInventory, TopologySpec
from vlanroute.model.site import Acknowledgment, SiteSpec
from vlanroute.model.topology import Topology
from vlanroute.plan.build import Plan
from vlanroute.plan.limits import Budget
from vlanroute.plan.metrics import Metrics, compute_metrics
from vlanroute.plan.ports import Cable, LagPlan, PortPlan, SwitchPlan
from vlanroute.plan.vlans import RoutingVlan
from vlanroute.routing.engine import Routes
from vlanroute.routing.trees import tree_parents

_ROUTING_KEYS = ("algorithm", "max_vlans", "max_vlans_limit", "chosen")


@dataclasses.dataclass(frozen=True)
class _Recorded:
    """An engine's choices as plan.json recorded them (Routes.choices)."""
    record_: tuple[tuple[str, object], ...]

    def record(self) -> dict[str, object]:
        return dict(self.record_)


def plan_of(doc: PlanDocument, source: Path) -> Plan:
    """`doc` (read from `source`, OUTDIR/plan.json) as a Plan; see the module docstring."""
    where = str(source)
    platforms = resolve_platforms(doc, source=where).by_switch
    names = list(doc.switches)
    coords = {s: tuple(sw.coord) if sw.coord is not None else None for s, sw in doc.switches.items()}
    topo_rec = doc.topology
    dims = topo_rec.get("dims") if isinstance(topo_rec.get("dims"), list) else None
    topology = Topology.from_parts(str(topo_rec.get("kind", "custom")), dims, names, coords,
                                   [(c.a, c.b) for c in doc.cabling])
    vlans = [RoutingVlan(sources=list(v.sources), links=frozenset((a, b) for a, b in v.links),
                         switches=frozenset(v.switches), id=v.id,
                         learning_subnet=str(v.learning_subnet) if v.learning_subnet else "")
             for v in doc.vlans]
    hosts = sorted((Host(name=h, switch=d.switch, port=d.port, mac=d.mac, interface=d.interface or "eth0",
                         index=d.index, vlan=d.vlan) for h, d in doc.hosts.items()), key=lambda h: h.index)
    parents = {s: (tree_parents(v.links, s) if v.links else {s: s}) for v in vlans for s in v.sources}
    routing = doc.routing
    routes = Routes(str(routing.get("algorithm", "unknown")), parents,
                    _Recorded(tuple((k, v) for k, v in routing.items() if k not in _ROUTING_KEYS)))
    host_count = {s: 0 for s in names}
    for h in hosts:
        host_count[h.switch] = host_count.get(h.switch, 0) + 1
    max_vlans = routing.get("max_vlans")
    metrics = compute_metrics(topology, routes, vlans, host_count,
                              {s: platforms[s].mac_capacity for s in names},
                              max_vlans if isinstance(max_vlans, int) else None)
    recorded = {f.name: doc.metrics[f.name] for f in dataclasses.fields(Metrics)
                if f.name in doc.metrics and not isinstance(doc.metrics[f.name], dict)}
    metrics = dataclasses.replace(metrics, **recorded)       # the plan's own figures, as written
    switches = {s: _switch(s, sw, platforms[s]) for s, sw in doc.switches.items()}
    cabling = [Cable(c.a, c.a_port, c.b, c.b_port, c.a_lag, c.b_lag) for c in doc.cabling]
    budget = Budget(int(max_vlans) if isinstance(max_vlans, int) else len(vlans),
                    str(routing.get("max_vlans_limit", "")), "routing.max_vlans", "")
    chosen = routing.get("chosen")
    return Plan(inventory=_inventory(doc, source), topology=topology, routes=routes, budget=budget,
                vlans=vlans, hosts=hosts, switches=switches, cabling=cabling, metrics=metrics,
                settings=doc.to_json()["settings"], warnings=list(doc.warnings),
                choice=str(chosen) if chosen is not None else None)


def _switch(name: str, sw: Any, platform: Any) -> SwitchPlan:
    ports = {p: PortPlan(p, d.role, host=d.host, neighbor=d.neighbor, lag=d.lag, pvid=d.pvid,
                         untagged=list(d.untagged or []), tagged=list(d.tagged or []))
             for p, d in sw.ports.items()}
    lags = {int(k): LagPlan(int(k), lag.neighbor, list(lag.members), list(lag.tagged)) for k, lag in sw.lags.items()}
    return SwitchPlan(name=name, platform=platform, mgmt=sw.mgmt, ssh_port=sw.ssh_port or 22,
                      coord=tuple(sw.coord) if sw.coord is not None else None, reserved=list(sw.reserved_ports),
                      ports=ports, lags=lags, host_attachment=sw.host_attachment)


def _inventory(doc: PlanDocument, source: Path) -> LoadedInventory:
    """What a page shows of the inventory; built without validation (model_construct): the
    values come from a validated plan.json, and nothing plans from them."""
    topo = doc.topology
    spec = Inventory.model_construct(
        name=doc.name or source.parent.name,
        topology=TopologySpec.model_construct(kind=topo.get("kind", "custom"),
                                              links_per_pair=topo.get("links_per_pair", 1),
                                              fanout=topo.get("fanout", 2)),
        site=SiteSpec(acknowledged_syntax=[Acknowledgment.model_validate(a.model_dump())
                                           for a in doc.acknowledged_syntax]))
    return LoadedInventory(source, spec, None)          # the page names plan.json, and its sha256
