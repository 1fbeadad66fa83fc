"""Protection trees (vlanroute.routing.protection): random fabrics and primary trees; every
link of every primary is covered by a backup tree that avoids it and spans the primary's
switches, or is a bridge of the fabric (then reported unprotected); checked with networkx."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import given, settings, strategies as st

import pytest

from vlanroute.model.links import link
from vlanroute.routing.protection import Primary, per_link, protect


def _fabric(rng: random.Random, kind: str) -> nx.Graph:
    if kind == "torus":
        g = nx.grid_2d_graph(rng.randint(3, 4), rng.randint(3, 4), periodic=True)
    elif kind == "ring":
        g = nx.cycle_graph(rng.randint(3, 7))
    else:
        g = nx.random_labeled_tree(rng.randint(4, 9), seed=rng.randint(0, 10**6))
        for _ in range(rng.randint(0, 5)):
            a, b = rng.sample(list(g.nodes), 2)
            g.add_edge(a, b)
    return nx.relabel_nodes(g, {n: f"s{i:02d}" for i, n in enumerate(sorted(g.nodes, key=str))})


def _primaries(g: nx.Graph, rng: random.Random, n: int, partial: bool = False) -> list[Primary]:
    """Random spanning trees, or (`partial`) each pruned to the switches some random ones
    need (as a plan's trees span only the switches with hosts and those between)."""
    out = []
    for vid in range(101, 101 + n):
        w = {e: rng.random() for e in g.edges}
        nx.set_edge_attributes(g, w, "w")
        t = nx.minimum_spanning_tree(g, weight="w")
        sources = tuple(sorted(rng.sample(sorted(g.nodes), rng.randint(1, min(3, len(g))))))
        span = set(g.nodes)
        if partial:
            need = set(sources) | set(rng.sample(sorted(g.nodes), rng.randint(1, len(g))))
            t = t.subgraph(set().union(*(nx.shortest_path(t, min(need), x) for x in need))).copy()
            span = need
        out.append(Primary(vid, frozenset(link(a, b) for a, b in t.edges), frozenset(span), sources))
    return out


def _unprotectable(g: nx.Graph, p: Primary) -> frozenset:
    """The tree links without which the fabric no longer joins the switches the tree must span."""
    out = set()
    for e in p.links:
        h = g.copy()
        h.remove_edge(*e)
        comp = nx.node_connected_component(h, next(iter(p.switches)))
        if not p.switches <= comp:
            out.add(e)
    return frozenset(out)


@pytest.mark.parametrize("construct", [protect, per_link], ids=["cover", "per-link"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["torus", "ring", "random"]), n=st.integers(1, 4),
       partial=st.booleans())
def test_every_link_is_covered_by_a_backup_that_avoids_it_or_is_a_bridge(construct, seed, kind, n, partial):
    rng = random.Random(seed)
    g = _fabric(rng, kind)
    primaries = _primaries(g, rng, n, partial)
    prot = construct([link(a, b) for a, b in g.edges], primaries, sorted(g.nodes))
    for b in prot.backups:
        t = nx.Graph(list(b.links))
        assert nx.is_tree(t) and b.switches <= set(t.nodes)
    for p in primaries:
        bridges = _unprotectable(g, p)            # the fabric's bridges when the tree spans every switch
        if not partial:
            assert bridges == frozenset(p.links & {link(a, b) for a, b in nx.bridges(g)})
        assert prot.unprotected.get(p.vid, frozenset()) == bridges
        for e in p.links - bridges:
            backup = prot.backup_for(p.vid, e)
            assert backup is not None and e not in backup.links, (p.vid, e)
            assert e in backup.covers[p.vid] and p.switches <= {x for lk in backup.links for x in lk}


def test_a_torus_needs_at_most_two_backups_per_tree_and_a_ring_one_per_link():
    """A torus is 4-edge-connected: one backup often avoids a whole primary tree, two at
    most here. A ring's spanning trees each leave out one of its n links: a link needs a
    backup that leaves it out, so one per link of the primary, n - 1; shared between
    primaries, never more than n in all."""
    torus = nx.relabel_nodes(nx.grid_2d_graph(4, 4, periodic=True), lambda n: f"s{n[0]}{n[1]}")
    rng = random.Random(1)
    primaries = _primaries(torus, rng, 4)
    prot = protect([link(a, b) for a, b in torus.edges], primaries, sorted(torus.nodes))
    for p in primaries:
        used = {prot.failover[(p.vid, e)] for e in p.links}
        assert 1 <= len(used) <= 2 and not prot.unprotected
    ring = nx.relabel_nodes(nx.cycle_graph(5), lambda n: f"s{n}")
    primaries = _primaries(ring, rng, 3)
    prot = protect([link(a, b) for a, b in ring.edges], primaries, sorted(ring.nodes))
    for p in primaries:
        assert len({prot.failover[(p.vid, e)] for e in p.links}) == 4
    assert len(prot.backups) <= 5


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["torus", "ring", "random"]), n=st.integers(1, 3),
       partial=st.booleans())
def test_a_per_link_backup_is_its_tree_with_one_link_swapped(seed, kind, n, partial):
    """per_link keeps every other link of the primary: the backup for e is T - e + f with f
    a fabric link across the cut T - e makes (so the backup is a spanning tree again), and
    among those f the one with the fewest hops summed from the sources. Where no link
    crosses (a tree over some switches only), f is a shortest path through switches
    outside the tree."""
    rng = random.Random(seed)
    g = _fabric(rng, kind)
    primaries = _primaries(g, rng, n, partial)
    prot = per_link([link(a, b) for a, b in g.edges], primaries, sorted(g.nodes))
    for p in primaries:
        nodes = {x for lk in p.links for x in lk}
        for e in p.links:
            b = prot.backup_for(p.vid, e)
            if b is None:
                continue
            assert p.links - b.links == {e}
            t = nx.Graph(list(p.links - {e}))
            t.add_nodes_from(nodes)
            side = nx.node_connected_component(t, e[0])
            across = [link(x, y) for x, y in g.edges if x in nodes and y in nodes and (x in side) != (y in side)
                      and link(x, y) != e]
            added = b.links - p.links
            if not across:
                # The sides joined through switches outside the tree, by the fewest links.
                h = g.subgraph(set(g.nodes) - nodes).copy()
                h.add_edges_from(("A", y) for x in side for y in g[x] if y not in nodes)
                h.add_edges_from(("B", y) for x in nodes - side for y in g[x] if y not in nodes)
                assert len(added) == nx.shortest_path_length(h, "A", "B")
                assert all(x not in nodes for lk in added for x in lk if sum(x in l2 for l2 in added) == 2)
                continue
            assert len(added) == 1

            def hops(f):
                h = nx.Graph(list((p.links - {e}) | {f}))
                return sum(sum(nx.single_source_shortest_path_length(h, s).values()) for s in p.sources)
            assert hops(next(iter(added))) == min(hops(f) for f in across)
