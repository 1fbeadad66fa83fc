"""The second order walk of the acyclic engine, from the optimum's turns (routing/acyclic/lp_guide.py).

Checked from first principles on random fabrics: the optimum's turn flow carries every
demand (what leaves each source is what its destinations ask for); the order built from
it (escape tree first, then the optimum's turns) routes every pair of switches with hosts;
the plans walked from it, one tree per switch and the hosts of a switch on several trees,
span every switch, have an acyclic channel dependency graph computed from the routes,
carry the loads recomputed host pair by host pair and fit the VLAN budget; and the engine
with the walk forced on keeps all of that."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_spread import check_split, fabric

import vlanroute.routing.acyclic.engine as engine_module
import vlanroute.routing.acyclic.refine as refine
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.engine import SHARPNESS
from vlanroute.routing.acyclic.router import Router
from vlanroute.routing.acyclic.lp_guide import lp_guided_turns, optimum_turn_flow
from vlanroute.routing.acyclic.refine import refined_split
from vlanroute.routing.engine import Options, packing_of
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.order_lp import OrderLP
from vlanroute.routing.packing import pack
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.updown import central_switch


def lp_guided_rank(topo: Topology, hosts: dict[str, int]) -> dict[tuple[str, str], int]:
    r = Router(topo, hosts, central_switch(topo), SHARPNESS[0])
    for a, b in lp_guided_turns(topo, hosts):
        r.deps.try_add(r.arc_id[a], r.arc_id[b])
    return r.rank()


def hosted_pairs_reached(topo: Topology, hosts: dict[str, int], tree: dict[str, str], src: str) -> bool:
    for t, n in hosts.items():
        if t == src or not n:
            continue
        seen, v = set(), t
        while v != src:
            if v in seen or v not in tree:
                return False
            seen.add(v)
            v = tree[v]
    return True


@settings(max_examples=30, deadline=None)
@given(fabric())
def test_the_optimum_turn_flow_carries_every_demand(case: tuple[Topology, dict[str, int]]) -> None:
    topo, hosts = case
    lp = OrderLP(topo, hosts)
    flow = optimum_turn_flow(lp)
    assert flow.shape == (len(lp.t_in),) and np.all(flow >= -1e-9)
    # a turn is the flow through its middle switch; never more than all demands times the
    # longest simple path, and none at all with fewer than 3 switches
    total = sum(sum(row) for row in lp.demands)
    assert float(flow.sum()) <= total * max(len(topo.switches) - 2, 0) + 1e-6
    # the turns it returns exist in the fabric and are ordered by flow
    turns = lp_guided_turns(topo, hosts)
    g = topo.simple()
    assert all(g.has_edge(*a) and g.has_edge(*b) and a[1] == b[0] and b[1] != a[0] for a, b in turns)
    assert turns == lp_guided_turns(topo, hosts)           # deterministic


@settings(max_examples=25, deadline=None)
@given(fabric(), st.integers(min_value=0, max_value=4), st.integers(min_value=1, max_value=40))
def test_plans_walked_from_the_optimum_turns_are_deadlock_free_and_fit_the_budget(
        case: tuple[Topology, dict[str, int]], steps: int, budget: int) -> None:
    topo, hosts = case
    rank = lp_guided_rank(topo, hosts)
    lp = OrderLP(topo, hosts)
    assert lp.solve(np.array([float(rank[a]) for a in lp.arcs])) is not None    # every pair routed
    refined, split = refined_split(topo, hosts, rank, steps, max_vlans=budget)
    assert refined is not None
    load, trees, order = refined
    assert all(set(trees[s]) == set(topo.switches) - {s} for s in topo.switches)
    assert fabrics.channel_dependencies_acyclic(trees, hosts)
    assert load == pytest.approx(fabrics.max_load(topo, hosts, trees))
    assert load >= optimum_bound(topo, hosts).value * (1 - 1e-6)
    if split is None:
        return
    s_load, parents, splits, _ = split
    check_split(topo, hosts, parents, dict(splits), s_load, minimal=False)
    assert fabrics.channel_dependencies_acyclic(parents, hosts, splits)
    hosted = {s for s, n in hosts.items() if n}
    index = {s: i for i, s in enumerate(topo.switches)}
    assert len(pack(parents, hosted, index, splits)) <= budget


@settings(max_examples=10, deadline=None)
@given(fabric(), st.integers(min_value=2, max_value=60))
def test_the_engine_with_the_second_walk_forced_on_stays_deadlock_free_in_the_budget(
        case: tuple[Topology, dict[str, int]], budget: int) -> None:
    topo, hosts = case
    if topo.kind != "custom" or len(topo.switches) < 3 or not nx.is_connected(topo.simple()):
        return
    engine = ENGINES["acyclic"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(refine, "FROM", 0)                       # refine these small fabrics too
        mp.setattr(refine, "ABOVE", 0.0)
        mp.setattr(engine_module, "LP_WALK_ABOVE", 0.0)      # and always walk a second time
        params = replace(engine.params(topo, Options(quick=True, max_vlans=budget)), refine_steps=3)
        assert params.lp_walk
        routes = engine.route(topo, hosts, params)
    for src in topo.switches:
        trees = [t for t, _ in routes.splits[src]] if src in routes.splits else [routes.parents[src]]
        assert all(hosted_pairs_reached(topo, hosts, t, src) for t in trees)
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    # one tree per switch needs at most one VLAN per switch with hosts; a split plan is kept
    # only within the budget
    if routes.splits:
        assert len(packing_of(routes, topo, hosts)) <= budget


@pytest.mark.slow
@pytest.mark.parametrize("fabric", [
    pytest.param(fabrics.dragonfly, id="dragonfly 6x4"),              # 1.172x (the second walk)
    pytest.param(lambda: fabrics.random_regular(24, 3, seed=3), id="random 3-regular 24 seed 3"),   # 1.189x
    pytest.param(lambda: fabrics.degraded_torus(6, 5, seed=3), id="6x6 torus, 5 cables gone"),     # 1.196x
])
def test_the_default_is_deadlock_free_within_issue_40s_1_2x(fabric) -> None:
    # docs/routing-bounds.md ("Routing below the switch on deadlock-free plans"): these three
    # were above 1.2x before the deeper branch moves and the second walk.
    from vlanroute.routing.choose import choose_routes
    topo, hosts = fabric()
    opt = optimum_bound(topo, hosts).value
    choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt)
    routes = choice.routes
    assert routes.algorithm == "acyclic"
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    for src in topo.switches:
        trees = [t for t, _ in routes.splits[src]] if src in routes.splits else [routes.parents[src]]
        assert all(hosted_pairs_reached(topo, hosts, t, src) for t in trees)
    assert fabrics.max_load(topo, hosts, routes.parents, routes.splits) <= 1.2 * opt


def _walk_starts(topo: Topology, hosts: dict[str, int], params: object,
                 above_after_first: float | None) -> list[dict[tuple[str, str], int]]:
    """The starts (channel orders) the engine's order walks took; `above_after_first`: the
    LP_WALK_ABOVE seen after the first walk (None: 0, so the plan is always above it)."""
    starts: list[dict[tuple[str, str], int]] = []
    real = engine_module.refined_split

    def spy(topo_: Topology, hosts_: dict[str, int], rank: dict[tuple[str, str], int], *a: object, **k: object):
        starts.append(dict(rank))
        got = real(topo_, hosts_, rank, *a, **k)    # type: ignore[arg-type]
        if above_after_first is not None:
            engine_module.LP_WALK_ABOVE = above_after_first     # type: ignore[misc]
        return got

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(refine, "FROM", 0)
        mp.setattr(refine, "ABOVE", 0.0)
        mp.setattr(engine_module, "LP_WALK_ABOVE", 0.0)
        mp.setattr(engine_module, "REACH", float("inf"))        # never hopeless, however far above
        mp.setattr(engine_module, "refined_split", spy)
        ENGINES["acyclic"].route(topo, hosts, params)     # type: ignore[arg-type]
    return starts


def test_the_default_walks_from_the_optimum_first_where_the_plan_is_far_above_the_allowance() -> None:
    # QUICK (the default's search): where the plan before the walks is beyond what the
    # default can take even after the second walk's largest gain (worth_below times
    # LP_WALK_REACH), the optimum's start is walked first and the plan's own order after it
    # only while the plan stays above LP_WALK_ABOVE. Otherwise, and in the full search, the
    # plan's order first. (A small fabric, its refinement forced on; 4 moves a walk.)
    topo, hosts = fabrics.random_regular(12, 3, seed=2)
    far = replace(ENGINES["acyclic"].params(topo, Options(quick=True, worth_below=1e-9)), refine_steps=4)
    near = replace(far, worth_below=None)
    assert far.optimum_first
    optimum_start = lp_guided_rank(topo, hosts)
    both = _walk_starts(topo, hosts, far, None)
    assert len(both) == 2 and both[0] == optimum_start and both[1] != optimum_start
    assert _walk_starts(topo, hosts, far, 1e9) == [optimum_start]         # below 1.2x after it: done
    plan_first = _walk_starts(topo, hosts, near, None)
    assert len(plan_first) == 2 and plan_first[0] == both[1] and plan_first[1] == optimum_start
    full = _walk_starts(topo, hosts, replace(ENGINES["acyclic"].params(topo, Options()), refine_steps=4,
                                             worth_below=1e-9), None)
    assert full[0] == both[1]
