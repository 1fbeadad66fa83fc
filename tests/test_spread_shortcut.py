"""Routing below the switch (routing/spread.py `spread`) stops after a negotiation target
whose plan is at a floor no routing of hosts on trees goes below (the distance or the
arrival bound, `floor_of`): the next target's plan would have to carry strictly less to
replace it. The plain path (the floor taken away, every target run) must give the same
result: on random fabrics and leaf-spines, shortest routes, a channel order or none; and
the stop does fire on leaf-spines at the arrival bound (where it saves its second target)."""

from __future__ import annotations

import fabrics
from hypothesis import given, settings
from hypothesis import strategies as st
from test_spread import clos, fabric

import vlanroute.routing.spread as spread_module
from vlanroute.model.topology import Topology
from vlanroute.routing.order_lp import plan_order
from vlanroute.routing.shortest import SHORTEST, ShortestParams
from vlanroute.routing.spread import spread
from vlanroute.routing.turns import turn_routes


def _both(topo: Topology, hosts: dict[str, int], how: int) -> tuple[object, object, int]:
    """(shortcut, plain path, negotiations the shortcut ran) of `spread` from the shortest
    engine's trees (how 0: shortest routes only; 1: no constraint) or the turns engine's
    in their channel order (2)."""
    if how == 2:
        start = turn_routes(topo, hosts).parents
        kwargs: dict[str, object] = {"rank": plan_order(start, sorted(topo.arc_cables()))}
    else:
        start = SHORTEST.route(topo, hosts, ShortestParams(spread=False)).parents
        kwargs = {"minimal": how == 0}
    runs = [0]
    real = spread_module.negotiate

    def counted(*a: object, **k: object) -> object:
        runs[0] += 1
        return real(*a, **k)    # type: ignore[arg-type]

    with_stop = spread_module.negotiate
    spread_module.negotiate = counted           # type: ignore[assignment]
    try:
        fast = spread(topo, hosts, start, 4094, **kwargs)     # type: ignore[arg-type]
    finally:
        spread_module.negotiate = with_stop
    plain_floor = spread_module.floor_of
    spread_module.floor_of = lambda *a: float("-inf")     # type: ignore[assignment]
    try:
        plain = spread(topo, hosts, start, 4094, **kwargs)    # type: ignore[arg-type]
    finally:
        spread_module.floor_of = plain_floor
    return fast, plain, runs[0]


@st.composite
def regular(draw: st.DrawFn) -> tuple[Topology, dict[str, int]]:
    """Random 3-regular graphs of 10 to 16 switches, 4 hosts each: big enough that the
    second target's plan is sometimes the lighter one (random 3-regular 12, seed 9)."""
    n = draw(st.sampled_from([10, 12, 14, 16]))
    return fabrics.random_regular(n, 3, seed=draw(st.integers(min_value=0, max_value=30)))


@settings(max_examples=40, deadline=None)
@given(st.one_of(fabric(), clos(), regular()), st.integers(min_value=0, max_value=2))
def test_stopping_at_the_floor_gives_the_plain_result(case: tuple[Topology, dict[str, int]], how: int) -> None:
    topo, hosts = case
    fast, plain, _ = _both(topo, hosts, how)
    assert fast == plain


def test_where_the_second_target_is_lighter_both_run() -> None:
    # random 3-regular 12, seed 9: 148 after the first target, 144 after the second
    # (shortest routes); 220 and 216 in the turns engine's order. Neither is at a floor.
    topo, hosts = fabrics.random_regular(12, 3, seed=9)
    for how in (0, 2):
        fast, plain, runs = _both(topo, hosts, how)
        assert fast == plain and runs == len(spread_module.TARGETS)


def test_it_stops_after_one_target_on_a_leaf_spine_at_the_arrival_bound() -> None:
    topo, hosts = fabrics.leaf_spine(8, 4, per=3)          # 21 pieces of 3 over 4 uplinks: not even
    fast, plain, runs = _both(topo, hosts, 0)
    assert fast == plain and fast is not None
    assert runs == 1 < len(spread_module.TARGETS)
