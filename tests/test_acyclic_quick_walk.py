"""The default's order walk before its column step (acyclic/engine.py QUICK_WALK): on
fabrics whose order LP is small (QUICK_WALK_VARIABLES), the default's effort walks
QUICK_WALK moves (at most QUICK_WALK_ITERATIONS simplex iterations) from its best plan's
order and gives the column step the walk's last QUICK_WALK_ORDERS orders and its best
within QUICK_WALK_EARLY moves. Loads are computed here pair by pair (test_acyclic_columns.independent_load), the
deadlock verdict from every tree a host sends on (tests/fabrics.py)."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import networkx as nx
import pytest
from test_acyclic_columns import independent_load

import vlanroute.routing.acyclic.engine as acyclic_engine
from vlanroute.routing.acyclic.columns import walked_orders
from vlanroute.routing.acyclic.refine import order_walk, rank_of, refine_variables
from vlanroute.routing.choose import choose_routes
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.order_lp import OrderLP, plan_order
from vlanroute.routing.registry import ENGINES


def test_the_walk_takes_the_defaults_deadlock_free_plan_near_the_optimum() -> None:
    # random 3-regular 16, seed 3: the default's effort gave 1.233x without the walk
    # (docs/routing-bounds.md, "The default's walk before its column step")
    topo, hosts = fabrics.random_regular(16, 3, 3)
    engine = ENGINES["acyclic"]
    params = engine.params(topo, Options(quick=True))
    assert params.column_walk == acyclic_engine.QUICK_WALK > 0
    assert refine_variables(topo, hosts) <= params.column_walk_variables
    opt = optimum_bound(topo, hosts).value
    loads = {}
    for walk in (0, params.column_walk):
        routes = engine.route(topo, hosts, replace(params, column_walk=walk))
        assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
        loads[walk] = independent_load(topo, hosts, routes.parents, dict(routes.splits)) / opt
    assert loads[0] > 1.2
    assert loads[params.column_walk] <= 1.05


def test_the_default_plan_of_a_small_dragonfly_is_deadlock_free_at_the_optimum() -> None:
    # dragonfly of 4 groups of 4: the default took `shortest` (1.000x, not deadlock-free)
    # while its deadlock-free candidate was 1.500x, beyond the 1.25 allowance; the walk
    # finds an order whose trees reach the optimum
    topo, hosts = fabrics.dragonfly(4, 4)
    opt = optimum_bound(topo, hosts).value
    routes = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt).routes
    assert routes.algorithm == "acyclic"
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    assert independent_load(topo, hosts, routes.parents, dict(routes.splits)) == pytest.approx(opt)


@pytest.mark.parametrize("above", [False, True])
def test_the_default_walks_only_order_lps_up_to_its_limit(above: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    topo, hosts = fabrics.random_regular(16, 3, 3)
    size = refine_variables(topo, hosts)
    calls: list[tuple[int, int]] = []
    inner = acyclic_engine.walked_orders

    def spy(topo, host_count, rank, steps, keep_last, *rest):  # type: ignore[no-untyped-def]
        calls.append((steps, keep_last))
        return inner(topo, host_count, rank, steps, keep_last, *rest)

    monkeypatch.setattr(acyclic_engine, "walked_orders", spy)
    engine = ENGINES["acyclic"]
    params = replace(engine.params(topo, Options(quick=True)), column_walk_variables=size - 1 if above else size)
    engine.route(topo, hosts, params)
    # the default's walk hands on its last QUICK_WALK_ORDERS orders; none above the limit
    assert calls == ([] if above else [(acyclic_engine.QUICK_WALK, acyclic_engine.QUICK_WALK_ORDERS)])


def _plan(name: str, **changes: int) -> float:
    topo, hosts = {"heawood": lambda: fabrics.custom([(f"s{a}", f"s{b}") for a, b in sorted(nx.heawood_graph().edges)]),
                   "rr14": lambda: fabrics.random_regular(14, 3, 0),
                   "rr4_18": lambda: fabrics.random_regular(18, 4, 0)}[name]()
    engine = ENGINES["acyclic"]
    routes = engine.route(topo, hosts, replace(engine.params(topo, Options(quick=True)), **changes))
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    return independent_load(topo, hosts, routes.parents, dict(routes.splits)) / optimum_bound(topo, hosts).value


def test_the_longer_walk_and_more_orders_lighten_the_default() -> None:
    # random 3-regular 14, seed 0: 1.188x at 50 moves and the walk's best order alone,
    # 1.083x now (docs/routing-bounds.md, "The default's walk, longer")
    assert _plan("rr14", column_walk=50, column_orders=0, column_walk_early=0, start_walks=0) > 1.15
    assert _plan("rr14") <= 1.09


def test_the_default_walks_order_lps_up_to_the_full_searchs_long_walk_size() -> None:
    # random 4-regular 18, seed 0: about 4,500 variables, above the default walk's 3,600 before
    # 2026-12-01 (1.125x then), within the 6,000 of now and of the full search's long walk
    topo, hosts = fabrics.random_regular(18, 4, 0)
    assert 3_600 < refine_variables(topo, hosts) <= acyclic_engine.QUICK_WALK_VARIABLES
    assert acyclic_engine.QUICK_WALK_VARIABLES == acyclic_engine.COLUMN_WALK_VARIABLES
    assert _plan("rr4_18", column_walk_variables=3_600) > 1.1
    assert _plan("rr4_18") <= 1.02


def test_the_walks_early_order_keeps_the_default_from_getting_heavier() -> None:
    # the Heawood graph: the 200-move walk's last orders alone give a heavier plan than the
    # best order of its first 50 moves, which the default took before (without the walks
    # from the up*/down* starts, which since 2026-12-01 take it lower still either way)
    old = _plan("heawood", column_walk=50, column_orders=0, column_walk_early=0, start_walks=0)
    assert _plan("heawood", column_walk_early=0, start_walks=0) > old * 1.01
    assert _plan("heawood", start_walks=0) <= old * (1 + 1e-9)


def test_walked_orders_adds_the_best_early_order_first_and_once() -> None:
    topo, hosts = fabrics.random_regular(14, 3, 0)
    lp = OrderLP(topo, hosts)
    # a start that routes every pair: the order of the acyclic engine's own plan
    engine = ENGINES["acyclic"]
    routes = engine.route(topo, hosts, replace(engine.params(topo, Options(quick=True)), column_walk=0))
    start = plan_order(routes.parents, lp.arcs)
    moved: list[int] = []
    found = [rank_of(lp, key) for key, _ in order_walk(lp, start, 200, iterations=10**12, moved=moved)]
    assert moved[0] == 0 and moved == sorted(moved) and len(moved) == len(found) >= 4
    early = moved[2]                # the second improvement's move: its order is the best by then
    got = walked_orders(topo, hosts, start, 200, 1, early)
    assert got == [found[2], found[-1]]
    # already among the last ones: not twice
    assert walked_orders(topo, hosts, start, 200, len(found) - 1, early) == found[1:]
    assert walked_orders(topo, hosts, start, 200, 1) == [found[-1]]
