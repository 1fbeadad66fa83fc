"""up*/down* below the switch (routing/updown_hosts.py, the turns engine on graphs other than grids)."""

from __future__ import annotations

import copy
from unittest import mock

import networkx as nx
from fabrics import channel_dependencies_acyclic
from hypothesis import given, settings
from hypothesis import strategies as st
from topologies import connected_graphs

from vlanroute.model.topology import Topology
from vlanroute.routing import turns as turns_module
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.trees import arc_loads, path
from vlanroute.routing.turns import turn_routes
from vlanroute.routing.updown_hosts import host_updown

TURNS = ENGINES["turns"]


def custom(g: nx.Graph) -> Topology:
    return Topology.from_links(sorted(g.nodes), sorted(tuple(sorted(e)) for e in g.edges))


def legal(route: list[str], rank: dict[str, tuple[int, int]]) -> bool:
    """No up link after a down link (up: towards the lower (level, index))."""
    down = False
    for u, v in zip(route, route[1:]):
        up = rank[v] < rank[u]
        if up and down:
            return False
        down = down or not up
    return True


@settings(max_examples=60, deadline=None)
@given(g=connected_graphs(), data=st.data())
def test_every_host_tree_is_up_down_from_its_root_and_the_plan_is_deadlock_free(g: nx.Graph, data: st.DataObject) -> None:
    topo = custom(g)
    hosts = {s: data.draw(st.integers(0, 3), label=s) for s in topo.switches}
    root = data.draw(st.sampled_from(topo.switches), label="root")
    got = host_updown(topo, hosts, [root], 4094)
    if got is None:
        assert all(n <= 1 for n in hosts.values())       # nothing to route below the switch
        return
    peak, used, parents, splits = got
    assert used == root
    level = nx.single_source_shortest_path_length(topo.simple(), root)
    rank = {s: (level[s], i) for i, s in enumerate(topo.switches)}
    for src, n in hosts.items():
        if not n:
            continue
        shares = splits.get(src, ((parents[src], n),))
        assert sum(k for _, k in shares) == n                # every host on one tree
        assert len({frozenset(t.items()) for t, _ in shares}) == len(shares)   # identical trees merged
        for tree, _ in shares:
            assert set(tree) == set(topo.switches) - {src}   # spanning, one parent each
            for dst in topo.switches:
                route = path(tree, src, dst)
                assert all(topo.graph.has_edge(a, b) for a, b in zip(route, route[1:]))
                assert legal(route, rank), (src, dst, route)
    assert channel_dependencies_acyclic(parents, hosts, splits)
    assert peak == max(arc_loads(parents, hosts, topo.arc_cables(), splits).values(), default=0.0)


@settings(max_examples=40, deadline=None)
@given(g=connected_graphs(), data=st.data())
def test_the_turns_engine_never_carries_more_than_its_trees_per_switch(g: nx.Graph, data: st.DataObject) -> None:
    topo = custom(g)
    hosts = {s: data.draw(st.integers(0, 4), label=s) for s in topo.switches}
    cables = topo.arc_cables()
    plain = turn_routes(topo, hosts)
    routes = TURNS.route(topo, hosts, TURNS.params(topo, Options()))
    before = max(arc_loads(plain.parents, hosts, cables).values(), default=0.0)
    after = max(arc_loads(routes.parents, hosts, cables, routes.splits).values(), default=0.0)
    assert after <= before + 1e-9
    if routes.splits:
        assert after < before - 1e-9                        # below the switch only where it carries less
        assert routes.unspread is not None and routes.unspread[0] == before
    assert channel_dependencies_acyclic(routes.parents, hosts, routes.splits)


def spine_hosts() -> tuple[Topology, dict[str, int]]:
    """8 leaves of 4 hosts, 4 spines of 1 host (tests/test_opensm_peer.py's unseen fabric)."""
    topo = Topology.from_links([f"l{i}" for i in range(8)] + [f"s{j}" for j in range(4)],
                               [(f"l{i}", f"s{j}") for i in range(8) for j in range(4)])
    return topo, {**{f"l{i}": 4 for i in range(8)}, **{f"s{j}": 1 for j in range(4)}}


