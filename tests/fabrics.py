"""The fabrics of issue 23 (and others of their kinds) as (Topology, hosts per switch),
built from networkx graphs here, and the greedy baseline a default plan must match.
Shared by tests/test_optimum.py, test_acyclic.py, test_default_choice.py and bench/quality.py;
random_spanning_tree and random_graph by the what-if's and the repair's tests, random_fabric
by the compiled kernels' tests, random_plan
and switch_index by the dead switches' tests."""

from __future__ import annotations

import random
from collections import deque

import networkx as nx

from vlanroute.model.links import Arc, link
from vlanroute.model.topology import Topology
from vlanroute.routing.repair.loads import LoadBook
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.trees import ParentMap, Splits, arc_loads, source_arc_loads
from vlanroute.routing.whatif.pairs import RootedTree
from vlanroute.routing.whatif.switches import SwitchIndex


def random_graph(seed: int | random.Random, n: int) -> nx.Graph:
    """A ring of n switches s00.. with up to 2n random chords (seeded, or drawn from the
    caller's generator)."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    g = nx.cycle_graph(n)
    for _ in range(rng.randrange(0, 2 * n)):
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            g.add_edge(a, b)
    return nx.relabel_nodes(g, {i: f"s{i:02d}" for i in range(n)})


def random_fabric(seed: int, n: int, parallel: bool, hostless: bool) -> tuple[Topology, dict[str, int]]:
    """A random connected fabric (a ring with chords), some pairs with two or three cables,
    1 to 6 hosts a switch (some switches none), the switches in an order unlike their names'."""
    rng = random.Random(seed)
    g = random_graph(rng, n)
    links = [(a, b) for a, b in g.edges for _ in range(rng.choice((1, 1, 2, 3)) if parallel else 1)]
    rng.shuffle(links)
    names = sorted(g.nodes)
    rng.shuffle(names)
    topo = Topology.from_links(names, links)
    hosts = {s: (0 if hostless and rng.random() < 0.3 else rng.randint(1, 6)) for s in names}
    return topo, hosts


def random_spanning_tree(g: nx.Graph, rng: random.Random) -> frozenset[tuple[str, str]]:
    """A random spanning tree of the connected graph g (a randomised breadth-first search
    from a random root), its links as repair.link orders them."""
    from vlanroute.model.links import link
    root = rng.choice(sorted(g.nodes))
    seen, links, frontier = {root}, set(), [root]
    while frontier:
        u = frontier.pop(rng.randrange(len(frontier)))
        for v in sorted(g[u], key=lambda _: rng.random()):
            if v not in seen:
                seen.add(v)
                links.add(link(u, v))
                frontier.append(v)
    return frozenset(links)


def custom(edges: list[tuple[str, str]], hosted: set[str] | None = None, per: int = 4) -> tuple[Topology, dict[str, int]]:
    names = sorted({x for e in edges for x in e}, key=lambda x: (len(x), x))
    topo = Topology.from_links(names, edges)
    return topo, {s: per if hosted is None or s in hosted else 0 for s in names}


def leaf_spine(leaves: int = 8, spines: int = 4, per: int = 4) -> tuple[Topology, dict[str, int]]:
    """Every leaf cabled to every spine; hosts on the leaves only."""
    edges = [(f"l{i}", f"s{j}") for i in range(leaves) for j in range(spines)]
    return custom(edges, {f"l{i}" for i in range(leaves)}, per)


def random_regular(n: int = 24, degree: int = 3, seed: int = 1, per: int = 4) -> tuple[Topology, dict[str, int]]:
    g = nx.random_regular_graph(degree, n, seed=seed)
    return custom([(f"s{a}", f"s{b}") for a, b in sorted(g.edges)], None, per)


def degraded_torus(k: int = 6, removed: int = 3, seed: int = 0, per: int = 4) -> tuple[Topology, dict[str, int]]:
    """A k x k torus (networkx's grid) with `removed` random cables gone, still connected."""
    g = nx.grid_2d_graph(k, k, periodic=True)
    name = {(x, y): f"sw{y * k + x + 1}" for x, y in g.nodes}
    edges = sorted((name[a], name[b]) for a, b in g.edges)
    rnd = random.Random(seed)
    while True:
        gone = set(rnd.sample(range(len(edges)), removed))
        kept = [e for i, e in enumerate(edges) if i not in gone]
        if nx.is_connected(nx.Graph(kept)) and len(nx.Graph(kept)) == k * k:
            break
    topo = Topology.from_links([f"sw{i + 1}" for i in range(k * k)], kept)
    return topo, {s: per for s in topo.switches}


def dragonfly(groups: int = 6, routers: int = 4, per: int = 4) -> tuple[Topology, dict[str, int]]:
    """Groups of fully connected routers, one global cable between every two groups,
    spread over the routers of each group."""
    edges = [(f"g{g}r{i}", f"g{g}r{j}") for g in range(groups) for i in range(routers) for j in range(i + 1, routers)]
    edges += [(f"g{a}r{(b - 1) % routers}", f"g{b}r{a % routers}") for a in range(groups) for b in range(a + 1, groups)]
    return custom(edges, None, per)


def torus(dims: list[int], per: int = 4) -> tuple[Topology, dict[str, int]]:
    topo = Topology.from_generator("torus", dims)
    return topo, {s: per for s in topo.switches}


