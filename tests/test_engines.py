"""The routing engines on topologies directly (no inventory), and the front door for a new one.

Every engine of the registry routes generated and random custom topologies; the checks are
computed here with networkx, not with vlanroute's routing code: every route is a path of
the graph and the routes of a source form a tree; minimal engines give shortest paths;
up*/down*'s channel dependency graph is acyclic (and dimension order's on meshes and
hyper-crossbars); the budget engine's VLANs are valid (loop-free, each source's routes
inside its VLAN) and at most the budget. A toy engine registered within a test plans an
inventory end to end.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from plancheck import check_plan, route_lengths
from vlanroute.cli import main
from vlanroute.errors import UserError
from vlanroute.model.topology import Topology
from vlanroute.plan.build import plan_from_file
from vlanroute.routing.budget import BudgetChoices
from vlanroute.routing.choose import deadlock_free
from vlanroute.routing.dor import DOR, DorParams
from vlanroute.routing.engine import Engine, Options, Refusal, Routes, packing_of
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.trees import euler_times, path, pruned_parents, tree_depths, tree_parents
from vlanroute.routing.updown import UPDOWN

SETTINGS = settings(max_examples=40, deadline=None)
INV = Path(__file__).resolve().parent.parent / "inventories"
BUILT_IN = dict(ENGINES)   # as shipped, before any test registers its own


# --------------------------------------------------------------------------- topologies


grid_dims = st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=3).filter(
    lambda d: 2 <= math.prod(d) <= 40)


@st.composite
def generated(draw: st.DrawFn) -> Topology:
    kind = draw(st.sampled_from(["mesh", "torus", "hyper-crossbar", "ring", "complete", "tree"]))
    links = draw(st.integers(min_value=1, max_value=2))
    if kind in ("mesh", "torus", "hyper-crossbar"):
        return Topology.from_generator(kind, draw(grid_dims), links_per_pair=links)
    if kind == "tree":
        return Topology.from_generator(kind, size=draw(st.integers(1, 15)), fanout=draw(st.integers(1, 3)),
                                       links_per_pair=links)
    return Topology.from_generator(kind, size=draw(st.integers(1, 12)), links_per_pair=links)


@st.composite
def custom(draw: st.DrawFn) -> Topology:
    """A random connected graph: a random spanning tree plus extra links."""
    n = draw(st.integers(min_value=1, max_value=12))
    names = [f"s{i}" for i in range(n)]
    pairs = {(names[draw(st.integers(0, i - 1))], names[i]) for i in range(1, n)}
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n)):
        if a != b and (names[b], names[a]) not in pairs:
            pairs.add((names[a], names[b]))
    return Topology.from_links(names, sorted(pairs))


@st.composite
def traffic(draw: st.DrawFn, topo: Topology) -> dict[str, int]:
    counts = draw(st.lists(st.integers(0, 3), min_size=len(topo.switches), max_size=len(topo.switches)))
    if not any(counts):
        counts[draw(st.integers(0, len(counts) - 1))] = 1
    return dict(zip(topo.switches, counts))


# --------------------------------------------------------------------------- independent checks


def every_tree(routes: Routes) -> list[tuple[str, dict[str, str]]]:
    """(source, tree) for each switch's tree and every tree of a switch routed below the switch."""
    return [*routes.parents.items(), *((s, t) for s, shares in routes.splits.items() for t, _ in shares)]


def check_trees(routes: Routes, g: nx.Graph, hosts: dict[str, int] | None = None) -> None:
    """Every switch has a tree; each of its links is a cable pair; each path leads home.
    Routed below the switch: a split switch's trees are at least two and carry its hosts."""
    assert set(routes.parents) == set(g.nodes)
    for s, shares in routes.splits.items():
        assert len(shares) >= 2 and all(n > 0 for _, n in shares)
        if hosts is not None:
            assert sum(n for _, n in shares) == hosts[s], f"the trees of {s} carry all its hosts"
        assert routes.parents[s] is shares[0][0] or routes.parents[s] == shares[0][0]
    for src, par in every_tree(routes):
        assert set(par) == set(g.nodes) - {src}, f"the tree of {src} must reach every switch"
        for v, p in par.items():
            assert g.has_edge(p, v), f"{src}'s route to {v} uses {p}-{v}, which is no cable"
        for v in par:
            seen = {v}
            while v != src:
                v = par[v]
                assert v not in seen, f"the routes of {src} loop"
                seen.add(v)


def depths(par: dict[str, str], src: str) -> dict[str, int]:
    out = {src: 0}

    def depth(v: str) -> int:
        if v not in out:
            out[v] = depth(par[v]) + 1
        return out[v]

    for v in par:
        depth(v)
    return out


