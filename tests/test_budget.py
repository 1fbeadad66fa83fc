"""The VLAN budget: its default, the error when a routing needs more, routing within it.

Expected values are computed here: budgets from the platform facts by hand, route lengths
and loads from the plan JSON (tests/plancheck.py), optima on small rings by exhaustive
search over every choice of trees and every assignment of sources to them.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from plancheck import check_plan, plan_loads, tree_path
from topologies import connected_graphs, grid_graph
from vlanroute.cli import main
from vlanroute.plan.build import plan_from_file
from vlanroute.model.platforms import PLATFORMS

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
INV = Path(__file__).resolve().parent.parent / "inventories"


def write(tmp: Path, doc: dict) -> Path:
    p = tmp / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def torus_doc(dims: list[int], per_switch: int = 1, **routing: object) -> dict:
    return {"name": "t", "platform": "linux-bridge", "topology": {"kind": "torus", "dims": dims},
            "hosts": {"per_switch": per_switch}, "routing": dict(routing),
            "settings": {"learning": {"pool": "10.0.0.0/8"}}}


def cli_error(tmp: Path, capsys: pytest.CaptureFixture[str], doc: dict) -> str:
    rc = main(["plan", str(write(tmp, doc))])
    err = capsys.readouterr().err
    assert rc != 0
    assert "Traceback" not in err
    return err


# --------------------------------------------------------------------------- the budget


def test_default_budget_is_the_mac_table_on_the_seed_cluster() -> None:
    # 225 hosts on PowerConnect 6248s: every VLAN costs 225 MAC entries of 8192.
    plan = plan_from_file(INV / "seed-torus.yaml")
    expected = PLATFORMS["powerconnect-6248"].mac_capacity // 225
    assert expected == 36
    assert plan.budget.max_vlans == expected
    assert "MAC" in plan.budget.binding


def test_default_budget_is_the_id_range_when_that_is_tighter(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # 4x4 torus, one host each: 8 trees; from first_vlan 4090 only 4090..4094 remain.
    err = cli_error(tmp_path, capsys, torus_doc([4, 4], first_vlan=4090, algorithm="dor"))
    assert "needs 8 VLANs but only 5 fit" in err
    assert "routing.first_vlan" in err and "algorithm: budget" in err


def test_explicit_max_vlans_too_small_names_count_field_and_fix(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    err = cli_error(tmp_path, capsys, torus_doc([8, 8], max_vlans=8, algorithm="dor"))
    assert "inv.yaml" in err and "routing.max_vlans" in err
    assert "needs 32 VLANs but only 8 fit" in err
    assert "routing.algorithm: budget" in err


def test_mac_capacity_binds_the_hyper_crossbar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 8x8 hyper-crossbar, 10 hosts each: DOR needs one VLAN per switch (64); a table of
    # 16384 entries holds 16384 // 640 = 25 VLANs.
    doc = {"name": "t", "platform": "small", "topology": {"kind": "hyper-crossbar", "dims": [8, 8]},
           "hosts": {"per_switch": 10}, "routing": {"algorithm": "dor"},
           "platforms": {"small": {"base": "linux-bridge", "mac_capacity": 16384}},
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    err = cli_error(tmp_path, capsys, doc)
    assert "needs 64 VLANs but only 25 fit" in err and "MAC" in err and "16384" in err
    doc["routing"] = {"algorithm": "budget"}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    assert plan["metrics"]["vlan_count"] <= 25
    assert plan["metrics"]["max_mac_entries"] <= 16384
    check_plan(plan, grid_graph("hyper-crossbar", [8, 8]))


def test_not_even_one_vlan_fits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {**torus_doc([4, 2], 4), "platform": "tiny",
           "platforms": {"tiny": {"base": "linux-bridge", "mac_capacity": 20}}}
    err = cli_error(tmp_path, capsys, doc)
    assert "not even one VLAN fits" in err and "MAC" in err


# --------------------------------------------------------------------------- routing within it


def independent_stretch(plan: dict, g: nx.Graph) -> tuple[float, int]:
    hosts = Counter(h["switch"] for h in plan["hosts"].values())
    vlan_of = {h["switch"]: h["vlan"] for h in plan["hosts"].values()}
    links = {v["id"]: v["links"] for v in plan["vlans"]}
    dist = dict(nx.all_pairs_shortest_path_length(g))
    routed = shortest = 0
    longer = 0
    for s in hosts:
        for t in hosts:
            if s == t:
                continue
            path = tree_path(links[vlan_of[s]], s, t)
            assert path is not None
            routed += hosts[s] * hosts[t] * (len(path) - 1)
            shortest += hosts[s] * hosts[t] * dist[s][t]
            longer += len(path) - 1 > dist[s][t]
    return routed / shortest, longer


@SETTINGS
@given(kind=st.sampled_from(["mesh", "torus", "hyper-crossbar"]),
       dims=st.lists(st.integers(min_value=2, max_value=5), min_size=1, max_size=2),
       per_switch=st.integers(min_value=1, max_value=3), k=st.integers(min_value=1, max_value=6))
def test_budget_plans_fit_and_report_their_stretch(tmp_path: Path, kind: str, dims: list[int], per_switch: int,
                                                   k: int) -> None:
    doc = {**torus_doc(dims, per_switch, algorithm="budget", max_vlans=k), "topology": {"kind": kind, "dims": dims}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    g = grid_graph(kind, dims)
    check_plan(plan, g)
    assert plan["metrics"]["vlan_count"] <= k
    stretch, longer = independent_stretch(plan, g)
    assert plan["metrics"]["mean_stretch"] == pytest.approx(stretch, abs=1e-4)
    assert plan["metrics"]["non_minimal_routes"] == longer
    assert plan["metrics"]["max_link_load"] == pytest.approx(max(plan_loads(plan).values()))
    assert any("longer than a shortest path" in w for w in plan["warnings"]) == (longer > 0)


@SETTINGS
@given(g=connected_graphs(), k=st.integers(min_value=1, max_value=4))
def test_budget_on_custom_graphs(tmp_path: Path, g: nx.Graph, k: int) -> None:
    nodes = sorted(g.nodes, key=lambda s: int(s[1:]))
    doc = {"name": "t", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": nodes, "links": [{"a": a, "b": b} for a, b in g.edges]},
           "hosts": {"per_switch": 1}, "routing": {"algorithm": "budget", "max_vlans": k}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    check_plan(plan, g)
    assert plan["metrics"]["vlan_count"] <= k


def test_budget_large_enough_gives_the_minimal_routing(tmp_path: Path) -> None:
    minimal = plan_from_file(write(tmp_path, torus_doc([8, 8], 2, algorithm="dor"))).to_json()
    within = plan_from_file(write(tmp_path, torus_doc([8, 8], 2, algorithm="budget", max_vlans=40))).to_json()
    assert within["vlans"] == minimal["vlans"]
    assert within["metrics"]["mean_stretch"] == 1.0 and within["metrics"]["non_minimal_routes"] == 0
    assert within["routing"]["algorithm"] == "budget"


def ring_budget_optimum(n: int, hosts: list[int], k: int) -> float:
    """Exhaustive: a spanning tree of a ring is the ring minus one link; choose k of the n
    trees and give every source one of them; the least possible maximum load."""
    def load_of(source: int, missing: int) -> Counter:
        out: Counter = Counter()
        for t in range(n):
            if t == source:
                continue
            # the path avoids link (missing, missing + 1)
            fwd_path = [(x % n, (x + 1) % n) for x in range(source, source + (t - source) % n)]
            step = 1 if all(a != missing for a, _ in fwd_path) else -1
            x = source
            while x != t:
                out[(x, (x + step) % n)] += hosts[source] * hosts[t]
                x = (x + step) % n
        return out

    table = {(s, m): load_of(s, m) for s in range(n) for m in range(n)}
    best = float("inf")
    for trees in itertools.combinations(range(n), k):
        for choice in itertools.product(trees, repeat=n):
            total: Counter = Counter()
            for s, m in enumerate(choice):
                total.update(table[(s, m)])
            best = min(best, max(total.values()))
    return best


@pytest.mark.parametrize("n,k", [(4, 1), (5, 1), (5, 2), (6, 1), (6, 2), (6, 3), (7, 2), (8, 2)])
def test_budget_on_rings_reaches_the_exhaustive_optimum(tmp_path: Path, n: int, k: int) -> None:
    hosts = [1 + (i % 2) for i in range(n)]
    doc = {"name": "t", "platform": "linux-bridge", "topology": {"kind": "ring", "size": n},
           "hosts": {"per_switch": {f"sw{i + 1}": h for i, h in enumerate(hosts)}},
           "routing": {"algorithm": "budget", "max_vlans": k}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    assert plan["metrics"]["vlan_count"] <= k
    assert max(plan_loads(plan).values()) == pytest.approx(ring_budget_optimum(n, hosts, k))


def test_analyze_shows_the_limits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(INV / "seed-torus.yaml")]) == 0
    out = capsys.readouterr().out
    for words in ("VLANs / budget", "4 / 36", "load / bound", "stretch", "MAC / capacity", "900 / 8192"):
        assert words in out


@settings(max_examples=15, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=6), st.integers(min_value=1, max_value=8))
def test_a_larger_budget_never_plans_worse(g: nx.Graph, small: int, extra: int) -> None:
    from vlanroute.model.topology import Topology
    from vlanroute.routing.engine import Options
    from vlanroute.routing.registry import ENGINES
    from vlanroute.routing.trees import max_load

    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    hosts = {s: 1 + (i % 3) for i, s in enumerate(topo.switches)}
    budget = ENGINES["budget"]

    def load(k: int) -> float:
        return max_load(budget.route(topo, hosts, budget.params(topo, Options(max_vlans=k))).parents, hosts,
                        topo.arc_cables())

    assert load(small + extra) <= load(small) * (1 + 1e-9)


def _budget(topo, hosts: dict[str, int], k: int, moves: bool = True):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from vlanroute.routing.engine import Options
    from vlanroute.routing.registry import ENGINES
    budget = ENGINES["budget"]
    return budget.route(topo, hosts, replace(budget.params(topo, Options(max_vlans=k)), branch_moves=moves))


def test_branch_moves_reach_the_pigeonhole_bound_of_a_leaf_spine() -> None:
    """16 leaves of 4 hosts, 8 spines. Whatever the trees, a leaf's 8 uplinks carry its
    traffic to 15 other leaves, 16 units each, so some uplink carries 2 of them: 32 units
    (pigeonhole), against a splittable 15 * 16 / 8 = 30. The searched trees leave an uplink
    with 3 (48, 1.6x); with a VLAN per leaf allowed, the branch moves reach the 32."""
    import fabrics
    from vlanroute.routing.engine import packing_of
    from vlanroute.routing.trees import max_load

    topo, hosts = fabrics.leaf_spine(16, 8)
    cables = topo.arc_cables()
    searched, moved = _budget(topo, hosts, 4094, moves=False), _budget(topo, hosts, 4094)
    assert max_load(searched.parents, hosts, cables) == 48
    assert max_load(moved.parents, hosts, cables) == 32
    assert moved.choices.record()["polished"] is True                  # type: ignore[union-attr]
    assert len(packing_of(moved, topo, hosts)) <= 16                    # a VLAN per leaf at most
    # Below a VLAN per leaf the moves are not made (they would need more VLANs).
    assert max_load(_budget(topo, hosts, 15).parents, hosts, cables) > 32


@settings(max_examples=25, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3))
def test_branch_moves_keep_spanning_trees_within_a_vlan_per_source_and_never_lose(g: nx.Graph, per: int) -> None:
    from vlanroute.model.topology import Topology
    from vlanroute.routing.engine import packing_of
    from vlanroute.routing.trees import max_load, tree_depths

    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    hosts = {s: per + (i % 3 == 0) for i, s in enumerate(topo.switches)}
    cables = topo.arc_cables()
    k = len(topo.switches)                          # every switch has hosts: a VLAN per source
    searched, moved = _budget(topo, hosts, k, moves=False), _budget(topo, hosts, k)
    before, after = max_load(searched.parents, hosts, cables), max_load(moved.parents, hosts, cables)
    assert after <= before * (1 + 1e-9)
    for src, tree in moved.parents.items():         # a spanning tree from every source
        assert set(tree_depths(tree, src)) == set(topo.switches)
        assert all(topo.graph.has_edge(v, p) for v, p in tree.items())
    assert len(packing_of(moved, topo, hosts)) <= k
    record = moved.choices.record()
    if record.get("polished"):
        assert after < before
        distinct = {frozenset(frozenset(e) for e in moved.parents[s].items()) for s in topo.switches}
        assert record["trees_used"] == len(distinct) <= k
    else:
        assert after == before
    # One VLAN fewer than the sources: no moves, and never better than with them.
    if k > 1:
        assert max_load(_budget(topo, hosts, k - 1).parents, hosts, cables) >= after * (1 - 1e-9)
