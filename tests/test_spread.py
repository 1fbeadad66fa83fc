"""Routing below the switch (routing/spread.py): the hosts of one switch on several trees.

Checked here from first principles, not from the module's own bookkeeping: each tree a
switch's hosts send on is a spanning tree of cables rooted at that switch (shortest where
the engine is minimal, increasing in the channel order where it must be deadlock-free);
the trees carry exactly the switch's hosts; every ordered host pair is routed on the tree
of its source host's VLAN, and the loads recomputed host pair by host pair are the ones
the routing reports; and the whole pipeline (plan, render on every family, verify) takes
such a plan, with the leaf-spine at the LP optimum."""

from __future__ import annotations

from pathlib import Path

import fabrics
from hashseed import outputs_under_seeds
import networkx as nx
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.errors import VerificationError
from vlanroute.model.platforms import PLATFORMS
from vlanroute.model.topology import Topology
from vlanroute.plan.build import plan_from_file
from vlanroute.plan.invariants import verify_plan
from vlanroute.render.write import render_to_dir
from vlanroute.routing.acyclic.negotiate import OrderedRouter
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.order_lp import plan_order
from vlanroute.routing.packing import pack
from vlanroute.routing.shortest import SHORTEST, ShortestParams
from vlanroute.routing.spread import shared_trees, spread
from vlanroute.routing.trees import arc_loads
from vlanroute.routing.turns import turn_routes


@st.composite
def fabric(draw: st.DrawFn) -> tuple[Topology, dict[str, int]]:
    """A random connected graph (a random spanning tree plus extra links), 0 to 5 hosts a switch."""
    n = draw(st.integers(min_value=2, max_value=10))
    names = [f"s{i}" for i in range(n)]
    pairs = {(names[draw(st.integers(0, i - 1))], names[i]) for i in range(1, n)}
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n)):
        if a != b and (names[b], names[a]) not in pairs:
            pairs.add((names[a], names[b]))
    counts = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    if sum(1 for c in counts if c) < 2:
        counts[0], counts[-1] = 2, 3
    topo = Topology.from_links(names, sorted(pairs))
    return topo, dict(zip(names, counts))


@st.composite
def clos(draw: st.DrawFn) -> tuple[Topology, dict[str, int]]:
    """A leaf-spine with random cables left out (every leaf keeps one), 0 to 5 hosts a leaf,
    sometimes one on a spine: the fabrics where a switch's hosts gain most from several trees."""
    leaves, spines = draw(st.integers(2, 6)), draw(st.integers(2, 4))
    pairs = [(f"l{i}", f"s{j}") for i in range(leaves) for j in range(spines)
             if j == i % spines or draw(st.booleans()) or draw(st.booleans())]
    topo = Topology.from_links([*(f"l{i}" for i in range(leaves)), *(f"s{j}" for j in range(spines))], pairs)
    if not nx.is_connected(topo.simple()):
        pairs += [("l0", f"s{j}") for j in range(spines) if ("l0", f"s{j}") not in pairs]
        pairs += [(f"l{i}", "s0") for i in range(leaves) if (f"l{i}", "s0") not in pairs]
        topo = Topology.from_links(topo.switches, pairs)
    hosts = {s: draw(st.integers(0, 5)) if s.startswith("l") else draw(st.integers(0, 1)) for s in topo.switches}
    if sum(1 for n in hosts.values() if n) < 2:
        hosts["l0"], hosts["l1"] = 3, 2
    return topo, hosts


def host_pair_loads(topo: Topology, hosts: dict[str, int], parents: dict[str, dict[str, str]],
                    splits: dict[str, tuple[tuple[dict[str, str], int], ...]]) -> dict[tuple[str, str], float]:
    """Every ordered pair of distinct hosts, one unit each, along its source host's tree,
    per cable (a host of a split switch sends on the tree of its share)."""
    g = topo.simple()
    load: dict[tuple[str, str], float] = {}
    for s, n in hosts.items():
        trees = list(splits[s]) if s in splits else [(parents[s], n)]
        assert sum(k for _, k in trees) == n
        for tree, k in trees:
            for t, m in hosts.items():
                if t == s or not m or not k:
                    continue
                path = [t]
                while path[-1] != s:
                    path.append(tree[path[-1]])
                for a, b in zip(path[::-1], path[-2::-1]):
                    assert g.has_edge(a, b)
                    load[(a, b)] = load.get((a, b), 0.0) + k * m / g.edges[a, b]["cables"]
    return load


