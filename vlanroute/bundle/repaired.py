"""A published plan, repaired around failures: the new plan document and repair.json.

`repair_document` reads the VLAN trees of plan.json, repairs the broken ones
(routing/repair/engine.py) and writes them back into a copy of the document: the routing VLANs
keep their ids, sources and learning subnets, every host keeps its switch, port, PVID and
index (so its learning address and its row of the host tables), and the inter-switch ports
and LAGs carry exactly the VLANs whose trees use their link. A dead switch leaves the plan
with its hosts (reported lost) and its cables; a dead pair's cables leave the cabling too
(repair.json's `down_cables` lists them), since the cabling check and push's cabling gate
would otherwise expect them.

The metrics are those of plan/metrics.py on the degraded fabric, and `full_replan` gives
the same figures for a plan of the degraded fabric from scratch, for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vlanroute.bundle.document import PlanDocument, plan_document
from vlanroute.bundle.failures import Failures, dead_cables, degraded, lost_capacity
from vlanroute.model.topology import Topology
from vlanroute.plan.metrics import Metrics, compute_metrics
from vlanroute.plan.vlans import RoutingVlan
from vlanroute.routing.bounds import load_bounds
from vlanroute.routing.choose import collector_paused
from vlanroute.routing.engine import Options, Routes, packing_of
from vlanroute.routing.registry import ENGINES, default_engine
from vlanroute.model.links import link
from vlanroute.routing.repair.engine import repair
from vlanroute.routing.repair.model import Degraded, RepairResult, Tree
from vlanroute.routing.repair.push_order import push_order
from vlanroute.routing.shortest import ShortestParams
from vlanroute.routing.turns import TurnsParams
from vlanroute.routing.trees import tree_parents

REPAIR_FILE = "repair.json"
REPAIR_FORMAT = "vlanroute-repair/1"


@dataclass
class Replan:
    """A plan of the degraded fabric from scratch: what the minimal repair is compared with."""
    algorithm: str
    vlan_count: int
    max_link_load: float
    deadlock_free: bool
    hosts_new_pvid: int          # hosts whose PVID would change (VLAN ids given in order)
    trees_changed: int           # VLANs whose tree differs from the published one (all, usually)

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "vlan_count": self.vlan_count,
                "max_link_load": round(self.max_link_load, 4), "deadlock_free": self.deadlock_free,
                "hosts_new_pvid": self.hosts_new_pvid, "trees_changed": self.trees_changed}


@dataclass
class Repaired:
    doc: PlanDocument                 # the repaired plan
    record: dict[str, Any]            # repair.json
    result: RepairResult
    metrics: Metrics
    bound: float                      # the degraded fabric's lower bound on the max load
    hosts_lost: list[str]
    replan: Replan | None
    warnings: list[str] = field(default_factory=list)


def vlan_shares(doc: PlanDocument) -> dict[int, tuple[tuple[str, int], ...]]:
    """Routing below the switch: for each VLAN, its sources that send only some of their
    hosts in it, with how many (from the hosts' VLANs, their ports' PVIDs)."""
    count: dict[tuple[str, int], int] = {}
    total: dict[str, int] = {}
    for h in doc.hosts.values():
        count[(h.switch, h.vlan)] = count.get((h.switch, h.vlan), 0) + 1
        total[h.switch] = total.get(h.switch, 0) + 1
    return {v.id: tuple((s, count.get((s, v.id), 0)) for s in v.sources
                        if count.get((s, v.id), 0) < total.get(s, 0)) for v in doc.vlans}


def trees_of(doc: PlanDocument) -> list[Tree]:
    shares = vlan_shares(doc)
    return [Tree(v.id, tuple(v.sources), frozenset(link(a, b) for a, b in v.links), shares[v.id]) for v in doc.vlans]


def degraded_topology(doc: PlanDocument, fabric: Degraded) -> Topology:
    """The live switches and cables as a topology (one cable per live cable)."""
    alive = [s for s in doc.switches if s not in fabric.dead_switches]
    cables = [l for l, n in fabric.cables.items() for _ in range(n)
              if l[0] not in fabric.dead_switches and l[1] not in fabric.dead_switches]
    return Topology.from_links(alive, cables)


def routing_vlans_of(doc: PlanDocument, trees: dict[int, frozenset[tuple[str, str]]],
                   fabric: Degraded) -> list[RoutingVlan]:
    out = []
    shares = vlan_shares(doc)
    for v in doc.vlans:
        links = trees[v.id]
        nodes = {s for l in links for s in l} or {s for s, n in fabric.hosts.items() if n}
        out.append(RoutingVlan(sources=[s for s in v.sources if s not in fabric.dead_switches],
                               links=frozenset(links), switches=frozenset(nodes), id=v.id,
                               shares={s: n for s, n in shares[v.id] if s not in fabric.dead_switches}))
    return out


def metrics_of(doc: PlanDocument, topo: Topology, vlans: list[RoutingVlan], fabric: Degraded) -> Metrics:
    """plan/metrics.py's figures for these trees on the degraded fabric."""
    hosts = {s: fabric.hosts.get(s, 0) for s in topo.switches}
    parents: dict[str, dict[str, str]] = {}
    split: dict[str, list[tuple[dict[str, str], int]]] = {}
    for v in vlans:
        for s in v.sources:
            if hosts.get(s):
                tree = tree_parents(v.links, s) if v.links else {s: s}
                parents.setdefault(s, tree)
                if s in v.shares:           # routing below the switch: its hosts in this VLAN
                    split.setdefault(s, []).append((tree, v.shares[s]))
    routes = Routes(str(doc.routing.get("algorithm", "repair")), parents, _NoChoices(),
                    splits={s: tuple(shares) for s, shares in split.items()})
    caps = {s: doc.platforms[doc.switches[s].platform].mac_capacity if doc.switches[s].platform in doc.platforms
            else 1 << 30 for s in topo.switches}
    return compute_metrics(topo, routes, vlans, hosts, caps, doc.routing.get("max_vlans"))


