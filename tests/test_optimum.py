"""The exact lower bound (routing/optimum.py): hand-computed optima, the symmetric LP
against the full one, and no engine below it on random graphs."""

from __future__ import annotations

import networkx as nx
import pytest
from fabrics import max_load, torus
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from topologies import connected_graphs

from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import lp_bound, optimum_bound, symmetric_lp_bound
from vlanroute.routing.registry import ENGINES


def ring(n: int, cables: int = 1) -> Topology:
    return Topology.from_links([f"s{i}" for i in range(n)],
                               [(f"s{i}", f"s{(i + 1) % n}") for i in range(n) for _ in range(cables)])


@pytest.mark.parametrize("n", [4, 5, 8, 9])
def test_ring_one_host_each(n: int) -> None:
    # Vertex- and direction-symmetric: every directed cable carries the same share of the
    # total distance, sum over ordered pairs of the ring distance, over 2n cable-directions.
    total = n * sum(min(d, n - d) for d in range(1, n))
    assert lp_bound(ring(n), {f"s{i}": 1 for i in range(n)}) == pytest.approx(total / (2 * n))


def test_parallel_cables_add_capacity() -> None:
    hosts = {f"s{i}": 1 for i in range(6)}
    assert lp_bound(ring(6, cables=2), hosts) == pytest.approx(lp_bound(ring(6), hosts) / 2)


@pytest.mark.parametrize("n", [3, 5, 7])
def test_complete_graph(n: int) -> None:
    # Every pair has its own cable; a switch sends h (n-1) h over n-1 cables: h^2 each.
    topo = Topology.from_links([f"s{i}" for i in range(n)], [(f"s{i}", f"s{j}") for i in range(n) for j in range(i)])
    assert lp_bound(topo, {s: 3 for s in topo.switches}) == pytest.approx(9.0)


@pytest.mark.parametrize("leaves", [3, 6])
def test_star(leaves: int) -> None:
    # A hub without hosts: each leaf's cable carries its host to every other leaf's host.
    topo = Topology.from_links(["hub", *[f"l{i}" for i in range(leaves)]], [("hub", f"l{i}") for i in range(leaves)])
    hosts = {"hub": 0, **{f"l{i}": 2 for i in range(leaves)}}
    assert lp_bound(topo, hosts) == pytest.approx(2 * 2 * (leaves - 1))


def test_mesh_line_bridge() -> None:
    # A path a-b-c with one host each: the middle cables carry 1 x 2 each way.
    topo = Topology.from_links(["a", "b", "c"], [("a", "b"), ("b", "c")])
    assert lp_bound(topo, {"a": 1, "b": 1, "c": 1}) == pytest.approx(2.0)


@pytest.mark.parametrize("kind,dims", [("torus", [4, 4]), ("torus", [5, 3]), ("torus", [4, 2]),
                                       ("hyper-crossbar", [3, 4]), ("ring", None)])
def test_symmetric_lp_equals_full_lp(kind: str, dims: list[int] | None) -> None:
    topo = Topology.from_generator(kind, dims, size=6)
    hosts = {s: 2 for s in topo.switches}
    sym = symmetric_lp_bound(topo, hosts)
    assert sym is not None
    assert sym == pytest.approx(lp_bound(topo, hosts), rel=1e-6)


def test_symmetry_needs_equal_hosts_and_a_symmetric_grid() -> None:
    topo = Topology.from_generator("torus", [4, 4])
    assert symmetric_lp_bound(topo, {s: 1 + (i == 0) for i, s in enumerate(topo.switches)}) is None
    assert symmetric_lp_bound(Topology.from_generator("mesh", [4, 4]), {f"sw{i + 1}": 1 for i in range(16)}) is None


def test_torus_optimum_is_the_distance_bound_reached_by_dor() -> None:
    topo, hosts = torus([8, 8])
    opt = optimum_bound(topo, hosts)
    assert opt.exact
    dor = ENGINES["dor"].route(topo, hosts, ENGINES["dor"].params(topo, Options()))
    assert max_load(topo, hosts, dor.parents) == pytest.approx(opt.value)


