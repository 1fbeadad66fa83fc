"""Metrics of a plan under all-to-all host traffic (one unit per ordered pair of distinct hosts).

A load is per cable and direction: what a neighbour pair carries one way, divided by its
parallel cables (they form a LAG, whose hash spreads the flows over its members).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import networkx as nx

from vlanroute.routing.bounds import budget_lower_bound
from vlanroute.routing.optimum import Optimum, optimum_bound
from vlanroute.routing.engine import Routes
from vlanroute.routing.trees import bfs_distances, bfs_order, pruned_parents, spans_exactly
from vlanroute.model.topology import Topology
from vlanroute.plan.vlans import RoutingVlan

if TYPE_CHECKING:
    from vlanroute.plan.protection import ProtectionFigures


@dataclass
class Metrics:
    switches: int
    hosts: int
    vlan_count: int
    inter_switch_links: int
    diameter: int
    mean_hops: float
    max_link_load: float
    link_load_lower_bound: float
    max_mac_entries: int
    mac_capacity: int
    deadlock_free: bool
    mean_stretch: float                         # routed hops / shortest hops, over all host pairs
    non_minimal_routes: int                     # ordered switch pairs routed longer than shortest
    mac_entries: dict[str, int]
    link_loads: dict[tuple[str, str], float]   # directed neighbour pair -> load per cable
    link_load_lower_bound_budget: float = 0.0   # no routing within the VLAN budget does better
    link_load_optimum: float = 0.0              # no routing at all does better (routing/optimum.py)
    link_load_optimum_kind: str = "optimum"     # "optimum" (the LP), else the cheap bound it fell back to
    # routing.protection links: the backup VLANs' figures (plan/protection.py); None: no protection
    protection: ProtectionFigures | None = None

    @property
    def load_over_optimum(self) -> float:
        """max_link_load over the best bound the plan has (1.0 without traffic)."""
        return self.max_link_load / self.link_load_optimum if self.link_load_optimum else 1.0

    def to_json(self) -> dict[str, object]:
        return {
            "switches": self.switches, "hosts": self.hosts, "vlan_count": self.vlan_count,
            "inter_switch_links": self.inter_switch_links, "diameter": self.diameter,
            "mean_hops": round(self.mean_hops, 4), "max_link_load": round(self.max_link_load, 4),
            "link_load_lower_bound": round(self.link_load_lower_bound, 4),
            "max_mac_entries": self.max_mac_entries, "mac_capacity": self.mac_capacity,
            "deadlock_free": self.deadlock_free,
            "mean_stretch": round(self.mean_stretch, 4), "non_minimal_routes": self.non_minimal_routes,
            "link_load_lower_bound_budget": round(self.link_load_lower_bound_budget, 4),
            "link_load_optimum": round(self.link_load_optimum, 4),
            "link_load_optimum_kind": self.link_load_optimum_kind,
            "load_over_optimum": round(self.load_over_optimum, 4),
            **({"protection": self.protection.to_json()} if self.protection is not None else {}),
        }


def compute_metrics(topo: Topology, routes: Routes, vlans: list[RoutingVlan], host_count: dict[str, int],
                    mac_capacity: dict[str, int], max_vlans: int | None = None,
                    optimum: Optimum | None = None) -> Metrics:
    """The plan's figures; only routes between switches with hosts carry traffic.

    - max_link_load: the largest load of one cable in one direction.
    - link_load_lower_bound = D / (2 C): D is the sum over ordered host pairs of their hop
      distance (shortest path between their switches; 0 on the same switch), C the number
      of inter-switch cables. A lower bound of max_link_load for every routing, minimal
      or not: each pair's unit crosses at least its distance in cable-directions, so the
      loads times their cables sum to at least D over the 2 C cable-directions, and the
      largest per-cable load is at least that sum divided by 2 C. A minimal routing that
      loads every cable-direction alike reaches it.
    - deadlock_free: the channel dependency graph is acyclic. Its nodes are the channels,
      the directed neighbour pairs (802.3x PAUSE stops a whole port, whatever the VLAN),
      with an edge p->q => q->r wherever a route crosses p, q, r in that order: a frame
      holding p->q waits for q->r. Dally and Seitz (IEEE Trans. Computers C-36(5), 1987):
      with no cycle, no set of channels can wait for each other for ever, so the routing
      is deadlock-free; a cycle means a deadlock is possible under heavy load.
    - mean_hops: routed hops averaged over ordered pairs of distinct hosts; mean_stretch:
      routed hops / shortest hops, both summed over ordered host pairs; non_minimal_routes:
      ordered pairs of switches with hosts routed over more hops than a shortest path.
    - diameter: the largest hop distance between any two switches.
    - mac_entries: a switch learns every host once per VLAN it is in (per-VLAN learning,
      every host's learning broadcast reaches every switch of every VLAN): hosts x its
      VLANs; mac_capacity: the smallest MAC table of the plan's switches.
    - link_load_optimum: the least maximum load of any routing at all, splittable flows
      included (the multicommodity-flow LP of routing/optimum.py), where the LP fits its
      size limit (link_load_optimum_kind "optimum"); beyond, the best of the distance,
      switch and bridge bounds (routing/bounds.py), and the kind names which.
    - link_load_lower_bound_budget: a lower bound of max_link_load for every routing
      within `max_vlans` VLANs, the plan's VLAN budget (None: no limit; routing/bounds.py).
    """
    simple = topo.simple()
    cables = topo.arc_cables()
    host_switches = {s for s, n in host_count.items() if n > 0}
    total_hosts = sum(host_count.values())

    # Shortest-path distances between host switches: the lower bound, the diameter, stretch.
    dist_sum = 0
    diameter = 0
    shortest: dict[str, dict[str, int]] = {}
    adj = {n: list(simple.adj[n]) for n in simple.nodes}
    for s in topo.switches:
        dist = bfs_distances(adj, s)
        diameter = max(diameter, max(dist.values()))
        if s in host_switches:
            shortest[s] = dist
            hs = host_count[s]
            dist_sum += hs * sum(host_count.get(t, 0) * d for t, d in dist.items())

    load: dict[tuple[str, str], float] = {}
    hop_sum = 0
    non_minimal = 0
    deps: set[tuple[str, str, str]] = set()       # (a, b, c): channel a->b waits for b->c
    longer: set[tuple[str, str]] = set()          # split sources: (src, dst) routed longer by some tree
    for src, tree, senders in routes.senders(host_count):
        # The part of src's tree on the way to switches with hosts: the rest carries nothing.
        # A tree over exactly the switches with hosts (every switch has hosts: the common
        # case) is its own pruned tree; pruning it would only copy it.
        if not spans_exactly(tree, src, host_switches):
            tree = pruned_parents(tree, src, host_switches)
        order = bfs_order(tree, src)
        rest = order[1:]
        below = {v: host_count.get(v, 0) for v in order}     # hosts in the subtree of v
        for v in reversed(rest):
            below[tree[v]] += below[v]
        split = src in routes.splits
        dist = shortest[src] if split else shortest.pop(src)      # popped: 1,024 of them on a 32x32 torus
        depth = {src: 0}
        for v in rest:                # parents before children: depth[p] is known
            p = tree[v]
            d = depth[p] + 1
            depth[v] = d
            arc = (p, v)
            load[arc] = load.get(arc, 0.0) + senders * below[v]
            hop_sum += senders * host_count.get(v, 0) * d
            if v in host_switches and d > dist[v]:
                if not split:
                    non_minimal += 1
                else:
                    longer.add((src, v))
            if p != src:
                deps.add((tree[p], p, v))   # one flat triple per dependency: cheaper than pairs of pairs
    non_minimal += len(longer)
    per_cable = {k: v / cables[k] for k, v in load.items()}

    total_cables = topo.graph.number_of_edges()
    lower = dist_sum / (2 * total_cables) if total_cables else 0.0
    pairs = total_hosts * (total_hosts - 1)

    in_vlans = {s: 0 for s in topo.switches}
    for vlan in vlans:
        for s in vlan.switches:
            in_vlans[s] += 1
    mac_entries = {s: total_hosts * n for s, n in in_vlans.items()}

    if optimum is None:
        optimum = optimum_bound(topo, host_count)
    cdg = nx.DiGraph()
    cdg.add_edges_from(((a, b), (b, c)) for a, b, c in deps)
    return Metrics(
        switches=len(topo.switches), hosts=total_hosts, vlan_count=len(vlans),
        inter_switch_links=total_cables, diameter=diameter,
        mean_hops=hop_sum / pairs if pairs else 0.0,
        max_link_load=max(per_cable.values(), default=0.0),
        link_load_lower_bound=lower,
        max_mac_entries=max(mac_entries.values()),
        mac_capacity=min(mac_capacity.values()),
        deadlock_free=nx.is_directed_acyclic_graph(cdg),
        mean_stretch=hop_sum / dist_sum if dist_sum else 1.0, non_minimal_routes=non_minimal,
        mac_entries=mac_entries, link_loads=per_cable,
        link_load_lower_bound_budget=max(lower, budget_lower_bound(topo, host_count, max_vlans, dist_sum)),
        link_load_optimum=max(optimum.value, lower), link_load_optimum_kind=optimum.kind,
    )