class _NoChoices:
    def record(self) -> dict[str, object]:
        return {}


def repair_document(doc: PlanDocument, failures: Failures, extra_changes: int = 0,
                    compare: bool = True) -> Repaired:
    """The repaired plan and its repair.json record; see the module docstring."""
    fabric = degraded(failures, doc)
    trees = trees_of(doc)
    was_free = bool(doc.metrics.get("deadlock_free", False))
    result = repair(trees, fabric, keep_deadlock_free=was_free, extra_changes=extra_changes)
    if result.unrepairable:
        # Before any document: a plan with a VLAN in parts is no plan (bundle/document.py).
        raise_unrepairable(result)
    dead = set(failures.switches)
    lost = sorted((h for h, rec in doc.hosts.items() if rec.switch in dead), key=lambda h: doc.hosts[h].index)
    topo = degraded_topology(doc, fabric)
    vlans = routing_vlans_of(doc, result.trees, fabric)
    warnings: list[str] = []
    metrics = metrics_of(doc, topo, vlans, fabric)
    host_count = {s: fabric.hosts.get(s, 0) for s in topo.switches}
    bound = load_bounds(topo, host_count, None).best if _connected(topo) else 0.0
    if result.deadlock_note:
        warnings.append(result.deadlock_note)
    new_doc = _document(doc, failures, result, fabric, metrics)
    replan = full_replan(doc, topo, host_count) if compare and _connected(topo) else None
    record = _record(doc, failures, result, lost, metrics, bound, replan)
    return Repaired(new_doc, record, result, metrics, bound, lost, replan, warnings)


def raise_unrepairable(result: RepairResult) -> None:
    from vlanroute.errors import PlanError
    why = "; ".join(f"VLAN {vid}: {w}" for vid, w in sorted(result.unrepairable.items()))
    raise PlanError(f"no repair joins every VLAN's hosts again: {why}", field="failures",
                    fix="the live fabric is cut in parts: bring a cable or switch back, or mark the "
                        "switches of the cut-off part as failed too")


def _connected(topo: Topology) -> bool:
    import networkx as nx
    g = topo.simple()
    return g.number_of_nodes() > 0 and nx.is_connected(g)


def _document(doc: PlanDocument, failures: Failures, result: RepairResult, fabric: Degraded,
              metrics: Metrics) -> PlanDocument:
    data = doc.to_json()
    dead = set(failures.switches)
    order = {s: i for i, s in enumerate(doc.switches)}
    on_link: dict[tuple[str, str], list[int]] = {}
    for vid, links in result.trees.items():
        for a, b in links:
            on_link.setdefault((a, b), []).append(vid)
    for v in data["vlans"]:
        ordered = sorted(result.trees[v["id"]], key=lambda l: tuple(sorted((order[l[0]], order[l[1]]))))
        v["links"] = [[a, b] if order[a] < order[b] else [b, a] for a, b in ordered]
        nodes = {s for l in ordered for s in l} or {s for s in v["switches"] if s not in dead}
        v["switches"] = sorted(nodes, key=order.__getitem__)
        v["sources"] = [s for s in v["sources"] if s not in dead]
    data["hosts"] = {h: rec for h, rec in data["hosts"].items() if rec["switch"] not in dead}
    data["switches"] = {s: rec for s, rec in data["switches"].items() if s not in dead}
    for s, rec in data["switches"].items():
        for port in rec["ports"].values():
            if port["role"] != "host":
                port["tagged"] = sorted(on_link.get(link(s, port["neighbor"]), []))
        for lag in rec["lags"].values():
            lag["tagged"] = sorted(on_link.get(link(s, lag["neighbor"]), []))
    # The repaired plan is the degraded fabric's: a dead cable is not expected any more
    # (cabling check and push's cabling gate would refuse it as missing).
    down = dead_cables(failures, doc)
    data["cabling"] = [c for i, c in enumerate(data["cabling"]) if i not in down]
    data["metrics"] = metrics.to_json()
    data["warnings"] = list(data.get("warnings", [])) + [f"repaired around failures: {failures.describe()}"]
    return plan_document(data, "the repaired plan")


