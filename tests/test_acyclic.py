"""The acyclic engine: deadlock-free on any graph (its channel dependency graph, computed
here from the routes, has no cycle), every switch reached by one tree per source, and the
load targets of issue 23 on the irregular fabrics."""

from __future__ import annotations

import random
from dataclasses import replace

import fabrics
import networkx as nx
import pytest
from fabrics import channel_dependencies_acyclic, max_load
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import increasing
from topologies import connected_graphs

import vlanroute.routing.acyclic.engine as acyclic_engine
import vlanroute.routing.acyclic.refine as refine
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.engine import guided_orders
from vlanroute.routing.depgraph import DependencyGraph
from vlanroute.routing.engine import Options, Routes
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.shortest import shortest_routes

ACYCLIC = ENGINES["acyclic"]


def route(topo: Topology, hosts: dict[str, int]) -> dict[str, dict[str, str]]:
    return ACYCLIC.route(topo, hosts, ACYCLIC.params(topo, Options())).parents


def route_unrefined(topo: Topology, hosts: dict[str, int]) -> dict[str, dict[str, str]]:
    """`route` without the order refinement (acyclic/refine.py), the column step
    (acyclic/columns.py) and the stored orders (acyclic/gapped.py, a column step too): they
    cost a 6x6 torus with cables gone about 17 s, 20 s and 20 s; the search is what is measured."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refine, "FROM", len(topo.switches) + 1)
        patch.setattr(acyclic_engine, "COLUMN_ABOVE", float("inf"))
        patch.setattr(acyclic_engine, "FULL", replace(acyclic_engine.FULL, gapped=0))
        return route(topo, hosts)


def before_columns(topo: Topology) -> acyclic_engine.Effort:
    """The full search without its last step, trees as columns (tests/test_acyclic_columns.py
    checks that step and the full search with it): issue 23's targets were met before it,
    and on random 3-regular graphs of 24 switches its long walk costs about 20 s a graph."""
    return replace(ACYCLIC.params(topo, Options()), columns=0)


def check_plan(topo: Topology, hosts: dict[str, int], routes: Routes, ratio: float) -> None:
    """Every tree a switch's hosts send on spans the fabric (a split switch's hosts add up to
    its own), the whole plan is deadlock-free, and its load is at most `ratio` times the optimum."""
    for s in topo.switches:
        trees = [t for t, _ in routes.splits[s]] if s in routes.splits else [routes.parents[s]]
        assert all(spans(topo, s, tree) for tree in trees)
        if s in routes.splits:
            assert sum(n for _, n in routes.splits[s]) == hosts[s]
    assert channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    load = max_load(topo, hosts, routes.parents, routes.splits)
    assert load <= ratio * optimum_bound(topo, hosts).value * (1 + 1e-9)


def spans(topo: Topology, src: str, tree: dict[str, str]) -> bool:
    g = topo.simple()
    if set(tree) != set(topo.switches) - {src}:
        return False
    # every parent link is a cable, and walking up always ends at the source
    for start in tree:
        v, seen = start, {start}
        while v != src:
            if not g.has_edge(v, tree[v]):
                return False
            v = tree[v]
            if v in seen:
                return False
            seen.add(v)
    return True


# 12 examples: every switch is tried as the escape root, so a plan costs more than it did
@settings(max_examples=12, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3))
def test_deadlock_free_trees_on_random_graphs(g: nx.Graph, per: int) -> None:
    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    hosts = {s: per + (i % 3 == 0) for i, s in enumerate(topo.switches)}
    parents = route(topo, hosts)
    assert all(spans(topo, s, parents[s]) for s in topo.switches)
    assert channel_dependencies_acyclic(parents, hosts)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=3, max_value=5), st.integers(min_value=3, max_value=5), st.integers(min_value=0, max_value=4),
       st.integers(min_value=0, max_value=1000), st.booleans())
def test_deadlock_free_trees_on_tori_and_degraded_tori(a: int, b: int, removed: int, seed: int, some: bool) -> None:
    # A torus a x b with up to `removed` cables gone (kept connected), hosts on every switch
    # or on some: every source's tree spans the fabric, the dependency graph has no cycle.
    g = nx.grid_2d_graph(a, b, periodic=True)
    edges = sorted(g.edges)
    rnd = random.Random(seed)
    for _ in range(removed):
        i = rnd.randrange(len(edges))
        trial = edges[:i] + edges[i + 1:]
        if nx.is_connected(nx.Graph(trial)) and len(nx.Graph(trial)) == a * b:
            edges = trial
    name = {v: f"s{v[0]}x{v[1]}" for v in g.nodes}
    topo = Topology.from_links(sorted(name.values()), [(name[u], name[v]) for u, v in edges])
    hosts = {s: (2 if not some or i % 2 else 0) for i, s in enumerate(topo.switches)}
    # before the column step, which tests/test_acyclic_columns.py checks on random fabrics
    # (here it took this test from about 13 s to 96 s)
    check_plan(topo, hosts, ACYCLIC.route(topo, hosts, before_columns(topo)), float("inf"))


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=2, max_value=12), st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)),
                                                        max_size=60))
def test_dependency_graph_refuses_exactly_the_cycles(n: int, edges: list[tuple[int, int]]) -> None:
    deps = DependencyGraph(n)
    kept = nx.DiGraph()
    kept.add_nodes_from(range(n))
    for a, b in edges:
        a, b = a % n, b % n
        closes = a == b or (kept.has_node(b) and nx.has_path(kept, b, a))
        assert deps.try_add(a, b) == (not closes)
        if not closes:
            kept.add_edge(a, b)
        assert deps.is_acyclic()


@pytest.mark.parametrize("fabric", [
    pytest.param(fabrics.leaf_spine, id="leaf-spine 8x4"),
    pytest.param(fabrics.random_regular, id="random 3-regular 24", marks=pytest.mark.slow),
    pytest.param(fabrics.dragonfly, id="dragonfly 6x4", marks=pytest.mark.slow),
])
def test_targets_of_issue_23(fabric) -> None:
    topo, hosts = fabric()
    check_plan(topo, hosts, ACYCLIC.route(topo, hosts, before_columns(topo)), 1.5)


@pytest.mark.slow
def test_degraded_torus_figure() -> None:
    # Issue 23's target there (1.5x) is met: docs/routing-bounds.md reports 1.324x the optimum
    # on the 6x6 torus with 3 cables gone before the order refinement (1.392x before the
    # guided orders and branch moves, 1.698x before negotiation on a fixed channel order,
    # up*/down* 3.26x), 1.290x with it, and 1.171x with trees as columns, which
    # test_acyclic_columns.py asserts (the refinement costs this fabric about 17 s).
    topo, hosts = fabrics.degraded_torus()
    parents = route_unrefined(topo, hosts)
    assert all(spans(topo, s, parents[s]) for s in topo.switches)
    assert channel_dependencies_acyclic(parents, hosts)
    assert max_load(topo, hosts, parents) / optimum_bound(topo, hosts).value == pytest.approx(1.324, abs=5e-4)


@pytest.mark.slow
@settings(max_examples=2, deadline=None)
@given(st.sampled_from([(6, 3), (6, 4), (6, 5), (6, 6)]), st.integers(min_value=1, max_value=10_000))
def test_deadlock_free_and_near_the_optimum_on_degraded_6x6_tori(size_removed: tuple[int, int], seed: int) -> None:
    # Other 6x6 tori with 3 to 6 cables gone: every source reaches every switch, no
    # dependency cycle, and the load stays far below up*/down*'s (3x and more there); the
    # measured figures (1.3x to 1.5x, docs/routing-bounds.md) are not asserted per seed.
    # Without the order refinement, which costs each of these about 17 s for rarely
    # anything (the suite's time); refined plans are checked on the 6x6 torus with 3
    # cables gone (test_degraded_torus_figure, test_default_choice.py) and on tori of up
    # to 25 switches above.
    k, removed = size_removed
    topo, hosts = fabrics.degraded_torus(k, removed, seed)
    parents = route_unrefined(topo, hosts)
    assert all(spans(topo, s, parents[s]) for s in topo.switches)
    assert channel_dependencies_acyclic(parents, hosts)
    assert max_load(topo, hosts, parents) <= 2.0 * optimum_bound(topo, hosts).value


@pytest.mark.slow
def test_never_worse_than_turns() -> None:
    # It starts from the turns engine's routes and keeps the best plan it sees.
    topo, hosts = fabrics.torus([6, 6])
    turns = ENGINES["turns"].route(topo, hosts, ENGINES["turns"].params(topo, Options())).parents
    assert max_load(topo, hosts, route(topo, hosts)) <= max_load(topo, hosts, turns)


def test_every_escape_root_on_custom_topologies_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # Above SCAN switches the escape roots are scanned only on custom topologies, up to
    # IRREGULAR switches (on 8x8 tori with cables gone the scan took the plans from 1.9-3.0x
    # the optimum to 1.37-1.63x, bench/degraded_tori.py); a generated torus keeps one root.
    # Scaled down here: limits of 4 and 12 switches on 4x3 tori, intact and with two cables gone.
    import vlanroute.routing.acyclic.engine as engine
    tried: list[str | None] = []
    grown = engine.Router.__init__

    def spy(self: object, topo: Topology, host_count: dict[str, int], root: str | None, sharpness: float) -> None:
        tried.append(root)
        grown(self, topo, host_count, root, sharpness)   # type: ignore[arg-type]

    monkeypatch.setattr(engine.Router, "__init__", spy)
    monkeypatch.setattr(engine, "SCAN", 4)
    monkeypatch.setattr(engine, "BIG", 4)
    monkeypatch.setattr(engine, "IRREGULAR", 12)
    monkeypatch.setattr(engine, "RESTARTS", 0)      # a shuffled torus is a custom fabric (acyclic/restarts.py)
    intact = Topology.from_generator("torus", [4, 3])
    hosts = {s: 1 for s in intact.switches}
    route(intact, hosts)
    assert len({r for r in tried if r is not None}) <= 2   # above BIG: one root grown together, two one by one
    tried.clear()
    g = nx.Graph(intact.simple())
    g.remove_edges_from([("sw1", "sw2"), ("sw6", "sw10")])
    degraded = Topology.from_links(intact.switches, sorted(g.edges))
    parents = route(degraded, hosts)
    assert {r for r in tried if r is not None} == set(degraded.switches)
    assert all(spans(degraded, s, parents[s]) for s in degraded.switches)
    assert channel_dependencies_acyclic(parents, hosts)
    tried.clear()
    monkeypatch.setattr(engine, "IRREGULAR", 11)
    route(degraded, hosts)
    assert len({r for r in tried if r is not None}) <= 2


@settings(max_examples=15, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3))
def test_guided_orders_give_spanning_increasing_deadlock_free_trees(g: nx.Graph, per: int) -> None:
    # Any guide will do for the invariants, even one full of dependency cycles: shortest paths.
    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    hosts = {s: per + (i % 3 == 0) for i, s in enumerate(topo.switches)}
    guide = shortest_routes(topo).parents
    found = guided_orders(topo, hosts, guide, topo.switches[:3], (1.3,))
    assert found
    for load, _, trees, choices, rank in found:
        assert choices.guided and all(spans(topo, s, trees[s]) for s in topo.switches)
        assert all(increasing(s, trees[s], rank) for s in topo.switches)
        assert channel_dependencies_acyclic(trees, hosts)
        assert load == pytest.approx(max_load(topo, hosts, trees))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 6, 8])
def test_random_3_regular_graphs_of_other_seeds(seed: int) -> None:
    # Issue 23's 1.5x holds for more of the kind than its table's graph (seed 1): these three
    # were at 1.68x, 1.87x and 1.78x before the guided orders, 1.364x, 1.494x and 1.481x
    # before the order refinement ran below 40 switches, 1.224x, 1.328x and 1.296x since
    # (bench/irregular_kinds.py).
    topo, hosts = fabrics.random_regular(24, 3, seed)
    check_plan(topo, hosts, ACYCLIC.route(topo, hosts, before_columns(topo)), 1.35)
