"""polish's branch moves compiled (routing/acyclic/polish_kernel.py) against the interpreted
moves: the same max load and the same trees, entry for entry and in the same order, on
random fabrics with parallel cables, switches without hosts and a switch order unlike the
names'; in a channel order, in none (the budget engine's moves) and shortest routes only
(routing below the switch), per switch or per group of hosts, with ejection chains of every
depth and work limits that stop the search part way."""

from __future__ import annotations

import random

import numpy as np
import pytest
from fabrics import random_fabric
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import start_and_order
from test_pricing_kernel import random_tree

from vlanroute.routing import jit
from vlanroute.routing.acyclic import polish as polish_module
from vlanroute.routing.acyclic import polish_kernel
from vlanroute.routing.acyclic.polish import polish
from vlanroute.routing.shortest import shortest_routes
from vlanroute.routing.spread import senders_of
from vlanroute.routing.trees import source_arc_loads

pytest.importorskip("numba")

# the originals: hypothesis runs every example under one monkeypatch, so each example
# wraps these, not the last example's wrappers
COMPILED = polish_module._compiled
KERNEL = polish_kernel.polish_trees


def both(monkeypatch: pytest.MonkeyPatch, *args: object, **kwargs: object) -> tuple[object, object]:
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(polish_module, "KERNEL_ENTRIES", 0)
    monkeypatch.setattr(polish_module, "KERNEL_WARM_ENTRIES", 0)
    ran: list[bool] = []
    monkeypatch.setattr(polish_module, "_compiled", lambda *a: ran.append(True) or COMPILED(*a))
    loads: list[np.ndarray] = []          # the kernel's loads, kept up to date in place
    monkeypatch.setattr(polish_kernel, "polish_trees", lambda *a: loads.append(a[14]) or KERNEL(*a))
    compiled = polish(*args, **kwargs)  # type: ignore[arg-type]
    assert ran, "the kernel ran"
    # the loads it ended with are its trees' loads (a failed ejection chain undid every move)
    topo, hosts, _, _ = args[:4]
    roots = args[4] if len(args) > 4 else None
    weights = args[5] if len(args) > 5 else None
    want = dict.fromkeys(sorted(topo.arc_cables()), 0.0)  # type: ignore[attr-defined]
    for key, tree in compiled[1].items():  # type: ignore[index]
        root = roots[key] if roots is not None else key  # type: ignore[index]
        weight = weights[key] if weights is not None else hosts.get(key, 0)  # type: ignore[index, attr-defined]
        for arc, x in source_arc_loads(tree, root, hosts, weight=weight):  # type: ignore[arg-type]
            want[arc] += x
    assert loads[0].tolist() == list(want.values())
    monkeypatch.setenv("VLANROUTE_NO_JIT", "1")
    interpreted = polish(*args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.delenv("VLANROUTE_NO_JIT")
    return compiled, interpreted


def entry_for_entry(got: object) -> tuple[float, list[object]]:
    peak, trees = got  # type: ignore[misc]
    return peak, [(k, list(t.items())) for k, t in trees.items()]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 30), parallel=st.booleans(), hostless=st.booleans(),
       kind=st.sampled_from(["order", "none", "minimal"]), groups=st.booleans(), depth=st.integers(0, 2),
       work=st.sampled_from([None, 0, 5, 40, 300]))
@example(seed=0, n=12, parallel=True, hostless=True, kind="order", groups=True, depth=2, work=None)
@example(seed=1, n=16, parallel=False, hostless=False, kind="none", groups=False, depth=2, work=None)
def test_the_compiled_moves_give_the_interpreted_trees(monkeypatch: pytest.MonkeyPatch, seed: int, n: int,
                                                        parallel: bool, hostless: bool, kind: str, groups: bool,
                                                        depth: int, work: int | None) -> None:
    topo, hosts = random_fabric(seed, n, parallel, hostless)
    rnd = random.Random(seed)
    if kind == "order":
        trees, rank = start_and_order(topo)
    elif kind == "minimal":
        trees, rank = shortest_routes(topo).parents, None
    else:       # any spanning trees, their entries in a random order (the budget engine's moves)
        trees, rank = {s: random_tree(topo, s, rnd) for s in topo.switches}, None
    kwargs: dict[str, object] = {"minimal": kind == "minimal", "depth": depth}
    if work is not None:
        kwargs["max_work"] = work
    if groups:
        roots, weights = senders_of(hosts, list(topo.switches), 2)
        keyed = {k: dict(trees[s]) for k, s in roots.items()}
        compiled, interpreted = both(monkeypatch, topo, hosts, rank, keyed, roots, weights, **kwargs)
    else:
        compiled, interpreted = both(monkeypatch, topo, hosts, rank, trees, **kwargs)
    assert entry_for_entry(compiled) == entry_for_entry(interpreted)


def cold_polish(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A small fabric's trees and order, numba allowed but the kernel not loaded yet, and
    the list each compiled call appends to (the kernel itself is not run)."""
    topo, hosts = random_fabric(2, 8, False, False)
    trees, rank = start_and_order(topo)
    ran: list[bool] = []
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(polish_module, "_compiled", lambda *a: ran.append(True) or (0.0, {}))
    monkeypatch.setattr(polish_module, "_kernel_loaded", False)
    return topo, hosts, trees, rank, ran


def test_small_polishes_stay_interpreted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below KERNEL_ENTRIES (senders x switches) the kernel is not loaded, nor for shortest
    routes only, nor for trees that do not span the fabric."""
    topo, hosts, trees, rank, ran = cold_polish(monkeypatch)
    monkeypatch.setattr(jit, "LONG_RUN", float("inf"))          # a short process (routing/jit.py)
    monkeypatch.setattr(polish_module, "KERNEL_ENTRIES", 65)
    polish(topo, hosts, rank, trees)
    assert not ran
    monkeypatch.setattr(polish_module, "KERNEL_ENTRIES", 64)
    polish(topo, hosts, None, shortest_routes(topo).parents, minimal=True)
    assert not ran                  # shortest routes only: not before the kernel is loaded
    polish(topo, hosts, rank, trees)
    assert ran
    ran.clear()
    cut = dict(trees)
    cut[topo.switches[0]] = {}
    polish(topo, hosts, rank, cut)
    assert not ran


def test_a_long_process_polishes_from_the_warm_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past jit.LONG_RUN s of CPU the kernel runs from KERNEL_WARM_ENTRIES, as if loaded (the
    rest of a long plan pays for loading it); before, from KERNEL_ENTRIES."""
    topo, hosts, trees, rank, ran = cold_polish(monkeypatch)
    monkeypatch.setattr(polish_module, "KERNEL_ENTRIES", 10**9)
    monkeypatch.setattr(polish_module, "KERNEL_WARM_ENTRIES", 64)
    monkeypatch.setattr(jit, "LONG_RUN", float("inf"))
    polish(topo, hosts, rank, trees)
    assert not ran
    monkeypatch.setattr(jit, "LONG_RUN", 0.0)
    polish(topo, hosts, rank, trees)
    assert ran
