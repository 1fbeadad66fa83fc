"""A fabric as the flow model sees it: hosts on switches, the directed inter-switch links
with their capacities, and the tree each source switch's frames follow.

The model of a link (stated in docs/method.md, "Throughput"):
- every host link and cable is full duplex: each direction is its own resource;
- a switch forwards at line rate (non-blocking), so only links limit a flow;
- a LAG of k cables of speed c is one resource of capacity k c in each direction: its hash
  spreads many flows evenly over the members. One flow never uses two members, so a flow
  is capped at one cable's speed (`flow_cap`), which matters only when host links are
  faster than cables.
A host pair's route is the path in the source host's tree: in VLAN routing the tree of
the VLAN its switch sends in (the path in a tree is unique), on plain Ethernet the one
spanning tree. Routed below the switch, the hosts of one switch send on several trees:
`host_tree` then names each host's tree in `trees`, and `roots` each such tree's switch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.routing.trees import bfs_order, tree_parents

DEFAULT_SPEED = 1.0    # Gb/s: Gigabit Ethernet, the seed cluster's hosts and cables


@dataclass(frozen=True)
class Fabric:
    label: str
    switches: list[str]                     # canonical order
    hosts: list[str]                        # host names, in the plan's order
    host_switch: list[str]                  # the switch of each host
    trees: dict[str, dict[str, str]]        # source switch (or tree key) -> parent map rooted at its switch
    arc_capacity: dict[Arc, float]          # directed neighbour pair -> Gb/s
    host_speed: float = DEFAULT_SPEED
    flow_cap: float = DEFAULT_SPEED         # one cable's speed
    cables: int = 0                         # inter-switch cables the fabric uses
    # Routing below the switch: each host's tree (a key of `trees`), and each such key's
    # switch; empty: every host sends on its switch's tree (keyed by the switch).
    host_tree: list[str] = field(default_factory=list)
    roots: dict[str, str] = field(default_factory=dict)

    def arcs(self) -> list[Arc]:
        return sorted(self.arc_capacity)

    def tree_of_hosts(self) -> list[str]:
        """The key of each host's tree in `trees`."""
        return self.host_tree or self.host_switch

    def paths(self, sources: Iterable[str]) -> dict[tuple[str, str], list[Arc]]:
        """The arcs from each source (a tree key: a switch, or a key of `roots`) to every
        switch of its tree, along the tree."""
        out: dict[tuple[str, str], list[Arc]] = {}
        for src in sources:
            parent = self.trees[src]
            root = self.roots.get(src, src)
            out[(src, root)] = []
            for v in bfs_order(parent, root)[1:]:      # parents first
                p = parent[v]
                out[(src, v)] = out[(src, p)] + [(p, v)]
        return out


def from_trees(label: str, switches: Sequence[str], hosts: Sequence[tuple[str, str]],
               trees: Mapping[str, Mapping[str, str]], cables: Mapping[Arc, int], *,
               speed: float = DEFAULT_SPEED, host_speed: float | None = None,
               host_trees: Mapping[str, tuple[str, Mapping[str, str]]] | None = None) -> Fabric:
    """A VLAN-routed fabric: `trees` maps a source switch to its parent map (rooted at the
    source), `cables` the parallel cables per directed neighbour pair (one LAG). Routed below
    the switch, `host_trees` maps a host to the key and parent map of its own tree (keys
    'switch/VLAN', say; hosts not listed send on their switch's tree)."""
    all_trees = {s: dict(t) for s, t in trees.items()}
    host_tree: list[str] = []
    roots: dict[str, str] = {}
    if host_trees:
        for h, s in hosts:
            key, tree = host_trees.get(h, (s, trees[s]))
            if key != s:
                all_trees.setdefault(key, dict(tree))
                roots[key] = s
            host_tree.append(key)
    used = {(p, v) for t in all_trees.values() for v, p in t.items()}
    used |= {(b, a) for a, b in used}
    capacity = {arc: cables[arc] * speed for arc in sorted(used)}
    return Fabric(label, list(switches), [h for h, _ in hosts], [s for _, s in hosts],
                  all_trees, capacity,
                  host_speed=speed if host_speed is None else host_speed, flow_cap=speed,
                  cables=sum(cables[a] for a in capacity) // 2, host_tree=host_tree, roots=roots)


def from_links(label: str, switches: Sequence[str], hosts: Sequence[tuple[str, str]],
               links: Mapping[tuple[str, str], int], *, speed: float = DEFAULT_SPEED,
               host_speed: float | None = None) -> Fabric:
    """One tree for every source (plain Ethernet's spanning tree): `links` maps each tree
    link (a, b) to its capacity in cables (k for a LAG, 1 when the others are blocked)."""
    trees = {s: tree_parents(links, s) for s in switches}
    arcs = {**{(a, b): k for (a, b), k in links.items()}, **{(b, a): k for (a, b), k in links.items()}}
    return from_trees(label, switches, hosts, trees, arcs, speed=speed, host_speed=host_speed)


def big_switch(hosts: Sequence[tuple[str, str]], *, speed: float = DEFAULT_SPEED) -> Fabric:
    """Every host on one non-blocking switch: only host links limit (the upper reference)."""
    return Fabric("one non-blocking switch", ["big"], [h for h, _ in hosts], ["big"] * len(hosts),
                  {"big": {}}, {}, host_speed=speed, flow_cap=speed)


def host_counts(fabric: Fabric) -> dict[str, int]:
    counts = dict.fromkeys(fabric.switches, 0)
    for s in fabric.host_switch:
        counts[s] += 1
    return counts


def arc_index(fabric: Fabric) -> dict[Arc, int]:
    return {a: i for i, a in enumerate(fabric.arcs())}


def capacities(fabric: Fabric) -> np.ndarray:
    return np.array([fabric.arc_capacity[a] for a in fabric.arcs()], dtype=float)
