"""Metrics of a plan under all-to-all host traffic (one unit per ordered pair of hosts)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx

from vlanroute.routing.bounds import budget_lower_bound
from vlanroute.routing.routes import Routes
from vlanroute.model.topology import Topology
from vlanroute.plan.vlans import VlanGroup


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
        }


def children_order(parent: dict[str, str], src: str, nodes: set[str]) -> list[str]:
    """Nodes of the tree (restricted to `nodes`) in breadth-first order from src."""
    kids: dict[str, list[str]] = {}
    for v in nodes:
        if v != src:
            kids.setdefault(parent[v], []).append(v)
    out, q = [], deque([src])
    while q:
        u = q.popleft()
        out.append(u)
        q.extend(kids.get(u, ()))
    return out


def compute_metrics(topo: Topology, routes: Routes, vlans: list[VlanGroup], host_count: dict[str, int],
                    mac_capacity: dict[str, int], max_vlans: int | None = None) -> Metrics:
    """All-to-all figures of the routes; `max_vlans` is the VLAN budget the lower bound
    `link_load_lower_bound_budget` assumes (None: no limit; routing/bounds.py)."""
    simple = topo.simple()
    cables = {(a, b): d["cables"] for a, b, d in simple.edges(data=True)}
    cables.update({(b, a): c for (a, b), c in list(cables.items())})
    host_switches = {s for s, n in host_count.items() if n > 0}
    total_hosts = sum(host_count.values())

    # Shortest-path distances between host switches: the lower bound, the diameter, stretch.
    dist_sum = 0
    diameter = 0
    shortest: dict[str, dict[str, int]] = {}
    for s in topo.switches:
        dist = nx.single_source_shortest_path_length(simple, s)
        diameter = max(diameter, max(dist.values()))
        if s in host_switches:
            shortest[s] = dist
            hs = host_count[s]
            dist_sum += hs * sum(host_count.get(t, 0) * d for t, d in dist.items())

    load: dict[tuple[str, str], float] = {}
    hop_sum = 0
    non_minimal = 0
    deps: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    for src in host_switches:
        par = routes.parents[src]
        # The nodes on the paths from src to every host switch.
        nodes = {src}
        for t in host_switches:
            v = t
            while v not in nodes:
                nodes.add(v)
                v = par[v]
        order = children_order(par, src, nodes)
        below = {v: host_count.get(v, 0) for v in order}
        depth = {src: 0}
        for v in order[1:]:
            depth[v] = depth[par[v]] + 1
        for v in reversed(order[1:]):
            below[par[v]] += below[v]
        hs = host_count[src]
        dist = shortest.pop(src)
        for v in order[1:]:
            p = par[v]
            load[(p, v)] = load.get((p, v), 0.0) + hs * below[v]
            hop_sum += hs * host_count.get(v, 0) * depth[v]
            if v in host_switches and depth[v] > dist[v]:
                non_minimal += 1
            gp = par.get(p)
            if p != src and gp is not None:
                deps.add(((gp, p), (p, v)))
    per_cable = {k: v / cables[k] for k, v in load.items()}

    total_cables = topo.graph.number_of_edges()
    lower = dist_sum / (2 * total_cables) if total_cables else 0.0
    pairs = total_hosts * (total_hosts - 1)

    in_vlans = {s: 0 for s in topo.switches}
    for v in vlans:
        for s in v.switches:
            in_vlans[s] += 1
    mac_entries = {s: total_hosts * n for s, n in in_vlans.items()}

    cdg = nx.DiGraph()
    cdg.add_edges_from(deps)
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
    )
