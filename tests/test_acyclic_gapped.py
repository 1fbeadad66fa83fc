"""The stored tori's orders on tori with cables gone (routing/acyclic/gapped.py): the fabric
is recognised only where it is a stored shape with a few cables missing, and its switches
placed on the grid so that every cable joins grid neighbours; the grid's symmetries are
all of them and each keeps the grid; the shortest increasing routes' hops, computed for
many orders at once, match a breadth-first search over the channels computed here; every
order handed out routes every pair, and the engine's plan in it is deadlock-free
(networkx, from every tree a host sends on), spans, and on the degraded 6x6 tori is within
issue 40's 1.2x of the optimum."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import replace

import fabrics
from hashseed import outputs_under_seeds
import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from test_acyclic import check_plan, spans
from test_acyclic_negotiate import increasing

from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.gapped import (GONE, UNREACHED, gapped_grid, gapped_orders,
                                              increasing_hops, placed_plan, placed_trees, screened_orders, symmetries)
from vlanroute.routing.acyclic.refine import earliest_tree
from vlanroute.routing.choose import choose_routes
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES


def neighbours_on_the_grid(topo: Topology, dims: tuple[int, ...], coords: dict[str, tuple[int, ...]]) -> bool:
    if sorted(coords) != sorted(topo.switches) or len(set(coords.values())) != len(coords):
        return False
    for a, b in topo.simple().edges:
        moved = [(i, (coords[a][i] - coords[b][i]) % dims[i]) for i in range(len(dims)) if coords[a][i] != coords[b][i]]
        if len(moved) != 1 or moved[0][1] not in (1, dims[moved[0][0]] - 1):
            return False
    return True


@pytest.mark.parametrize("k, removed, seed", [(6, 1, 0), (6, 3, 0), (6, 5, 3), (6, 8, 2), (8, 1, 3), (8, 6, 1)])
def test_a_stored_shape_with_cables_gone_is_placed_on_its_grid(k: int, removed: int, seed: int) -> None:
    topo, _ = fabrics.degraded_torus(k, removed, seed)
    got = gapped_grid(topo)
    assert got is not None
    dims, coords = got
    assert dims == (k, k)
    assert neighbours_on_the_grid(topo, dims, coords)


def test_other_fabrics_are_not_taken_for_a_gapped_torus() -> None:
    assert gapped_grid(fabrics.torus([6, 6])[0]) is None                     # intact: the stored plan itself
    assert gapped_grid(fabrics.degraded_torus(6, GONE + 1, 0)[0]) is None     # too many gone
    assert gapped_grid(fabrics.degraded_torus(5, 2, 0)[0]) is None            # no stored 5x5 plan
    assert gapped_grid(Topology.from_generator("mesh", [6, 6])) is None       # not custom
    # same sizes, few 4-cycles: refused before any graph matching (which can take very long
    # to prove that no match exists)
    for n, degree, seed in [(36, 4, 1), (64, 4, 2)]:
        g = nx.random_regular_graph(degree, n, seed=seed)
        gone = sorted(g.edges)[:3]
        g.remove_edges_from(gone)
        if nx.is_connected(g):
            topo = Topology.from_links([f"s{i}" for i in range(n)], [(f"s{a}", f"s{b}") for a, b in sorted(g.edges)])
            assert gapped_grid(topo) is None
    # a torus with cables gone and one cable added across the grid: not a subgraph of it
    g = nx.grid_2d_graph(6, 6, periodic=True)
    name = {(x, y): f"sw{y * 6 + x + 1}" for x, y in g.nodes}
    edges = sorted((name[a], name[b]) for a, b in g.edges)
    edges = [e for e in edges if e not in edges[:3]] + [("sw1", "sw22")]
    assert gapped_grid(Topology.from_links([f"sw{i + 1}" for i in range(36)], edges)) is None


@pytest.mark.parametrize("dims, count", [((6, 6), 288), ((8, 8), 512), ((4, 6), 96), ((3, 3, 3), 27 * 48)])
def test_the_grid_symmetries_are_all_of_them_and_keep_the_grid(dims: tuple[int, ...], count: int) -> None:
    from vlanroute.routing.acyclic.gapped import _moved
    grid = nx.grid_graph(dim=list(reversed(dims)), periodic=True)
    syms = symmetries(dims)
    assert len(syms) == count
    seen = set()
    for sym in syms:
        image = {c: _moved(c, dims, sym) for c in grid.nodes}
        assert len(set(image.values())) == len(image)
        assert all(grid.has_edge(image[a], image[b]) for a, b in grid.edges)
        seen.add(tuple(sorted(image.items())))
    assert len(seen) == count          # no two the same map


def hops_by_search(src: str, order: list[tuple[str, str]]) -> dict[str, int]:
    """Shortest routes whose channels increase in `order`, no U-turn: breadth-first over channels."""
    rank = {a: i for i, a in enumerate(order)}
    out: dict[str, list[tuple[str, str]]] = {}
    for a in order:
        out.setdefault(a[0], []).append(a)
    seen = {a: 1 for a in out.get(src, []) if a[1] != src}
    queue = deque(seen)
    while queue:
        a = queue.popleft()
        for b in out.get(a[1], []):
            if b[1] != a[0] and b[1] != src and rank[b] > rank[a] and b not in seen:
                seen[b] = seen[a] + 1
                queue.append(b)
    best = {src: 0}
    for (_, v), h in seen.items():
        best[v] = min(best.get(v, h), h)
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=12), st.integers(min_value=0, max_value=6), st.integers(0, 10**6))
def test_increasing_hops_are_the_shortest_increasing_routes(n: int, extra: int, seed: int) -> None:
    """Several orders of one graph's channels at once, each leaving some channels out (the
    cables a placement finds gone): every source's hops match the search's in that order."""
    rnd = random.Random(seed)
    g = nx.random_labeled_tree(n, seed=seed) if hasattr(nx, "random_labeled_tree") else nx.random_tree(n, seed=seed)
    for _ in range(extra):
        a, b = rnd.sample(range(n), 2)
        g.add_edge(a, b)
    arcs = [(a, b) for a, b in g.edges] + [(b, a) for a, b in g.edges]
    orders = 4
    tails = np.full((orders, len(arcs)), -1)
    heads = np.full((orders, len(arcs)), -1)
    kept: list[list[tuple[str, str]]] = []
    for o in range(orders):
        rnd.shuffle(arcs)
        kept.append([])
        for k, (a, b) in enumerate(arcs):
            if rnd.random() >= 0.15:
                tails[o, k], heads[o, k] = a, b
                kept[-1].append((f"s{a}", f"s{b}"))
    hops = increasing_hops(n, tails, heads)
    for o in range(orders):
        for src in range(n):
            got = {f"s{t}": int(hops[o, src, t]) for t in range(n) if hops[o, src, t] < UNREACHED}
            assert got == hops_by_search(f"s{src}", kept[o])


@pytest.mark.slow
def test_the_orders_route_every_pair_and_are_ranked_by_their_lp() -> None:
    topo, hosts = fabrics.degraded_torus(6, 3, 0)
    found = gapped_orders(topo, hosts, 3)
    assert found is not None and found[0] == "torus-6x6.json"
    orders = [(sol.load, rank) for sol, rank in found[2]]
    assert len(orders) == 3 and [x for x, _ in orders] == sorted(x for x, _ in orders)
    opt = optimum_bound(topo, hosts).value
    arcs = sorted(topo.arc_cables())
    for load, rank in orders:
        assert sorted(rank) == arcs and sorted(rank.values()) == sorted(set(rank.values()))
        order = sorted(arcs, key=rank.__getitem__)
        assert all(len(earliest_tree(s, order, rank)) == len(topo.switches) - 1 for s in topo.switches)
        assert load >= opt * (1 - 1e-9)


@pytest.mark.slow
# One fabric per story (the suite's 20 minutes): seed 1 of 3 cables gone told the first
# one's again (docs/routing-bounds.md has its figures)
@pytest.mark.parametrize("removed, seed, stored", [(3, 0, True), (4, 7, False)])
def test_the_default_on_a_degraded_6x6_torus_is_deadlock_free_within_1_2x(removed: int, seed: int,
                                                                           stored: bool) -> None:
    """Issue 40's item 3: before, the default took `shortest` (not deadlock-free) on the first
    fabric, its deadlock-free candidate at 1.282x the optimum; on the second the stored
    order's plan is 1.209x, so the search's plan gets the column step too and is the lighter
    (docs/routing-bounds.md)."""
    topo, hosts = fabrics.degraded_torus(6, removed, seed)
    opt = optimum_bound(topo, hosts).value
    routes = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt).routes
    assert routes.algorithm == "acyclic"
    record = routes.choices.record()
    assert record.get("stored_order", "") == ("torus-6x6" if stored else "")
    assert record.get("columns") is True
    check_plan(topo, hosts, routes, 1.2)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=1, max_value=GONE), st.integers(0, 10**4))
@example(1, 0)
def test_the_stored_trees_placed_on_the_fabric_span_and_increase_in_its_order(removed: int, seed: int) -> None:
    """The stored plan's trees moved onto a 6x6 torus with cables gone by the best
    placements: every tree spans the fabric over live cables and its routes increase in the
    placement's order; a tree that crossed no missing cable is the stored tree, moved."""
    topo, hosts = fabrics.degraded_torus(6, removed, seed)
    found = screened_orders(topo, hosts)
    assume(found is not None and found[2])
    assert found is not None
    _, stored, placements = found
    whole = 0
    for placement in placements[:3]:
        _, _, rank, switch_of = placement
        assert sorted(rank) == sorted(topo.arc_cables())
        trees = placed_trees(topo, placement, stored)
        assert sorted(trees) == sorted(topo.switches)
        for src, tree in trees.items():
            assert spans(topo, src, tree) and increasing(src, tree, rank)
        for src, tree in stored.items():
            moved = {switch_of[v]: switch_of[p] for v, p in tree.items()}
            if all((p, v) in rank for v, p in moved.items()):
                assert trees[switch_of[src]] == moved
                whole += 1
    if removed == 1:
        assert whole > 0        # most trees miss the one missing cable