def check_split(topo: Topology, hosts: dict[str, int], parents: dict[str, dict[str, str]],
                splits: dict[str, tuple[tuple[dict[str, str], int], ...]], reported: float, minimal: bool) -> None:
    g = topo.simple()
    for s, shares in splits.items():
        assert len(shares) >= 2 and all(k > 0 for _, k in shares) and sum(k for _, k in shares) == hosts[s]
        for tree, _ in shares:
            assert set(tree) == set(topo.switches) - {s}         # a spanning tree rooted at s
            tg = nx.Graph([(v, p) for v, p in tree.items()])
            assert nx.is_tree(tg) and all(g.has_edge(v, p) for v, p in tree.items())
            if minimal:
                depth = nx.single_source_shortest_path_length(tg, s)
                assert depth == nx.single_source_shortest_path_length(g, s)
    mine = host_pair_loads(topo, hosts, parents, splits)
    theirs = arc_loads(parents, hosts, topo.arc_cables(), splits)
    assert set(mine) == {a for a, x in theirs.items() if x}
    for a, x in mine.items():
        assert theirs[a] == pytest.approx(x)
    assert reported == pytest.approx(max(mine.values()))
    # the VLANs: loop-free, and each split switch's trees in VLANs holding its routes
    index = {s: i for i, s in enumerate(topo.switches)}
    for t in pack(parents, {s for s, n in hosts.items() if n}, index, splits):
        assert nx.is_forest(nx.Graph(list(t.links)))


@settings(max_examples=40, deadline=None)
@given(st.one_of(fabric(), clos()))
def test_spread_trees_are_shortest_spanning_trees_that_carry_every_host(case) -> None:
    topo, hosts = case
    base = SHORTEST.route(topo, hosts, ShortestParams(spread=False))
    before = max(arc_loads(base.parents, hosts, topo.arc_cables()).values())
    got = spread(topo, hosts, base.parents, 4094, minimal=True)
    if got is not None:
        load, parents, splits = got
        assert load < before
        check_split(topo, hosts, parents, dict(splits), load, minimal=True)
    shared = shared_trees(topo, hosts, 4094, base.parents)
    if shared is not None:
        check_split(topo, hosts, shared[1], dict(shared[2]), shared[0], minimal=True)


@settings(max_examples=25, deadline=None)
@given(st.one_of(fabric(), clos()))
def test_spread_in_a_channel_order_stays_deadlock_free(case) -> None:
    topo, hosts = case
    start = turn_routes(topo, hosts)          # deadlock-free: its channels have an order
    rank = plan_order(start.parents, sorted(topo.arc_cables()))
    got = spread(topo, hosts, start.parents, 4094, rank=rank)
    if got is None:
        return
    load, parents, splits = got
    check_split(topo, hosts, parents, dict(splits), load, minimal=False)
    assert fabrics.channel_dependencies_acyclic(parents, hosts, splits)
    router = OrderedRouter(topo, hosts, rank)
    assert all(router.increasing(s, t) for s, shares in splits.items() for t, _ in shares)


def test_spread_respects_the_vlan_budget() -> None:
    topo, hosts = fabrics.leaf_spine(8, 4)
    base = SHORTEST.route(topo, hosts, ShortestParams(spread=False))
    assert spread(topo, hosts, base.parents, 4094, minimal=True) is not None
    assert spread(topo, hosts, base.parents, 8, minimal=True) is None      # per-host trees need more
    got = shared_trees(topo, hosts, 4, base.parents)
    assert got is not None and len(pack(got[1], {s for s, n in hosts.items() if n},
                                         {s: i for i, s in enumerate(topo.switches)}, got[2])) == 4
    assert shared_trees(topo, hosts, 3, base.parents) is None or \
        shared_trees(topo, hosts, 3, base.parents)[0] > got[0]  # type: ignore[index]


def leaf_spine_inventory(tmp_path: Path, platform: str, leaves: int = 4, spines: int = 2, per: int = 2) -> Path:
    doc = {"name": "ls", "platform": platform,
           "topology": {"kind": "custom", "switches": [*(f"l{i}" for i in range(leaves)),
                                                       *(f"s{j}" for j in range(spines))],
                        "links": [{"a": f"l{i}", "b": f"s{j}"} for i in range(leaves) for j in range(spines)]},
           "hosts": {"per_switch": {f"l{i}": per for i in range(leaves)}},
           "settings": {"learning": {"pool": "10.0.0.0/16"}}}
    path = tmp_path / f"ls-{platform}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_leaf_spine_at_the_optimum_renders_and_verifies_on_every_family(tmp_path: Path, platform: str) -> None:
    plan = plan_from_file(leaf_spine_inventory(tmp_path, platform))
    m = plan.metrics
    assert m.max_link_load == pytest.approx(m.link_load_optimum) and m.deadlock_free
    assert m.vlan_count == 2 and plan.routes.splits
    for leaf in (f"l{i}" for i in range(4)):           # a leaf's two hosts, one on each spine's tree
        ports = [p for p in plan.switches[leaf].ports.values() if p.role == "host"]
        assert sorted(p.pvid for p in ports) == sorted(v.id for v in plan.vlans)   # type: ignore[type-var]
    result = render_to_dir(plan.to_document(), tmp_path / "out")
    assert result.verified