def _record(doc: PlanDocument, failures: Failures, result: RepairResult, lost: list[str],
            metrics: Metrics, bound: float, replan: Replan | None) -> dict[str, Any]:
    changes = [{"vlan": c.vid, "forced": c.forced, "removed": [list(l) for l in c.removed],
                "added": [list(l) for l in c.added]} for c in sorted(result.changes.values(), key=lambda c: c.vid)]
    old = {t.vid: t.links for t in trees_of(doc)}
    alive = [s for s in doc.switches if s not in failures.switches]
    order, safe = push_order(old, result.trees, alive)
    down = dead_cables(failures, doc)
    return {
        "format": REPAIR_FORMAT,
        "plan": doc.name,
        "failures": failures.to_json(),
        "lost_capacity": lost_capacity(failures, doc),
        "broken_vlans": sorted(c.vid for c in result.changes.values() if c.forced),
        "changes": changes,
        "affected_vlans": sorted(result.changes),
        "switches_touched": result.switches_touched(),
        "hosts_lost": lost,
        "links_added": result.links_added,
        "extra_changes": result.extra_used,
        "max_link_load": round(metrics.max_link_load, 4),
        "link_load_lower_bound": round(bound, 4),
        "deadlock_free": result.deadlock_free,
        "deadlock_note": result.deadlock_note,
        "full_replan": replan.to_json() if replan else None,
        "push_order": order,
        "push_order_loop_free": safe,
        # The cables the repair routes around: a push of this bundle still checks every step
        # with them (a dead cable may come back at any moment; device/change.py).
        "down_cables": [[c.a, c.a_port, c.b, c.b_port] for i, c in enumerate(doc.cabling)
                        if i in down],
        "failover": [],             # a repair moves no source (bundle/failedover.py does)
        "not_failed_over": [],
    }


def full_replan(doc: PlanDocument, topo: Topology, host_count: dict[str, int]) -> Replan:
    """The plan of the degraded fabric from scratch with the default engine for it (a
    damaged grid is a custom topology: shortest paths)."""
    engine = default_engine(topo)
    wanted = doc.routing.get("algorithm")
    if isinstance(wanted, str) and wanted in ENGINES and ENGINES[wanted].refuses(topo) is None:
        engine = ENGINES[wanted]
    max_vlans = int(doc.routing.get("max_vlans", 4094))
    # the default plan's quick search: this is on an incident's critical path (a 64-switch
    # degraded torus: 6 s of CPU for acyclic's quick search, 20 s for its full one)
    params = engine.params(topo, Options(max_vlans=max_vlans, quick=True))
    if isinstance(params, (ShortestParams, TurnsParams)):
        # one tree per switch: the comparison counts the hosts whose PVID a re-plan changes,
        # and is on the repair's critical path
        params = replace(params, spread=False) if isinstance(params, ShortestParams) else replace(params, below=False)
    with collector_paused():            # as the default's search (routing/choose.py)
        routes = engine.route(topo, host_count, params)
    packed = packing_of(routes, topo, host_count)
    first = min((v.id for v in doc.vlans), default=2)
    vlans = [RoutingVlan(sources=list(t.sources), links=t.links, switches=t.switches, id=first + i)
             for i, t in enumerate(packed)]
    caps = {s: 1 << 30 for s in topo.switches}
    m = compute_metrics(topo, routes, vlans, host_count, caps, max_vlans)
    new_pvid = {s: v.id for v in vlans for s in v.sources}
    moved = sum(1 for h in doc.hosts.values() if h.switch in new_pvid and new_pvid[h.switch] != h.vlan)
    old_trees = {v.id: frozenset(link(a, b) for a, b in v.links) for v in doc.vlans}
    changed = sum(1 for v in vlans if old_trees.get(v.id) != frozenset(link(a, b) for a, b in v.links))
    changed += max(0, len(doc.vlans) - len(vlans))
    return Replan(engine.name, len(vlans), m.max_link_load, m.deadlock_free, moved, changed)
