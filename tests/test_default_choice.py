"""The default routing (no routing.algorithm, routing/choose.py): at least as good as every
engine and as the greedy baseline of issue 23, within 1.05x of the optimum wherever one of
them is, deadlock-free under 802.3x when that costs at most 1.25x, and named."""

from __future__ import annotations

from pathlib import Path

import fabrics
import pytest
import yaml
from fabrics import channel_dependencies_acyclic, greedy_shortest_trees, max_load

from vlanroute.model.topology import Topology
from vlanroute.plan.build import plan_from_file
from vlanroute.routing.choose import DEADLOCK_FREE_COST, choose_routes
from vlanroute.routing.engine import Options, Routes
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES

FABRICS = [
    pytest.param(fabrics.leaf_spine, id="leaf-spine 8x4"),
    pytest.param(lambda: fabrics.leaf_spine(6, 3), id="leaf-spine 6x3"),
    pytest.param(fabrics.random_regular, id="random 3-regular 24", marks=pytest.mark.slow),
    pytest.param(lambda: fabrics.random_regular(16, 3, seed=5), id="random 3-regular 16", marks=pytest.mark.slow),
    pytest.param(fabrics.degraded_torus, id="6x6 torus, 3 cables gone", marks=pytest.mark.slow),
    pytest.param(fabrics.dragonfly, id="dragonfly 6x4", marks=pytest.mark.slow),
    pytest.param(lambda: fabrics.torus([6, 6]), id="6x6 torus", marks=pytest.mark.slow),
    pytest.param(lambda: fabrics.torus([8, 8]), id="8x8 torus", marks=pytest.mark.slow),
]


def every_plan(topo: Topology, hosts: dict[str, int], known: dict[str, Routes] | None = None) -> dict[str, float]:
    """Each engine's load, measured here; `known`: routes an engine already gave for this
    fabric (the chooser's candidates: the engines are deterministic, and acyclic alone
    takes about 9 s on the 6x6 tori), the others are planned here."""
    known = known or {}
    loads = {"greedy baseline": max_load(topo, hosts, greedy_shortest_trees(topo, hosts))}
    for engine in ENGINES.values():
        if engine.refuses(topo) is None:
            routes = known.get(engine.name) or engine.route(topo, hosts, engine.params(topo, Options()))
            loads[engine.name] = max_load(topo, hosts, routes.parents, routes.splits)
    return loads




@pytest.mark.parametrize("fabric", FABRICS)
def test_default_is_the_best_plan(fabric) -> None:
    topo, hosts = fabric()
    opt = optimum_bound(topo, hosts).value
    choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), False, opt)
    got = max_load(topo, hosts, choice.routes.parents, choice.routes.splits)
    others = every_plan(topo, hosts, {c.engine: c.routes for c in choice.tried})
    assert got <= min(others.values()) * (1 + 1e-9), (got, others)
    if min(others.values()) <= 1.05 * opt:
        assert got <= 1.05 * opt
    assert choice.reason.startswith(choice.routes.algorithm + ":")


@pytest.mark.parametrize("fabric", FABRICS[:2] + [FABRICS[5]])
def test_flow_control_prefers_deadlock_free(fabric) -> None:
    topo, hosts = fabric()
    opt = optimum_bound(topo, hosts).value
    choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt)
    best = min(c.peak for c in choice.tried)
    free = [c.peak for c in choice.tried if c.deadlock_free]
    got = max_load(topo, hosts, choice.routes.parents, choice.routes.splits)
    if free and min(free) <= DEADLOCK_FREE_COST * best:
        assert channel_dependencies_acyclic(choice.routes.parents, hosts, choice.routes.splits)
        assert got == pytest.approx(min(free))
    else:
        assert got == pytest.approx(best)
        assert "above x1.25" in choice.reason or "no deadlock-free" in choice.reason


def inventory(tmp_path: Path, **routing: object) -> Path:
    doc = {"name": "ls", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": [*(f"l{i}" for i in range(4)), "s0", "s1"],
                        "links": [{"a": f"l{i}", "b": f"s{j}"} for i in range(4) for j in range(2)]},
           "hosts": {"per_switch": {f"l{i}": 2 for i in range(4)}}, "routing": routing,
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    path = tmp_path / "ls.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_plan_names_the_choice_and_explicit_engines_are_kept(tmp_path: Path) -> None:
    chosen = plan_from_file(inventory(tmp_path))
    assert chosen.choice is not None and chosen.routing_record()["chosen"] == chosen.choice
    assert chosen.metrics.deadlock_free              # 2-hop leaf-spine routes never wait in a cycle
    # A leaf's 2 hosts send 2 x 2 to each of 3 other leaves over 2 uplinks: split, 6 per
    # uplink (the LP); one tree per leaf sends two of the three leaves up one spine: 8. With
    # a leaf's two hosts on the two spines' trees (routing below the switch) it is the LP's 6,
    # in 2 VLANs, each leaf a source of both, one host in each.
    assert chosen.metrics.link_load_optimum == pytest.approx(6.0)
    assert chosen.metrics.max_link_load == pytest.approx(6.0)
    assert chosen.metrics.vlan_count == 2 and chosen.routes.unspread is not None
    assert chosen.routes.unspread[0] == pytest.approx(8.0)
    for leaf in (f"l{i}" for i in range(4)):
        assert sorted(h.vlan for h in chosen.hosts if h.switch == leaf) == sorted(v.id for v in chosen.vlans)
    explicit = plan_from_file(inventory(tmp_path, algorithm="updown"))
    assert explicit.choice is None and "chosen" not in explicit.routing_record()
    assert explicit.routes.algorithm == "updown"
    assert explicit.metrics.max_link_load >= chosen.metrics.max_link_load
