"""A plan's backup VLANs for the fast failover (`routing.protection: links`): one VLAN per
backup tree of routing/protection.py, with the links of each routing VLAN it covers, and
what they cost (VLANs, MAC entries) and give (the load while failed over).

The backup VLANs are ordinary routing VLANs to everything downstream: their trees are
configured on the inter-switch ports (tagged) and every host port is a member (as of every
routing VLAN), and the hosts send their learning frames in them, so that every switch of a
backup knows every host before any failure. No host sends in one: a host's PVID is its
primary VLAN, until the watcher fails it over (docs/failures.md, "Fast failover").

Which backups: one per link of every tree (`per_link`: the tree with that link swapped for
the best one across the same cut, every other link kept, so the load while failed over is
close to a repair's) when the VLAN budget and every switch's MAC table allow it; else the
fewest trees that cover every link (`protect`: fewer VLANs, more load while failed over).
Measured on the seed torus: 26 backups, failed-over max load x1.97 of the plan's, against
8 backups and x4.88 (bench/protection.py prints it for every example inventory).
"""

from __future__ import annotations

from dataclasses import dataclass

from vlanroute.model.topology import Topology
from vlanroute.plan.vlans import RoutingVlan
from vlanroute.routing.engine import Routes
from vlanroute.model.links import link
from vlanroute.routing.protection import Primary, Protection, per_link, protect
from vlanroute.routing.trees import adjacency, max_load, reroot


@dataclass(frozen=True)
class ProtectionFigures:
    kind: str                            # "per-link" or "cover" (the module docstring)
    backup_vlans: int
    links_protected: int                 # (VLAN, link of its tree) covered by a backup
    links_unprotected: int               # bridges of the fabric in some VLAN's tree
    max_link_load_failed_over: float     # the worst single failed pair, its VLANs failed over

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "backup_vlans": self.backup_vlans, "links_protected": self.links_protected,
                "links_unprotected": self.links_unprotected,
                "max_link_load_failed_over": round(self.max_link_load_failed_over, 4)}


def _primaries(vlans: list[RoutingVlan]) -> list[Primary]:
    return [Primary(i, frozenset(link(a, b) for a, b in v.links), frozenset(v.switches), tuple(v.sources))
            for i, v in enumerate(vlans)]


def _fits(vlans: list[RoutingVlan], prot: Protection, spare_vlans: int, mac_capacity: dict[str, int],
          total_hosts: int) -> bool:
    """Whether the backups fit the VLAN budget and every switch's MAC table (a switch learns
    every host once per VLAN it is in, as plan/metrics.py counts)."""
    if len(prot.backups) > spare_vlans:
        return False
    count = {s: 0 for s in mac_capacity}
    for sw in [v.switches for v in vlans] + [b.switches for b in prot.backups]:
        for s in sw:
            count[s] = count.get(s, 0) + 1
    return all(total_hosts * n <= mac_capacity.get(s, 0) for s, n in count.items())


def backup_vlans(topo: Topology, vlans: list[RoutingVlan], spare_vlans: int, mac_capacity: dict[str, int],
                 total_hosts: int) -> tuple[list[RoutingVlan], Protection, str]:
    """The backup VLANs of `vlans` (ids not yet assigned: the caller numbers them after the
    routing VLANs), each with `protects`: per routing VLAN (by its index in `vlans`, until
    ids exist), the links of its tree it covers; the protection and its kind. Per link when
    it fits `spare_vlans` and the MAC tables, else the cover (which the caller checks)."""
    fabric = [link(a, b) for a, b in topo.simple().edges]
    primaries = _primaries(vlans)
    kind = "per-link"
    prot = per_link(fabric, primaries, topo.switches)
    if not _fits(vlans, prot, spare_vlans, mac_capacity, total_hosts):
        kind = "cover"
        prot = protect(fabric, primaries, topo.switches)
    out = [RoutingVlan(sources=[], links=b.links, switches=b.switches,
                       protects={i: frozenset(lks) for i, lks in b.covers.items()}) for b in prot.backups]
    return out, prot, kind


def figures(topo: Topology, routes: Routes, vlans: list[RoutingVlan], prot: Protection, kind: str,
            host_count: dict[str, int]) -> ProtectionFigures:
    """What the backups give: the worst load over every single dead pair with the VLANs that
    used it failed over (their sources rerooted on the backup trees). Counted per VLAN and
    source, so a switch whose hosts send in several VLANs (routing below the switch,
    `RoutingVlan.shares`) moves only the hosts of the VLANs the dead pair hits."""
    primaries = _primaries(vlans)
    cables = topo.arc_cables()
    worst = 0.0
    for a, b in sorted({link(x, y) for x, y in topo.simple().edges}):
        dead = (a, b)
        trees: dict[str, list[tuple[dict[str, str], int]]] = {}
        crossed = False
        for i, v in enumerate(vlans):
            hit = dead in primaries[i].links
            backup = prot.backup_for(i, dead) if hit else None
            for s in v.sources:
                n = v.shares.get(s, host_count.get(s, 0))
                if hit and backup is None:
                    crossed = True          # a tree still crosses it: an unprotected link (a bridge)
                tree = reroot(adjacency(backup.links if backup is not None else v.links), s)
                trees.setdefault(s, []).append((tree, n))
        if crossed:
            continue
        parents = {s: ts[0][0] for s, ts in trees.items()}
        splits = {s: tuple(ts) for s, ts in trees.items()}
        left = {arc: n for arc, n in cables.items() if {arc[0], arc[1]} != {a, b}}
        worst = max(worst, max_load(parents, host_count, left, splits))
    covered = sum(len(lks) for b in prot.backups for lks in b.covers.values())
    return ProtectionFigures(kind, len(prot.backups), covered, sum(len(x) for x in prot.unprotected.values()), worst)
