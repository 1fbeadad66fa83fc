"""The budget search's per-source loads on a tree (routing/budget_search.py IndexTree) are
array operations; they must be the same bits as the loop over the tree's links they
replaced (written out again here, link by link), or the plans would change: the same
arcs in the same order, the same increments, the same maximum and the same running sum
of squared loads, on random spanning trees with random loads, weights and cables."""

from __future__ import annotations

import random

import fabrics
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.model.topology import Topology
from vlanroute.routing.budget_search import IndexTree, Problem, problem_of, to_index_parents
from vlanroute.routing.trees import tree_parents


def reference(tree: IndexTree, s: int, weight: int, load: list[float], invc: list[float],
              peak: float) -> tuple[list[tuple[int, int]], tuple[float, float]]:
    """The loop over the links: (contribution, score)."""
    ts = tree.tin[s]
    contribution: list[tuple[int, int]] = []
    for tin, tout, down, xd, up, xu in tree.links:
        if tin <= ts < tout:
            if xu:
                contribution.append((up, weight * xu))
        elif xd:
            contribution.append((down, weight * xd))
    top, sq = peak, 0.0
    for a, x in contribution:
        l0 = load[a]
        l1 = l0 + x * invc[a]          # x: weight times the load per host, an integer
        if l1 > top:
            top = l1
        sq += l1 * l1 - l0 * l0
    return contribution, (round(top, 6), sq)


def fabric(seed: int, n: int, parallel: bool) -> tuple[Topology, dict[str, int]]:
    rng = random.Random(seed)
    g = fabrics.random_graph(rng, n)
    edges = sorted(tuple(sorted(e)) for e in g.edges)
    if parallel:                                    # some pairs with two or three cables (a LAG)
        edges += [e for e in edges if rng.random() < 0.3] * rng.randint(1, 2)
    topo = Topology.from_links(sorted(g.nodes), edges)
    return topo, {s: rng.choice([0, 1, 2, 4, 7]) for s in topo.switches}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(12, 40), parallel=st.booleans())
def test_the_array_loads_are_the_loops_bits(seed: int, n: int, parallel: bool) -> None:
    topo, hosts = fabric(seed, n, parallel)
    problem: Problem = problem_of(topo, hosts)
    rng = random.Random(seed)
    idx = {s: i for i, s in enumerate(problem.names)}
    g = topo.simple()
    root = rng.randrange(n)
    tree_links = fabrics.random_spanning_tree(g, rng)
    parent = to_index_parents(tree_parents(sorted(tree_links), problem.names[root]), idx)
    tree = IndexTree(parent, root, n, problem.hosts, problem.arc)
    invc = problem.inv_cables
    # loads with many significant bits, so that any change of summation order shows
    load = [rng.random() * 1000 for _ in invc]
    peak = max(load) * rng.choice([1.0, 1.0, 0.5])
    arr = np.array(load)
    for s in range(n):
        weight = rng.randint(1, 9)
        want_contribution, want_score = reference(tree, s, weight, load, invc, peak)
        arcs, x = tree.contribution(s, weight)
        assert list(zip(arcs.tolist(), x.tolist(), strict=True)) == want_contribution
        got = tree.score(s, weight, arr, problem.invc, peak)
        assert got == want_score
        assert tree.score(s, weight, arr, problem.invc, peak) == want_score      # kept, and the same
    assert arr.tolist() == load                     # scoring changes no load