def test_the_placed_plan_is_deadlock_free_and_routes_every_host() -> None:
    """The default's step for tori whose order LPs are too large (gapped.placed_plan), here
    on a 6x6 torus with cables gone at a few pricing rounds: every tree a host sends on
    spans and increases in the best placement's order, the hosts of each switch are all
    on some tree, the channel dependencies are acyclic (networkx, every tree a host sends
    on), and the load it reports is the plan's, at or above the optimum."""
    topo, hosts = fabrics.degraded_torus(6, 3, 0)
    found = screened_orders(topo, hosts)
    assert found is not None
    rank = found[2][0][2]
    got = placed_plan(topo, hosts, 3, 20, 0.01, 4094)
    assert got is not None
    name, load, parents, splits = got
    assert name == "torus-6x6.json"
    for src in topo.switches:
        trees = [t for t, _ in splits[src]] if src in splits else [parents[src]]
        assert all(spans(topo, src, t) and increasing(src, t, rank) for t in trees)
        if src in splits:
            assert sum(n for _, n in splits[src]) == hosts[src]
    assert fabrics.channel_dependencies_acyclic(parents, hosts, splits)
    assert load == pytest.approx(fabrics.max_load(topo, hosts, parents, splits))
    assert load >= optimum_bound(topo, hosts).value * (1 - 1e-9)
    assert placed_plan(topo, hosts, 3, 20, 0.01, 1) is None        # more VLANs than the budget


