"""The order LPs kept between solves (routing/order_lp.py `_SOLVED`, routing/memo.py
`SizedStore`): the store drops the least recently used results once they hold more than its
limit, and keeps nothing larger than it; a walk retraced (as the default's walks again
retrace the walk before them) solves no LP again and gets the same solutions, bit for bit,
as a walk solved afresh; a solution kept is read-only, so no caller can change what the
next one is handed; two fabrics never share a kept solution."""

from __future__ import annotations

import fabrics
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import start_and_order

from vlanroute.routing import order_lp
from vlanroute.routing.acyclic.refine import order_walk
from vlanroute.routing.memo import SizedStore
from vlanroute.routing.order_lp import OrderLP, OrderSolution


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.lists(st.tuples(st.integers(0, 9), st.integers(0, 30)), max_size=60))
def test_the_store_keeps_the_most_recent_within_its_limit(limit: int, asks: list[tuple[int, int]]) -> None:
    """A model of the store (a list, most recent last) against the store, over random asks
    of (key, size): the same values handed out, the same keys kept, never more bytes than
    the limit, and a result handed out again only where it was kept."""
    store: SizedStore[tuple[int, int]] = SizedStore(limit, lambda v: v[1])
    model: list[tuple[int, int]] = []           # (key, size), least recently used first
    made = 0
    for key, size in asks:
        before = made

        def make(key: int = key, size: int = size) -> tuple[int, int]:
            nonlocal made
            made += 1
            return (key, size)

        kept = next((item for item in model if item[0] == key), None)
        got = store.get(key, make)
        if kept is not None:
            assert got == kept and made == before
            model.remove(kept)
            model.append(kept)
        else:
            assert got == (key, size) and made == before + 1
            if size <= limit:
                model.append((key, size))
                while sum(s for _, s in model) > limit:
                    model.pop(0)
        assert store.bytes == sum(s for _, s in model) <= limit
        assert sorted(k for k, _ in model) == sorted(store._got)


def _walk(topo, hosts, rank, steps):  # type: ignore[no-untyped-def]
    return [(key, sol) for key, sol in order_walk(OrderLP(topo, hosts), rank, steps=steps)]


def same_solutions(a: list[OrderSolution], b: list[OrderSolution]) -> None:
    """The same LP solutions, bit for bit: loads, iterations, flows and turn prices."""
    assert len(a) == len(b) >= 2
    for sa, sb in zip(a, b):
        assert sa.load == sb.load and sa.iterations == sb.iterations
        for x, y in ((sa.inflow, sb.inflow), (sa.turn_flow, sb.turn_flow), (sa.gain, sb.gain)):
            assert np.array_equal(x, y)


def _same(a: list[tuple[np.ndarray, OrderSolution]], b: list[tuple[np.ndarray, OrderSolution]]) -> None:
    assert all(np.array_equal(ka, kb) for (ka, _), (kb, _) in zip(a, b))
    same_solutions([s for _, s in a], [s for _, s in b])


def test_a_retraced_walk_solves_nothing_again_and_gets_the_same_solutions(monkeypatch: pytest.MonkeyPatch) -> None:
    topo, hosts = fabrics.random_regular(12, 3, seed=4, per=2)
    _, rank = start_and_order(topo)
    solved: list[int] = []
    solve = order_lp._Solver.solve
    monkeypatch.setattr(order_lp._Solver, "solve", lambda self, al: solved.append(1) or solve(self, al))
    # afresh, with nothing kept: every LP solved
    monkeypatch.setattr(order_lp, "_SOLVED", SizedStore(0, order_lp._solution_bytes))
    fresh = _walk(topo, hosts, rank, 12)
    afresh = len(solved)
    assert afresh >= 12
    # kept: the first walk solves as many, its retracing none
    monkeypatch.setattr(order_lp, "_SOLVED", SizedStore(order_lp.SOLVED_BYTES, order_lp._solution_bytes))
    first = _walk(topo, hosts, rank, 12)
    assert len(solved) - afresh <= afresh
    during = len(solved)
    again = _walk(topo, hosts, rank, 12)
    assert len(solved) == during
    _same(fresh, first)
    _same(fresh, again)
    # read-only: a caller cannot change what the next caller is handed
    for _, sol in again:
        with pytest.raises(ValueError):
            sol.gain[0] = 1.0


def test_two_fabrics_never_share_a_kept_solution() -> None:
    """The same switch names and the same allowed turns, other hosts: the LP differs, and so
    does its solution (the store's key holds the fabric and its traffic)."""
    topo, hosts = fabrics.random_regular(12, 3, seed=4, per=2)
    _, rank = start_and_order(topo)
    key = np.array([float(rank[a]) for a in OrderLP(topo, hosts).arcs])
    one = OrderLP(topo, hosts).solve(key)
    more = OrderLP(topo, {s: 2 * n for s, n in hosts.items()}).solve(key)
    assert one is not None and more is not None
    assert more.load == pytest.approx(4 * one.load)
