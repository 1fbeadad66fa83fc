"""routing.algorithm: turns, the deadlock-free engine (vlanroute/routing/turns.py).

Deadlock freedom is checked here from the plan JSON alone: the routes are the paths in
each source's VLAN tree (tests/plancheck.py), their consecutive hops give the channel
dependency graph, and it must be acyclic (Dally and Seitz 1987). check_plan asserts that
every route reaches every switch and that each source's routes are one tree.
"""

from __future__ import annotations

import itertools

import json
import math
from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from plancheck import check_plan, plan_loads, tree_path
from topologies import connected_graphs, grid_graph
from vlanroute.cli import main
from vlanroute.plan.build import plan_from_file
from vlanroute.routing.turns import cut_line

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
INV = Path(__file__).resolve().parent.parent / "inventories"
grid_dims = st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=3).filter(
    lambda d: 2 <= math.prod(d) <= 40)


def write(tmp: Path, doc: dict) -> Path:
    p = tmp / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def dependency_graph(plan: dict) -> nx.DiGraph:
    """Channel dependencies of all routes between switches with hosts."""
    vlan_of = {h["switch"]: h["vlan"] for h in plan["hosts"].values()}
    links = {v["id"]: v["links"] for v in plan["vlans"]}
    cdg = nx.DiGraph()
    for s in vlan_of:
        for t in vlan_of:
            if s == t:
                continue
            path = tree_path(links[vlan_of[s]], s, t)
            assert path is not None
            hops = list(zip(path, path[1:]))
            cdg.add_edges_from(zip(hops, hops[1:]))
    return cdg


def check_deadlock_free(plan: dict) -> None:
    cdg = dependency_graph(plan)
    assert nx.is_directed_acyclic_graph(cdg), nx.find_cycle(cdg)
    assert plan["metrics"]["deadlock_free"] is True
    assert not any("deadlock" in w for w in plan["warnings"])


@SETTINGS
@given(kind=st.sampled_from(["mesh", "torus", "hyper-crossbar"]), dims=grid_dims,
       per_switch=st.integers(min_value=1, max_value=3))