def test_the_placed_plan_continues_its_pricing_to_again_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """placed_plan hands the column step the rounds beyond its own up to `again` (the
    default's PLACED_AGAIN) with the window they run in (columns.column_plan's `more`)."""
    import vlanroute.routing.acyclic.gapped as gapped
    topo, hosts = fabrics.degraded_torus(6, 3, 0)
    seen: list[dict[str, object]] = []
    monkeypatch.setattr(gapped, "column_plan", lambda *a, **kw: seen.append(kw))
    assert placed_plan(topo, hosts, 12, 20, 0.01, 4094, 20, 1.5, 2.5) is None
    assert placed_plan(topo, hosts, 12, 20, 0.01, 4094) is None
    assert seen == [dict(rounds=12, nodes=20, keep=0.01, more=8, above=1.5, below=2.5),
                    dict(rounds=12, nodes=20, keep=0.01, more=0, above=float("inf"), below=float("inf"))]


@pytest.mark.parametrize("quick", [True, False])
def test_the_default_asks_for_more_rounds_above_1_2x_within_its_reach(quick: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import vlanroute.routing.acyclic.engine as acyclic_engine
    topo, hosts = fabrics.degraded_torus(8, 6, 1)
    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr(acyclic_engine, "placed_plan", lambda *a: seen.append(a[2:]))
    engine = ENGINES["acyclic"]
    opt = optimum_bound(topo, hosts).value
    params = engine.params(topo, Options(quick=quick, worth_below=2.0 * opt))
    params = params if quick else replace(params, gapped_variables=0, placed_rounds=acyclic_engine.PLACED_ROUNDS)
    assert acyclic_engine.gapped_routes(topo, hosts, params) is None
    again = acyclic_engine.PLACED_AGAIN if quick else 0
    assert seen == [(acyclic_engine.PLACED_ROUNDS, params.columns, params.column_keep, params.max_vlans, again,
                     pytest.approx(1.2 * opt),
                     pytest.approx(2.0 * opt * acyclic_engine.COLUMN_REACH) if quick else float("inf"))]
    assert acyclic_engine.PLACED_AGAIN > acyclic_engine.PLACED_ROUNDS


@pytest.mark.slow
# one of the two the docs name (5 cables gone, seed 3: 1.217x to 1.189x, the same rounds):
# the suite's 20 minutes
@pytest.mark.parametrize("removed, seed, before", [(3, 0, 1.212)])
def test_the_default_on_degraded_8x8_tori_within_1_2x_with_more_rounds(removed: int, seed: int,
                                                                        before: float) -> None:
    # docs/routing-bounds.md ("The stored orders without their LPs"): at 12 pricing rounds
    # alone the default planned these at `before`
    topo, hosts = fabrics.degraded_torus(8, removed, seed)
    opt = optimum_bound(topo, hosts).value
    routes = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt).routes
    assert routes.algorithm == "acyclic" and routes.choices.record().get("placed") is True
    assert fabrics.max_load(topo, hosts, routes.parents, routes.splits) <= 1.2 * opt < before * opt
    check_plan(topo, hosts, routes, 1.2)


