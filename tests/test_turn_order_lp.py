"""The turn-family LP floors of tests/turn_order_lp.py (bench/turn_order_floor.py, issue 23's
1.4 target on the 8x8 torus): the LP agrees with the optimum LP when every turn is allowed,
equals the ring MILP's floor for the dimension order with cuts, is below the turns engine's
load (whose routes stay within that family), and the deadlock-free families are acyclic."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import turn_order_lp as T
from fabrics import random_regular, torus
from vlanroute.model.topology import Topology
from vlanroute.routing.optimum import lp_bound, optimum_bound
from vlanroute.routing.ringcuts import best_splits
from vlanroute.routing.trees import arc_loads
from vlanroute.routing.turns import TurnsChoices, turn_routes

DIRECTIONS = ((0, 1), (0, -1), (1, 1), (1, -1))


@pytest.mark.parametrize("make", [lambda: torus([3, 4], per=2), lambda: torus([4, 4]),
                                  lambda: random_regular(8, 3, seed=4, per=2)])
def test_every_turn_allowed_gives_the_optimum_lp(make: object) -> None:
    assert callable(make)
    topo, hosts = make()
    assert T.turn_floor(topo, hosts, lambda a, b: True) == pytest.approx(lp_bound(topo, hosts), rel=1e-6)


@pytest.mark.parametrize("k", [4, 6])
def test_the_dimension_order_floor_is_the_ring_floor(k: int) -> None:
    """Under X then Y each row ring carries its own ring's traffic: the LP's floor over the
    optimum is the ring MILP's (exact, unsplit) over the ring's distance bound, 1.333 at 6."""
    topo, hosts = torus([k, k], per=1)
    floor = T.turn_floor(topo, hosts, T.dimension_order_cuts(topo))
    ring = best_splits(k, 0, 1)
    assert floor is not None and ring is not None
    ring_bound = sum(min(d, k - d) for d in range(1, k)) / 2
    assert floor / optimum_bound(topo, hosts).value == pytest.approx(ring[0] / ring_bound, rel=1e-6)


@pytest.mark.parametrize("dims", [[6, 6], [5, 4], [4, 6]])
def test_the_turns_engine_routes_within_its_family_and_above_its_floor(dims: list[int]) -> None:
    topo, hosts = torus(dims, per=2)
    routes = turn_routes(topo, hosts)
    assert isinstance(routes.choices, TurnsChoices)
    order = routes.choices.dimension_order
    allowed = T.dimension_order_cuts(topo, order)
    for src, parent in routes.parents.items():
        for v, p in parent.items():
            if p != src:
                assert allowed((parent[p], p), (p, v)), (src, parent[p], p, v)
    floor = T.turn_floor(topo, hosts, allowed)
    assert floor is not None
    assert max(arc_loads(routes.parents, hosts, topo.arc_cables()).values()) >= floor * (1 - 1e-6)


def _families(topo: Topology, seed: int, perm: tuple[tuple[int, int], ...]) -> list[T.Allowed]:
    order = (1, 0) if seed % 2 else (0, 1)
    return [T.dimension_order_cuts(topo, order), T.dimension_order_cuts(topo, stagger=(0, 0)),
            T.direction_classes(topo, perm), T.odd_even(topo, (0, 1)), T.rows_in_sequence(topo),
            T.x_y_x(topo, (0, 1)), T.x_y_x(topo, (1, 1)),
            T.with_extra_turns(topo, T.dimension_order_cuts(topo, order), seed)]


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 7), st.integers(3, 7), st.integers(0, 1000), st.sampled_from(list(itertools.permutations(DIRECTIONS))))
def test_the_deadlock_free_families_are_acyclic(a: int, b: int, seed: int,
                                                perm: tuple[tuple[int, int], ...]) -> None:
    """Every family but the cuts-only relaxation keeps the channel dependencies acyclic
    (checked by networkx, not by the order the family was built from); the relaxation
    does not (a 4-cycle of turns around a square)."""
    topo = Topology.from_generator("torus", [a, b])
    for allowed in _families(topo, seed, perm):
        assert T.acyclic(topo, allowed)
    assert not T.acyclic(topo, T.cuts_only(topo))


@pytest.mark.slow
def test_the_8x8_floors() -> None:
    """Issue 23's 8x8 torus: the turns engine's family cannot go below 1.5 of the optimum
    (and the engine is there), nor can the odd-even family; the cuts alone would allow
    1.012: the turns between dimensions are what costs. The 1.4 target is not met."""
    topo, hosts = torus([8, 8])
    opt = optimum_bound(topo, hosts).value
    floor = T.turn_floor(topo, hosts, T.dimension_order_cuts(topo))
    assert floor is not None and floor / opt == pytest.approx(1.5, rel=1e-6)
    routes = turn_routes(topo, hosts)
    assert max(arc_loads(routes.parents, hosts, topo.arc_cables()).values()) / opt == pytest.approx(1.5, rel=1e-6)
    odd_even = T.turn_floor(topo, hosts, T.odd_even(topo, (0, 1)))
    assert odd_even is not None and odd_even / opt == pytest.approx(1.5, rel=1e-6)
    relaxed = T.turn_floor(topo, hosts, T.cuts_only(topo))
    assert relaxed is not None and relaxed / opt < 1.02


@pytest.mark.parametrize(("file", "ring_floor"), [("torus-5x5-dual-1.2312.json", 4 / 3),
                                                 ("torus-6x6-dual-1.2345.json", 4 / 3)])
def test_searched_orders_beat_the_ring_floor_on_square_tori(file: str, ring_floor: float) -> None:
    """bench/turn_order_dual.py's orders (bench/orders/): acyclic sets of turns whose LP floor
    is under the floor of every dimension-order plan on the same square torus (the ring's
    4/3 on 5x5 and 6x6), checked here with the project's own LP and acyclicity test. A floor
    of splittable flow, not a VLAN plan: rounding it into trees is still open (issue 23)."""
    import json
    from pathlib import Path
    saved = json.loads((Path(__file__).resolve().parent.parent / "bench" / "orders" / file).read_text())
    topo, hosts = torus(saved["dims"], per=4)
    key = {(a, b): k for a, b, k in saved["channel_keys"]}
    assert len(key) == len(topo.arc_cables()) and len(set(key.values())) == len(key)

    def allowed(a: tuple[str, str], b: tuple[str, str]) -> bool:
        return key[a] < key[b]
    assert T.acyclic(topo, allowed)
    floor = T.turn_floor(topo, hosts, allowed)
    dimension_order = T.turn_floor(topo, hosts, T.dimension_order_cuts(topo))
    opt = optimum_bound(topo, hosts).value
    assert floor is not None and dimension_order is not None
    assert dimension_order / opt == pytest.approx(ring_floor, rel=1e-6)
    assert floor / opt == pytest.approx(saved["floor"], rel=1e-6) and floor / opt < ring_floor - 0.09


@pytest.mark.parametrize("k", [4, 5, 6])
def test_the_diagonal_lp_agrees_with_the_full_lp(k: int) -> None:
    """The one-commodity-per-diagonal LP gives the full LP's floor for orders that are the
    same from every switch of a diagonal: the turns engine's (which is one) and random ones."""
    import random
    topo, hosts = torus([k, k], per=1)
    start = T.dimension_order_key(topo)
    keys = [0.0] * (4 * k)
    for a in topo.arc_cables():
        keys[T.diagonal_orbit(topo, a)] = start(a)
    assert all(keys[T.diagonal_orbit(topo, a)] == start(a) for a in topo.arc_cables())
    rnd = random.Random(k)
    for trial in range(3):
        order = keys if trial == 0 else [rnd.random() * 4 for _ in keys]
        full = T.turn_floor(topo, hosts, lambda a, b: order[T.diagonal_orbit(topo, a)] < order[T.diagonal_orbit(topo, b)])
        diag = T.diagonal_floor(topo, 1, order)
        assert (full is None) == (diag is None)
        if full is not None and diag is not None:
            assert diag == pytest.approx(full, rel=1e-6)
            # the excess above the floor is nothing, above less than the floor something
            assert T.diagonal_floor(topo, 1, order, excess_over=full * 1.0001) == pytest.approx(0.0, abs=1e-6)
            assert (T.diagonal_floor(topo, 1, order, excess_over=full * 0.95) or 0.0) > 0.0


@pytest.mark.parametrize("dims", [[4, 4], [6, 6], [5, 3]])
def test_order_trees_round_an_order_into_deadlock_free_vlan_trees(dims: list[int]) -> None:
    """The X-then-Y order rounded into one tree per source: every pair delivered, the trees'
    channel dependencies acyclic (checked from the routes, not the order), and no better than
    the order's LP floor allows."""
    from fabrics import channel_dependencies_acyclic, max_load
    topo, hosts = torus(dims, per=2)
    key = T.dimension_order_key(topo)
    trees = T.order_trees(topo, hosts, key)
    assert trees is not None
    for src, parent in trees.items():
        assert set(parent) == set(topo.switches) - {src}
        for v in parent:                       # every path reaches the source
            seen = {v}
            while v != src:
                v = parent[v]
                assert v not in seen
                seen.add(v)
    assert channel_dependencies_acyclic(trees, hosts)
    floor = T.turn_floor(topo, hosts, T.by_key(key))
    assert floor is not None and max_load(topo, hosts, trees) >= floor * (1 - 1e-6)
