"""The flow model (vlanroute/perf): max-min rates on hand-computed cases, the max-min
optimality condition on random problems, the spanning-tree baseline's root election and
blocked cables, and the seed comparison's ordering."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from vlanroute.errors import UserError
from vlanroute.perf import maxmin
from vlanroute.perf.evaluate import evaluate
from vlanroute.perf.fabric import big_switch, from_links, from_trees
from vlanroute.perf.patterns import (
    all_to_all,
    bisection,
    flows_file,
    grid_shape,
    host_pairs,
    neighbour,
    permutation,
)
from vlanroute.perf.stp import path_cost, spanning_tree

ROOT = Path(__file__).resolve().parent.parent


def problem(rows: list[list[int]], capacity: list[float], weight: list[float] | None = None,
            cap: float = float("inf")) -> maxmin.Problem:
    """Groups given as the resources each crosses."""
    r = [i for g in rows for i in g]
    c = [j for j, g in enumerate(rows) for _ in g]
    inc = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(capacity), len(rows)))
    return maxmin.Problem(inc, np.array(capacity, dtype=float),
                          np.array(weight if weight else [1.0] * len(rows)), cap)


def test_one_bottleneck_is_shared_equally() -> None:
    assert maxmin.solve(problem([[0], [0], [0], [0]], [1.0])).rate.tolist() == pytest.approx([0.25] * 4)


def test_a_flow_limited_elsewhere_leaves_its_share_to_the_others() -> None:
    # Link 0 (1 Gb/s): f0, f1; link 1 (10 Gb/s): f1, f2. f0 = f1 = 0.5 at link 0, f2 takes the 9.5 left.
    assert maxmin.solve(problem([[0], [0, 1], [1]], [1.0, 10.0])).rate.tolist() == pytest.approx([0.5, 0.5, 9.5])


def test_max_min_is_not_proportional_fairness() -> None:
    # Two links of 1 in a line; f0 crosses both, f1 and f2 one each. Max-min: 1/2 each;
    # proportional fairness (max sum of logs) would give f0 1/3 and the others 2/3.
    rate = maxmin.solve(problem([[0, 1], [0], [1]], [1.0, 1.0])).rate
    assert rate.tolist() == pytest.approx([0.5, 0.5, 0.5])
    assert rate.tolist() != pytest.approx([1 / 3, 2 / 3, 2 / 3])


def test_a_group_of_identical_flows_weighs_its_count() -> None:
    # 3 identical flows as one group and 1 other on a link of 2: 0.5 each.
    assert maxmin.solve(problem([[0], [0]], [2.0], [3.0, 1.0])).rate.tolist() == pytest.approx([0.5, 0.5])


def test_the_per_flow_cap_stops_a_flow_on_an_empty_lag() -> None:
    assert maxmin.solve(problem([[0]], [6.0], cap=1.0)).rate.tolist() == pytest.approx([1.0])


def two_switches(cables: int, hosts_each: int, host_speed: float = 1.0):  # type: ignore[no-untyped-def]
    hosts = [(f"a{i}", "A") for i in range(hosts_each)] + [(f"b{i}", "B") for i in range(hosts_each)]
    return from_links("t", ["A", "B"], hosts, {("A", "B"): cables}, speed=1.0, host_speed=host_speed)


def test_a_lag_carries_k_cables_in_aggregate_but_one_flow_at_most_one_cable() -> None:
    fast_hosts = two_switches(2, 4, host_speed=10.0)
    one = host_pairs("one", fast_hosts, [(0, 4)])
    assert evaluate(fast_hosts, one).aggregate == pytest.approx(1.0)      # not 2: one cable's speed
    four = host_pairs("four", fast_hosts, [(i, 4 + i) for i in range(4)])
    assert evaluate(fast_hosts, four).aggregate == pytest.approx(2.0)     # the LAG's 2 cables
    assert evaluate(fast_hosts, four).bottlenecks == [("A", "B")]


def test_all_to_all_by_switch_pair_equals_every_host_pair_one_by_one() -> None:
    hosts = [("h0", "A"), ("h1", "A"), ("h2", "A"), ("h3", "B"), ("h4", "C"), ("h5", "C")]
    fabric = from_links("line", ["A", "B", "C"], hosts, {("A", "B"): 1, ("B", "C"): 2})
    grouped = evaluate(fabric, all_to_all(fabric))
    pairs = [(i, j) for i in range(6) for j in range(6) if i != j]
    one_by_one = evaluate(fabric, host_pairs("every pair", fabric, pairs))
    assert grouped.flows == one_by_one.flows == 30
    assert grouped.aggregate == pytest.approx(one_by_one.aggregate)
    assert grouped.slowest == pytest.approx(one_by_one.slowest)
    # A->B (1 cable) carries 3 x 3 flows; C->B (2 cables) 2 x 4: the slowest is A's 1/9.
    assert grouped.slowest == pytest.approx(1 / 9)
    assert grouped.exchange == pytest.approx(8e6 / 1e9 * 9)


def test_the_big_switch_gives_every_host_its_link() -> None:
    hosts = [(f"h{i}", "A") for i in range(10)]
    r = evaluate(big_switch(hosts), all_to_all(big_switch(hosts)))
    assert r.aggregate == pytest.approx(10.0) and r.slowest == pytest.approx(1 / 9) and r.host_bound


def test_patterns_depend_on_the_hosts_only() -> None:
    fabric = two_switches(1, 4)
    a, b = permutation(fabric, 1), permutation(fabric, 1)
    assert a.src.tolist() == b.src.tolist() and a.dst.tolist() == b.dst.tolist()
    assert sorted(a.src.tolist()) == sorted(set(a.src.tolist()))          # one flow out of each host
    assert bisection(fabric).flows == 8
    assert all(abs(s - d) == 4 for s, d in zip(bisection(fabric).src, bisection(fabric).dst))
    assert grid_shape(225) == (15, 15) and grid_shape(12) == (3, 4) and grid_shape(7) == (1, 7)
    assert neighbour(fabric).flows == 8 * 3   # 2x4 grid: up and down are the same host, so 3 each


def test_a_flows_file_names_hosts(tmp_path: Path) -> None:
    fabric = two_switches(1, 2)
    good = tmp_path / "flows"
    good.write_text("# two flows\na0 b0\nb1 a1  # back\n")
    assert flows_file(fabric, good).flows == 2
    bad = tmp_path / "bad"
    bad.write_text("a0 nobody\n")
    with pytest.raises(UserError, match="line 1"):
        flows_file(fabric, bad)


@st.composite
def problems(draw: st.DrawFn) -> maxmin.Problem:
    resources = draw(st.integers(1, 6))
    groups = draw(st.lists(st.sets(st.integers(0, resources - 1), min_size=1, max_size=resources),
                           min_size=1, max_size=8))
    capacity = draw(st.lists(st.floats(0.1, 10), min_size=resources, max_size=resources))
    weight = draw(st.lists(st.integers(1, 5).map(float), min_size=len(groups), max_size=len(groups)))
    cap = draw(st.sampled_from([float("inf"), 0.5, 2.0]))
    return problem([sorted(g) for g in groups], capacity, weight, cap)


@settings(max_examples=60, deadline=None)
@given(problems())
def test_max_min_optimality(p: maxmin.Problem) -> None:
    """No resource over capacity, and every flow is at the cap or crosses a full resource
    on which no flow has a higher rate (Bertsekas and Gallager, Data Networks, 6.5.2)."""
    rate = maxmin.solve(p).rate
    inc = p.incidence.toarray()
    load = inc @ (rate * p.weight)
    assert np.all(load <= p.capacity * (1 + 1e-6))
    full = load >= p.capacity * (1 - 1e-6)
    for g in range(inc.shape[1]):
        if rate[g] >= p.cap * (1 - 1e-9):
            continue
        through = [r for r in range(inc.shape[0]) if inc[r, g] and full[r]]
        assert any(rate[g] >= rate[inc[r] > 0].max() * (1 - 1e-6) for r in through), (g, rate)


def test_path_costs_follow_8021d_2004_table_17_3() -> None:
    assert [path_cost(s) for s in (0.01, 0.1, 1, 2, 10, 100)] == [2_000_000, 200_000, 20_000, 10_000, 2_000, 200]


def test_stp_on_a_ring_elects_the_lowest_bridge_and_blocks_the_far_cable() -> None:
    sw = ["sw1", "sw2", "sw3", "sw4"]
    ring = {("sw1", "sw2"): 1, ("sw2", "sw3"): 1, ("sw3", "sw4"): 1, ("sw4", "sw1"): 1}
    t = spanning_tree(sw, ring)
    assert t.root == "sw1"
    # sw3 hears cost 40,000 from sw2 and from sw4: the lower designated bridge id, sw2, wins.
    assert t.parent == {"sw2": "sw1", "sw4": "sw1", "sw3": "sw2"}
    assert t.blocked == [("sw3", "sw4")]
    moved = spanning_tree(sw, ring, root="sw3")
    assert moved.root == "sw3" and moved.blocked == [("sw1", "sw4")]   # sw1 hears sw2 and sw4: sw2 wins


def test_stp_prefers_a_faster_path_and_treats_parallel_cables_by_lag() -> None:
    sw = ["sw1", "sw2", "sw3"]
    cables = {("sw1", "sw2"): 4, ("sw2", "sw3"): 4, ("sw1", "sw3"): 1}
    lag = spanning_tree(sw, cables)             # 5,000 + 5,000 < 20,000
    assert lag.parent == {"sw2": "sw1", "sw3": "sw2"} and lag.blocked == [("sw1", "sw3")]
    assert lag.forwarding == {("sw1", "sw2"): 4, ("sw2", "sw3"): 4}
    plain = spanning_tree(sw, cables, lag=False)   # every cable 20,000: sw3 goes straight to the root
    assert plain.parent == {"sw2": "sw1", "sw3": "sw1"}
    assert plain.blocked == [("sw1", "sw2")] * 3 + [("sw2", "sw3")] * 4
    assert plain.forwarding == {("sw1", "sw2"): 1, ("sw1", "sw3"): 1}


def test_vlan_trees_beat_the_spanning_tree_on_a_ring() -> None:
    """4 switches in a ring, 1 host each, each host to the opposite one: the spanning tree
    (sw3-sw4 blocked) sends sw1->sw3 and sw2->sw4 both over sw2->sw3, while per-source
    trees (each going round the ring its own way) give every flow its own cables."""
    sw = ["sw1", "sw2", "sw3", "sw4"]
    hosts = [(f"h{i}", s) for i, s in enumerate(sw)]
    ring = {("sw1", "sw2"): 1, ("sw2", "sw3"): 1, ("sw3", "sw4"): 1, ("sw4", "sw1"): 1}
    stp = from_links("stp", sw, hosts, spanning_tree(sw, ring).forwarding)
    trees = {"sw1": {"sw2": "sw1", "sw4": "sw1", "sw3": "sw2"}, "sw2": {"sw1": "sw2", "sw3": "sw2", "sw4": "sw1"},
             "sw3": {"sw2": "sw3", "sw4": "sw3", "sw1": "sw4"}, "sw4": {"sw3": "sw4", "sw1": "sw4", "sw2": "sw3"}}
    arcs = {**{k: v for k, v in ring.items()}, **{(b, a): v for (a, b), v in ring.items()}}
    vlan = from_trees("vlan", sw, hosts, trees, arcs)
    opposite = host_pairs("opposite", vlan, [(0, 2), (2, 0), (1, 3), (3, 1)])
    # STP: sw1->sw3 and sw2->sw4 both cross sw2->sw3 (and back): 0.5 each. VLAN: one arc each.
    assert evaluate(stp, opposite).aggregate == pytest.approx(2.0)
    assert evaluate(vlan, opposite).aggregate == pytest.approx(4.0)


SEED = {"tree1": "seed-tree-1link", "tree6": "seed-tree-6link", "ring": "seed-ring", "mesh": "seed-mesh",
        "torus": "seed-torus", "compl1": "seed-complete-1link", "compl2": "seed-complete"}


@pytest.fixture(scope="module")
def seed_fabrics() -> dict[str, object]:
    from vlanroute.perf.planfabric import fabrics_of
    from vlanroute.plan.build import plan_from_file
    return {k: fabrics_of(plan_from_file(ROOT / "inventories" / f"{v}.yaml")) for k, v in SEED.items()}


@pytest.mark.slow          # plans the 7 seed inventories (about 10 s on a busy machine)
@pytest.mark.parametrize("pattern", ["all-to-all", "permutation"])
def test_the_seed_comparison_orders_the_topologies_as_the_paper(seed_fabrics: dict[str, object],
                                                               pattern: str) -> None:
    """Every VLAN-routed topology beats Tree(1link) (table 3's NPB: 94 to 650 %), Compl(2link)
    is the best, and Compl(1link) with 28 cables beats Tree(6link) with 42 (the per-cable
    argument of table 3). The tree is its own spanning tree; a tree of LAGs scales by 6."""
    from vlanroute.perf.planfabric import compare
    from vlanroute.perf.table import effective
    got = {k: compare(f, pattern) for k, f in seed_fabrics.items()}  # type: ignore[arg-type]
    eff = {k: effective(c.vlan, 1e6) for k, c in got.items()}
    assert all(eff[k] > 1.9 * eff["tree1"] for k in eff if k != "tree1")
    assert max(eff, key=eff.__getitem__) == "compl2"
    assert eff["compl1"] > eff["tree6"]
    assert eff["tree1"] < eff["ring"] <= eff["mesh"] < eff["torus"] < eff["compl1"] < eff["compl2"]
    assert eff["tree6"] == pytest.approx(6 * eff["tree1"])
    assert effective(got["tree1"].stp, 1e6) == pytest.approx(eff["tree1"])
    assert effective(got["compl2"].stp, 1e6) < eff["compl2"] / 3


def test_analyze_patterns_json_follows_its_schema(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import jsonschema

    from vlanroute import schemas
    from vlanroute.cli import main
    inv = ROOT / "inventories"
    assert main(["analyze", "--json", "--patterns", "permutation,bisection", "--seeds", "2",
                 str(inv / "seed-tree-1link.yaml"), str(inv / "seed-torus.yaml")]) == 0
    data = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(schemas.load("analyze")).validate(data)
    tables = data["throughput"]
    assert [t["pattern"] for t in tables] == ["permutation (2 seeds)", "bisection"]
    rows = tables[0]["rows"]
    assert [r["label"] for r in rows] == ["seed-tree-1link", "seed-torus", "seed-tree-1link: spanning tree (LAGs)",
                                          "one non-blocking switch"]
    assert rows[0]["vs_first"] == 1.0 and rows[0]["vs_stp"] == 1.0 and rows[1]["vs_first"] > 3


def test_analyze_refuses_an_unknown_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    from vlanroute.cli import main
    code = main(["analyze", "--patterns", "everything", str(ROOT / "inventories" / "seed-ring.yaml")])
    assert code == 2 and "'everything' is neither a pattern" in capsys.readouterr().err


@st.composite
def cabled_graphs(draw: st.DrawFn) -> tuple[list[str], dict[tuple[str, str], int]]:
    n = draw(st.integers(2, 7))
    sw = [f"sw{i + 1}" for i in range(n)]
    cables = {(sw[draw(st.integers(0, i - 1))], sw[i]): draw(st.integers(1, 3)) for i in range(1, n)}  # connected
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=6)):
        if a < b and (sw[a], sw[b]) not in cables and (sw[b], sw[a]) not in cables:
            cables[(sw[a], sw[b])] = draw(st.integers(1, 3))
    return sw, cables


@settings(max_examples=60, deadline=None)
@given(cabled_graphs(), st.booleans())
def test_stp_forwards_a_spanning_tree_of_least_cost_and_blocks_the_rest(
        graph: tuple[list[str], dict[tuple[str, str], int]], lag: bool) -> None:
    import networkx as nx
    sw, cables = graph
    t = spanning_tree(sw, cables, lag=lag)
    tree = nx.Graph(list(t.forwarding))
    assert t.root == "sw1" and len(t.forwarding) == len(sw) - 1 and nx.is_tree(tree) and set(tree) == set(sw)
    assert sum(t.forwarding.values()) + len(t.blocked) == sum(cables.values())
    g = nx.Graph()
    for (a, b), k in cables.items():
        g.add_edge(a, b, cost=path_cost(k if lag else 1))
    best = nx.single_source_dijkstra_path_length(g, "sw1", weight="cost")
    assert t.root_cost == best             # every bridge reaches the root at least cost