@pytest.mark.slow
def test_the_default_on_a_degraded_8x8_torus_is_deadlock_free() -> None:
    """Issue 40's item 3 on the 8x8 tori with cables gone: the default took `shortest` (not
    deadlock-free; its own search's deadlock-free plan 1.641x the optimum); now the stored
    order's best placement gives a deadlock-free plan within its allowance over `shortest`
    (1.224x measured), and the default's search, which ends far above it, does not run."""
    from unittest.mock import patch

    import vlanroute.routing.acyclic.engine as acyclic_engine

    topo, hosts = fabrics.degraded_torus(8, 6, 1)
    opt = optimum_bound(topo, hosts).value
    with patch.object(acyclic_engine, "searched_plan", side_effect=AssertionError("the search ran")):
        choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt)
    routes = choice.routes
    assert routes.algorithm == "acyclic"
    record = routes.choices.record()
    assert record.get("stored_order") == "torus-8x8" and record.get("placed") is True
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    for src in topo.switches:
        trees = [t for t, _ in routes.splits[src]] if src in routes.splits else [routes.parents[src]]
        assert all(spans(topo, src, t) for t in trees)
    load = fabrics.max_load(topo, hosts, routes.parents, routes.splits)
    best = min(c.peak for c in choice.tried)
    assert load <= 1.25 * best * (1 + 1e-9) and load <= 1.25 * opt


ORDERS_HASHED = """
import hashlib, json, sys
sys.path.insert(0, "tests")
import fabrics
import vlanroute.routing.acyclic.gapped as gapped
gapped.SCREEN = 2
topo, hosts = fabrics.degraded_torus(6, 4, 7)
name, _, orders = gapped.gapped_orders(topo, hosts, 2)
print(name, hashlib.sha1(json.dumps([[sol.load, sorted(rank.items())] for sol, rank in orders]).encode()).hexdigest())
"""


@pytest.mark.slow
def test_the_orders_do_not_depend_on_string_hashing() -> None:
    """The same orders, in the same ranking, whatever Python's string hash seed (the plan
    must be the same on every run)."""
    outs = outputs_under_seeds(ORDERS_HASHED, ("0", "3"))
    assert outs[0] == outs[1] and outs[0].startswith("torus-6x6.json ")
