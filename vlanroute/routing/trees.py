"""Tree utilities: walks over routes given as trees, and their all-to-all link loads.

A source's routes are a tree rooted at the source, given as a parent map: `parent[v]` is
the switch before `v` on the path from the source (the source itself has no entry). All
frames of one source travel in one VLAN, and a VLAN's links must be loop-free, so every
routing in vlanroute is a set of such trees; the walks over them live here, once.

Loads: under all-to-all traffic (one unit per ordered pair of distinct hosts) the link
p->v of the tree of source s carries hosts(s) x (hosts in the subtree below v). One pass
over the tree from the leaves up gives every link: O(switches) per source.

Routing below the switch: a host port's PVID selects the VLAN, so the hosts of one switch
may send on different trees (`Splits`: switch -> its trees, each with the hosts that send
on it). Then the link p->v of one of those trees carries (its hosts) x (hosts below v),
and `senders` lists every (switch, tree, hosts) that sends.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from vlanroute.model.links import Arc

N = TypeVar("N", bound=Hashable)
ParentMap = dict[str, str]
# The trees the hosts of one switch send on when they do not all send on one: (tree, hosts
# sending on it), at least two, the hosts adding up to the switch's (routing below the switch).
Share = tuple[ParentMap, int]
Splits = Mapping[str, tuple[Share, ...]]


# --------------------------------------------------------------------------- walks


def adjacency(links: Iterable[tuple[N, N]]) -> dict[N, list[N]]:
    """Neighbour lists of the graph given by `links` (each link once, either direction)."""
    adj: dict[N, list[N]] = {}
    for a, b in links:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    return adj


def reroot(adj: Mapping[N, Iterable[N]], root: N) -> dict[N, N]:
    """Each node's neighbour towards `root` in a tree (or forest component) given as
    neighbour lists: the same links, seen as the tree of a source at `root`."""
    parent: dict[N, N] = {}
    seen = {root}
    q = deque([root])
    while q:
        u = q.popleft()
        for v in adj.get(u, ()):
            if v not in seen:
                seen.add(v)
                parent[v] = u
                q.append(v)
    return parent


def tree_parents(links: Iterable[tuple[N, N]], root: N) -> dict[N, N]:
    """Each node's neighbour towards `root` in the tree (or forest component) given by `links`."""
    return reroot(adjacency(links), root)


def bfs_order(parent: dict[N, N], src: N) -> list[N]:
    """The tree's nodes, each after its parent (breadth-first from src)."""
    kids: dict[N, list[N]] = {}
    for v, p in parent.items():
        got = kids.get(p)
        if got is None:
            kids[p] = [v]
        else:
            got.append(v)
    out = [src]
    for u in out:                    # the list grows while it is walked: a queue
        got = kids.get(u)
        if got:
            out.extend(got)
    return out


def preorder(kids: Mapping[N, list[N]], root: N) -> dict[N, int]:
    """Each node's number in a depth-first preorder of the tree from `root` (`kids`: each
    node's children): v's subtree is the nodes numbered from v's own up to it plus its size."""
    first: dict[N, int] = {}
    stack = [root]
    while stack:
        x = stack.pop()
        first[x] = len(first)
        stack.extend(kids[x])
    return first


def bfs_distances(adj: dict[N, list[N]], src: N) -> dict[N, int]:
    """Hops from src to every node it reaches in the graph given by neighbour lists."""
    dist = {src: 0}
    frontier = [src]
    d = 0
    while frontier:
        d += 1
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if v not in dist:
                    dist[v] = d
                    nxt.append(v)
        frontier = nxt
    return dist


def tree_depths(parent: dict[N, N], src: N) -> dict[N, int]:
    """Hops from src to every node of its tree."""
    depth = {src: 0}
    for v in bfs_order(parent, src)[1:]:
        depth[v] = depth[parent[v]] + 1
    return depth


def path(parent: dict[N, N], src: N, dst: N) -> list[N]:
    """The nodes from src to dst inclusive, along src's tree."""
    out = [dst]
    while out[-1] != src:
        out.append(parent[out[-1]])
    out.reverse()
    return out


def pruned_parents(parent: dict[N, N], src: N, targets: Iterable[N]) -> dict[N, N]:
    """The part of src's tree that the paths to `targets` use, as a parent map.

    These are the links a source's frames can cross when only `targets` (the switches
    with hosts) are ever destinations: the VLAN of this source needs these and no others.
    """
    sub: dict[N, N] = {}
    for t in targets:
        v = t
        while v != src and v not in sub:
            p = parent[v]
            sub[v] = p
            v = p
    return sub


def distinct_trees(trees: Iterable[dict[N, N]]) -> int:
    """How many different spanning trees (as sets of links, whatever their root) `trees` holds:
    the VLANs they need at most, one per tree."""
    return len({frozenset(frozenset(link) for link in parent.items()) for parent in trees})


def spans_exactly(parent: dict[N, N], src: N, targets: set[N]) -> bool:
    """Are the tree's nodes (src and every node with a parent) exactly `targets`? Then
    `pruned_parents(parent, src, targets)` is the whole tree: nothing to prune."""
    return len(parent) + 1 == len(targets) and src in targets and targets.issuperset(parent)


