"""The column step's pricing compiled (routing/acyclic/pricing_kernel.py) against the
interpreted `priced_tree` and `improved_tree`: the same trees, entry for entry and in the same
order (the order of a tree's entries steers the searches that start from it), on random
fabrics with parallel cables, switches without hosts and a switch order unlike the names';
in deadlock-free orders and in random ones (where some switches cannot be reached, or the
grown tree leaves switches to their earliest paths), with channel weights that tie; then
whole column plans, both ways."""

from __future__ import annotations

import random
import sys

import pytest
from fabrics import random_fabric
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import start_and_order

from vlanroute.model.topology import Topology
from vlanroute.routing import jit
from vlanroute.routing.acyclic import columns
from vlanroute.routing.acyclic.columns import ColumnPool, column_plan, improved_tree, priced_tree

pytest.importorskip("numba")

# the original: hypothesis runs every example under one monkeypatch, so each example wraps
# this, not the last example's wrapper
WANTED = columns._CompiledPricing.wanted


def random_order(topo: Topology, rnd: random.Random) -> dict[tuple[str, str], int]:
    arcs = sorted(topo.arc_cables())
    rnd.shuffle(arcs)
    return {a: i for i, a in enumerate(arcs)}


def random_tree(topo: Topology, src: str, rnd: random.Random) -> dict[str, str]:
    """A random spanning tree of src, its entries in a random order (increasing in no order)."""
    adj = {s: [b for a, b in sorted(topo.arc_cables()) if a == s] for s in topo.switches}
    tree: dict[str, str] = {}
    seen, frontier = {src}, [src]
    while frontier:
        u = frontier.pop(rnd.randrange(len(frontier)))
        for v in adj[u]:
            if v not in seen:
                seen.add(v)
                tree[v] = u
                frontier.append(v)
    keys = list(tree)
    rnd.shuffle(keys)
    return {v: tree[v] for v in keys}


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 20), parallel=st.booleans(), hostless=st.booleans(),
       random_rank=st.booleans(), weights=st.sampled_from(["uniform", "few", "random"]))
@example(seed=3, n=12, parallel=True, hostless=True, random_rank=True, weights="few")
@example(seed=1107, n=14, parallel=False, hostless=False, random_rank=True, weights="uniform")
def test_the_compiled_pricing_gives_the_interpreted_trees(seed: int, n: int, parallel: bool, hostless: bool,
                                                          random_rank: bool, weights: str) -> None:
    topo, hosts = random_fabric(seed, n, parallel, hostless)
    rnd = random.Random(seed)
    start, rank = start_and_order(topo)
    if random_rank:
        rank = random_order(topo, rnd)
    pool = ColumnPool(topo, hosts, rank)
    into: dict[str, list[str]] = {v: [] for v in topo.switches}
    for u, v in pool.arcs:
        into[v].append(u)
    # weights as the pricing makes them (a dual, at least 0, plus HOP); equal or few values
    # tie many moves, so that the order in which they are looked at decides
    duals = {"uniform": (0.25,), "few": (0.0, 0.25, 0.5)}.get(weights)
    weight = {a: (rnd.choice(duals) if duals else rnd.random()) + columns.HOP for a in pool.arcs}
    compiled = columns._CompiledPricing(pool, topo, rank)
    w = compiled.weights(weight)
    for src in topo.switches:
        want = priced_tree(topo, src, rank, weight, hosts)
        got = compiled.priced(src, w)
        assert (None if got is None else list(got.items())) == (None if want is None else list(want.items()))
        trees = [t for t in (want, start[src], random_tree(topo, src, rnd)) if t is not None]
        for tree in trees:
            assert list(compiled.improved(src, tree, w).items()) == \
                list(improved_tree(src, tree, rank, weight, hosts, into).items())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), n=st.integers(3, 16), parallel=st.booleans(), hostless=st.booleans(),
       rounds=st.integers(1, 6))
@example(seed=5, n=14, parallel=False, hostless=False, rounds=6)
def test_column_plans_are_the_same_compiled(monkeypatch: pytest.MonkeyPatch, seed: int, n: int, parallel: bool,
                                            hostless: bool, rounds: int) -> None:
    topo, hosts = random_fabric(seed, n, parallel, hostless)
    start, rank = start_and_order(topo)
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(columns, "KERNEL_WORK", 0)
    monkeypatch.setattr(columns, "KERNEL_WARM_WORK", 0)
    used: list[object] = []
    monkeypatch.setattr(columns._CompiledPricing, "wanted",
                        staticmethod(lambda *a: used.append(WANTED(*a)) or used[-1]))
    compiled = column_plan(topo, hosts, rank, [(start, {})], rounds=rounds, nodes=20)
    monkeypatch.setenv("VLANROUTE_NO_JIT", "1")
    interpreted = column_plan(topo, hosts, rank, [(start, {})], rounds=rounds, nodes=20)
    assert compiled == interpreted
    if compiled is not None:
        assert used and used[0] is not None and used[-1] is None      # the kernel ran, then the interpreter
        assert [list(t.items()) for t in compiled[1].values()] == [list(t.items()) for t in interpreted[1].values()]


def test_small_work_stays_interpreted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below KERNEL_WORK (and KERNEL_WARM_WORK with numba loaded) the kernel is not loaded."""
    topo, hosts = random_fabric(1, 6, False, False)
    _, rank = start_and_order(topo)
    pool = ColumnPool(topo, hosts, rank)
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    work = 40 * len(pool.sources) * len(topo.switches) * len(pool.arcs)
    monkeypatch.setattr(columns, "KERNEL_WORK", work + 1)
    monkeypatch.setattr(columns, "KERNEL_WARM_WORK", work + 1)
    assert columns._CompiledPricing.wanted(pool, topo, rank, 40) is None
    monkeypatch.setattr(columns, "KERNEL_WARM_WORK", work)
    # cold (no kernel loaded, numba not imported), the warm work is not enough before the
    # long-run mark (routing/jit.py), and is after it
    monkeypatch.setattr(columns, "_kernel_loaded", False)
    monkeypatch.delitem(sys.modules, "vlanroute.routing.numba_jit", raising=False)
    monkeypatch.setattr(jit, "LONG_RUN", float("inf"))
    assert columns._CompiledPricing.wanted(pool, topo, rank, 40) is None
    monkeypatch.setattr(jit, "LONG_RUN", 0.0)
    assert columns._CompiledPricing.wanted(pool, topo, rank, 40) is not None
    monkeypatch.setattr(jit, "LONG_RUN", float("inf"))
    monkeypatch.setattr(columns, "_kernel_loaded", True)
    assert columns._CompiledPricing.wanted(pool, topo, rank, 40) is not None
    # an order that leaves a channel unranked: interpreted
    del rank[next(iter(rank))]
    assert columns._CompiledPricing.wanted(pool, topo, rank, 40) is None