def test_the_plan_refuses_a_host_in_the_wrong_share(tmp_path: Path) -> None:
    plan = plan_from_file(leaf_spine_inventory(tmp_path, "linux-bridge"))
    h = next(h for h in plan.hosts if h.switch == "l0")
    other = next(v.id for v in plan.vlans if v.id != h.vlan)
    plan.switches["l0"].ports[h.port].pvid = other    # type: ignore[index]
    h.vlan = other                               # both hosts of l0 now in one VLAN: its shares break
    with pytest.raises(VerificationError, match="host ports have PVID"):
        verify_plan(plan.topology, plan.routes, plan.vlans, plan.hosts, plan.switches, plan.cabling)


def test_the_leaf_spine_of_issue_40_is_at_the_optimum() -> None:
    """8 leaves, 4 spines, 4 hosts a leaf: each leaf's hosts on the 4 spines' trees, 4 VLANs
    (1.143x the optimum with one tree per leaf, the best OpenSM's engines beat: 1.00x)."""
    topo, hosts = fabrics.leaf_spine(8, 4)
    routes = SHORTEST.route(topo, hosts, SHORTEST.params(topo, Options()))
    opt = optimum_bound(topo, hosts).value
    assert fabrics.max_load(topo, hosts, routes.parents, routes.splits) == pytest.approx(opt)
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    vlans = pack(routes.parents, {s for s, n in hosts.items() if n}, {s: i for i, s in enumerate(topo.switches)},
                 routes.splits)
    assert len(vlans) == 4



def test_the_flow_models_route_each_host_on_its_own_tree(tmp_path: Path) -> None:
    """perf (analyze) and the emulation's TCP model take a split plan host by host: on the
    leaf-spine at the optimum all-to-all is limited by the host links alone, as on one
    non-blocking switch, where one tree leaves uplinks that fill first."""
    from vlanroute.emulate.spec import load
    from vlanroute.emulate.traffic import vlan_fabric
    from vlanroute.perf.evaluate import evaluate
    from vlanroute.perf.patterns import all_to_all
    from vlanroute.perf.planfabric import fabrics_of

    plan = plan_from_file(leaf_spine_inventory(tmp_path, "linux-bridge", leaves=4, spines=2, per=2))
    assert plan.metrics.load_over_optimum == pytest.approx(1.0) and plan.routes.splits
    render_to_dir(plan.to_document(), tmp_path / "out")
    trees = {h.name: h.vlan for h in plan.hosts}
    for fabric in (fabrics_of(plan).vlan, vlan_fabric(load(tmp_path / "out"), 1.0)):
        # hosts of one leaf on one VLAN share a tree; on two, they do not
        for a, ta in zip(fabric.hosts, fabric.tree_of_hosts()):
            for b, tb in zip(fabric.hosts, fabric.tree_of_hosts()):
                if plan.hosts[0].name in (a, b) and fabric.host_switch[fabric.hosts.index(a)] == \
                        fabric.host_switch[fabric.hosts.index(b)]:
                    assert (ta == tb) == (trees[a] == trees[b])
        got = evaluate(fabric, all_to_all(fabric))
        assert got.host_bound and got.slowest == pytest.approx(1 / 7)
    one_tree = plan_from_file(leaf_spine_inventory(tmp_path, "linux-bridge", leaves=4, spines=2, per=2),
                              ["routing.algorithm=updown"])
    assert not one_tree.routes.splits
    got = evaluate(fabrics_of(one_tree).vlan, all_to_all(fabrics_of(one_tree).vlan))
    assert not got.host_bound and got.slowest < 1 / 7


SPREAD_ORDER = """
import sys
sys.path.insert(0, "tests")
import fabrics
from vlanroute.routing.engine import Options
from vlanroute.routing.registry import ENGINES
topo, hosts = fabrics.leaf_spine(8, 4)
e = ENGINES["shortest"]
r = e.route(topo, hosts, e.params(topo, Options(quick=True)))
assert r.splits
print([(s, [list(t.items()) for t, _ in shares]) for s, shares in r.splits.items()])
"""


def test_spread_trees_do_not_depend_on_string_hashing() -> None:
    """The trees of each switch's hosts, their entries' order included (later searches walk
    them in that order), are the same whatever Python's string hash seed: the part of a
    shared tree its switch's VLAN needs was cut by walking a set of switch names."""
    outs = outputs_under_seeds(SPREAD_ORDER, ("1", "2"))
    assert outs[0] == outs[1] and outs[0].startswith("[(")
