"""negotiate's rounds compiled (routing/acyclic/negotiate_kernel.py) against the interpreted
rounds: the same peak and the same trees, entry for entry and in the same order (the order of
a tree's entries steers the searches that start from it), on random fabrics with parallel
cables, switches without hosts and a switch order unlike the names' order; in a channel
order or none, shortest routes only or not, per switch or per group of hosts, with targets
low enough that links run hot and the history cost decides."""

from __future__ import annotations

import pytest
from fabrics import random_fabric
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import start_and_order

from vlanroute.routing import jit
from vlanroute.routing.acyclic import negotiate as negotiate_module
from vlanroute.routing.acyclic.negotiate import negotiate
from vlanroute.routing.bounds import distance_sum
from vlanroute.routing.shortest import shortest_routes
from vlanroute.routing.spread import senders_of

pytest.importorskip("numba")



def both(monkeypatch: pytest.MonkeyPatch, *args: object, **kwargs: object) -> tuple[object, object]:
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(negotiate_module, "KERNEL_WORK", 0)
    compiled = negotiate(*args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setenv("VLANROUTE_NO_JIT", "1")
    interpreted = negotiate(*args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.delenv("VLANROUTE_NO_JIT")
    return compiled, interpreted


def entry_for_entry(got: tuple[float, dict[str, dict[str, str]]]) -> tuple[float, list[object]]:
    peak, trees = got
    return peak, [(k, list(t.items())) for k, t in trees.items()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 22), parallel=st.booleans(), hostless=st.booleans(),
       kind=st.sampled_from(["order", "none", "minimal"]), groups=st.booleans(), rounds=st.integers(0, 6),
       target=st.sampled_from([0.2, 0.5, 1.3]), shuffle=st.integers(0, 3))
@example(seed=0, n=12, parallel=True, hostless=True, kind="order", groups=True, rounds=5, target=0.2, shuffle=1)
def test_the_compiled_rounds_negotiate_the_interpreted_trees(monkeypatch: pytest.MonkeyPatch, seed: int, n: int,
                                                              parallel: bool, hostless: bool, kind: str,
                                                              groups: bool, rounds: int, target: float,
                                                              shuffle: int) -> None:
    topo, hosts = random_fabric(seed, n, parallel, hostless)
    if kind == "order":
        start, rank = start_and_order(topo)
    else:
        start, rank = shortest_routes(topo).parents, None
    scale = distance_sum(topo, hosts) / sum(topo.arc_cables().values())
    kwargs: dict[str, object] = {"rounds": rounds, "seed": shuffle, "target_factor": target,
                                 "minimal": kind == "minimal"}
    if groups:
        roots, weights = senders_of(hosts, list(topo.switches), 2)
        start = {k: dict(start[s]) for k, s in roots.items()}
        kwargs.update(roots=roots, weights=weights)
    compiled, interpreted = both(monkeypatch, topo, hosts, rank, start, scale, **kwargs)
    assert entry_for_entry(compiled) == entry_for_entry(interpreted)  # type: ignore[arg-type]


def test_on_a_torus_with_cables_gone_where_every_round_moves_trees(monkeypatch: pytest.MonkeyPatch) -> None:
    from fabrics import degraded_torus
    topo, hosts = degraded_torus(5, 2, seed=0)
    start, rank = start_and_order(topo)
    scale = distance_sum(topo, hosts) / sum(topo.arc_cables().values())
    compiled, interpreted = both(monkeypatch, topo, hosts, rank, start, scale, rounds=12)
    assert entry_for_entry(compiled) == entry_for_entry(interpreted)  # type: ignore[arg-type]
    # not vacuous: negotiation lowered the start's peak, with trees of their own
    assert compiled[1] != start  # type: ignore[index]


def test_the_kernel_runs_only_from_its_work_and_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    topo, hosts = random_fabric(3, 10, False, False)
    start = shortest_routes(topo).parents
    calls: list[int] = []
    real = negotiate_module._compiled_rounds

    def spy(*args: object) -> object:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(negotiate_module, "_compiled_rounds", spy)
    monkeypatch.setattr(negotiate_module, "_kernel_loaded", False)
    monkeypatch.setattr(jit, "LONG_RUN", float("inf"))          # a short process (routing/jit.py)
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    work = 3 * len(start) * len(topo.arc_cables())
    monkeypatch.setattr(negotiate_module, "KERNEL_WORK", work + 1)
    monkeypatch.setattr(negotiate_module, "KERNEL_WARM_WORK", work // 3)
    negotiate(topo, hosts, None, start, 1.0, rounds=3)
    assert calls == []
    # past the long-run mark, from the warm work on before any kernel was loaded
    monkeypatch.setattr(jit, "LONG_RUN", 0.0)
    monkeypatch.setattr(negotiate_module, "_compiled_rounds", lambda *a: calls.append(2) or real(*a))  # type: ignore[arg-type]
    negotiate(topo, hosts, None, start, 1.0, rounds=3)
    assert calls == [2]
    calls.clear()
    monkeypatch.setattr(negotiate_module, "_compiled_rounds", spy)
    monkeypatch.setattr(negotiate_module, "_kernel_loaded", False)
    monkeypatch.setattr(jit, "LONG_RUN", float("inf"))
    monkeypatch.setattr(negotiate_module, "KERNEL_WORK", work)
    negotiate(topo, hosts, None, start, 1.0, rounds=3)
    assert calls == [1]
    # loaded: from the smaller work on
    monkeypatch.setattr(negotiate_module, "KERNEL_WORK", 10**18)
    negotiate(topo, hosts, None, start, 1.0, rounds=1)
    assert calls == [1, 1]
    negotiate(topo, hosts, None, start, 1.0, rounds=0)
    assert calls == [1, 1]
    monkeypatch.setenv("VLANROUTE_NO_JIT", "1")
    negotiate(topo, hosts, None, start, 1.0, rounds=3)
    assert calls == [1, 1]