def greedy_shortest_trees(topo: Topology, host_count: dict[str, int]) -> dict[str, ParentMap]:
    """The baseline of issue 23: sources one by one (most hosts first), each taking the
    shortest-path tree that keeps the current maximum load lowest, built switch by switch
    in breadth-first order: every switch takes, of its neighbours one hop nearer the
    source, the one whose link to it carries least so far (ties: switch order)."""
    g = topo.simple()
    cables = topo.arc_cables()
    load: dict[Arc, float] = {a: 0.0 for a in cables}
    order = {s: i for i, s in enumerate(topo.switches)}
    parents: dict[str, ParentMap] = {}
    for src in sorted(topo.switches, key=lambda s: (-host_count.get(s, 0), order[s])):
        dist = {src: 0}
        q = deque([src])
        while q:
            u = q.popleft()
            for v in sorted(g.neighbors(u), key=order.__getitem__):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        tree: ParentMap = {}
        for v in sorted(dist, key=lambda x: (dist[x], order[x])):
            if v == src:
                continue
            near = [p for p in g.neighbors(v) if dist[p] == dist[v] - 1]
            tree[v] = min(near, key=lambda p: (load[(p, v)] / cables[(p, v)], order[p]))
        parents[src] = tree
        for arc, x in source_arc_loads(tree, src, host_count):
            load[arc] += x
    return parents


def max_load(topo: Topology, host_count: dict[str, int], parents: dict[str, ParentMap],
             splits: Splits | None = None) -> float:
    return max(arc_loads(parents, host_count, topo.arc_cables(), splits).values(), default=0.0)


def channel_dependencies_acyclic(parents: dict[str, ParentMap], host_count: dict[str, int],
                                 splits: Splits | None = None) -> bool:
    """Dally and Seitz's criterion, computed here from the trees: channel p->v waits for
    v->w wherever a route between switches with hosts crosses p, v, w (every tree a
    switch's hosts send on, with `splits`)."""
    cdg = nx.DiGraph()
    hosted = {s for s, n in host_count.items() if n}
    trees = [(src, tree) for src in hosted
             for tree in ([t for t, _ in splits[src]] if splits and src in splits else [parents[src]])]
    for src, tree in trees:
        for dst in hosted - {src}:
            path = [dst]
            while path[-1] != src:
                path.append(tree[path[-1]])
            path.reverse()
            cdg.add_edges_from(((a, b), (b, c)) for a, b, c in zip(path, path[1:], path[2:]))
    return nx.is_directed_acyclic_graph(cdg)


def random_hosts_and_groups(rng: random.Random, g: nx.Graph, parallel: bool, host_counts: tuple[int, ...],
                            k: int) -> tuple[dict[tuple[str, str], int], dict[str, int], list[list[str]]]:
    """For a plan on g: cables per link (1 to 3 when parallel), hosts per switch drawn from
    host_counts (the smallest switch has at least one), and the switches dealt into k
    groups (a tree's sources each)."""
    from vlanroute.model.links import link
    names = sorted(g.nodes)
    cables = {link(a, b): rng.choice((1, 2, 3)) if parallel else 1 for a, b in g.edges}
    hosts = {s: rng.choice(host_counts) for s in names}
    hosts[names[0]] = hosts[names[0]] or 1
    groups: list[list[str]] = [[] for _ in range(k)]
    for s in names:
        groups[rng.randrange(k)].append(s)
    return cables, hosts, groups


def random_plan(seed: int, n: int, k: int, parallel: bool, shares: bool
            ) -> tuple[nx.Graph, dict[tuple[str, str], int], dict[str, int], list[Tree]]:
    """A random graph (random_graph), its cables (1 or 2 per pair when parallel), 1 to 3
    hosts per switch and k trees over it, each spanning every switch (the dead switch's
    fast path's case), their sources some of the group's switches (shares: some sending
    only part of their hosts)."""
    rng = random.Random(seed)
    g = random_graph(rng, n)
    cables = {link(a, b): rng.choice((1, 2)) if parallel else 1 for a, b in g.edges}
    switches = sorted(g.nodes)
    hosts = {s: rng.choice((1, 2, 3)) for s in switches}
    trees = []
    for vid, group in enumerate([switches[i::k] for i in range(k)], start=101):
        part = tuple((s, rng.randrange(0, hosts[s] + 1)) for s in group if shares and rng.random() < 0.3)
        trees.append(Tree(vid, tuple(group), random_spanning_tree(g, rng), part))
    return g, cables, hosts, trees


def switch_index(cables: dict[tuple[str, str], int], hosts: dict[str, int], trees: list[Tree]) -> SwitchIndex:
    """The dead switches' index (routing/whatif/switches.py) of such a plan."""
    intact = Degraded(cables, frozenset(), hosts)
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees}, intact)
    arcs = {x: i for i, x in enumerate(a for (u, v) in cables for a in ((u, v), (v, u)))}
    rooted = {t.vid: RootedTree(t, hosts) for t in trees}
    return SwitchIndex(trees, rooted, arcs, [base.total.get(a, 0.0) for a in arcs],
                       [cables[link(*a)] for a in arcs], intact.adjacency(), hosts, sorted(hosts))
