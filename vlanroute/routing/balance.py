"""Choosing among equally short paths: balanced load first, then shared trees.

`balanced_shortest_routes` builds one shortest-path tree per source on any graph, picking
every switch's parent among its equally near neighbours so that the all-to-all load stays
even: the global-balance idea of SSSP routing (Hoefler, Schneider, Lumsdaine, HOTI 2009:
route with the load already placed as edge weights), restricted to minimal paths and
repeated a few rounds (rip up one source, re-route it against all others).

`share_trees` then lets a source adopt another source's tree whenever that tree is also a
shortest-path tree from it and the maximum load does not grow: fewer distinct trees means
fewer VLANs (two different spanning trees never fit in one VLAN).
"""

from __future__ import annotations

import itertools

import networkx as nx

from vlanroute.routing.routes import ParentMap, Routes, dor_tree, tie_goes_plus
from vlanroute.model.topology import Topology
from vlanroute.routing.trees import (Arc, add_loads, adjacency, bfs_order, is_shortest_path_tree, reroot,
                                     source_arc_loads)


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
                   key=lambda p: (cost[p] + load.get((p, v), 0.0) / 1.0, order[p]))
        parent[v] = best
        cost[v] = cost[best] + load.get((best, v), 0.0)
    return parent


def balanced_shortest_routes(topo: Topology, hosts: dict[str, int], rounds: int = 3,
                             builder: str = "bottom-up") -> Routes:
    g = topo.simple()
    order = {s: i for i, s in enumerate(topo.switches)}
    adj = {n: sorted(g.neighbors(n), key=order.__getitem__) for n in topo.switches}
    cables = topo.arc_cables()
    # Sources with hosts, most hosts first (they weigh most); switches without hosts still
    # get a tree (the parent map covers every switch) but carry no traffic.
    sources = sorted(topo.switches, key=lambda s: (-hosts.get(s, 0), order[s]))
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
    return Routes("shortest", best[1], {"tie_break": "balanced-" + builder})


def share_trees(routes: Routes, topo: Topology, hosts: dict[str, int]) -> Routes:
    """Move sources onto other sources' trees where those are shortest for them too.

    Greedy: trees used by many sources first; a source moves if the tree is a shortest-
    path tree from it and the all-to-all maximum load does not rise. Only spanning trees
    are compared, so it is a no-op where every source's tree already is distinct and
    incompatible (e.g. a hyper-crossbar, where any two sources have a common neighbour).
    """
    g = topo.simple()
    cables = topo.arc_cables()
    degree = {n: g.degree(n) for n in topo.switches}
    sources = [s for s in topo.switches if hosts.get(s, 0)]
    trees: dict[frozenset[tuple[str, str]], list[str]] = {}
    for s in sources:
        key = frozenset(tuple(sorted(e)) for e in routes.parents[s].items())
        trees.setdefault(key, []).append(s)
    if len(trees) <= 1:
        return routes
    adjs = {key: adjacency(key) for key in trees}
    parents = dict(routes.parents)
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
            cand = reroot(adjs[key], s)
            if dist is None:
                dist = nx.single_source_shortest_path_length(g, s)
            if not is_shortest_path_tree(cand, s, dist):
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
    if not moved:
        return routes
    return Routes(routes.algorithm, parents, {**routes.detail, "shared": True})


def search_dor_ties(topo: Topology, routes: Routes, hosts: dict[str, int], max_work: int = 3_000_000,
                    rounds: int = 6, pair_limit: int = 64) -> Routes:
    """Local search over the single tie decisions of a dimension-order routing.

    A tie rule decides for all sources alike; with uneven host counts, or rings of size
    4k+2, no rule balances exactly. Here every (source, dimension, branch) tie is flipped
    in turn and kept if the loads improve (leximin, `_score`); when no single flip helps
    and there are at most `pair_limit` ties, pairs of flips are tried (two sources
    trading directions is the typical improving move). Stops early when the maximum load
    reaches the mean over all cables (no minimal routing does better: all carry the same
    total) or when `max_work` (switch visits) is spent, so it stays cheap on big grids.
    """
    assert topo.dims is not None
    dims = topo.dims
    if topo.kind not in ("torus", "ring"):
        return routes
    order = tuple(routes.detail["dimension_order"])  # type: ignore[arg-type]
    rule = str(routes.detail["tie_break"])
    tied = [k for k, d in enumerate(order) if dims[d] % 2 == 0 and dims[d] > 2]
    sources = [s for s in topo.switches if hosts.get(s, 0)]
    keys: list[tuple[str, int, tuple[int, ...]]] = []
    for s in sources:
        sc = topo.coords[s]
        assert sc is not None
        for k in tied:
            for prefix in itertools.product(*(range(dims[e]) for e in order[:k])):
                u = list(sc)
                for e, x in zip(order[:k], prefix):
                    u[e] = x
                keys.append((s, order[k], tuple(u)))
    if not keys:
        return routes
    cables = topo.arc_cables()
    by_coord = {c: n for n, c in topo.coords.items()}
    position = {d: k for k, d in enumerate(order)}
    decisions = {key: tie_goes_plus(rule, topo.coords[key[0]], key[1], key[2],  # type: ignore[arg-type]
                                    order[:position[key[1]]]) for key in keys}
    parents = dict(routes.parents)
    contrib = {s: list(source_arc_loads(parents[s], s, hosts)) for s in sources}
    load: dict[Arc, float] = {}
    for s in sources:
        add_loads(load, contrib[s], cables, 1.0)
    mean = sum(x * cables[a] for a, x in load.items()) / sum(cables.values())
    score = _score(load)
    n = len(topo.switches)
    work = 0

    def attempt(flip: tuple[tuple[str, int, tuple[int, ...]], ...]) -> bool:
        """Flip these ties; keep them if the loads improve."""
        nonlocal score, work
        for key in flip:
            decisions[key] = not decisions[key]
        touched = {key[0] for key in flip}
        new = {}
        for s in touched:
            par = dor_tree(topo, s, order, rule, decisions, by_coord)
            new[s] = (par, list(source_arc_loads(par, s, hosts)))
            add_loads(load, contrib[s], cables, -1.0)
            add_loads(load, new[s][1], cables, 1.0)
        work += len(touched) * 3 * n + len(load)
        got = _score(load)
        if got < score:
            score = got
            for s, (par, c) in new.items():
                parents[s], contrib[s] = par, c
            return True
        for s, (par, c) in new.items():
            add_loads(load, c, cables, -1.0)
            add_loads(load, contrib[s], cables, 1.0)
        for key in flip:
            decisions[key] = not decisions[key]
        return False

    def done() -> bool:
        return score[0] <= mean * (1 + 1e-9) or work > max_work

    for _ in range(rounds):
        improved = False
        for key in keys:
            if done():
                break
            improved |= attempt((key,))
        if not improved and len(keys) <= pair_limit:
            for a, b in itertools.combinations(keys, 2):
                if done():
                    break
                if attempt((a, b)):
                    improved = True
                    break
        if not improved or done():
            break
    if parents == routes.parents:
        return routes
    return Routes(routes.algorithm, parents, {**routes.detail, "tie_break": f"{rule}+searched"})


def _score(load: dict[Arc, float]) -> tuple[float, ...]:
    """Lower is better: all loads, largest first, compared in that order (leximin).

    Only the first entry is the objective; the rest let the search step off plateaus
    where several links share the maximum."""
    return tuple(sorted((round(x, 6) for x in load.values()), reverse=True))
