"""The balanced shortest-path trees compiled (routing/balance_kernel.py) against the
interpreted builders (routing/balance.py), and share_trees' shortest-path-tree test without
rerooting against the rerooted one: on random fabrics, the same trees, entry for entry."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from fabrics import random_fabric, random_graph, random_spanning_tree
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vlanroute.model.topology import Topology
from vlanroute.routing import balance
from vlanroute.routing.trees import adjacency, is_shortest_path_tree, reroot

pytest.importorskip("numba")



def both(monkeypatch: pytest.MonkeyPatch, topo: Topology, hosts: dict[str, int], builder: str,
         rounds: int) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(balance, "KERNEL_FROM", 0)
    compiled = balance.balanced_shortest_parents(topo, hosts, rounds=rounds, builder=builder)
    monkeypatch.setattr(balance, "KERNEL_FROM", 10**9)
    interpreted = balance.balanced_shortest_parents(topo, hosts, rounds=rounds, builder=builder)
    return compiled, interpreted


def same_entry_for_entry(a: dict[str, dict[str, str]], b: dict[str, dict[str, str]]) -> bool:
    # the order of the sources and of each tree's entries too: it steers later searches
    return list(a) == list(b) and all(list(a[s].items()) == list(b[s].items()) for s in a)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), n=st.integers(3, 24), parallel=st.booleans(), hostless=st.booleans(),
       builder=st.sampled_from(["bottom-up", "sssp"]), rounds=st.integers(1, 4))
@example(seed=0, n=3, parallel=False, hostless=False, builder="bottom-up", rounds=3)
def test_the_compiled_rounds_build_the_interpreted_trees(monkeypatch: pytest.MonkeyPatch, seed: int, n: int,
                                                         parallel: bool, hostless: bool, builder: str,
                                                         rounds: int) -> None:
    topo, hosts = random_fabric(seed, n, parallel, hostless)
    compiled, interpreted = both(monkeypatch, topo, hosts, builder, rounds)
    assert same_entry_for_entry(compiled, interpreted)


@pytest.mark.parametrize("builder", ["bottom-up", "sssp"])
def test_on_a_torus_with_ties_everywhere(monkeypatch: pytest.MonkeyPatch, builder: str) -> None:
    # a torus is all ties: every tie rule of the builders decides something here
    topo = Topology.from_generator("torus", [6, 5])
    hosts = {s: 1 + i % 3 for i, s in enumerate(topo.switches)}
    compiled, interpreted = both(monkeypatch, topo, hosts, builder, 3)
    assert same_entry_for_entry(compiled, interpreted)
    # not vacuous: the builders' trees differ from breadth-first trees with the lowest parent
    from vlanroute.routing.shortest import shortest_routes
    assert any(compiled[s] != p for s, p in shortest_routes(topo).parents.items())


def test_the_kernel_runs_only_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    topo, _ = random_fabric(1, 10, False, False)
    g = topo.simple()
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(balance, "KERNEL_FROM", 11)
    assert not balance.compiled(topo, g)
    monkeypatch.setattr(balance, "KERNEL_FROM", 10)
    assert balance.compiled(topo, g)
    monkeypatch.setenv("VLANROUTE_NO_JIT", "1")
    assert not balance.compiled(topo, g)
    monkeypatch.delenv("VLANROUTE_NO_JIT")
    apart = Topology.from_links(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
                                [("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "f"), ("f", "g"),
                                 ("g", "h"), ("h", "i"), ("i", "j"), ("j", "d")])
    assert not balance.compiled(apart, apart.simple())       # two parts: interpreted


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 20))
def test_the_tree_test_without_rerooting_agrees_with_the_rerooted_one(seed: int, n: int) -> None:
    rng = random.Random(seed)
    g = random_graph(rng, n)
    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    # random spanning trees (rarely shortest-path trees) and breadth-first ones (always,
    # from their own root), and a tree of a subgraph that leaves a switch out
    keys = [random_spanning_tree(g, rng) for _ in range(3)]
    keys += [frozenset(tuple(sorted(e)) for e in nx.bfs_tree(g, rng.choice(sorted(g.nodes))).to_undirected().edges)]
    part = g.subgraph(sorted(g.nodes)[1:])
    if n > 2 and nx.is_connected(part):
        keys.append(frozenset(tuple(sorted(e)) for e in nx.bfs_tree(part, sorted(part.nodes)[0])
                              .to_undirected().edges))
    trees: dict[frozenset[tuple[str, str]], list[str]] = {k: [] for k in keys}
    test = balance._ShortestTreeTest(topo, trees)
    agreed = 0
    for s in sorted(g.nodes):
        dist = nx.single_source_shortest_path_length(g, s)
        test.source(dist)
        for key in keys:
            want = is_shortest_path_tree(reroot(adjacency(sorted(key)), s), s, dist)
            assert test.holds(key) == want, (s, sorted(key))
            agreed += want
    assert agreed >= 1          # not vacuous: the breadth-first tree holds from its root