def test_a_leaf_spine_with_hosts_on_its_spines_routes_below_the_switch() -> None:
    # One tree per switch: each leaf's 4 hosts leave by one spine towards each destination.
    # One tree per host spreads them over the 4 spines; OpenSM's updn, routing per
    # destination, reaches 35 / 32.375 (tests/test_opensm_peer.py checks the default against it).
    topo, hosts = spine_hosts()
    cables = topo.arc_cables()
    plain = max(arc_loads(turn_routes(topo, hosts).parents, hosts, cables).values())
    routes = TURNS.route(topo, hosts, TURNS.params(topo, Options()))
    load = max(arc_loads(routes.parents, hosts, cables, routes.splits).values())
    assert load < plain
    assert load / optimum_bound(topo, hosts).value < 1.1
    assert all(len(shares) >= 2 for s, shares in routes.splits.items() if s.startswith("l"))
    assert channel_dependencies_acyclic(routes.parents, hosts, routes.splits)


def test_a_budget_too_small_for_trees_per_host_keeps_one_tree_per_switch() -> None:
    topo, hosts = spine_hosts()
    assert host_updown(topo, hosts, ["l0"], 4) is None
    routes = TURNS.route(topo, hosts, TURNS.params(topo, Options(max_vlans=4)))
    assert not routes.splits


def test_below_the_switch_is_planned_once_per_fabric_and_each_caller_gets_trees_of_its_own() -> None:
    # The default plan asks the turns engine twice (the chooser, the deadlock warning's advice).
    topo, hosts = spine_hosts()
    params = TURNS.params(topo, Options())
    turns_module._BELOW.clear()
    with mock.patch.object(turns_module, "below_the_switch", wraps=turns_module.below_the_switch) as planned:
        first = TURNS.route(topo, hosts, params)
        kept = copy.deepcopy(first)
        for tree in first.parents.values():         # a caller changing its trees...
            tree.clear()
        for shares in first.splits.values():
            for tree, _ in shares:
                tree.clear()
        second = TURNS.route(topo, hosts, params)
        other = TURNS.route(topo, hosts, TURNS.params(topo, Options(max_vlans=4)))
    assert planned.call_count == 2                  # once for the default budget, once for 4 VLANs
    assert kept.splits and second == kept           # ...changes nothing the next caller gets
    assert not other.splits


def test_a_fabric_too_large_for_one_pass_over_its_hosts_is_not_searched() -> None:
    # Counted in arc visits, never timed: the same fabric is searched or not on any machine.
    from vlanroute.routing import updown_hosts
    topo, hosts = spine_hosts()
    one_pass = sum(hosts.values()) * len(topo.arc_cables())
    with mock.patch.object(updown_hosts, "MAX_PASS", one_pass):
        assert host_updown(topo, hosts, ["l0"], 4094) is not None
    with mock.patch.object(updown_hosts, "MAX_PASS", one_pass - 1):
        assert host_updown(topo, hosts, ["l0"], 4094) is None
        turns_module._BELOW.clear()
        routes = TURNS.route(topo, hosts, TURNS.params(topo, Options()))
    turns_module._BELOW.clear()
    assert not routes.splits                        # one up*/down* tree per switch, still deadlock-free
    assert channel_dependencies_acyclic(routes.parents, hosts)


def test_the_balanced_roots_are_as_many_as_the_work_allows_and_at_least_one() -> None:
    topo, hosts = spine_hosts()
    per_root = turns_module.ROUNDS * len(topo.switches) * len(topo.arc_cables())
    for work, roots in ((per_root * 3, 3), (per_root - 1, 1), (per_root * 100, turns_module.ROOTS)):
        with mock.patch.object(turns_module, "ROOT_WORK", work), \
                mock.patch.object(turns_module, "_updown_balanced", wraps=turns_module._updown_balanced) as grown:
            routes = turns_module.balanced_updown_routes(topo, hosts)
        assert grown.call_count == roots
        assert channel_dependencies_acyclic(routes.parents, hosts)
