"""Choosing among equally short paths: balanced load first, then shared trees.

`balanced_shortest_parents` builds one shortest-path tree per source on any graph, picking
every switch's parent among its equally near neighbours so that the all-to-all load stays
even: the global-balance idea of SSSP routing (Hoefler, Schneider, Lumsdaine, HOTI 2009:
route with the load already placed as edge weights), restricted to minimal paths and
repeated a few rounds (rip up one source, re-route it against all others).

`share_trees` then lets a source adopt another source's tree whenever that tree is also a
shortest-path tree from it and the maximum load does not grow: fewer distinct trees means
fewer VLANs (two different spanning trees never fit in one VLAN).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.jit import compiled_allowed
from vlanroute.routing.trees import (ParentMap, add_loads, adjacency, bfs_order, is_shortest_path_tree, reroot,
                                     source_arc_loads)

# Switches from which the balanced trees are built compiled, where numba works: a 16x16
# torus's take well under a second interpreted, a 32x32's 28 s (routing/balance_kernel.py).
KERNEL_FROM = 256


def balanced_tree(src: str, adj: dict[str, list[str]], dist: dict[str, int], hosts: dict[str, int],
                  weight: float, load: dict[Arc, float], cables: dict[Arc, int], order: dict[str, int]) -> ParentMap:
    """A shortest-path tree from src whose links add as little as possible to `load`.

    Built from the farthest switches inwards, so that the traffic below a switch (the
    hosts of its subtree) is known when its parent is chosen: it goes to the equally near
    neighbour whose link would then carry the least, ties to the neighbour that collects
    less traffic so far (that spreads the next level too), then to switch order.
    """
    levels: dict[int, list[str]] = {}
    for v, d in dist.items():
        levels.setdefault(d, []).append(v)
    below = {v: float(hosts.get(v, 0)) for v in dist}
    parent: ParentMap = {}
    for d in range(max(levels), 0, -1):
        for v in sorted(levels[d], key=lambda x: (-below[x], order[x])):
            best = min((p for p in adj[v] if dist.get(p) == d - 1),
                       key=lambda p: (load.get((p, v), 0.0) + weight * below[v] / cables[(p, v)],
                                      below[p], order[p]))
            parent[v] = best
            below[best] += below[v]
    return parent


def least_loaded_tree(src: str, adj: dict[str, list[str]], dist: dict[str, int], hosts: dict[str, int],
                      weight: float, load: dict[Arc, float], cables: dict[Arc, int], order: dict[str, int]) -> ParentMap:
    """A shortest-path tree from src along the least loaded paths (SSSP's Dijkstra on loads).

    Nearest switches first: a switch's parent is the equally near neighbour whose path
    from src, plus the link to it, has the smallest sum of loads per cable.
    """
    cost = {src: 0.0}
    parent: ParentMap = {}
    for v in sorted(dist, key=lambda x: (dist[x], order[x]))[1:]:
        d = dist[v]
        best = min((p for p in adj[v] if dist.get(p) == d - 1),
                   key=lambda p: (cost[p] + load.get((p, v), 0.0), order[p]))
        parent[v] = best
        cost[v] = cost[best] + load.get((best, v), 0.0)
    return parent


def balanced_shortest_parents(topo: Topology, hosts: dict[str, int], rounds: int = 3,
                              builder: str = "bottom-up") -> dict[str, ParentMap]:
    """One shortest-path tree per source, each built against the load of all the others
    (`balanced_tree` or, builder "sssp", `least_loaded_tree`); rounds of re-routing every
    source while the maximum load falls; the best round is kept."""
    g = topo.simple()
    order = {s: i for i, s in enumerate(topo.switches)}
    adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
    cables = topo.arc_cables()
    # Sources with hosts, most hosts first (they weigh most); switches without hosts still
    # get a tree (the parent map covers every switch) but carry no traffic.
    sources = sorted(topo.switches, key=lambda s: (-hosts.get(s, 0), order[s]))
    if compiled(topo, g):
        return _compiled_rounds(topo, order, adj, cables, hosts, sources, rounds, builder)
    dists = {s: nx.single_source_shortest_path_length(g, s) for s in sources}
    load: dict[Arc, float] = {}
    parents: dict[str, ParentMap] = {}
    contrib: dict[str, list[tuple[Arc, float]]] = {}
    best: tuple[float, dict[str, ParentMap]] | None = None
    for _ in range(rounds):
        for s in sources:
            if s in contrib:
                add_loads(load, contrib[s], cables, -1.0)
            build = balanced_tree if builder == "bottom-up" else least_loaded_tree
            par = build(s, adj, dists[s], hosts, hosts.get(s, 0), load, cables, order)
            parents[s] = par
            contrib[s] = list(source_arc_loads(par, s, hosts))
            add_loads(load, contrib[s], cables, 1.0)
        peak = max(load.values(), default=0.0)
        if best is not None and peak >= best[0] - 1e-9:
            break
        best = (peak, dict(parents))
    assert best is not None
    return best[1]


def compiled(topo: Topology, g: nx.Graph) -> bool:
    """The balanced trees of this fabric are built compiled (routing/balance_kernel.py, the
    same trees): KERNEL_FROM switches or more, connected, and numba works (routing/jit.py)."""
    return len(topo.switches) >= KERNEL_FROM and compiled_allowed() and nx.is_connected(g)


def _compiled_rounds(topo: Topology, index: dict[str, int], adj: dict[str, list[str]], cables: dict[Arc, int],
                     hosts: dict[str, int], sources: list[str], rounds: int, builder: str) -> dict[str, ParentMap]:
    """`balanced_shortest_parents` by balance_kernel.balanced_rounds: the same parent maps,
    their entries in the same order. `index`: each switch's position in topo.switches."""
    from vlanroute.routing.balance_kernel import balanced_rounds
    names = list(topo.switches)
    n = len(names)
    arcs = sorted(cables, key=lambda a: (index[a[0]], index[a[1]]))
    arc_id = {a: i for i, a in enumerate(arcs)}
    ptr = np.zeros(n + 1, dtype=np.int64)
    nbr: list[int] = []
    arc_in: list[int] = []
    for v in names:
        for p in adj[v]:
            nbr.append(index[p])
            arc_in.append(arc_id[(p, v)])
        ptr[index[v] + 1] = len(nbr)
    best_parent, best_seq = balanced_rounds(
        ptr, np.array(nbr, dtype=np.int64), np.array(arc_in, dtype=np.int64),
        np.array([float(cables[a]) for a in arcs]), np.array([hosts.get(s, 0) for s in names], dtype=np.int64),
        np.array([index[s] for s in sources], dtype=np.int64), rounds, builder == "bottom-up")
    out: dict[str, ParentMap] = {}
    for r, s in enumerate(sources):
        row, made = best_parent[r].tolist(), best_seq[r].tolist()
        out[s] = {names[v]: names[row[v]] for v in made if v >= 0}
    return out


def share_trees(routing: dict[str, ParentMap], topo: Topology, hosts: dict[str, int]) -> dict[str, ParentMap] | None:
    """Move sources onto other sources' trees where those are shortest for them too.

    Greedy: trees used by many sources first; a source moves if the tree is a shortest-
    path tree from it and the all-to-all maximum load does not rise. Only spanning trees
    are compared, so it is a no-op where every source's tree already is distinct and
    incompatible (e.g. a hyper-crossbar, where any two sources have a common neighbour).
    Returns the new trees, or None if no source moved.
    """
    g = topo.simple()
    cables = topo.arc_cables()
    degree = {n: g.degree(n) for n in topo.switches}
    sources = [s for s in topo.switches if hosts.get(s, 0)]
    trees: dict[frozenset[tuple[str, str]], list[str]] = {}
    for s in sources:
        key = frozenset((v, p) if v < p else (p, v) for v, p in routing[s].items())
        trees.setdefault(key, []).append(s)
    if len(trees) <= 1:
        return None
    # sorted: a frozenset's order changes from run to run (string hashes), and the order of
    # the rerooted trees' entries steers the searches that start from them (budget, polish)
    adjs = {key: adjacency(sorted(key)) for key in trees}
    # A degraded fabric (Topology.from_links: repair, failover) is not checked for
    # connectivity, so a disconnected one keeps the rerooting test: its trees span one part.
    spt = _ShortestTreeTest(topo, trees) if nx.is_connected(g) else None
    parents = dict(routing)
    contrib = {s: list(source_arc_loads(parents[s], s, hosts)) for s in sources}
    load: dict[Arc, float] = {}
    for s in sources:
        add_loads(load, contrib[s], cables, 1.0)
    peak = max(load.values(), default=0.0)
    tree_of = {s: k for k, ss in trees.items() for s in ss}
    moved = False
    for s in sorted(sources, key=lambda x: (len(trees[tree_of[x]]), topo.index(x))):
        dist: dict[str, int] | None = None
        for key in sorted(trees, key=lambda k: -len(trees[k])):
            if key == tree_of[s] or len(trees[key]) < len(trees[tree_of[s]]) or not trees[key]:
                continue
            if len(adjs[key].get(s, ())) != degree[s]:
                continue   # a shortest-path tree holds every link of its root
            if dist is None:
                dist = nx.single_source_shortest_path_length(g, s)
                if spt is not None:
                    spt.source(dist)
            if spt is not None and not spt.holds(key):
                continue
            cand = reroot(adjs[key], s)
            if spt is None and not is_shortest_path_tree(cand, s, dist):
                continue
            new = list(source_arc_loads(cand, s, hosts, bfs_order(cand, s)))
            add_loads(load, contrib[s], cables, -1.0)
            add_loads(load, new, cables, 1.0)
            if max(load.values(), default=0.0) <= peak + 1e-9:
                trees[tree_of[s]].remove(s)
                trees[key].append(s)
                tree_of[s] = key
                parents[s] = cand
                contrib[s] = new
                moved = True
                break
            add_loads(load, new, cables, -1.0)
            add_loads(load, contrib[s], cables, 1.0)
    return parents if moved else None


class _ShortestTreeTest:
    """Is a spanning tree a shortest-path tree from the current source? Without rerooting it.

    A spanning tree is a shortest-path tree from s exactly when each of its links joins
    switches whose hop distances from s differ by one and no switch is the farther end of
    two of its links: then each switch but s has one tree neighbour one hop nearer, and
    following it reaches s in as many hops as the switch's distance. (Conversely a
    shortest-path tree's link from parent to child is one hop farther, each switch's
    parent link once.) On a 1,024-switch fabric this is the difference between a dict walk
    and a few array operations per candidate tree (`share_trees` tries about 28 per source).
    """

    def __init__(self, topo: Topology, trees: dict[frozenset[tuple[str, str]], list[str]]) -> None:
        self.index = {s: i for i, s in enumerate(topo.switches)}
        n = len(self.index)
        self.links: dict[frozenset[tuple[str, str]], tuple[np.ndarray, np.ndarray] | None] = {}
        for key in trees:
            ends = np.array([(self.index[a], self.index[b]) for a, b in key], dtype=np.int64).reshape(-1, 2)
            spans = len(key) == n - 1 and len(np.unique(ends)) == n
            # a tree that does not span every switch is never one (the dict test agrees)
            self.links[key] = (ends[:, 0], ends[:, 1]) if spans else None
        self.dist = np.zeros(n, dtype=np.int64)

    def source(self, dist: dict[str, int]) -> None:
        """The hop distances from the next source (every switch: the fabric is connected)."""
        for s, d in dist.items():
            self.dist[self.index[s]] = d

    def holds(self, key: frozenset[tuple[str, str]]) -> bool:
        ends = self.links[key]
        if ends is None:
            return False
        da, db = self.dist[ends[0]], self.dist[ends[1]]
        if not bool(np.all(np.abs(da - db) == 1)):
            return False
        far = np.where(da > db, ends[0], ends[1])
        return int(np.bincount(far).max(initial=0)) <= 1
