"""The plan: inventory -> topology -> routing -> VLANs -> port plan -> metrics -> verification.

`plan_from_file` is the one entry point every command uses. The result is vendor-neutral;
`Plan.to_document()` is the documented `vlanroute-plan/2` format (docs/plan-format.md) as
typed records (vlanroute.bundle.document), `Plan.to_json()` the same as a JSON object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlanroute.bundle.document import FORMAT, PlanDocument, plan_document
from vlanroute.drivers import family_of
from vlanroute.routing.budget import BudgetChoices
from vlanroute.routing.engine import Engine, Options, Routes, packing_of
from vlanroute.routing.choose import choose_routes
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import DEADLOCK_FREE_ADVICE, ENGINES
from vlanroute.routing.trees import arc_loads
from vlanroute.plan.acknowledged import check_acknowledgments
from vlanroute.plan.invariants import verify_plan
from vlanroute.plan.limits import Budget, check_limits, over_budget, vlan_budget
from vlanroute.errors import PlanError, UserError
from vlanroute.model.hosts import Host, build_hosts
from vlanroute.model.inventory import LoadedInventory, load_inventory
from vlanroute.plan.learning import assign_learning_addresses
from vlanroute.plan.schedule import schedule_for
from vlanroute.plan.metrics import Metrics, compute_metrics
from vlanroute.model.platforms import Platform, platform_json
from vlanroute.plan.ports import (Cable, SwitchPlan, apply_vlans, build_port_plan, mgmt_addresses,
                                resolve_platforms)
from vlanroute.model.topology import Topology, build_topology
from vlanroute.plan.protection import ProtectionFigures, backup_vlans, figures
from vlanroute.plan.vlans import RoutingVlan, pack_vlans

ADVICE_PREVIEW = 256   # the deadlock warning plans the advised engine up to this many switches


@dataclass
class Plan:
    inventory: LoadedInventory
    topology: Topology
    routes: Routes
    budget: Budget
    vlans: list[RoutingVlan]
    hosts: list[Host]
    switches: dict[str, SwitchPlan]
    cabling: list[Cable]
    metrics: Metrics
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    choice: str | None = None     # without routing.algorithm: which engine won, and why (routing/choose.py)

    @property
    def name(self) -> str:
        return self.inventory.spec.name

    def routing_record(self) -> dict[str, Any]:
        """plan.json's routing section: the engine, its choices, the VLAN budget and its limit;
        without routing.algorithm, `chosen`: why this engine's plan won (routing/choose.py)."""
        record = {"algorithm": self.routes.algorithm, **self.routes.choices.record(),
                  "max_vlans": self.budget.max_vlans, "max_vlans_limit": self.budget.binding}
        if self.choice is not None:
            record["chosen"] = self.choice
        return record

    def to_document(self) -> PlanDocument:
        """The plan as the typed `vlanroute-plan/2` document render writes to plan.json."""
        return plan_document(self._json_object(), f"the plan of {self.inventory.file}")

    def to_json(self) -> dict[str, Any]:
        return self.to_document().to_json()

    def _json_object(self) -> dict[str, Any]:
        spec = self.inventory.spec.topology
        topo: dict[str, Any] = {"kind": spec.kind, "links_per_pair": spec.links_per_pair}
        if self.topology.dims is not None:
            topo["dims"] = list(self.topology.dims)
        if spec.kind in ("ring", "complete", "tree"):
            topo["size"] = len(self.topology.switches)
        if spec.kind == "tree":
            topo["fanout"] = spec.fanout
        routing_ids = sorted(v.id for v in self.vlans)
        index = self.topology.indices()
        # Each VLAN's links in the order (index a, index b): the distinct links are sorted
        # once, then each VLAN sorts the ranks of its own (ints, compared in C) instead of
        # calling a key per link (512 VLANs of 1,023 links on a 32x32 torus). One [a, b]
        # per link, shared by the VLANs that use it: the document's validation copies them.
        every_link = sorted(set().union(*(v.links for v in self.vlans)), key=lambda l: (index[l[0]], index[l[1]]))
        rank = {link: i for i, link in enumerate(every_link)}
        pairs = [[a, b] for a, b in every_link]
        return {
            "format": FORMAT,
            "name": self.name,
            "inventory": str(self.inventory.path),
            "topology": topo,
            "routing": self.routing_record(),
            "settings": self.settings,
            "vlans": [{"id": v.id, "sources": v.sources,
                       "switches": sorted(v.switches, key=index.__getitem__),
                       "links": [pairs[i] for i in sorted(map(rank.__getitem__, v.links))],
                       "learning_subnet": v.learning_subnet,
                       **({"protects": [{"vlan": vid, "links": [pairs[i] for i in sorted(map(rank.__getitem__, lks))]}
                                        for vid, lks in sorted(v.protects.items())]} if v.protects else {})}
                      for v in self.vlans],
            "hosts": {h.name: {"switch": h.switch, "port": h.port, "vlan": h.vlan, "mac": h.mac,
                               "interface": h.interface, "index": h.index}
                      for h in self.hosts},
            "switches": {s: _switch_json(switch, routing_ids) for s, switch in self.switches.items()},
            "platforms": {name: platform_json(p) for name, p in
                          sorted({switch.platform.name: switch.platform for switch in self.switches.values()}.items())},
            "cabling": [{"a": c.a, "a_port": c.a_port, "b": c.b, "b_port": c.b_port, "a_lag": c.a_lag, "b_lag": c.b_lag}
                        for c in self.cabling],
            "metrics": self.metrics.to_json(),
            "warnings": self.warnings,
            "acknowledged_syntax": [{**ack.model_dump(), "date": ack.date.isoformat()}
                                    for ack in self.inventory.spec.site.acknowledged_syntax],
            "operation": (self.inventory.spec.operation.model_dump(mode="json")
                          if self.inventory.spec.operation.watch is not None else None),
        }


