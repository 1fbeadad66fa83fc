"""Trees as columns (routing/acyclic/columns.py): the hosts of every switch are assigned to
trees that span the fabric and increase in the given channel order (so the channel
dependency graph, computed here from every tree a host sends on, is acyclic), the host
counts add up, the reported load is the routes' real load (computed here independently,
tests/fabrics.py) and no more than the start's; a priced tree is a tree in the order."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import hosted, increasing, start_and_order
from topologies import connected_graphs

import vlanroute.routing.acyclic.engine as acyclic_engine
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.columns import ColumnPool, column_plan, column_step, improved_tree, priced_tree
from vlanroute.routing.acyclic.refine import earliest_tree
from vlanroute.routing.choose import deadlock_free
from vlanroute.routing.engine import Options, packing_of
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.trees import max_load as routes_max_load


def check_plan(topo, hosts, rank, start, load, parents, splits) -> None:  # type: ignore[no-untyped-def]
    for src in topo.switches:
        trees = [t for t, _ in splits[src]] if src in splits else [parents[src]]
        if src in splits:
            assert sum(n for _, n in splits[src]) == hosts[src]          # every host on one tree
            assert len(splits[src]) >= 2 and parents[src] == splits[src][0][0]
        for tree in trees:
            assert set(tree) == set(topo.switches) - {src}                 # every pair routed
            assert all(topo.graph.has_edge(v, p) for v, p in tree.items())
            assert increasing(src, tree, rank)
    # the dependency graph of every tree a host sends on, built here from the routes
    cdg = nx.DiGraph()
    for src in topo.switches:
        for tree in ([t for t, _ in splits[src]] if src in splits else [parents[src]]):
            for v, p in tree.items():
                if p != src:
                    cdg.add_edge((tree[p], p), (p, v))
    assert nx.is_directed_acyclic_graph(cdg)
    assert deadlock_free(parents, hosts, splits)
    assert load == pytest.approx(independent_load(topo, hosts, parents, splits))
    assert load <= fabrics.max_load(topo, hosts, start) * (1 + 1e-9)


def independent_load(topo, hosts, parents, splits) -> float:  # type: ignore[no-untyped-def]
    """Max load per cable, pair by pair along each tree's path (no shared code with trees.py)."""
    load: dict[tuple[str, str], float] = {}
    cables = topo.arc_cables()
    for src in topo.switches:
        shares = splits[src] if src in splits else ((parents[src], hosts.get(src, 0)),)
        for tree, n in shares:
            for dst in topo.switches:
                if dst == src or not hosts.get(dst, 0):
                    continue
                v = dst
                while v != src:
                    arc = (tree[v], v)
                    load[arc] = load.get(arc, 0.0) + n * hosts[dst] / cables[arc]
                    v = tree[v]
    return max(load.values(), default=0.0)


def check_default_columns(topo: Topology, hosts: dict[str, int], before: float) -> None:
    """The default plan of `topo` (the whole choice) is the acyclic engine's from its column
    step, deadlock-free within issue 40's 1.2x the optimum, and lighter than `before` times it
    (what the default planned before the step a test is about; loads counted here, apart)."""
    from test_acyclic import check_plan
    from vlanroute.routing.choose import choose_routes
    opt = optimum_bound(topo, hosts).value
    routes = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt).routes
    assert routes.algorithm == "acyclic" and routes.choices.record().get("columns") is True
    assert independent_load(topo, hosts, routes.parents, routes.splits) <= 1.2 * opt < before * opt
    check_plan(topo, hosts, routes, 1.2)


@settings(max_examples=12, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=4))
def test_column_plans_are_deadlock_free_route_every_pair_and_never_lose(g: nx.Graph, per: int) -> None:
    topo, hosts = hosted(g, per)
    start, rank = start_and_order(topo)
    got = column_plan(topo, hosts, rank, [(start, {})], rounds=5, nodes=20)
    assert got is not None
    load, parents, splits, bound = got
    check_plan(topo, hosts, rank, start, load, parents, splits)
    # `bound` is the LP over the columns found: a floor of the integer program on those
    # columns, not of the plan, whose branch moves may leave them (CI found 26 > 24)
    assert bound > 0


@settings(max_examples=12, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=4), st.sampled_from(["above", "within", "beyond"]))
def test_more_rounds_continue_the_same_columns(g: nx.Graph, per: int, case: str) -> None:
    """column_plan's `more` rounds (the default's PLACED_AGAIN): only where the plan is above
    `above` and at most `below`, and then the lighter of the first plan and what the rounds
    in all give from the start, not a plan of their own."""
    more_rounds_case(*hosted(g, per), case)


