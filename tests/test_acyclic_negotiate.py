"""Negotiated congestion on a fixed channel order (routing/acyclic/negotiate.py): its trees
span the fabric, every route increases in the given order (so the channel dependency graph,
computed here from the routes, stays acyclic), its reported load is the trees' real load,
and it never returns a plan worse than its start."""

from __future__ import annotations

import random

import fabrics
import networkx as nx
import pytest
from fabrics import channel_dependencies_acyclic, max_load
from hypothesis import given, settings
from hypothesis import strategies as st
from topologies import connected_graphs

from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.negotiate import negotiate
from vlanroute.routing.bounds import distance_sum
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.updown import central_switch, updown_routes


def hosted(g: nx.Graph, per: int) -> tuple[Topology, dict[str, int]]:
    """The fabric of a drawn graph, `per` hosts per switch and one more on every third."""
    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    return topo, {s: per + (i % 3 == 0) for i, s in enumerate(topo.switches)}


def start_and_order(topo: Topology) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], int]]:
    """up*/down* trees and one topological order of their channel dependencies (networkx),
    every arc ranked; the order is shuffled among equally free arcs by a seeded random key."""
    parents = updown_routes(topo, central_switch(topo)).parents
    cdg = nx.DiGraph()
    cdg.add_nodes_from(topo.arc_cables())
    for src, tree in parents.items():
        for v, p in tree.items():
            if p != src:
                cdg.add_edge((tree[p], p), (p, v))
    key = {a: random.Random(7).random() for a in cdg}
    order = list(nx.lexicographical_topological_sort(cdg, key=key.__getitem__))
    return parents, {a: i for i, a in enumerate(order)}


def increasing(src: str, tree: dict[str, str], rank: dict[tuple[str, str], int]) -> bool:
    return all(p == src or rank[(tree[p], p)] < rank[(p, v)] for v, p in tree.items())


@settings(max_examples=30, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3), st.integers(min_value=0, max_value=3))
def test_negotiated_trees_span_increase_and_never_lose(g: nx.Graph, per: int, seed: int) -> None:
    topo, hosts = hosted(g, per)
    start, rank = start_and_order(topo)
    scale = distance_sum(topo, hosts) / sum(topo.arc_cables().values())
    load, trees = negotiate(topo, hosts, rank, start, scale, rounds=6, seed=seed)
    check_ordered_plan(topo, hosts, rank, start, load, trees)


def check_ordered_plan(topo: Topology, hosts: dict[str, int], rank: dict[tuple[str, str], int],
                       start: dict[str, dict[str, str]], load: float, trees: dict[str, dict[str, str]]) -> None:
    """Trees that span over cables, increase in `rank` (so their dependency graph, computed
    from the routes, is acyclic), carry the reported load and no more than `start`."""
    for src in topo.switches:
        tree = trees[src]
        assert set(tree) == set(topo.switches) - {src}
        assert all(topo.graph.has_edge(v, p) for v, p in tree.items())
        assert increasing(src, tree, rank)
    assert channel_dependencies_acyclic(trees, hosts)
    assert load == pytest.approx(max_load(topo, hosts, trees))
    assert load <= max_load(topo, hosts, start) * (1 + 1e-9)


def test_a_start_that_breaks_the_order_is_refused() -> None:
    topo, hosts = fabrics.torus([4, 4], per=1)
    start, rank = start_and_order(topo)
    reversed_rank = {a: -i for a, i in rank.items()}
    with pytest.raises(AssertionError):
        negotiate(topo, hosts, reversed_rank, start, 1.0, rounds=1)


def test_negotiation_lowers_the_load_on_a_degraded_torus() -> None:
    # From up*/down* (3 to 4 times the optimum on a degraded torus) the rounds move
    # load off the root's links within the same order.
    topo, hosts = fabrics.degraded_torus(6, 3, seed=0)
    start, rank = start_and_order(topo)
    opt = optimum_bound(topo, hosts).value
    scale = distance_sum(topo, hosts) / sum(topo.arc_cables().values())
    load, trees = negotiate(topo, hosts, rank, start, scale, rounds=10)
    assert channel_dependencies_acyclic(trees, hosts)
    assert load < 0.9 * max_load(topo, hosts, start)
    assert load >= opt * (1 - 1e-9)      # the LP optimum bounds every routing