def bfs_tree(adj: dict[str, list[str]], src: str, order: dict[str, int]) -> ParentMap:
    """A shortest-path (breadth-first) tree from src; among equally near parents the one
    earliest in `order` (adjacency lists sorted by `order`)."""
    seen = {src}
    parent: ParentMap = {}
    frontier = [src]
    while frontier:
        nxt = []
        for u in frontier:           # frontier is in switch order, so the first parent wins
            for v in adj[u]:
                if v not in seen:
                    seen.add(v)
                    parent[v] = u
                    nxt.append(v)
        frontier = sorted(nxt, key=order.__getitem__)
    return parent


def is_shortest_path_tree(parent: dict[N, N], src: N, dist: dict[N, int]) -> bool:
    """Does the tree reach every node of `dist` (hop distances from src) in that many hops?"""
    depth = tree_depths(parent, src)
    return len(depth) == len(dist) and all(depth[v] == d for v, d in dist.items())


def hop_distances(adj: Sequence[Sequence[int]], src: int) -> list[int]:
    """Hops from src to every node of a graph given as index adjacency lists (-1: unreachable)."""
    dist = [-1] * len(adj)
    dist[src] = 0
    q = deque([src])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist


def euler_times(kids: Sequence[Sequence[int]], root: int) -> tuple[list[int], list[int], list[int]]:
    """Depth-first preorder, entry and exit times of a tree given as index child lists.

    v is in the subtree of c exactly when tin[c] <= tin[v] < tout[c]: a subtree test in
    O(1). Iterative, so deep trees (long rings) do not hit the recursion limit.
    """
    n = len(kids)
    tin = [0] * n
    tout = [0] * n
    order: list[int] = []
    stack: list[tuple[int, bool]] = [(root, False)]
    clock = 0
    while stack:
        v, leaving = stack.pop()
        if leaving:
            tout[v] = clock
            continue
        tin[v] = clock
        clock += 1
        order.append(v)
        stack.append((v, True))
        stack.extend((k, False) for k in kids[v])
    return order, tin, tout


# --------------------------------------------------------------------------- all-to-all loads


def source_arc_loads(parent: ParentMap, src: str, hosts: dict[str, int],
                     order: list[str] | None = None, weight: float | None = None) -> list[tuple[Arc, float]]:
    """(p, v), load for every tree link p->v that carries traffic of source `src`."""
    if order is None:
        order = bfs_order(parent, src)
    hs = hosts.get(src, 0) if weight is None else weight
    if not hs:
        return []
    below = {v: hosts.get(v, 0) for v in order}
    for v in reversed(order[1:]):
        below[parent[v]] += below[v]
    return [((parent[v], v), hs * below[v]) for v in order[1:] if below[v]]


def add_loads(load: dict[Arc, float], contrib: list[tuple[Arc, float]], cables: dict[Arc, int],
              sign: float) -> None:
    """Add (sign 1) or remove (sign -1) one source's contribution, per cable of each arc.

    Parallel cables between two switches form a LAG whose hash spreads the flows, so the
    load of one cable is the pair's load divided by the number of cables."""
    for arc, x in contrib:
        load[arc] = load.get(arc, 0.0) + sign * x / cables[arc]


def senders(parents: Mapping[str, ParentMap], hosts: Mapping[str, int],
            splits: Splits | None = None) -> list[tuple[str, ParentMap, int]]:
    """(source switch, tree, hosts sending on it) for every tree that carries traffic: a
    switch's own tree with all its hosts, or each of its `splits` with its share."""
    out: list[tuple[str, ParentMap, int]] = []
    for src, par in parents.items():
        hs = hosts.get(src, 0)
        if not hs:
            continue
        shares = splits.get(src) if splits else None
        if shares:
            out.extend((src, tree, n) for tree, n in shares if n)
        else:
            out.append((src, par, hs))
    return out


def arc_loads(parents: dict[str, ParentMap], hosts: dict[str, int], cables: dict[Arc, int],
              splits: Splits | None = None) -> dict[Arc, float]:
    """Load per cable and direction of the whole routing (sources = switches with hosts,
    each on its own tree or, with `splits`, its hosts on several)."""
    load: dict[Arc, float] = {}
    for src, par, hs in senders(parents, hosts, splits):
        # source_arc_loads, added up in place: no list of (arc, load) per source (the
        # routing engines compare candidates by this, 1,024 trees of 1,023 links a candidate)
        order = bfs_order(par, src)
        below = {v: hosts.get(v, 0) for v in order}
        rest = order[1:]
        for v in reversed(rest):
            below[par[v]] += below[v]
        for v in rest:
            x = below[v]
            if x:
                arc = (par[v], v)
                load[arc] = load.get(arc, 0.0) + hs * x
    return {a: x / cables[a] for a, x in load.items()}


def max_load(parents: dict[str, ParentMap], hosts: dict[str, int], cables: dict[Arc, int],
             splits: Splits | None = None) -> float:
    """The largest load of one cable in one direction (the figure routings compete on:
    a full-duplex link's directions are independent)."""
    return max(arc_loads(parents, hosts, cables, splits).values(), default=0.0)
