"""Lower bounds on the maximum link load within a VLAN budget (vlanroute/routing/bounds.py).

The bound must never exceed the true optimum: checked against exhaustive search over every
choice of k spanning trees and every assignment of sources to them (tests/exhaustive_trees.py,
which shares no code with vlanroute) on tiny rings, meshes, tori and complete graphs, and on
random small graphs with parallel cables and switches without hosts. Hand-derived values
check the formulas on large grids, and every budget plan must respect its own bound.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from exhaustive_trees import PATTERNS, SMALL, budget_optimum, topology_of, work
from vlanroute.model.hosts import build_hosts
from vlanroute.model.inventory import load_inventory
from vlanroute.model.topology import Topology, build_topology
from vlanroute.plan.build import plan_from_file
from vlanroute.routing.bounds import budget_lower_bound, load_bounds

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def write(tmp: Path, doc: dict) -> Path:
    p = tmp / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def grid_doc(kind: str, dims: list[int], per_switch: int, **routing: object) -> dict:
    return {"name": "t", "platform": "linux-bridge", "topology": {"kind": kind, "dims": dims},
            "hosts": {"per_switch": per_switch}, "routing": dict(routing),
            "settings": {"learning": {"pool": "10.0.0.0/8"}}}


def small_cases() -> list[tuple[str, str, int]]:
    out = []
    for name, g in SMALL.items():
        for pattern, h in PATTERNS.items():
            hosts = {v: h(i) for i, v in enumerate(g.nodes)}
            for k in (1, 2, 3):
                if work(g, hosts, k) <= 300_000:
                    out.append((name, pattern, k))
    return out


@pytest.mark.parametrize("name,pattern,k", small_cases())
def test_bound_never_exceeds_the_exhaustive_optimum(name: str, pattern: str, k: int) -> None:
    g = SMALL[name]
    hosts = {v: PATTERNS[pattern](i) for i, v in enumerate(g.nodes)}
    optimum = budget_optimum(g, hosts, k)
    bound = budget_lower_bound(topology_of(g), hosts, k)
    assert 0 < bound <= optimum * (1 + 1e-9)
    if k == 1 and pattern != "uneven":
        # One tree, equal hosts: the centroid argument is exact on all of these.
        assert bound == pytest.approx(optimum)


@st.composite
def small_graphs(draw: st.DrawFn) -> tuple[nx.Graph, dict[str, int]]:
    n = draw(st.integers(min_value=2, max_value=5))
    g = nx.Graph()
    g.add_nodes_from(f"s{i}" for i in range(n))
    for i in range(1, n):
        g.add_edge(f"s{i}", f"s{draw(st.integers(0, i - 1))}")
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n + 2)):
        if a != b:
            g.add_edge(f"s{a}", f"s{b}")
    for a, b in g.edges:
        g[a][b]["cables"] = draw(st.integers(min_value=1, max_value=3))
    hosts = {v: draw(st.integers(min_value=0, max_value=3)) for v in g.nodes}
    return g, hosts


@SETTINGS
@given(case=small_graphs(), k=st.integers(min_value=1, max_value=3))
def test_bound_never_exceeds_the_optimum_on_random_graphs(case: tuple[nx.Graph, dict[str, int]], k: int) -> None:
    g, hosts = case
    assume(sum(1 for h in hosts.values() if h) >= 2)
    assume(work(g, hosts, k) <= 50_000)
    optimum = budget_optimum(g, hosts, k)
    bounds = load_bounds(topology_of(g), hosts, k)
    for part in (bounds.distance, bounds.switch, bounds.bridge, bounds.union, bounds.centroid, bounds.shared):
        assert part <= optimum * (1 + 1e-9)


@SETTINGS
@given(case=small_graphs())
def test_bound_falls_as_the_budget_grows(case: tuple[nx.Graph, dict[str, int]]) -> None:
    g, hosts = case
    topo = topology_of(g)
    values = [budget_lower_bound(topo, hosts, k) for k in (1, 2, 3, 4, 5, None)]
    assert all(a >= b * (1 - 1e-12) for a, b in zip(values, values[1:]))


def grid_topology(tmp: Path, kind: str, dims: list[int], per_switch: int) -> tuple[Topology, dict[str, int]]:
    inv = load_inventory(write(tmp, grid_doc(kind, dims, per_switch)))
    topo = build_topology(inv)
    count = {s: 0 for s in topo.switches}
    for h in build_hosts(inv, topo):
        count[h.switch] += 1
    return topo, count


def test_hand_derived_values_on_large_grids(tmp_path: Path) -> None:
    # 16x16 torus, 4 hosts per switch (W = 1024), one tree: the centroid has 4 links and
    # 1020 other hosts behind them, so one part holds at least 255 hosts, rounded up to a
    # whole switch, 256; that link carries 256 x 768 in one direction or the other.
    topo, hosts = grid_topology(tmp_path, "torus", [16, 16], 4)
    assert budget_lower_bound(topo, hosts, 1) == pytest.approx(256 * 768)
    # Distance bound: from any switch the distances sum to 16 x 64 per dimension (a ring of
    # 16: 0 + 1 + ... + 8 + 7 + ... + 1 = 64), 2048 in all; 16 host pairs per switch pair;
    # 2 x 512 cables.
    assert load_bounds(topo, hosts, None).distance == pytest.approx(16 * 256 * 2048 / 1024)
    # 16 trees: the heaviest group has 64 source hosts: 64 x 256 x 768 / 1024 on one link.
    assert budget_lower_bound(topo, hosts, 16) == pytest.approx(64 * 256 * 768 / 1024)
    # 16x16 hyper-crossbar, 10 hosts per switch (W = 2560), 16 trees: some tree serves 16
    # sources; the 15 besides its centroid each send 10 x (2560 - u) over one cable, with
    # their subtrees' hosts u summing to at most 2550: at least 10 x (2560 - 2550 / 15).
    topo, hosts = grid_topology(tmp_path, "hyper-crossbar", [16, 16], 10)
    assert budget_lower_bound(topo, hosts, 16) == pytest.approx(10 * (2560 - 2550 / 15))
    assert load_bounds(topo, hosts, 16).binding == "shared"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["mesh", "torus", "hyper-crossbar", "ring"]),
       dims=st.lists(st.integers(min_value=2, max_value=5), min_size=1, max_size=2),
       per_switch=st.integers(min_value=1, max_value=3), k=st.integers(min_value=1, max_value=6))
def test_every_budget_plan_respects_its_bound(tmp_path_factory: pytest.TempPathFactory, kind: str, dims: list[int],
                                              per_switch: int, k: int) -> None:
    topology = {"kind": kind, "dims": dims} if kind != "ring" else {"kind": "ring", "size": max(3, dims[0])}
    doc = {**grid_doc(kind, dims, per_switch, algorithm="budget", max_vlans=k), "topology": topology}
    m = plan_from_file(write(tmp_path_factory.mktemp("b"), doc)).to_json()["metrics"]
    assert m["link_load_lower_bound_budget"] >= m["link_load_lower_bound"]
    assert m["max_link_load"] >= m["link_load_lower_bound_budget"] * (1 - 1e-6)


@SETTINGS
@given(n=st.integers(min_value=2, max_value=7), data=st.data())
def test_bound_is_exact_on_tree_topologies(n: int, data: st.DataObject) -> None:
    # A tree has one routing; every link is a bridge, and its load is h(A) h(B) / cables.
    g = nx.Graph()
    g.add_nodes_from(f"s{i}" for i in range(n))
    for i in range(1, n):
        g.add_edge(f"s{i}", f"s{data.draw(st.integers(0, i - 1))}", cables=data.draw(st.integers(1, 3)))
    hosts = {v: data.draw(st.integers(0, 3)) for v in g.nodes}
    assume(sum(1 for h in hosts.values() if h) >= 2)
    for k in (1, 2, None):
        assert budget_lower_bound(topology_of(g), hosts, k) == pytest.approx(budget_optimum(g, hosts, 1))


def _host_level_optimum(g: nx.Graph, hosts: dict[str, int]) -> float:
    """The least max per-cable load over every plan with one tree per source *host* (the
    finest VLAN routing: a port's PVID picks its tree), by exhaustive search: each switch's
    hosts take any multiset of spanning trees."""
    import itertools

    import numpy as np

    from exhaustive_trees import source_loads, spanning_trees
    trees = spanning_trees(g)
    arcs = {a: i for i, a in enumerate([(a, b) for a, b in g.edges] + [(b, a) for a, b in g.edges])}
    cables = {frozenset((a, b)): d.get("cables", 1) for a, b, d in g.edges(data=True)}
    per_switch = []
    for s, n in hosts.items():
        if not n:
            continue
        one = [source_loads(t, s, hosts, arcs, cables) / n for t in trees]     # one host's loads
        per_switch.append([sum(combo) for combo in itertools.combinations_with_replacement(one, n)])
    best = float("inf")
    for choice in itertools.product(*per_switch):
        best = min(best, float(np.max(sum(choice))))
    return best


@settings(max_examples=30, deadline=None)
@given(case=small_graphs())
def test_the_arrival_bound_never_exceeds_the_host_level_optimum(case: tuple[nx.Graph, dict[str, int]]) -> None:
    """bounds.py 6: no plan, even one tree per host, carries less than the arrival bound;
    and it is at least the fractional bound it rounds up (a switch's arrivals over its cables)."""
    from math import comb, prod

    from exhaustive_trees import spanning_trees
    from vlanroute.routing.bounds import arrival_bound
    g, hosts = case
    assume(sum(1 for h in hosts.values() if h) >= 2)
    n_trees = len(spanning_trees(g))
    assume(prod(comb(n_trees + n - 1, n) for n in hosts.values() if n) <= 3000)
    topo = topology_of(g)
    bound = arrival_bound(topo, hosts)
    assert bound <= _host_level_optimum(g, hosts) * (1 + 1e-9)
    total = sum(hosts.values())
    for t, q in hosts.items():
        into = sum(d.get("cables", 1) for _, _, d in g.edges(t, data=True))
        if q and total > q:
            assert bound >= q * (total - q) / into * (1 - 1e-9)


def test_the_arrival_bound_on_leaf_spines() -> None:
    """L leaves of h hosts, S spines: a leaf takes h (L - 1) pieces of h over S cables,
    ceil(h (L - 1) / S) on one: h ceil(h (L - 1) / S) per cable (docs/routing-bounds.md)."""
    import math
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    import fabrics

    from vlanroute.routing.bounds import arrival_bound
    for leaves, spines, h in [(8, 4, 4), (16, 8, 4), (48, 16, 4), (6, 3, 3), (5, 4, 2)]:
        topo, hosts = fabrics.leaf_spine(leaves, spines, h)
        assert arrival_bound(topo, hosts) == h * math.ceil(h * (leaves - 1) / spines)