def channel_dependencies_acyclic(routes: Routes, hosts: dict[str, int] | None = None) -> bool:
    """Dally and Seitz: a route p->q->r makes channel p->q wait for q->r; no cycle, no deadlock.
    With `hosts`, only the trees of switches that send (hosts > 0) count: a switch without
    hosts sends no frame and its tree is in no VLAN (check_packing), so its routes make no
    dependency. Each counted tree counts whole, to every switch, hosts there or not (a
    flood reaches them): stricter than the plan's own verdict (routing/choose.py)."""
    cdg = nx.DiGraph()
    for src, par in every_tree(routes):
        if hosts is not None and not hosts.get(src, 0):
            continue
        for v, p in par.items():
            if p in par:
                cdg.add_edge((par[p], p), (p, v))
    return nx.is_directed_acyclic_graph(cdg)


def check_packing(routes: Routes, topo: Topology, hosts: dict[str, int], budget: int) -> None:
    """The VLANs: each loop-free, each source in one, holding all of its routes to hosts."""
    packing = packing_of(routes, topo, hosts)
    assert len(packing) <= budget
    senders = {s for s, n in hosts.items() if n}
    assert {s for t in packing for s in t.sources} == senders
    in_vlans: dict[str, int] = {}
    for t in packing:
        assert nx.is_forest(nx.Graph(list(t.links))) if t.links else True
        shares = dict(t.shares)
        for s in t.sources:
            in_vlans[s] = in_vlans.get(s, 0) + shares.get(s, hosts[s])
            trees = [x for x, _ in routes.splits[s]] if s in routes.splits else [routes.parents[s]]

            def in_vlan(tree: dict[str, str], s: str = s) -> bool:
                for dst in senders:
                    v = dst
                    while v != s:
                        p = tree[v]
                        if (p, v) not in t.links and (v, p) not in t.links:
                            return False
                        v = p
                return True
            assert any(in_vlan(x) for x in trees)
    assert in_vlans == {s: hosts[s] for s in senders}, "every host sends in exactly one VLAN"


def route_with(engine: Engine, topo: Topology, hosts: dict[str, int], max_vlans: int = 4094) -> Routes:
    routes = engine.route(topo, hosts, engine.params(topo, Options(max_vlans=max_vlans)))
    assert routes.algorithm == engine.name
    json.dumps(routes.choices.record())   # the record goes into plan.json as it is
    return routes


def check_engine(engine: Engine, topo: Topology, hosts: dict[str, int], max_vlans: int) -> None:
    g = topo.simple()
    routes = route_with(engine, topo, hosts, max_vlans)
    check_trees(routes, g, hosts)
    if engine.minimal:
        for src, par in every_tree(routes):
            assert depths(par, src) == nx.single_source_shortest_path_length(g, src), f"{engine.name}: not shortest"
    if engine.deadlock_free:
        assert channel_dependencies_acyclic(routes, hosts)
    if engine.name == "dor" and topo.kind in ("mesh", "hyper-crossbar"):
        assert channel_dependencies_acyclic(routes), "dimension order never turns back to an earlier dimension"
    if engine.name == "budget" or routes.splits:
        check_packing(routes, topo, hosts, max_vlans)
        if isinstance(routes.choices, BudgetChoices):
            senders = [s for s, n in hosts.items() if n]
            trees = {frozenset(frozenset(e) for e in routes.parents[s].items()) for s in senders}
            assert len(trees) == routes.choices.trees_used <= max_vlans


# acyclic tries every switch as its escape root and negotiates (about 9 s of CPU on 36
# switches): here it takes the fabrics up to this size, and tests/test_acyclic.py the 36-switch
# tori. Without the bound one run of 40 examples took 14 s, another 123 s, by what it drew.
ACYCLIC_MAX_SWITCHES = 20


def engines_for(topo: Topology) -> list[Engine]:
    """The shipped engines that accept TOPO (acyclic up to ACYCLIC_MAX_SWITCHES switches)."""
    return [e for e in BUILT_IN.values() if e.refuses(topo) is None
            and not (e.name == "acyclic" and len(topo.switches) > ACYCLIC_MAX_SWITCHES)]


@SETTINGS
@given(data=st.data(), topo=generated(), max_vlans=st.integers(1, 6))
def test_every_engine_on_generated_topologies(data: st.DataObject, topo: Topology, max_vlans: int) -> None:
    hosts = data.draw(traffic(topo))
    for engine in engines_for(topo):
        check_engine(engine, topo, hosts, max_vlans)