@pytest.mark.parametrize("case", ["above", "within", "beyond"])
@pytest.mark.parametrize("degree, seed, rounds", [
    (3, 1, 1),      # random 3-regular 16 seed 1 from the up*/down* start: 608 after one round, 600 after three
    (4, 1, 2),      # random 4-regular 14 seed 1: 192 after two, 176 after four (172 on the pruned columns)
])
def test_more_rounds_on_a_fabric_where_they_gain(degree: int, seed: int, rounds: int, case: str) -> None:
    more_rounds_case(*fabrics.random_regular(16 if degree == 3 else 14, degree, seed), case, rounds, gains=True)


def more_rounds_case(topo: Topology, hosts: dict[str, int], case: str, rounds: int = 1, gains: bool = False) -> None:
    start, rank = start_and_order(topo)
    once = column_plan(topo, hosts, rank, [(start, {})], rounds=rounds, nodes=20)
    whole = column_plan(topo, hosts, rank, [(start, {})], rounds=rounds + 2, nodes=20)
    assert once is not None and whole is not None
    assert not gains or round(whole[0], 6) < round(once[0], 6)
    above, below = {"above": (0.0, float("inf")), "within": (once[0], float("inf")),
                    "beyond": (0.0, once[0] * (1 - 1e-9))}[case]
    got = column_plan(topo, hosts, rank, [(start, {})], rounds=rounds, nodes=20, more=2, above=above, below=below)
    assert got is not None
    expected = whole if case == "above" and round(whole[0], 6) < round(once[0], 6) else once
    assert got[:3] == expected[:3]


@settings(max_examples=25, deadline=None)
@given(connected_graphs(), st.integers(min_value=0, max_value=3))
def test_priced_trees_span_and_increase(g: nx.Graph, seed: int) -> None:
    topo, hosts = hosted(g, 1)
    _, rank = start_and_order(topo)
    weight = {a: float((rank[a] * 7 + seed) % 5) for a in rank}         # uneven weights, zeros too
    for src in topo.switches:
        tree = priced_tree(topo, src, rank, weight, hosts)
        assert tree is not None               # up*/down* routes every pair in this order
        assert set(tree) == set(topo.switches) - {src}
        assert increasing(src, tree, rank)


def price(tree: dict[str, str], src: str, weight: dict[tuple[str, str], float], hosts: dict[str, int]) -> float:
    """What one host of src sending on the tree costs: the weights of each host's path, summed."""
    total = 0.0
    for v in tree:
        x = v
        while x != src:
            total += hosts[v] * weight[(tree[x], x)]
            x = tree[x]
    return total


@settings(max_examples=25, deadline=None)
@given(connected_graphs(), st.integers(min_value=0, max_value=5))
def test_improved_trees_increase_cost_no_more_and_no_single_move_lowers_them(g: nx.Graph, seed: int) -> None:
    """improved_tree from each switch's earliest-arrival tree: the tree spans, its routes
    increase in the order, its price is no higher than the start's, and no single switch
    moved to another neighbour as parent (every such tree that still spans and increases,
    built and priced here) costs less."""
    topo, hosts = hosted(g, 1)
    _, rank = start_and_order(topo)
    weight = {a: float((rank[a] * 7 + seed) % 5) + 0.01 for a in rank}
    order = sorted(rank, key=rank.__getitem__)
    into: dict[str, list[str]] = {v: [] for v in topo.switches}
    for u, v in sorted(rank):
        into[v].append(u)
    for src in topo.switches:
        start = earliest_tree(src, order, rank)
        tree = improved_tree(src, start, rank, weight, hosts, into)
        assert set(tree) == set(topo.switches) - {src} and increasing(src, tree, rank)
        cost = price(tree, src, weight, hosts)
        assert cost <= price(start, src, weight, hosts) + 1e-9
        for v in tree:
            for u in into[v]:
                moved = {**tree, v: u}
                if u == tree[v]:
                    continue
                walk, seen = u, {v}
                while walk != src and walk not in seen:      # u under v: the move cuts v off
                    seen.add(walk)
                    walk = moved[walk]
                if walk == src and increasing(src, moved, rank):
                    assert price(moved, src, weight, hosts) >= cost - 1e-6


def test_the_column_step_lowers_a_degraded_torus_and_stays_deadlock_free() -> None:
    # 6x6 torus with 3 cables gone, up*/down* start: the column step carries less and its
    # routes stay in the order; the plan is checked as a whole (VLAN budget of the engine)
    topo, hosts = fabrics.degraded_torus(6, 3, 0, per=2)
    start, rank = start_and_order(topo)
    before = fabrics.max_load(topo, hosts, start)
    got = column_step(topo, hosts, [(before, start, {}, rank)], 4094, nodes=20, keep=0.01)
    assert got is not None
    load, parents, splits, order = got
    assert order is rank
    assert load < before * 0.9
    check_plan(topo, hosts, rank, start, load, parents, splits)
    assert load == pytest.approx(routes_max_load(parents, hosts, topo.arc_cables(), splits))