def _switch_json(switch: SwitchPlan, routing_ids: list[int]) -> dict[str, Any]:
    ports = {}
    for p in switch.ports.values():
        entry: dict[str, Any] = {"role": p.role}
        if p.role == "host":
            entry["host"] = p.host
            if not p.tagged and p.untagged == routing_ids:
                entry["pvid"] = p.pvid          # the rule: the document fills the lists in
                ports[p.name] = entry
                continue
        else:
            entry["neighbor"] = p.neighbor
            entry["lag"] = p.lag
        entry.update(pvid=p.pvid, untagged=p.untagged, tagged=p.tagged)
        ports[p.name] = entry
    return {
        "platform": switch.platform.name, "family": switch.platform.family,
        "host_attachment": switch.host_attachment, "mgmt": switch.mgmt, "ssh_port": switch.ssh_port,
        "coord": list(switch.coord) if switch.coord is not None else None,
        "reserved_ports": switch.reserved, "ports": ports,
        "lags": {str(lag.id): {"neighbor": lag.neighbor, "members": lag.members, "tagged": lag.tagged}
                 for lag in switch.lags.values()},
    }


def plan_from_file(path: str | Path, sets: tuple[str, ...] | list[str] = ()) -> Plan:
    """Load an inventory (with --set overrides) and build its verified plan."""
    return build_plan(load_inventory(path, sets))


def build_plan(inv: LoadedInventory) -> Plan:
    """The verified plan of an inventory: topology, hosts, platforms and ports; the VLAN
    budget (the tightest hardware limit, plan/limits.py) before routing, so the engine
    can route within it; the routes packed into VLANs (one loop-free tree each), numbered
    and put on the ports; metrics, limits and learning addresses; then every invariant
    (plan/invariants.py) and the engine's deadlock-freedom promise. A user's mistake is a
    UserError or PlanError naming the inventory field (or the --set that gave it); a broken
    invariant is a bug."""
    try:
        return _build_plan(inv)
    except UserError as err:
        raise inv.blame_sets(err) from None


