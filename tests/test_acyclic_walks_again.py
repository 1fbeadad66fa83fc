"""The default's walks again (acyclic/engine.py finished_routes, Effort.walks_again,
WALKS_AGAIN): only where its plan is still above issue 40's 1.2x after its own walks, first
the start walks its size limit skipped, then its long walk at the full search's moves
without its iteration limit, each only while the plan is still above; and on the two
fabrics it was built for, the default plan deadlock-free within 1.2x the optimum."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import pytest
from test_acyclic_columns import check_default_columns

import vlanroute.routing.acyclic.engine as acyclic_engine
from vlanroute.routing.acyclic.refine import refine_variables
from vlanroute.routing.engine import Options
from vlanroute.routing.registry import ENGINES

GAINS = {("g0", "g1"): 0}       # the order the spied start walks return where they gain


@pytest.mark.parametrize("case", ["skipped", "started", "within", "off", "starts gain", "beyond reach"])
def test_the_walks_again_run_only_above_the_target(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    starts: list[tuple[int, int, int]] = []
    walks: list[tuple[int, int]] = []
    real_step = acyclic_engine.column_step

    def start_spy(topo, host_count, n, steps, iterations=10**12):  # type: ignore[no-untyped-def]
        starts.append((n, steps, iterations))
        return [GAINS] if case == "starts gain" else []

    def walk_spy(topo, host_count, rank, steps, keep_last, early=0, iterations=10**12):  # type: ignore[no-untyped-def]
        walks.append((steps, iterations))
        return []

    def step(topo, host_count, plans, max_vlans, nodes=1, keep=0.0, orders=None, **kw):  # type: ignore[no-untyped-def]
        if orders == [GAINS]:
            return (0.0, {}, {}, GAINS)     # lighter than any target: the walks stop
        return real_step(topo, host_count, plans, max_vlans, nodes, keep, orders, **kw)

    monkeypatch.setattr(acyclic_engine, "start_orders", start_spy)
    monkeypatch.setattr(acyclic_engine, "walked_orders", walk_spy)
    monkeypatch.setattr(acyclic_engine, "column_step", step)
    monkeypatch.setattr(acyclic_engine, "COLUMN_ABOVE", 0.0)        # the column step runs
    monkeypatch.setattr(acyclic_engine, "COLUMN_WALK_REACH", float("inf"))
    monkeypatch.setattr(acyclic_engine, "LP_WALK_ABOVE", float("inf") if case == "within" else 0.0)
    topo, hosts = fabrics.random_regular(10, 3, seed=1)
    engine = ENGINES["acyclic"]
    quick = engine.params(topo, Options(quick=True, worth_below=1e-9 if case == "beyond reach" else None))
    size = refine_variables(topo, hosts)
    assert quick.walks_again == acyclic_engine.WALKS_AGAIN == acyclic_engine.COLUMN_WALK
    assert engine.params(topo, Options()).walks_again == 0              # the full search walks as far already
    effort = replace(quick, start_walk_variables=size if case in ("started", "within") else size - 1,
                     walks_again=0 if case == "off" else quick.walks_again)
    engine.route(topo, hosts, effort)
    own_starts = (acyclic_engine.START_WALKS, acyclic_engine.QUICK_WALK, acyclic_engine.QUICK_WALK_ITERATIONS)
    own_walk = (acyclic_engine.QUICK_WALK, acyclic_engine.QUICK_WALK_ITERATIONS)
    again = (acyclic_engine.WALKS_AGAIN, 10**12)
    expected = {
        "skipped": ([own_starts], [own_walk, again]),       # the skipped start walks, then the long walk
        "started": ([own_starts], [own_walk, again]),       # the start walks once, then the long walk
        "within": ([], [own_walk]),
        "off": ([], [own_walk]),
        "starts gain": ([own_starts], [own_walk]),          # within after the start walks: no long walk
        "beyond reach": ([], [own_walk]),
    }[case]
    assert (starts, walks) == expected


@pytest.mark.slow
@pytest.mark.parametrize("make, before", [
    (lambda: fabrics.dragonfly(6, 3), 1.2003),          # the long walk again: 1.176x
    (lambda: fabrics.random_regular(22, 3, 5), 1.219),  # the start walks: 1.178x
])
def test_the_default_walks_again_within_1_2x(make, before: float) -> None:  # type: ignore[no-untyped-def]
    # docs/routing-bounds.md ("The default's walks again"): the default planned these at
    # `before`, deadlock-free, without them
    topo, hosts = make()
    check_default_columns(topo, hosts, before)