@SETTINGS
@given(data=st.data(), topo=custom(), max_vlans=st.integers(1, 6))
def test_every_engine_on_custom_graphs(data: st.DataObject, topo: Topology, max_vlans: int) -> None:
    hosts = data.draw(traffic(topo))
    for engine in engines_for(topo):
        check_engine(engine, topo, hosts, max_vlans)


def test_a_switch_without_hosts_may_keep_a_tree_no_frame_takes() -> None:
    # Found by test_every_engine_on_custom_graphs in CI (2026-11-30): `turns` routed below
    # the switch on this fabric gives s2, which has no hosts, a tree s2->s4->s1 that closes a
    # cycle with the senders' routes s1->s0->s2 and s4->s1->s0. No frame starts at s2 and its
    # tree is in no VLAN, so the plan is deadlock-free; the senders' trees, whole, are too.
    topo = Topology.from_links([f"s{i}" for i in range(6)],
                               [("s0", "s1"), ("s0", "s2"), ("s0", "s3"), ("s0", "s5"), ("s1", "s4"), ("s2", "s4")])
    hosts = {"s0": 3, "s1": 1, "s2": 0, "s3": 0, "s4": 3, "s5": 1}
    routes = route_with(BUILT_IN["turns"], topo, hosts, 3)
    assert channel_dependencies_acyclic(routes, hosts)
    assert deadlock_free(routes.parents, hosts, dict(routes.splits))
    check_packing(routes, topo, hosts, 3)
    in_vlans = {s for t in packing_of(routes, topo, hosts) for s in t.sources}
    assert "s2" not in in_vlans and "s3" not in in_vlans


def test_dor_refuses_a_custom_topology_and_says_what_to_use() -> None:
    topo = Topology.from_links(["a", "b", "c"], [("a", "b"), ("b", "c"), ("a", "c")])
    refusal = DOR.refuses(topo)
    assert refusal is not None and "grid" in refusal.reason and "shortest" in refusal.fix
    assert all(e.refuses(topo) is None for name, e in BUILT_IN.items() if name != "dor")


def test_dor_on_the_seed_torus_shares_trees_in_pairs() -> None:
    # Seed 001: the 4x2 torus (the 3-cube) with dimension-order routing uses 4 VLANs.
    topo = Topology.from_generator("torus", [4, 2], links_per_pair=2)
    hosts = {s: 28 for s in topo.switches}
    routes = DOR.route(topo, hosts, DorParams(dimension_order=(0, 1), tie_break="source-parity"))
    assert len(packing_of(routes, topo, hosts)) == 4
    assert routes.choices.record() == {"dimension_order": [0, 1], "tie_break": "source-parity",
                                       "dimension_order_setting": [0, 1]}


def test_engine_settings_errors_name_the_field() -> None:
    topo = Topology.from_generator("mesh", [3, 2])
    with pytest.raises(UserError) as exc:
        DOR.params(topo, Options(dimension_order=(1, 1)))
    assert exc.value.field == "routing.dimension_order"
    with pytest.raises(UserError) as exc:
        UPDOWN.params(topo, Options(root="nosuch"))
    assert exc.value.field == "routing.root"


def test_generated_topology_is_the_inventory_one() -> None:
    from vlanroute.model.inventory import load_inventory
    from vlanroute.model.topology import build_topology

    built = build_topology(load_inventory(INV / "seed-torus.yaml"))
    made = Topology.from_generator("torus", [4, 2], links_per_pair=2)
    assert made.switches == built.switches and made.coords == built.coords and made.dims == built.dims
    assert sorted(map(sorted, made.graph.edges())) == sorted(map(sorted, built.graph.edges()))


@SETTINGS
@given(data=st.data())
def test_tree_walks_agree_with_networkx(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 30))
    links = [(data.draw(st.integers(0, v - 1)), v) for v in range(1, n)]     # a random tree
    g = nx.Graph(links)
    g.add_nodes_from(range(n))
    root = data.draw(st.integers(0, n - 1))
    parent = tree_parents(links, root)
    assert tree_depths(parent, root) == nx.single_source_shortest_path_length(g, root)
    for v in range(n):
        assert path(parent, root, v) == nx.shortest_path(g, root, v)
    targets = data.draw(st.sets(st.integers(0, n - 1)))
    on_the_way = {v for t in targets for v in nx.shortest_path(g, root, t)[1:]}
    assert pruned_parents(parent, root, targets) == {v: parent[v] for v in on_the_way}
    kids: list[list[int]] = [[] for _ in range(n)]
    for v, p in parent.items():
        kids[p].append(v)
    order, tin, tout = euler_times(kids, root)
    assert sorted(order) == list(range(n)) and order[0] == root
    for c in range(n):
        for v in range(n):
            assert (tin[c] <= tin[v] < tout[c]) == (c in nx.shortest_path(g, root, v))