def _build_plan(inv: LoadedInventory) -> Plan:
    file = inv.file
    check_acknowledgments(inv)
    topo = build_topology(inv)
    hosts = build_hosts(inv, topo)
    platforms = resolve_platforms(inv, topo)
    switches, cables = build_port_plan(inv, topo, hosts, platforms)
    settings, warnings = _settings(inv, platforms)

    host_count = {s: 0 for s in topo.switches}
    for h in hosts:
        host_count[h.switch] += 1

    budget = vlan_budget(inv, platforms, len(hosts))
    optimum = optimum_bound(topo, host_count)
    routes, choice = _route(inv, topo, host_count, budget, settings["flow_control"], optimum.value)
    vlans = pack_vlans(routes, topo, host_count)
    if len(vlans) > budget.max_vlans:
        raise over_budget(inv, len(vlans), budget, routes.algorithm)
    protection: ProtectionFigures | None = None
    if inv.spec.routing.protection == "links":
        # Backup VLANs for the fast failover, numbered after the routing VLANs.
        backups, prot, kind = backup_vlans(topo, vlans, budget.max_vlans - len(vlans),
                                           {s: sw.platform.mac_capacity for s, sw in switches.items()},
                                           sum(host_count.values()))
        if len(vlans) + len(backups) > budget.max_vlans:
            raise PlanError(f"routing.protection links needs {len(backups)} backup VLANs on top of the routing's "
                            f"{len(vlans)}: {len(vlans) + len(backups)}, more than the {budget.max_vlans} allowed "
                            f"({budget.binding})", file=inv.file, field="routing.protection",
                            fix="raise routing.max_vlans if the switches allow it, or leave protection out "
                                "(a dead pair is then healed by the repair, not failed over)")
        protection = figures(topo, routes, vlans, prot, kind, host_count)
        vlans = vlans + backups
    _assign_ids(inv, vlans)
    for v in vlans:             # the routing VLANs a backup covers, by their ids now
        v.protects = {vlans[i].id: lks for i, lks in v.protects.items()}
    apply_vlans(switches, hosts, vlans)
    metrics = compute_metrics(topo, routes, vlans, host_count,
                              {s: switch.platform.mac_capacity for s, switch in switches.items()}, budget.max_vlans,
                              optimum)
    metrics.protection = protection
    check_limits(file, vlans, switches, metrics.mac_entries, len(hosts))
    settings["learning"]["prefix_len"] = assign_learning_addresses(inv, hosts, vlans,
                                                                  mgmt_addresses(switches))
    verify_plan(topo, routes, vlans, hosts, switches, cables)
    if isinstance(routes.choices, BudgetChoices) and metrics.non_minimal_routes:
        warnings.append(f"routing within {routes.choices.max_vlans} VLANs: {metrics.non_minimal_routes} routes "
                        f"between switches are longer than a shortest path (mean stretch {metrics.mean_stretch:.3f})")
    engine = ENGINES.get(routes.algorithm)
    if engine is not None and engine.deadlock_free and not metrics.deadlock_free:
        raise PlanError(f"routing.algorithm {routes.algorithm} promises deadlock-free routes, but their channel "
                        "dependency graph has a cycle (a vlanroute bug)", file=file, field="routing.algorithm",
                        fix="please report it; meanwhile use another algorithm")
    if not metrics.deadlock_free and settings["flow_control"]:
        # Without 802.3x PAUSE a full queue drops frames instead of stopping the sender, so a
        # cycle of channel dependencies costs retransmissions, never a deadlock.
        advice = DEADLOCK_FREE_ADVICE
        warnings.append("the routes' channel dependency graph has a cycle: with IEEE 802.3x flow control (PAUSE) "
                        f"the network can deadlock under heavy load; routing.algorithm: {advice.name} is deadlock-free"
                        + _advice_cost(advice, topo, host_count, budget, metrics))
    if inv.spec.failures is not None:
        warnings.append("the inventory lists failures: this plan is of the intact fabric; to repair a published "
                        "plan around them: vlanroute repair OUTDIR --failures INVENTORY -o NEWDIR (docs/failures.md)")
    return Plan(inv, topo, routes, budget, vlans, hosts, switches, cables, metrics, settings, warnings, choice)


def _advice_cost(advice: Engine[Any], topo: Topology, host_count: dict[str, int], budget: Budget,
                 metrics: Metrics) -> str:
    """What the deadlock-free engine the warning recommends would cost on this fabric:
    planned here up to ADVICE_PREVIEW switches; beyond, what bench/quality.py measured."""
    if len(topo.switches) > ADVICE_PREVIEW:
        return (" (on tori about 1.6 to 1.8 times the lower bound on the max link load, up*/down* 5 to 14 times; "
                "plan it to see its VLAN count)")
    routes = advice.route(topo, host_count, advice.params(topo, Options(max_vlans=budget.max_vlans)))
    vlans = packing_of(routes, topo, host_count)
    peak = max(arc_loads(routes.parents, host_count, topo.arc_cables(), routes.splits).values(), default=0.0)
    bound = metrics.link_load_optimum
    fit = "" if len(vlans) <= budget.max_vlans else f", more than the {budget.max_vlans} that fit"
    return (f" and needs {len(vlans)} VLANs here{fit}, with a max link load of {peak:g}"
            + (f" (x{peak / bound:.3f} of {_bound_label(metrics)}; this plan x{metrics.max_link_load / bound:.3f})"
               if bound else ""))


