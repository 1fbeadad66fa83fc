"""The default's walks again (acyclic/engine.py finished_routes, Effort.walks_again,
WALKS_AGAIN): only where its plan is still above issue 40's 1.2x after its own walks, first
the start walks its size limit skipped, then its long walk at the full search's moves
without its iteration limit, then (where that walk started from a split plan's order) the
walk from the search's own order with the full search's integer program, each only while
the plan is still above; and on the three fabrics it was built for, the default plan
deadlock-free within 1.2x the optimum."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import pytest
from test_acyclic_columns import check_default_columns

import vlanroute.routing.acyclic.engine as acyclic_engine
from vlanroute.routing.acyclic.columns import KEEP as COLUMN_KEEP
from vlanroute.routing.acyclic.refine import refine_variables
from vlanroute.routing.engine import Options
from vlanroute.routing.registry import ENGINES

GAINS = {("g0", "g1"): 0}       # the order the spied start walks return where they gain


@pytest.mark.parametrize("case", ["skipped", "started", "within", "off", "starts gain", "beyond reach",
                                  "another order"])
def test_the_walks_again_run_only_above_the_target(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    starts: list[tuple[int, int, int]] = []
    walks: list[tuple[int, int, bool]] = []     # moves, iterations, from the split plan's order
    steps: list[tuple[int, float]] = []         # the column step's nodes and keep on the walks' orders
    walked: list[dict[tuple[str, str], int]] = []
    real_step = acyclic_engine.column_step
    split_order = {("g0", "g2"): 0}             # "another order": the refinement's split plan's

    def start_spy(topo, host_count, n, moves, iterations=10**12):  # type: ignore[no-untyped-def]
        starts.append((n, moves, iterations))
        return [GAINS] if case == "starts gain" else []

    def walk_spy(topo, host_count, rank, moves, keep_last, early=0, iterations=10**12):  # type: ignore[no-untyped-def]
        walks.append((moves, iterations, rank is split_order))
        walked.append({("w", str(len(walks))): 0})
        return [walked[-1]]

    def step(topo, host_count, plans, max_vlans, nodes=1, keep=0.0, orders=None, **kw):  # type: ignore[no-untyped-def]
        if orders == [GAINS]:
            return (0.0, {}, {}, GAINS)     # lighter than any target: the walks stop
        if any(o is w for o in orders or [] for w in walked):
            steps.append((nodes, keep))
            orders = [o for o in orders or [] if all(o is not w for w in walked)]
        plans = [p for p in plans if p[3] is not split_order]
        return real_step(topo, host_count, plans, max_vlans, nodes, keep, orders, **kw)

    monkeypatch.setattr(acyclic_engine, "start_orders", start_spy)
    monkeypatch.setattr(acyclic_engine, "walked_orders", walk_spy)
    monkeypatch.setattr(acyclic_engine, "column_step", step)
    monkeypatch.setattr(acyclic_engine, "COLUMN_ABOVE", 0.0)        # the column step runs
    monkeypatch.setattr(acyclic_engine, "COLUMN_WALK_REACH", float("inf"))
    monkeypatch.setattr(acyclic_engine, "LP_WALK_ABOVE", float("inf") if case == "within" else 0.0)
    if case == "another order":
        # the refinement's walk left a lighter plan with hosts split, in an order of its own
        monkeypatch.setattr(acyclic_engine, "worth_refining", lambda *a: True)
        monkeypatch.setattr(acyclic_engine, "refined_split", lambda *a, **kw: (None, (1.0, {}, {}, split_order)))
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
    own_walk = (acyclic_engine.QUICK_WALK, acyclic_engine.QUICK_WALK_ITERATIONS, case == "another order")
    again = (acyclic_engine.WALKS_AGAIN, 10**12, case == "another order")
    quick_step = (quick.columns, quick.column_keep)
    expected = {
        "skipped": ([own_starts], [own_walk, again]),       # the skipped start walks, then the long walk
        "started": ([own_starts], [own_walk, again]),       # the start walks once, then the long walk
        "within": ([], [own_walk]),
        "off": ([], [own_walk]),
        "starts gain": ([own_starts], [own_walk]),          # within after the start walks: no long walk
        "beyond reach": ([], [own_walk]),
        # ...and where the walks started from a split plan's order, from the search's own
        # order too, with the full search's integer program
        "another order": ([own_starts], [own_walk, again, (acyclic_engine.WALKS_AGAIN, 10**12, False)]),
    }[case]
    assert (starts, walks) == expected
    assert steps == [quick_step] * min(len(walks), 2) + [(acyclic_engine.COLUMN_NODES, COLUMN_KEEP)] * (len(walks) - 2)


@pytest.mark.slow
@pytest.mark.parametrize("make, before", [
    (lambda: fabrics.dragonfly(6, 3), 1.2003),          # the long walk again: 1.176x
    (lambda: fabrics.random_regular(22, 3, 5), 1.219),  # the start walks: 1.178x
    (lambda: fabrics.random_regular(24, 3, 8), 1.231),  # the walk from the search's own order: 1.194x
])
def test_the_default_walks_again_within_1_2x(make, before: float) -> None:  # type: ignore[no-untyped-def]
    # docs/routing-bounds.md ("The default's walks again"): the default planned these at
    # `before`, deadlock-free, without them
    topo, hosts = make()
    check_default_columns(topo, hosts, before)