@settings(max_examples=10, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=4), st.integers(min_value=2, max_value=60))
def test_the_engine_with_the_column_step_forced_on_stays_deadlock_free_in_the_budget(
        g: nx.Graph, per: int, budget: int) -> None:
    # The whole engine (the default's effort, and the full search's), the column step run on
    # every fabric: its plan is what the rest of the pipeline gets (parents and splits).
    topo, hosts = hosted(g, per)
    engine = ENGINES["acyclic"]
    for quick in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(acyclic_engine, "COLUMN_ABOVE", 0.0)
            params = replace(engine.params(topo, Options(quick=quick, max_vlans=budget)), column_walk=5)
            routes = engine.route(topo, hosts, params)
        for src in topo.switches:
            shares = routes.splits.get(src)
            if shares:
                assert sum(n for _, n in shares) == hosts[src]
            for tree in ([t for t, _ in shares] if shares else [routes.parents[src]]):
                assert set(tree) == set(topo.switches) - {src}
                assert all(topo.graph.has_edge(v, p) for v, p in tree.items())
        assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
        if routes.splits:
            assert len(packing_of(routes, topo, hosts)) <= budget


@pytest.mark.parametrize("fabric", [
    pytest.param(lambda: fabrics.random_regular(24, 3, seed=8), id="random 3-regular 24 seed 8"),
    pytest.param(lambda: fabrics.degraded_torus(6, 3, 0), id="6x6 torus, 3 cables gone"),
])
def test_the_full_search_is_deadlock_free_within_issue_40s_1_2x(fabric, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    # docs/routing-bounds.md ("Trees as columns"): routing.algorithm: acyclic gave 1.296x and
    # 1.290x the optimum here before the column step, and the plan goes through the whole
    # engine (its VLAN budget, the plan's splits).
    topo, hosts = fabric()
    engine = ENGINES["acyclic"]
    routes = engine.route(topo, hosts, engine.params(topo, Options()))
    assert routes.choices.record().get("columns") is True
    opt = optimum_bound(topo, hosts).value
    load = independent_load(topo, hosts, routes.parents, dict(routes.splits))
    assert load <= 1.2 * opt
    # the figures docs/routing-bounds.md gives ("Trees as columns"; test_default_choice.py
    # asserted the torus's before, from a second run of the same search); the torus's is now
    # the stored 6x6 plan's order with its 3 cables dropped ("The stored orders on tori with
    # cables gone"): 1.154x, where the search alone reaches 1.171x
    figure = {"random 3-regular 24 seed 8": 1.194, "6x6 torus, 3 cables gone": 1.154}[request.node.callspec.id]
    assert load / opt == pytest.approx(figure, abs=5e-4)
    for src in topo.switches:
        shares = routes.splits.get(src)
        if shares:
            assert sum(n for _, n in shares) == hosts[src]
        for tree in ([t for t, _ in shares] if shares else [routes.parents[src]]):
            assert set(tree) == set(topo.switches) - {src}
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    assert len(packing_of(routes, topo, hosts)) <= Options().max_vlans


@settings(max_examples=10, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=4))
def test_the_tree_lp_gives_linprogs_solution_bit_for_bit(g: nx.Graph, per: int) -> None:
    """The column step's LP calls scipy's bundled HiGHS itself (routing/highs.py) with what
    linprog(method="highs-ds") passes: the same L, column values and duals, which price the
    next trees, as through linprog (the fallback where scipy changed its private module)."""
    from vlanroute.routing import highs
    topo, hosts = hosted(g, per)
    start, rank = start_and_order(topo)
    direct_solves: list[tuple[float, list[float], list[float], list[float]]] = []
    fallback_solves: list[tuple[float, list[float], list[float], list[float]]] = []
    solve = ColumnPool.solve

    def spy(into: list[tuple[float, list[float], list[float], list[float]]]):  # type: ignore[no-untyped-def]
        def recorded(pool: ColumnPool, integer: bool, nodes: int = 200):  # type: ignore[no-untyped-def]
            got = solve(pool, integer, nodes)
            if not integer:
                assert got[2] is not None and got[3] is not None
                into.append((got[0], got[1].tolist(), got[2].tolist(), got[3].tolist()))
            return got
        return recorded

    def changed_interface(*args: object) -> object:
        raise ImportError("scipy without the private HiGHS module")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ColumnPool, "solve", spy(direct_solves))
        direct = column_plan(topo, hosts, rank, [(start, {})], rounds=3, nodes=20)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ColumnPool, "solve", spy(fallback_solves))
        mp.setattr(highs, "solve", changed_interface)
        fallback = column_plan(topo, hosts, rank, [(start, {})], rounds=3, nodes=20)
    assert direct_solves and direct_solves == fallback_solves
    assert direct == fallback