# --------------------------------------------------------------------------- a new engine, end to end


class LowestFirst(Engine[None]):
    """A toy engine: breadth-first trees that try the lowest-index neighbour first."""

    name = "lowest-first"
    summary = "toy: breadth-first, lowest-index neighbour first"
    minimal = True
    deadlock_free = False
    refused = {"custom": Refusal("the toy engine routes generated topologies only", "use algorithm: shortest")}

    def params(self, topo: Topology, options: Options) -> None:
        return None

    def route(self, topo: Topology, host_count: dict[str, int], params: None) -> Routes:
        parents = {}
        for src in topo.switches:
            parent: dict[str, str] = {}
            queue = [src]
            for u in queue:
                for v in sorted(topo.graph.neighbors(u), key=topo.index):
                    if v != src and v not in parent:
                        parent[v] = u
                        queue.append(v)
            parents[src] = parent
        return Routes(self.name, parents, ToyChoices())


class ToyChoices:
    def record(self) -> dict[str, object]:
        return {"rule": "lowest-index-first"}


def toy_doc(kind: str = "torus") -> dict:
    return {"name": "toy", "platform": "linux-bridge", "topology": {"kind": kind, "dims": [4, 3]},
            "hosts": {"per_switch": 2}, "routing": {"algorithm": "lowest-first"},
            "settings": {"learning": {"pool": "10.0.0.0/8"}}}


def write(tmp: Path, doc: dict) -> Path:
    p = tmp / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_an_unregistered_engine_is_refused_by_the_inventory(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(write(tmp_path, toy_doc()))]) == 2
    err = capsys.readouterr().err
    assert "routing.algorithm: Input should be 'dor', 'shortest', 'updown', 'turns', 'acyclic' or 'budget'" in err


def test_a_registered_engine_plans_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(ENGINES, "lowest-first", LowestFirst())
    plan = plan_from_file(write(tmp_path, toy_doc()))     # the plan's own verification runs here
    doc = plan.to_json()
    assert doc["routing"]["algorithm"] == "lowest-first" and doc["routing"]["rule"] == "lowest-index-first"
    g = nx.relabel_nodes(nx.grid_2d_graph(4, 3, periodic=True), {(x, y): f"sw{x + 4 * y + 1}" for x in range(4)
                                                                 for y in range(3)})
    check_plan(doc, g)
    dist = dict(nx.all_pairs_shortest_path_length(g))
    assert all(hops == dist[s][t] for (s, t), hops in route_lengths(doc).items())

    # The listing shows it, and a topology it refuses is refused with its own words.
    assert main(["algorithms"]) == 0
    assert "lowest-first" in capsys.readouterr().out
    custom_doc = {**toy_doc(), "topology": {"kind": "custom", "switches": ["a", "b"], "links": [{"a": "a", "b": "b"}]},
                  "hosts": {"per_switch": 1}}
    assert main(["plan", str(write(tmp_path, custom_doc))]) == 2
    err = capsys.readouterr().err
    assert "routing.algorithm: the toy engine routes generated topologies only" in err
    assert "fix: use algorithm: shortest" in err


class FalsePromise(LowestFirst):
    """The toy engine claiming deadlock freedom: its breadth-first trees on a torus close
    cycles of channel dependencies around the rings."""

    deadlock_free = True


def test_an_engine_that_breaks_its_deadlock_promise_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc = {**toy_doc(), "topology": {"kind": "torus", "dims": [5, 3]}}
    monkeypatch.setitem(ENGINES, "lowest-first", LowestFirst())
    assert plan_from_file(write(tmp_path, doc)).metrics.deadlock_free is False    # the routes are cyclic
    monkeypatch.setitem(ENGINES, "lowest-first", FalsePromise())
    assert main(["plan", str(write(tmp_path, doc))]) == 2
    err = capsys.readouterr().err
    assert "routing.algorithm lowest-first promises deadlock-free routes, but their channel dependency graph has a " \
           "cycle" in err


# --------------------------------------------------------------------------- the listing


def test_algorithms_lists_every_engine_with_its_properties(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["algorithms"]) == 0
    rows = {cells[0]: cells[1:] for line in capsys.readouterr().out.splitlines()
            if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 5}
    assert rows["dor"][:3] == ["yes", "no", "all but custom"]
    assert rows["shortest"][:3] == ["yes", "no", "all"]
    assert rows["updown"][:3] == ["no", "yes", "all"]
    assert rows["turns"][:3] == ["no", "yes", "all"]
    assert rows["budget"][:3] == ["no", "no", "all"]


def test_the_inventory_module_does_not_load_the_routing_engines() -> None:
    code = "import sys, vlanroute.model.inventory\nprint('networkx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