def _bound_label(metrics: Metrics) -> str:
    kind = metrics.link_load_optimum_kind
    return "the optimum" if kind == "optimum" else f"the {kind} bound"


def _route(inv: LoadedInventory, topo: Topology, host_count: dict[str, int], budget: Budget,
           flow_control: bool, optimum: float) -> tuple[Routes, str | None]:
    """The routes of the engine routing.algorithm names (routing/registry.py), or without
    one the best plan of every engine (routing/choose.py) and why it won. An engine may
    refuse the topology or a setting; its messages name the inventory field, and this
    adds the file."""
    spec = inv.spec.routing
    options = Options(dimension_order=None if spec.dimension_order == "auto" else tuple(spec.dimension_order),
                      root=spec.root, max_vlans=budget.max_vlans)
    if spec.algorithm is None:
        if spec.root is not None:
            users = " or ".join(e.name for e in ENGINES.values() if "root" in e.reads)
            raise UserError(f"routing.root is only used by algorithm: {users}", file=inv.file, field="routing.root",
                            fix=f"set routing.algorithm: {users}, or remove routing.root")
        try:
            choice = choose_routes(topo, host_count, list(ENGINES.values()), options, flow_control, optimum)
        except UserError as exc:
            raise type(exc)(exc.message, file=inv.file, field=exc.field, fix=exc.fix) from None
        return choice.routes, choice.reason
    if spec.algorithm not in ENGINES:
        *rest, last = [repr(n) for n in ENGINES]
        raise UserError(f"Input should be {', '.join(rest)} or {last}" if rest else f"Input should be {last}",
                        file=inv.file, field="routing.algorithm",
                        fix="name one of the engines `vlanroute algorithms` lists, or leave it out for the best plan")
    engine = ENGINES[spec.algorithm]
    if spec.root is not None and "root" not in engine.reads:
        users = " or ".join(e.name for e in ENGINES.values() if "root" in e.reads)
        raise UserError(f"routing.root is only used by algorithm: {users}", file=inv.file, field="routing.root",
                        fix=f"remove it, or set routing.algorithm: {users}")
    refusal = engine.refuses(topo)
    if refusal is not None:
        raise UserError(refusal.reason, file=inv.file, field="routing.algorithm", fix=refusal.fix)
    try:
        return engine.route(topo, host_count, engine.params(topo, options)), None
    except UserError as exc:
        if exc.file is not None:
            raise
        raise type(exc)(exc.message, file=inv.file, field=exc.field, fix=exc.fix) from None


def _assign_ids(inv: LoadedInventory, vlans: list[RoutingVlan]) -> None:
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
    for p in used.values():
        caps = family_of(p).capabilities
        if s.lag_hash not in caps.lag_hash_modes:
            why = caps.lag_hash_refused.get(s.lag_hash, f"{family_of(p).title} has no such LAG hash")
            raise PlanError(f"LAG hash '{s.lag_hash}' on {p.name}: {why}", file=inv.file,
                            field="settings.lag_hash",
                            fix=f"use one of: {', '.join(sorted(caps.lag_hash_modes)) or '(none)'}")
    no_eee = [p.name for p in used.values() if not family_of(p).capabilities.eee]
    if s.eee and no_eee:
        warnings.append("settings.eee is on but " + ", ".join(no_eee) + " has no EEE setting; ignored there")
    try:
        sched = schedule_for(aging, s.learning.interval, s.learning.splay)
    except UserError as exc:   # the same rule render applies; name the inventory file here
        raise UserError(exc.message, file=inv.file, field=exc.field, fix=exc.fix) from None
    interval, splay = sched.interval_s, sched.splay_s
    return {
        "aging_time": aging, "flow_control": s.flow_control, "eee": s.eee, "lag_hash": s.lag_hash,
        "host_attachment": s.host_attachment,
        "learning": {"pool": str(s.learning.pool), "method": s.learning.method,
                     "interface_prefix": s.learning.interface_prefix,
                     "interval_s": interval, "splay_s": splay},
    }, warnings