def test_turns_on_grids_is_valid_and_deadlock_free(tmp_path: Path, kind: str, dims: list[int],
                                                   per_switch: int) -> None:
    doc = {"name": "t", "platform": "linux-bridge", "topology": {"kind": kind, "dims": dims},
           "hosts": {"per_switch": per_switch}, "routing": {"algorithm": "turns"},
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    check_plan(plan, grid_graph(kind, dims))
    check_deadlock_free(plan)
    assert plan["routing"]["algorithm"] == "turns"


@SETTINGS
@given(n=st.integers(min_value=3, max_value=12))
def test_turns_on_rings_is_deadlock_free(tmp_path: Path, n: int) -> None:
    doc = {"name": "t", "platform": "linux-bridge", "topology": {"kind": "ring", "size": n},
           "hosts": {"per_switch": 1}, "routing": {"algorithm": "turns"}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    check_plan(plan, nx.relabel_nodes(nx.cycle_graph(n), {i: f"sw{i + 1}" for i in range(n)}))
    check_deadlock_free(plan)


@SETTINGS
@given(g=connected_graphs(), data=st.data())
def test_turns_on_custom_graphs_is_deadlock_free_and_no_worse_than_updown(tmp_path: Path, g: nx.Graph,
                                                                          data: st.DataObject) -> None:
    nodes = sorted(g.nodes, key=lambda s: int(s[1:]))
    with_hosts = data.draw(st.lists(st.sampled_from(nodes), min_size=1, unique=True))
    doc = {"name": "t", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": nodes, "links": [{"a": a, "b": b} for a, b in g.edges]},
           "hosts": {"list": [{"name": f"h{i}", "switch": s} for i, s in enumerate(with_hosts)]},
           "routing": {"algorithm": "turns"}}
    plan = plan_from_file(write(tmp_path, doc)).to_json()
    check_plan(plan, g)
    check_deadlock_free(plan)
    doc["routing"] = {"algorithm": "updown"}
    updown = plan_from_file(write(tmp_path, doc)).to_json()
    assert plan["metrics"]["max_link_load"] <= updown["metrics"]["max_link_load"] + 1e-9


@pytest.mark.parametrize("n", range(1, 10))
def test_a_ring_with_a_cut_is_a_line_through_every_switch(n: int) -> None:
    for start in range(n):
        for cut in range(n):
            prev = cut_line(n, start, cut)
            assert set(prev) == set(range(n)) - {start}
            for b, a in prev.items():
                assert (b - a) % n in (1, n - 1)                    # a neighbour on the ring
                if a != start and n > 2:
                    # nothing passes straight through the '+' cut going '+', nor through the
                    # '-' cut (the next switch, routing/ringcuts.py) going '-'
                    going_plus = (b - a) % n == 1
                    assert a != (cut if going_plus else (cut + 1) % n)
            # following the predecessors from any switch ends at the start (a tree)
            for b in prev:
                seen, x = set(), b
                while x != start:
                    assert x not in seen
                    seen.add(x)
                    x = prev[x]


def torus_doc(dims: list[int], algorithm: str) -> dict:
    return {"name": "t", "platform": "linux-bridge", "topology": {"kind": "torus", "dims": dims},
            "hosts": {"per_switch": 4}, "routing": {"algorithm": algorithm},
            "settings": {"learning": {"pool": "10.0.0.0/8"}}}


@pytest.mark.parametrize("dims", [[8, 8], pytest.param([16, 16], marks=pytest.mark.slow)])
def test_turns_carries_at_most_half_of_updowns_max_load_on_tori(tmp_path: Path, dims: list[int]) -> None:
    turns = plan_from_file(write(tmp_path, torus_doc(dims, "turns"))).to_json()
    updown = plan_from_file(write(tmp_path, torus_doc(dims, "updown"))).to_json()
    check_plan(turns, grid_graph("torus", dims))
    assert turns["metrics"]["deadlock_free"]
    assert max(plan_loads(turns).values()) == pytest.approx(turns["metrics"]["max_link_load"])
    assert 2 * turns["metrics"]["max_link_load"] <= updown["metrics"]["max_link_load"]
    # A ring cut once carries its traffic like a line: at most twice the distance bound.
    assert turns["metrics"]["max_link_load"] <= 2 * turns["metrics"]["link_load_lower_bound"]


def test_deadlock_warning_recommends_turns_with_its_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(INV / "seed-ring.yaml"), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    (warning,) = [w for w in plan["warnings"] if "deadlock" in w]
    assert "routing.algorithm: turns is deadlock-free" in warning
    assert main(["plan", str(INV / "seed-ring.yaml"), "--json", "--set", "routing.algorithm=turns"]) == 0
    turns = json.loads(capsys.readouterr().out)
    assert f"needs {turns['metrics']['vlan_count']} VLANs here" in warning
    assert f"max link load of {turns['metrics']['max_link_load']:g}" in warning
    assert turns["metrics"]["deadlock_free"] and not turns["warnings"]


def _ring_max_load(n: int, splits: list[int]) -> int:
    """Max load per directed link of a ring, one unit per ordered pair, each source s
    reaching splits[s] switches the '+' way and the rest the '-' way (counted hop by hop)."""
    load: dict[tuple[int, int], int] = {}
    for s, a in enumerate(splits):
        for k in range(1, n):
            plus = k <= a
            dst = (s + k) % n if plus else (s - (n - k)) % n
            x = s
            while x != dst:
                y = (x + 1) % n if plus else (x - 1) % n
                load[(x, y)] = load.get((x, y), 0) + 1
                x = y
    return max(load.values())


@pytest.mark.parametrize("n", range(3, 9))
def test_the_ring_splits_are_the_best_the_cuts_allow(n: int) -> None:
    """Every combination of per-source splits that the two cuts allow, tried by brute
    force: none has a lower max load than the MILP's, and cut_line's routes carry it."""
    from vlanroute.routing.ringcuts import best_splits, split_allowed
    found = best_splits(n, 0, 1)
    assert found is not None
    allowed = [[a for a in range(n) if split_allowed(n, s, a, 0, 1)] for s in range(n)]
    brute = min(_ring_max_load(n, list(c)) for c in itertools.product(*allowed))
    assert found[0] == brute == _ring_max_load(n, list(found[1]))
    for cut in range(n):
        splits = []
        for s in range(n):
            prev = cut_line(n, s, cut)
            splits.append(sum(1 for b, a in prev.items() if (b - a) % n == 1))
        assert _ring_max_load(n, splits) == brute