def test_fallback_names_its_bound() -> None:
    topo = ring(12)
    hosts = {s: 1 for s in topo.switches}
    got = optimum_bound(Topology.from_links(topo.switches, [(f"s{i}", f"s{(i + 1) % 12}") for i in range(12)]),
                        hosts, limit=10)
    assert not got.exact and got.kind == "distance" and got.label == "the distance bound"
    assert got.value == pytest.approx(lp_bound(topo, hosts))   # on a ring the distance bound is exact


@settings(max_examples=15, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3), st.randoms(use_true_random=False))
def test_no_engine_beats_the_lp(g: nx.Graph, per: int, rnd: object) -> None:
    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    hosts = {s: per * (1 + (i % 2)) for i, s in enumerate(topo.switches)}
    bound = optimum_bound(topo, hosts)
    assert bound.exact
    for engine in ENGINES.values():
        if engine.refuses(topo) is None:
            routes = engine.route(topo, hosts, engine.params(topo, Options()))
            assert max_load(topo, hosts, routes.parents) >= bound.value * (1 - 1e-6), engine.name


def test_symmetry_is_lost_with_one_cable() -> None:
    # The same torus with one cable gone keeps its coordinates but no longer looks the same
    # from every switch: the one-source LP must not stand for the whole one there.
    topo = Topology.from_generator("torus", [4, 4])
    hosts = {s: 2 for s in topo.switches}
    assert symmetric_lp_bound(topo, hosts) is not None
    u, v = next(iter(topo.graph.edges()))
    cut = topo.graph.copy()
    cut.remove_edge(u, v)
    degraded = Topology(topo.kind, topo.dims, cut, topo.switches, topo.coords, topo.generated_names)
    assert symmetric_lp_bound(degraded, hosts) is None
    assert optimum_bound(degraded, hosts).value == pytest.approx(lp_bound(degraded, hosts), rel=1e-6)
    assert optimum_bound(degraded, hosts).value > optimum_bound(topo, hosts).value


def _through_linprog(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make routing/highs.py fail as if scipy had changed its private interface, so the LP
    goes through linprog's interior point with its crossover to a vertex; counts the calls."""
    from vlanroute.routing import highs

    failed: list[int] = []

    def changed(*args: object) -> object:
        failed.append(1)
        raise AttributeError("a later scipy changed the private HiGHS interface")
    monkeypatch.setattr(highs, "solve", changed)
    return failed


@settings(max_examples=25, deadline=None)
@given(connected_graphs(), st.lists(st.integers(min_value=0, max_value=5), min_size=12, max_size=12))
def test_the_interior_point_without_crossover_is_the_vertexs_value(g: nx.Graph, per: list[int]) -> None:
    # The direct call skips the crossover (optimum.IPM) and rounds to 12 digits
    # (optimum.exact); the value must be linprog's vertex value to within that rounding,
    # and a whole number exactly where that value is one.
    topo = Topology.from_links(sorted(g.nodes), list(g.edges))
    hosts = {s: per[i % len(per)] for i, s in enumerate(topo.switches)}
    assume(sum(1 for n in hosts.values() if n) >= 2)        # else there is no LP to solve
    direct = lp_bound(topo, hosts)
    with pytest.MonkeyPatch.context() as mp:
        failed = _through_linprog(mp)
        vertex = lp_bound(topo, hosts)
    assert failed, "the fallback was not taken"
    assert direct == pytest.approx(vertex, rel=1e-11, abs=1e-11)
    if abs(vertex - round(vertex)) < 1e-9:
        assert direct == round(vertex)


def test_whole_optima_come_out_whole() -> None:
    # The leaf-spine 8x4 with 4 hosts per leaf: every up and down link carries 28 at the
    # optimum (7 other leaves x 4 x 4 / 4 spines); the hypercube's LP answered exactly too.
    leaves, spines = [f"l{i}" for i in range(8)], [f"s{j}" for j in range(4)]
    topo = Topology.from_links(leaves + spines, [(a, b) for a in leaves for b in spines])
    assert lp_bound(topo, {**{l: 4 for l in leaves}, **{s: 0 for s in spines}}) == 28.0


def test_the_fallback_solves_the_same_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    hosts = {f"s{i}": 1 for i in range(8)}
    failed = _through_linprog(monkeypatch)
    assert lp_bound(ring(8), hosts) == 8.0 and failed     # 8 x (1+2+3+4+3+2+1) / 16 directions
