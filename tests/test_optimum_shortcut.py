"""The optimum's shortcut (routing/optimum.py `sandwiched`): where a cheap lower bound meets
the max load of the even split over all shortest paths, that bound is the optimum and the
LP is not solved. The plain path is the LP (`lp_bound`): on random fabrics, with parallel
cables and uneven hosts, the even split is never below it (it is a feasible flow), and
wherever the shortcut answers, its answer is the LP's; on fabrics whose links all look
alike (hypercubes, leaf-spines with hosts on the leaves) it does answer."""

from __future__ import annotations

import networkx as nx
import pytest
from fabrics import leaf_spine
from hypothesis import given, settings
from hypothesis import strategies as st
from topologies import connected_graphs

from vlanroute.model.topology import Topology
from vlanroute.routing.optimum import even_split_peak, lp_bound, optimum_bound, sandwiched


def _check(topo: Topology, hosts: dict[str, int]) -> float | None:
    if sum(1 for n in hosts.values() if n) < 2:
        return None
    plain = lp_bound(topo, hosts)
    assert even_split_peak(topo, hosts) >= plain * (1 - 1e-6)          # a feasible flow
    got = sandwiched(topo, hosts)
    if got is not None:
        assert got == pytest.approx(plain, rel=1e-6)
    return got


@settings(max_examples=30, deadline=None)
@given(connected_graphs(), st.lists(st.integers(min_value=0, max_value=4), min_size=12, max_size=12),
       st.lists(st.integers(min_value=1, max_value=3), min_size=40, max_size=40))
def test_the_shortcut_is_the_lp_wherever_it_answers(g: nx.Graph, per: list[int], cables: list[int]) -> None:
    links = [(a, b) for (a, b), c in zip(sorted(g.edges), cables) for _ in range(c)]
    topo = Topology.from_links(sorted(g.nodes), links)
    _check(topo, {s: per[i] for i, s in enumerate(topo.switches)})


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=2, max_value=4), st.integers(min_value=1, max_value=3),
       st.integers(min_value=0, max_value=3))
def test_it_answers_on_hypercubes_and_not_once_a_cable_is_gone(dims: int, per: int, gone: int) -> None:
    g = nx.hypercube_graph(dims)
    names = {v: "q" + "".join(map(str, v)) for v in g}
    edges = sorted((names[a], names[b]) for a, b in g.edges)
    topo = Topology.from_links(sorted(names.values()), edges)
    hosts = {s: per for s in topo.switches}
    assert _check(topo, hosts) is not None
    assert optimum_bound(topo, hosts).value == pytest.approx(lp_bound(topo, hosts), rel=1e-6)
    if dims >= 3:
        cut = Topology.from_links(sorted(names.values()), edges[:gone] + edges[gone + 1:])
        _check(cut, hosts)      # may or may not answer; must agree with the LP if it does


@pytest.mark.parametrize("leaves,spines", [(4, 2), (6, 3), (8, 4)])
def test_it_answers_on_leaf_spines(leaves: int, spines: int) -> None:
    topo, hosts = leaf_spine(leaves, spines)
    assert _check(topo, hosts) is not None
