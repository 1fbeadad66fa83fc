"""A published plan failed over around dead neighbour pairs: the hit VLANs' sources moved
onto backup VLANs (routing.protection, plan/protection.py), nothing else changed.

The fast failover of docs/failures.md. A routing VLAN whose tree uses a dead pair has its
sources moved onto a VLAN whose tree avoids every dead pair and still joins every switch
with hosts: the backup planned for that link first (`protects`), else the first other backup (by id)
that does (after a second failure, say). The only lines that change on the
switches are the PVIDs of the moved sources' host ports: no inter-switch membership
changes, so no VLAN can get a loop in any state of the push, and the switches next to the
failure need not be reached. The hosts need nothing: their learning frames already cover
every backup VLAN (every switch of a backup knows every host there before the failure),
and the hosts' tables keep their rows (the `vlan` column, which the host program only
shows for a host attached untagged, follows the PVID).

What cannot fail over is said, never assumed: a VLAN with no backup that avoids every dead
pair, a source whose hosts are attached as trunks (the host, not the switch, would have to
change its VLAN), a dead switch (its neighbours must change: `repair` does it). The record
is repair.json's format with `failover` (what moved where) and `not_failed_over`, so push,
rollback and the watcher treat it as any repaired bundle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vlanroute.bundle.document import PlanDocument, plan_document
from vlanroute.bundle.failures import Failures, dead_cables, degraded, lost_capacity
from vlanroute.bundle.repaired import REPAIR_FORMAT, Repaired, metrics_of, routing_vlans_of
from vlanroute.model.topology import Topology
from vlanroute.routing.bounds import load_bounds
from vlanroute.model.links import Link, link
from vlanroute.routing.trees import adjacency, reroot
from vlanroute.routing.repair.model import RepairResult

FAILOVER_FORMAT = REPAIR_FORMAT


@dataclass(frozen=True)
class Move:
    vlan: int                   # the routing VLAN whose tree uses a dead pair
    backup: int                 # the VLAN its sources send in now
    sources: tuple[str, ...]    # the switches whose host ports change PVID
    ports: int                  # how many host ports change

    def to_json(self) -> dict[str, Any]:
        return {"vlan": self.vlan, "backup": self.backup, "sources": list(self.sources), "ports": self.ports}


def dead_pairs(failures: Failures, doc: PlanDocument) -> set[Link]:
    """The neighbour pairs with no live cable left (a LAG that keeps a cable is no dead pair)."""
    fabric = degraded(failures, doc)
    return {lk for lk, n in fabric.cables.items() if n == 0}


def _joins(links: frozenset[Link], dead: set[Link], need: set[str]) -> bool:
    """Whether a tree without the dead pairs still joins every switch of `need`."""
    if len(need) <= 1:
        return True
    start = next(iter(need))
    return need <= {start, *reroot(adjacency(lk for lk in links if link(*lk) not in dead), start)}


@dataclass(frozen=True)
class Choice:
    """What a failover around some dead pairs moves: per (source switch, routing VLAN its
    host ports send in), the backup they send in now; the moves by VLAN; what cannot move."""
    new_pvid: dict[tuple[str, int], int]
    moves: list[Move]
    stuck: list[dict[str, Any]]


def choose(doc: PlanDocument, dead: set[Link], dead_switches: frozenset[str] = frozenset()) -> Choice:
    """The failover's choice around the dead pairs (the module docstring), without the
    document: `failover_document` writes it, the what-if (bundle/guarantees.py) prices it.
    `dead_switches`: switches that died (their pairs are in `dead`): their hosts are lost,
    so a tree needs to join only the others, and their own host ports move nowhere."""
    backups = {v.id: v for v in doc.vlans if v.protects}
    need = {h.switch for h in doc.hosts.values()} - dead_switches
    attachment = {s: rec.host_attachment for s, rec in doc.switches.items()}
    trees = {v.id: frozenset(link(a, b) for a, b in v.links) for v in doc.vlans}
    moves: list[Move] = []
    stuck: list[dict[str, Any]] = []
    # (switch, VLAN its host ports send in) -> the backup they send in now: per VLAN, since
    # routed below the switch a switch's hosts send in several and only the hit ones move.
    new_pvid: dict[tuple[str, int], int] = {}
    for v in doc.vlans:
        sources = [s for s in v.sources if s not in dead_switches]
        # Hit: the dead pairs split its tree between switches with hosts (a dead switch that
        # was a leaf of it, or a dead pair towards no host, leaves it whole for the others).
        if not sources or not (trees[v.id] & dead) or _joins(trees[v.id], dead, need):
            continue
        movable = [s for s in sources if attachment.get(s) == "untagged"]
        trunk = [s for s in sources if s not in movable]
        if trunk:
            stuck.append({"vlan": v.id, "sources": trunk, "why": "hosts attached as trunks: the hosts would change"})
        if not movable:
            continue
        planned = [b.id for b in backups.values() for p in b.protects if p.vlan == v.id
                   and trees[v.id] & dead <= {link(x, y) for x, y in p.links}]
        others = [b for b in backups if b not in planned]
        chosen = next((b for b in [*planned, *others] if _joins(trees[b], dead, need)), None)
        if chosen is None:
            stuck.append({"vlan": v.id, "sources": movable, "why": "no backup VLAN avoids every dead pair"})
            continue
        for s in movable:
            new_pvid[(s, v.id)] = chosen
        ports = sum(1 for h in doc.hosts.values() if h.switch in movable and h.vlan == v.id)
        moves.append(Move(v.id, chosen, tuple(movable), ports))
    return Choice(new_pvid, moves, stuck)


def failover_document(doc: PlanDocument, failures: Failures) -> Repaired:
    """The failed-over plan and its record (the module docstring). PlanError when the plan
    has no backup VLANs or nothing it can fail over."""
    from vlanroute.errors import PlanError
    if not any(v.protects for v in doc.vlans):
        raise PlanError("the plan has no backup VLANs to fail over onto", field="routing.protection",
                        fix="plan with routing.protection: links (plan/protection.py), or heal with `vlanroute repair`")
    dead = dead_pairs(failures, doc)
    choice = choose(doc, dead, frozenset(failures.switches))
    new_pvid, moves, stuck = choice.new_pvid, choice.moves, choice.stuck
    if not moves:
        why = "; ".join(f"VLAN {x['vlan']}: {x['why']}" for x in stuck) or "no routing VLAN's tree uses a dead pair"
        raise PlanError(f"nothing to fail over around {failures.describe()}: {why}", field="failures",
                        fix="heal with `vlanroute repair`")
    new_doc = _document(doc, failures, new_pvid)
    fabric = degraded(failures, doc)
    topo = _live_topology(doc, fabric.cables, frozenset(failures.switches))
    vlans = routing_vlans_of(new_doc, {v.id: frozenset(link(a, b) for a, b in v.links) for v in new_doc.vlans}, fabric)
    metrics = metrics_of(new_doc, topo, vlans, fabric)
    data = new_doc.to_json()
    data["metrics"] = metrics.to_json()
    new_doc = plan_document(data, "the failed-over plan")
    host_count = {s: fabric.hosts.get(s, 0) for s in topo.switches}
    bound = load_bounds(topo, host_count, None).best
    record = _record(doc, failures, moves, stuck, metrics.max_link_load, bound, metrics.deadlock_free)
    trees = {v.id: frozenset(link(a, b) for a, b in v.links) for v in doc.vlans}
    result = RepairResult(trees, {}, {}, metrics.max_link_load, metrics.deadlock_free)
    warnings = [f"VLAN {x['vlan']} not failed over ({', '.join(x['sources'])}): {x['why']}" for x in stuck]
    if not metrics.deadlock_free:
        warnings.append("while failed over the plan is not deadlock-free under 802.3x PAUSE: "
                        "the balanced repair (`vlanroute repair`) should follow")
    return Repaired(new_doc, record, result, metrics, bound, [], None, warnings)


def retreed_document(doc: PlanDocument, failures: Failures, repaired: Repaired) -> Repaired:
    """The step between a failover and its balanced repair: the repair's VLAN trees with the
    failover's PVIDs (`repaired`: repair_document of `doc` for the same failures).

    Why a step of its own: from the failed-over fabric straight to the repair, a switch's
    change moves its hosts' PVIDs back into a repaired VLAN whose new links other switches
    have not added yet, and the transition has to cut host pairs (6,412 on the seed torus
    for sw1-sw2). The VLANs the repair changes are the hit ones, which no host sends in
    while failed over: their trees can change in any order without cutting anyone, and the
    PVIDs then move back onto whole trees, one host port at a time, with no cut either."""
    over = failover_document(doc, failures)
    new_pvid = {(s, int(m["vlan"])): int(m["backup"]) for m in over.record["failover"] for s in m["sources"]}
    data = _document(repaired.doc, failures, new_pvid).to_json()
    data["metrics"] = over.metrics.to_json()          # the traffic still runs as failed over
    new_doc = plan_document(data, "the repair's trees with the failover's PVIDs")
    record = {**repaired.record, "failover": over.record["failover"], "not_failed_over": over.record["not_failed_over"],
              "max_link_load": over.record["max_link_load"]}
    return Repaired(new_doc, record, repaired.result, over.metrics, over.bound, repaired.hosts_lost, None,
                    [*repaired.warnings, *over.warnings])


def _live_topology(doc: PlanDocument, cables: Mapping[Link, int], dead: frozenset[str] = frozenset()) -> Topology:
    return Topology.from_links([s for s in doc.switches if s not in dead],
                               [lk for lk, n in cables.items() for _ in range(n)])


def _document(doc: PlanDocument, failures: Failures, new_pvid: dict[tuple[str, int], int]) -> PlanDocument:
    data = doc.to_json()
    for v in data["vlans"]:
        v["sources"] = [s for s in v["sources"] if (s, v["id"]) not in new_pvid]
    order = {s: i for i, s in enumerate(doc.switches)}
    for v in data["vlans"]:
        joined = {s for (s, _), b in new_pvid.items() if b == v["id"]} - set(v["sources"])
        v["sources"] = sorted([*v["sources"], *joined], key=order.__getitem__)
    for h in data["hosts"].values():
        h["vlan"] = new_pvid.get((h["switch"], h["vlan"]), h["vlan"])
    for s, rec in data["switches"].items():
        for port in rec["ports"].values():
            if port["role"] == "host":
                port["pvid"] = new_pvid.get((s, port["pvid"]), port["pvid"])
    # A dead cable is not expected any more (cabling check and push's cabling gate would
    # refuse it as missing), as in a repaired plan; its ports keep their VLANs, which the
    # moved sources no longer send in across it.
    down = dead_cables(failures, doc)
    data["cabling"] = [c for i, c in enumerate(data["cabling"]) if i not in down]
    # A dead switch leaves the plan with its hosts, as in a repaired plan (push must not try
    # to reach it), and every VLAN's links to it; its neighbours' ports towards it carry no
    # VLAN any more, as in a repaired plan. Removals only, on dead ports: nothing sends
    # across them, and a removal can close no loop in any state of the push.
    gone = set(failures.switches)
    if gone:
        for v in data["vlans"]:
            v["links"] = [lk for lk in v["links"] if not set(lk) & gone]
            v["switches"] = [s for s in v["switches"] if s not in gone]
            v["sources"] = [s for s in v["sources"] if s not in gone]
        data["hosts"] = {h: rec for h, rec in data["hosts"].items() if rec["switch"] not in gone}
        data["switches"] = {s: rec for s, rec in data["switches"].items() if s not in gone}
        for rec in data["switches"].values():
            for port in [*rec["ports"].values(), *rec["lags"].values()]:
                if port.get("neighbor") in gone:
                    port["tagged"] = []
    data["warnings"] = list(data.get("warnings", [])) + [f"failed over around failures: {failures.describe()}"]
    return plan_document(data, "the failed-over plan")


def _record(doc: PlanDocument, failures: Failures, moves: list[Move], stuck: list[dict[str, Any]],
            max_load: float, bound: float, deadlock_free: bool) -> dict[str, Any]:
    gone = set(failures.switches)
    # A dead switch's neighbours change too: their ports towards it lose its VLANs.
    near = {s for s, rec in doc.switches.items() if s not in gone
            and (any(p.neighbor in gone for p in rec.ports.values()) or any(g.neighbor in gone for g in rec.lags.values()))}
    touched = sorted({s for m in moves for s in m.sources} | near, key=list(doc.switches).index)
    return {
        "format": FAILOVER_FORMAT,
        "plan": doc.name,
        "failures": failures.to_json(),
        "lost_capacity": lost_capacity(failures, doc),
        "broken_vlans": sorted(m.vlan for m in moves),
        "changes": [],
        # The hosts re-learn in no VLAN: they already learn in every backup.
        "affected_vlans": [],
        "switches_touched": touched,
        "hosts_lost": sorted((h for h, rec in doc.hosts.items() if rec.switch in gone), key=lambda h: doc.hosts[h].index),
        "links_added": 0,
        "extra_changes": 0,
        "max_link_load": round(max_load, 4),
        "link_load_lower_bound": round(bound, 4),
        "deadlock_free": deadlock_free,
        "deadlock_note": "",
        "full_replan": None,
        "push_order": touched,
        "push_order_loop_free": True,
        "down_cables": [[c.a, c.a_port, c.b, c.b_port] for i, c in enumerate(doc.cabling)
                        if i in dead_cables(failures, doc)],
        "failover": [m.to_json() for m in moves],
        "not_failed_over": stuck,
    }
