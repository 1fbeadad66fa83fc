"""The default's order walk before its column step (acyclic/engine.py QUICK_WALK): on
fabrics whose order LP is small (QUICK_WALK_VARIABLES), the default's effort walks
QUICK_WALK moves from its best plan's order and gives the walk's best order to the column
step. Loads are computed here pair by pair (test_acyclic_columns.independent_load), the
deadlock verdict from every tree a host sends on (tests/fabrics.py)."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import pytest
from test_acyclic_columns import independent_load

import vlanroute.routing.acyclic.engine as acyclic_engine
from vlanroute.routing.acyclic.refine import refine_variables
from vlanroute.routing.choose import choose_routes
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
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

    def spy(topo, host_count, rank, steps, keep_last):  # type: ignore[no-untyped-def]
        calls.append((steps, keep_last))
        return inner(topo, host_count, rank, steps, keep_last)

    monkeypatch.setattr(acyclic_engine, "walked_orders", spy)
    engine = ENGINES["acyclic"]
    params = replace(engine.params(topo, Options(quick=True)), column_walk_variables=size - 1 if above else size)
    engine.route(topo, hosts, params)
    # the default's walk hands on its best order alone (keep_last 1); none above the limit
    assert calls == ([] if above else [(acyclic_engine.QUICK_WALK, 1)])
