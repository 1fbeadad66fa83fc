"""up*/down* below the switch: each host of a switch on its own balanced up*/down* tree.

The turns engine routes graphs other than grids by up*/down* (Schroeder et al., Autonet,
IEEE JSAC 1991): no route turns from a down link to an up link, so the channel dependency
graph is acyclic and the routes are deadlock-free under 802.3x PAUSE. With one tree per
switch, the traffic of all hosts of a switch leaves it by one path to each destination.
OpenSM's updn engine routes per destination port instead (its forwarding tables hold one
next hop per destination LID, chosen by the least used port among the shortest legal
ones), and on a leaf-spine whose spines carry hosts too it reaches 1.081x the exact
optimum on one virtual lane where one tree per switch reaches 1.143x at best
(bench/opensm_peer.py, docs/routing-bounds.md).

Here every host of a switch gets its own tree (a port's PVID selects it: routing below the
switch), in the order OpenSM routes its destinations: the first host of every switch,
then the second, and so on. Each tree takes, switch by switch in breadth-first layers,
the shortest legal path from the source (a path may go up while it has only gone up, and
down at any time; the root is reached by going up only, and every switch below it by
going down, so every switch is reached), choosing among the legal parents of a layer one
that keeps the route able to go up (not yet turned down), then the least loaded link,
then the first switch in the inventory's order. Rip-up and re-route passes route every
host again against the others' loads. Reversing OpenSM's per-destination routes gives
per-source trees with the same loads and a mirrored channel dependency graph, so this is
OpenSM's updn read from the source side, balanced by load rather than by route counts.

Every tree obeys the same up*/down* order, so the union of all routes does too:
deadlock-free by construction (checked again by the plan's verification). Identical trees
of one switch are merged, so a switch has as many VLANs as distinct trees its hosts use.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.packing import pack
from vlanroute.routing.trees import ParentMap, Share, source_arc_loads

ROUNDS = 3              # rip-up-and-re-route passes after the first (stops early when no pass gains)
# Arc visits allowed for the whole search (roots x passes x hosts x arcs): the roots tried are
# as many as fit, at least one; counted, never timed, so the plan stays deterministic.
WORK = 400_000
# ...and above this many arc visits for one pass over every host (hosts x arcs), no root at
# all: the search is not made. A 16x16 torus with 4 hosts per switch (1.0 million) takes
# about 6 s for its one root; a 32x32 torus with 16 hosts per switch (67 million) took
# 130 s for a plan at 16 times the optimum, never the one the default takes.
MAX_PASS = 2_000_000


def host_updown(topo: Topology, host_count: dict[str, int], roots: Sequence[str],
                max_vlans: int) -> tuple[float, str, dict[str, ParentMap], dict[str, tuple[Share, ...]]] | None:
    """The least loaded plan of up*/down* trees per host over `roots` (tried in that order,
    as many as WORK allows): (max load per cable, root, a tree per switch with hosts, the
    splits of the switches whose hosts use several trees), or None where no switch has two
    hosts, no plan fits `max_vlans` VLANs or one pass over the hosts exceeds MAX_PASS."""
    senders = _senders(topo, host_count)
    if len(senders) == sum(1 for n in host_count.values() if n):
        return None                         # one host per switch: the trees per switch already
    cables = topo.arc_cables()
    if len(senders) * len(cables) > MAX_PASS:
        return None                         # too large to search (MAX_PASS)
    per_root = (ROUNDS + 1) * len(senders) * len(cables)
    tried = list(dict.fromkeys(roots))[:max(1, WORK // max(per_root, 1))]
    hosted = {s for s, n in host_count.items() if n}
    index = {s: i for i, s in enumerate(topo.switches)}
    best: tuple[tuple[float, int, int], str, dict[str, ParentMap], dict[str, tuple[Share, ...]]] | None = None
    for i, root in enumerate(tried):
        peak, trees = _balanced(topo, host_count, root, senders, cables, index)
        parents, splits = _merged(senders, trees)
        vlans = len(pack(parents, hosted, index, splits))
        if vlans > max_vlans:
            continue
        key = (round(peak, 6), vlans, i)
        if best is None or key < best[0]:
            best = (key, root, parents, splits)
    if best is None:
        return None
    (peak, _, _), root, parents, splits = best
    return peak, root, parents, splits


def _senders(topo: Topology, host_count: dict[str, int]) -> list[str]:
    """The source switch of every host: the first host of each switch, then the second..."""
    most = max(host_count.values(), default=0)
    return [s for k in range(most) for s in topo.switches if host_count.get(s, 0) > k]


def _balanced(topo: Topology, host_count: dict[str, int], root: str, senders: list[str],
              cables: dict[Arc, int], index: dict[str, int]) -> tuple[float, list[ParentMap]]:
    g = topo.simple()
    level = nx.single_source_shortest_path_length(g, root)
    rank = {s: (level[s], index[s]) for s in topo.switches}
    adj = {s: sorted(g.neighbors(s), key=index.__getitem__) for s in topo.switches}
    load: dict[Arc, float] = {a: 0.0 for a in cables}
    trees: list[ParentMap] = [{} for _ in senders]
    placed: list[list[tuple[Arc, float]]] = [[] for _ in senders]
    best: tuple[float, list[ParentMap]] | None = None
    for _ in range(ROUNDS + 1):
        for i, src in enumerate(senders):
            for arc, x in placed[i]:
                load[arc] -= x
            trees[i] = _tree(src, adj, rank, load, index)
            placed[i] = _loads(trees[i], src, host_count, cables)
            for arc, x in placed[i]:
                load[arc] += x
        peak = max(load.values(), default=0.0)
        if best is not None and peak >= best[0] - 1e-9:
            break
        best = (peak, list(trees))
    assert best is not None
    return best


def _tree(src: str, adj: dict[str, list[str]], rank: dict[str, tuple[int, int]], load: dict[Arc, float],
          index: dict[str, int]) -> ParentMap:
    """One host's tree: shortest legal up*/down* paths, layer by layer (module doc)."""
    parent: ParentMap = {}
    went_down = {src: False}
    layer = [src]
    while layer:
        pick: dict[str, tuple[tuple[bool, float, int], str, bool]] = {}
        for u in layer:
            for v in adj[u]:
                if v in went_down:
                    continue
                up = rank[v] < rank[u]
                if up and went_down[u]:
                    continue                    # down, then up: the one turn up*/down* forbids
                key = (not up, load[(u, v)], index[u])
                if v not in pick or key < pick[v][0]:
                    pick[v] = (key, u, not up)
        layer = sorted(pick, key=index.__getitem__)
        for v in layer:
            _, parent[v], went_down[v] = pick[v]
    return parent


def _loads(tree: ParentMap, src: str, host_count: dict[str, int], cables: dict[Arc, int]) -> list[tuple[Arc, float]]:
    """The load one host of `src` puts on each link of its tree, per cable."""
    return [(arc, x / cables[arc]) for arc, x in source_arc_loads(tree, src, host_count, weight=1.0)]


def _merged(senders: list[str], trees: list[ParentMap]) -> tuple[dict[str, ParentMap], dict[str, tuple[Share, ...]]]:
    """Each switch's distinct trees with the hosts on each (first tree first)."""
    shares: dict[str, list[Share]] = {}
    for src, tree in zip(senders, trees):
        got = shares.setdefault(src, [])
        for j, (t, n) in enumerate(got):
            if t == tree:
                got[j] = (t, n + 1)
                break
        else:
            got.append((tree, 1))
    parents = {s: got[0][0] for s, got in shares.items()}
    return parents, {s: tuple(got) for s, got in shares.items() if len(got) > 1}
