"""The repair's incremental deadlock guard (routing/repair/guard.py `AcyclicWith`) answers as
networkx does on the whole channel dependency graph: random dependency sets over a few
switches (cycles are common there), base acyclic or not, added sets overlapping base or not.
So does the guard of one VLAN against every other VLAN's dependencies counted together
(`CountedDependencies`), as the VLANs' dependencies change one after another. The
dependencies of every tree one link exchange makes (`ExchangedDependencies`, computed
only on the cycle the new link closes) are those of its routes, computed here from every
path between a switch that sends and one with hosts."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.model.links import link
from vlanroute.routing.repair.guard import AcyclicWith, CountedDependencies, ExchangedDependencies, tree_dependencies

SWITCHES = "abcde"


def dependencies() -> st.SearchStrategy[set[tuple[str, str, str]]]:
    """Sets of (p, q, r): channel p->q waits for q->r (p, q, r distinct neighbours-to-be)."""
    triple = st.tuples(*[st.sampled_from(SWITCHES)] * 3).filter(lambda t: t[0] != t[1] != t[2] != t[0])
    return st.sets(triple, max_size=14)


def networkx_acyclic(deps: set[tuple[str, str, str]]) -> bool:
    g = nx.DiGraph()
    g.add_edges_from(((a, b), (b, c)) for a, b, c in deps)
    return nx.is_directed_acyclic_graph(g)


@settings(max_examples=200, deadline=None)
@given(dependencies(), st.lists(dependencies(), min_size=1, max_size=4))
def test_the_guard_agrees_with_networkx(base: set[tuple[str, str, str]], more: list[set[tuple[str, str, str]]]) -> None:
    guard = AcyclicWith(base)
    assert guard.base_acyclic == networkx_acyclic(base)
    for extra in more:                      # one guard asked many times, as improve_tree does
        assert guard.accepts(extra) == networkx_acyclic(base | extra)
        assert guard.accepts(extra | base) == networkx_acyclic(base | extra)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), dependencies()), min_size=1, max_size=10),
       st.lists(dependencies(), min_size=1, max_size=3))
def test_the_counted_guard_of_a_vlan_agrees_with_networkx_on_the_others(
        updates: list[tuple[int, set[tuple[str, str, str]]]], more: list[set[tuple[str, str, str]]]) -> None:
    """Four VLANs' dependencies set one after another (shared ones counted per VLAN, cycles
    among them or not); after each change, the guard of every VLAN answers as networkx does
    on the other VLANs' dependencies with each added set, and there is no guard (None)
    exactly when those have a cycle already."""
    counted = CountedDependencies()
    now: dict[int, set[tuple[str, str, str]]] = {}
    for vid, deps in updates:
        counted.set(vid, deps)
        now[vid] = deps
        for v in range(4):
            others = set().union(*(d for u, d in now.items() if u != v))
            guard = counted.except_for(v)
            assert (guard is None) == (not networkx_acyclic(others))
            for extra in more:
                assert (guard is not None and guard.accepts(extra)) == networkx_acyclic(others | extra)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), dependencies()), min_size=1, max_size=10))
def test_the_cycle_kept_is_a_cycle_of_the_counted_dependencies(updates: list[tuple[int, set[tuple[str, str, str]]]]) -> None:
    """Where the counted dependencies have a cycle, the one kept (and reused while its
    dependencies stay) is made of counted dependencies, each channel waiting for the next."""
    counted = CountedDependencies()
    now: dict[int, set[tuple[str, str, str]]] = {}
    for vid, deps in updates:
        counted.set(vid, deps)
        now[vid] = deps
        counted.except_for(0)
        every = set().union(*now.values())
        if counted.cycle is None:
            assert networkx_acyclic(every)
            continue
        assert not networkx_acyclic(every)
        ring = counted.cycle
        assert ring and set(ring) <= every
        # (p, q, r) then (q, r, s): channel q->r is the one waited for, and then waits
        assert all(a[1:] == b[:2] for a, b in zip(ring, ring[1:] + ring[:1]))


def test_a_cycle_through_base_and_two_added_dependencies_is_found() -> None:
    # a->b waits for b->c (base); the added b->c => c->a and c->a => a->b close the ring
    guard = AcyclicWith({("a", "b", "c")})
    assert guard.accepts({("b", "c", "a")})
    assert not guard.accepts({("b", "c", "a"), ("c", "a", "b")})
    assert not AcyclicWith({("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")}).accepts(set())


def route_dependencies(links: frozenset[tuple[str, str]], senders: dict[str, int],
                       hosts: dict[str, int]) -> set[tuple[str, str, str]]:
    """(p, q, r) wherever the tree's path from a switch that sends to one with hosts crosses
    q from p to r."""
    tree = nx.Graph(list(links))
    out = set()
    for s in tree:
        for t in tree:
            if s != t and senders.get(s) and hosts.get(t):
                path = nx.shortest_path(tree, s, t)
                out |= set(zip(path, path[1:], path[2:]))
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=2, max_value=11), st.integers(0, 10**6))
def test_an_exchange_changes_the_dependencies_as_its_routes_do(n: int, seed: int) -> None:
    """Every exchange of a link of a random spanning tree for another cable across the same
    cut (the link itself too): the dependencies computed on the cycle alone are those of the
    new tree's routes, with senders and hosts on some switches only."""
    rnd = random.Random(seed)
    g = nx.gnm_random_graph(n, rnd.randint(n - 1, 3 * n), seed=seed)
    if not nx.is_connected(g):
        g.add_edges_from((i, i + 1) for i in range(n - 1))
    g = nx.relabel_nodes(g, {i: f"s{i}" for i in g})
    links = frozenset(link(a, b) for a, b in nx.random_spanning_tree(g, seed=seed).edges)
    senders = {v: rnd.choice([0, 0, 1, 3]) for v in g}
    hosts = {v: rnd.choice([0, 1, 2]) for v in g}
    assert tree_dependencies(links, senders, hosts) == route_dependencies(links, senders, hosts)
    exchanged = ExchangedDependencies(links, senders, hosts)
    for cut in sorted(links):
        rest = nx.Graph(list(links - {cut}))
        rest.add_nodes_from(g)
        side = nx.node_connected_component(rest, cut[0])
        for a, b in sorted(g.edges):
            if (a in side) != (b in side):
                new = link(a, b)
                assert exchanged.of(cut, new) == route_dependencies(links - {cut} | {new}, senders, hosts)
