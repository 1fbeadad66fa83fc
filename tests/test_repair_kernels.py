"""The inner steps of routing/repair/ that every double failure of `vlanroute whatif` runs
once per broken tree (issue 40), each against a plain reference on random small trees
(hypothesis): a tree's loads per arc (`tree_arc_loads`) against a count over every host
pair's path, the live links (`Degraded.live`) against `Degraded.alive`, the parts of a
forest (`_components`) against networkx, and an exchange's subtree sums (`Exchanges`)
against a count over networkx's sides of each link."""

from __future__ import annotations

import random

import networkx as nx
from fabrics import random_graph as _graph
from fabrics import random_spanning_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.model.links import link
from vlanroute.routing.repair.engine import _components, _cut_parts
from vlanroute.routing.repair.loads import Exchanges
from vlanroute.routing.repair.model import Degraded, Tree, tree_arc_loads




@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12))
def test_tree_arc_loads_count_every_host_pairs_path(seed: int, n: int) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    links = random_spanning_tree(g, rng)
    hosts = {s: rng.randrange(0, 4) for s in g}
    senders = {s: rng.randrange(0, hosts[s] + 1) for s in g if rng.random() < 0.7}
    t = nx.Graph(list(links))
    want: dict[tuple[str, str], float] = {}
    for s, k in senders.items():
        for d, m in hosts.items():
            if d == s:
                continue
            path = nx.shortest_path(t, s, d)
            for arc in zip(path, path[1:]):
                want[arc] = want.get(arc, 0.0) + k * m
    got = tree_arc_loads(links, senders, hosts)
    assert set(got) == {(a, b) for l in links for a, b in (l, l[::-1])}
    assert {a: x for a, x in got.items() if x} == {a: x for a, x in want.items() if x}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 10), st.integers(0, 3), st.integers(0, 3))
def test_live_holds_exactly_the_pairs_alive_holds(seed: int, n: int, dead_pairs: int, dead_switches: int) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    cables = {link(a, b): rng.randrange(1, 3) for a, b in g.edges}
    for a, b in rng.sample(sorted(cables), min(dead_pairs, len(cables))):
        # a failure as named, sometimes the other way round (a key repair.link would not write)
        cables[(b, a) if rng.random() < 0.5 else (a, b)] = 0
    dead = frozenset(rng.sample(sorted(g), min(dead_switches, n)))
    fabric = Degraded(cables, dead, {s: 1 for s in g if s not in dead})
    every = [(a, b) for a in g for b in g if a != b]
    assert {p for p in every if fabric.alive(*p)} == set(fabric.live)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 14), st.integers(0, 4))
def test_components_are_networkxs_parts(seed: int, n: int, cut: int) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    links = sorted(random_spanning_tree(g, rng))
    kept = set(rng.sample(links, max(0, len(links) - cut)))
    nodes = {s for s in g if rng.random() < 0.8} | {s for l in kept for s in l}
    f = nx.Graph()
    f.add_nodes_from(nodes)
    f.add_edges_from(kept)
    got = _components(kept, nodes)
    assert sorted(map(sorted, got)) == sorted(map(sorted, nx.connected_components(f)))
    assert sum(map(len, got)) == len(nodes)          # each node in one part


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12))
def test_exchanges_subtree_sums_are_the_sides_of_each_link(seed: int, n: int) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    links = random_spanning_tree(g, rng)
    hosts = {s: rng.randrange(0, 4) for s in g}
    senders = {s: rng.randrange(0, hosts[s] + 1) for s in g}
    cut = rng.choice(sorted(links))
    ex = Exchanges(links, cut, senders, hosts)
    x, y = cut
    t = nx.Graph(list(links))
    assert ex.s[x] == sum(senders.values()) and ex.h[x] == sum(hosts.values())
    for v, p in ex.parent.items():
        if p is None:
            continue
        side = nx.node_connected_component(nx.restricted_view(t, [], [(v, p), (p, v)]), v)
        assert ex.s[v] == sum(senders[u] for u in side)
        assert ex.h[v] == sum(hosts[u] for u in side)
    assert ex.far == nx.node_connected_component(nx.restricted_view(t, [], [(x, y), (y, x)]), y)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 14), st.integers(0, 3), st.integers(0, 2))
def test_cut_parts_from_the_preorder_are_networkxs_parts(seed: int, n: int, cut: int, dead: int) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    tree = Tree(1, (), random_spanning_tree(g, rng))
    po = tree.preorder
    assert po is not None
    pre, tin, end = po
    rooted = nx.bfs_tree(nx.Graph(list(tree.links)), pre[0])
    for v in pre:                                  # each range is the switch's subtree
        assert set(pre[tin[v]:end[tin[v]]]) == {v} | nx.descendants(rooted, v)
    gone = frozenset(rng.sample(sorted(g), min(dead, n - 1)))
    removed = set(rng.sample(sorted(tree.links), min(cut, len(tree.links))))
    removed |= {l for l in tree.links if set(l) & gone}
    f = nx.Graph()
    f.add_nodes_from(s for s in tree.switches if s not in gone)
    f.add_edges_from(tree.links - removed)
    got = _cut_parts(po, removed, gone)
    assert sorted(map(sorted, got)) == sorted(map(sorted, nx.connected_components(f)))
    assert sorted(map(sorted, got)) == sorted(map(sorted, _components(tree.links - removed, f.nodes)))
