"""Restarts of the acyclic engine under shuffled switch names (routing/acyclic/restarts.py):
the renamed fabric is the same fabric and its plans come back to the real names with the
same loads; on the 8x8 torus the restarts reach issue 23's 1.4 target deadlock-free, where
the engine's own names leave it at the ring cuts' 1.5; tori already under ABOVE pay nothing."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import fabrics
import networkx as nx
import pytest
from fabrics import channel_dependencies_acyclic, max_load
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic import spans
from topologies import connected_graphs

import vlanroute.routing.acyclic.engine as engine
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.restarts import named_back, shuffled
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.turns import turn_routes

ACYCLIC = ENGINES["acyclic"]


def cables(topo: Topology, real: dict[str, str] | None = None) -> Counter[frozenset[str]]:
    name = real or {s: s for s in topo.switches}
    return Counter(frozenset((name[a], name[b])) for a, b in topo.graph.edges())


@settings(max_examples=40, deadline=None)
@given(connected_graphs(), st.integers(min_value=0, max_value=2), st.integers(min_value=1, max_value=10**6))
def test_the_shuffled_fabric_is_the_same_fabric(g: nx.Graph, doubled: int, seed: int) -> None:
    links = sorted(g.edges) + sorted(g.edges)[:doubled]          # some parallel cables too
    topo = Topology.from_links(sorted(g.nodes), links)
    other, real = shuffled(topo, seed)
    assert other.switches == [f"sw{i + 1}" for i in range(len(topo.switches))]
    assert sorted(real) == sorted(other.switches) and sorted(real.values()) == sorted(topo.switches)
    assert cables(other, real) == cables(topo)
    again, same = shuffled(topo, seed)                                # a fixed seed, a fixed renaming
    assert same == real and sorted(again.graph.edges()) == sorted(other.graph.edges())
    # Trees planned under the new names are trees of the real fabric, with the same loads.
    hosts = {s: 1 + topo.index(s) % 3 for s in topo.switches}
    renamed_hosts = {v: hosts[s] for v, s in real.items()}
    planned = {s: {v: p for p, v in nx.bfs_edges(other.simple(), s)} for s in other.switches}
    back = named_back(planned, real)
    assert all(spans(topo, s, back[s]) for s in topo.switches)
    assert max_load(topo, hosts, back) == pytest.approx(max_load(other, renamed_hosts, planned))


def test_different_seeds_shuffle_differently() -> None:
    topo, _ = fabrics.torus([8, 8])
    orders = {tuple(shuffled(topo, seed)[1][f"sw{i + 1}"] for i in range(64)) for seed in (1, 2, 3)}
    assert len(orders) == 3


def test_no_restart_below_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    # The 4x4 torus is planned at the optimum from the turns engine's start: nothing to restart.
    calls: list[str] = []
    searched = engine.searched_plan

    def spy(topo: Topology, *args: object, **kwargs: object) -> object:
        calls.append(topo.kind)
        return searched(topo, *args, **kwargs)                         # type: ignore[arg-type]

    # the engine's own search and every shuffled restart's start with the search's first part
    monkeypatch.setattr(engine, "searched_plan", spy)
    topo, hosts = fabrics.torus([4, 4])
    routes = ACYCLIC.route(topo, hosts, ACYCLIC.params(topo, Options()))
    assert calls == ["torus"]
    assert routes.choices.record()["shuffle"] == 0


@pytest.mark.slow
def test_8x8_torus_deadlock_free_within_1_4() -> None:
    """Issue 23's target: the 8x8 torus, 4 hosts per switch, deadlock-free within 1.4x the
    exact optimum. The engine's own names stop at 1.5 (the ring cuts' floor); the first
    shuffle reaches 1.359 (docs/routing-bounds.md)."""
    topo, hosts = fabrics.torus([8, 8])
    opt = optimum_bound(topo, hosts).value
    unshuffled = engine.acyclic_routes(topo, hosts, "acyclic", turn_routes(topo, hosts), engine.guide_for(topo, hosts))
    assert max_load(topo, hosts, unshuffled.parents) / opt == pytest.approx(1.5)
    # The engine itself now takes the torus's stored plan (1.250x, tests/test_acyclic_stored.py);
    # the restart it ran before is the one measured here.
    # Without the column step (acyclic/columns.py, which the full search runs last on custom
    # fabrics and which takes this restart to 1.273x, in 45 s of CPU instead of 14).
    routes = engine.shuffled_routes(topo, hosts, 1, effort=replace(engine.FULL, columns=0))
    assert all(spans(topo, s, routes.parents[s]) for s in topo.switches)
    assert channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
    load = max_load(topo, hosts, routes.parents, routes.splits)
    assert load <= 1.4 * opt
    assert load / opt == pytest.approx(1.359, abs=5e-4)
    record = routes.choices.record()
    assert record["shuffle"] == 1 and record["root"] in topo.switches
