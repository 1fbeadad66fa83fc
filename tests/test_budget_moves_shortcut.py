"""The budget search's subtree moves (routing/budget_search.py _improve_trees) stop summing a
candidate move's worst link load once it reaches the peak: the maximum only grows, and a
move that brings a link to the peak is refused. The plain path is the same function
without those early exits (its source with the three exit lines taken out, so it follows
every future change of the function); both must give the same plans, on random fabrics
at every VLAN budget, and the same on a degraded torus where the moves do work."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any
from unittest import mock

import fabrics
import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import hosted
from topologies import connected_graphs

from vlanroute.model.topology import Topology
from vlanroute.routing import budget_search
from vlanroute.routing.budget_search import budget_routes
from vlanroute.routing.shortest import shortest_routes


def plain_improve_trees() -> Callable[..., Any]:
    lines = textwrap.dedent(inspect.getsource(budget_search._improve_trees)).splitlines()
    kept: list[str] = []
    taken = 0
    skip = False
    for line in lines:
        if skip:
            assert line.strip() in ("break", "continue")
            skip = False
            continue
        if line.strip() == "if worst >= limit:":
            taken += 1
            skip = True
            continue
        kept.append(line)
    assert taken == 3, "the early exits this test takes out are where it expects them"
    space = dict(vars(budget_search))
    exec("\n".join(kept), space)  # noqa: S102 - vlanroute's own source, less three exits
    return space["_improve_trees"]  # type: ignore[no-any-return]


PLAIN = plain_improve_trees()


def both(topo: Topology, hosts: dict[str, int], k: int) -> tuple[object, object]:
    minimal = shortest_routes(topo)
    got = budget_routes(topo, hosts, k, minimal)
    with mock.patch.object(budget_search, "_improve_trees", PLAIN):
        plain = budget_routes(topo, hosts, k, minimal)
    return (got.parents, got.choices.record()), (plain.parents, plain.choices.record())


@settings(max_examples=40, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3), st.integers(min_value=1, max_value=12))
def test_the_early_exit_moves_exactly_as_the_plain_path(g: nx.Graph, per: int, k: int) -> None:
    topo, hosts = hosted(g, per)
    got, plain = both(topo, hosts, min(k, len(topo.switches)))
    assert got == plain


def test_the_same_on_a_degraded_torus() -> None:
    topo, hosts = fabrics.degraded_torus(6, 3, seed=0)
    for k in (4, 12):
        got, plain = both(topo, hosts, k)
        assert got == plain
