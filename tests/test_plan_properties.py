"""Property tests: random topologies, then the invariants of VLAN routing.

The plan is built by vlanroute; the expectations come from networkx's own generators
(tests/topologies.py) and tests/plancheck.py, which reads only the plan JSON.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from plancheck import check_plan, route_lengths
from topologies import connected_graphs, grid_graph
from vlanroute.plan.build import plan_from_file

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def write(tmp: Path, doc: dict) -> Path:
    p = tmp / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def torus_distance(a: tuple[int, ...], b: tuple[int, ...], dims: list[int], kind: str) -> int:
    if kind == "hyper-crossbar":
        return sum(1 for x, y in zip(a, b) if x != y)
    if kind == "mesh":
        return sum(abs(x - y) for x, y in zip(a, b))
    return sum(min((x - y) % n, (y - x) % n) for x, y, n in zip(a, b, dims))


grid_dims = st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=3).filter(
    lambda d: 2 <= __import__("math").prod(d) <= 40)


@SETTINGS
@given(kind=st.sampled_from(["mesh", "torus", "hyper-crossbar"]), dims=grid_dims,
       per_switch=st.integers(min_value=1, max_value=3), links=st.integers(min_value=1, max_value=3),
       algorithm=st.sampled_from(["dor", "shortest", "updown"]))
def test_grid_plans_are_valid_vlan_routing(tmp_path: Path, kind: str, dims: list[int], per_switch: int,
                                            links: int, algorithm: str) -> None:
    doc = {"name": "t", "platform": "linux-bridge",
           "topology": {"kind": kind, "dims": dims, "links_per_pair": links},
           "hosts": {"per_switch": per_switch}, "routing": {"algorithm": algorithm},
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    g = grid_graph(kind, dims)
    check_plan(plan, g, {frozenset(e): links for e in g.edges})
    coords = {s: tuple(sw["coord"]) for s, sw in plan["switches"].items()}
    lengths = route_lengths(plan)
    for (s, t), hops in lengths.items():
        shortest = torus_distance(coords[s], coords[t], dims, kind)
        if algorithm in ("dor", "shortest"):
            assert hops == shortest, f"{algorithm} route {s}->{t} has {hops} hops, minimal is {shortest}"
        else:
            assert hops >= shortest
    if algorithm == "updown" or kind == "mesh" and algorithm == "dor":
        assert plan["metrics"]["deadlock_free"]
    # Mesh DOR: Otsuka et al. count N^(M-1) VLANs for an N^M mesh (balanced); with the best
    # dimension order it is the product of all sizes but the largest.
    if kind == "mesh" and algorithm == "dor":
        active = sorted(n for n in dims if n > 1)
        expect = 1
        for n in active[:-1]:
            expect *= n
        assert plan["metrics"]["vlan_count"] == expect


@SETTINGS
@given(g=connected_graphs(), data=st.data(), algorithm=st.sampled_from(["shortest", "updown"]))
def test_custom_graph_plans_are_valid(tmp_path: Path, g: nx.Graph, data: st.DataObject, algorithm: str) -> None:
    nodes = sorted(g.nodes, key=lambda s: int(s[1:]))
    # Some switches without hosts: VLAN trees are then Steiner trees and may be merged.
    with_hosts = data.draw(st.lists(st.sampled_from(nodes), min_size=1, unique=True))
    hosts = [{"name": f"h{i}", "switch": s} for i, s in enumerate(with_hosts)]
    doc = {"name": "t", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": nodes, "links": [{"a": a, "b": b} for a, b in g.edges]},
           "hosts": {"list": hosts}, "routing": {"algorithm": algorithm}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    check_plan(plan, g)
    dist = dict(nx.all_pairs_shortest_path_length(g))
    for (s, t), hops in route_lengths(plan).items():
        if algorithm == "shortest":
            assert hops == dist[s][t]
    if algorithm == "updown":
        assert plan["metrics"]["deadlock_free"]
    assert plan["metrics"]["vlan_count"] <= len(with_hosts)


@pytest.mark.parametrize("dims", [[4, 4], [6, 6], [8, 8], [4, 4, 4]])
def test_torus_parity_ties_share_trees_in_pairs(tmp_path: Path, dims: list[int]) -> None:
    """Source-parity tie-breaking lets sources 2k and 2k+1 of a row share a tree."""
    doc = {"name": "t", "platform": "linux-bridge", "topology": {"kind": "torus", "dims": dims},
           "hosts": {"per_switch": 1}, "routing": {"algorithm": "dor"},
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    n = 1
    for d in dims:
        n *= d
    assert plan["metrics"]["vlan_count"] == n // 2
