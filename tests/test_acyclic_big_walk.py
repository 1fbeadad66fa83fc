"""The full search's walk on order LPs too large for the refinement's (acyclic/engine.py
BIG_WALK): above refine.VARIABLES, up to BIG_WALK_VARIABLES, and only where the plan before
the column step is above BIG_WALK_ABOVE times the optimum. The dragonfly 9x4 it is for takes minutes
(docs/routing-bounds.md, "The dragonfly 9x4 walked from the engine's own order"), so the
gate is checked here on a small fabric with the limits moved onto it, and the effect of a
walk of BIG_WALK moves on a walk's worth of fabric is the quick walk's test's."""

from __future__ import annotations

from dataclasses import replace

import fabrics
import pytest

import vlanroute.routing.acyclic.engine as acyclic_engine
from vlanroute.routing.acyclic.refine import refine_variables
from vlanroute.routing.engine import Options
from vlanroute.routing.registry import ENGINES


@pytest.mark.parametrize("case", ["walks", "too large", "refined", "near enough", "small: the long walk",
                                  "the default"])
def test_the_big_walk_runs_only_inside_its_gate(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # random 3-regular 16 seed 3: the default's plan before its column step is 1.233x the optimum
    topo, hosts = fabrics.random_regular(16, 3, 3)
    size = refine_variables(topo, hosts)
    calls: list[int] = []
    inner = acyclic_engine.walked_orders

    def spy(topo, host_count, rank, steps, keep_last, *rest):  # type: ignore[no-untyped-def]
        calls.append(steps)
        return inner(topo, host_count, rank, steps, keep_last, *rest)

    monkeypatch.setattr(acyclic_engine, "walked_orders", spy)
    monkeypatch.setattr(acyclic_engine, "BIG_WALK_VARIABLES", size - 1 if case == "too large" else size)
    # the refinement's own walk covers order LPs up to its limit (it needs 20 switches: not here)
    monkeypatch.setattr(acyclic_engine, "REFINE_VARIABLES", size if case == "refined" else size - 1)
    monkeypatch.setattr(acyclic_engine, "BIG_WALK_ABOVE", 5.0 if case == "near enough" else 1.15)
    engine = ENGINES["acyclic"]
    quick = engine.params(topo, Options(quick=True))
    # the default's effort, its own walk moved out of the way, with a big walk of 7 moves
    # (the full search's would be BIG_WALK; the default has none: big_walk 0)
    params = replace(quick, column_walk_variables=size if case == "small: the long walk" else size - 1,
                     big_walk=0 if case == "the default" else 7)
    assert acyclic_engine.QUICK.big_walk == 0 and acyclic_engine.FULL.big_walk == acyclic_engine.BIG_WALK > 0
    routes = engine.route(topo, hosts, params)
    assert fabrics.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    expected = {"walks": [7], "too large": [], "refined": [], "near enough": [],
                "small: the long walk": [quick.column_walk], "the default": []}[case]
    assert calls == expected
