"""The default's fast search (issue 40): the same inventory always gives the same bytes,
whatever the results kept from earlier plans (routing/memo.py); the acyclic engine runs its
full search when named and its quick one, fixed in counts, for the default; and the
default still takes the deadlock-free plan the rule asks for."""

from __future__ import annotations

from pathlib import Path

import fabrics
import networkx as nx
import yaml

from vlanroute.plan.build import plan_from_file
from vlanroute.routing import budget, optimum
from vlanroute.routing.acyclic.engine import ACYCLIC, FULL, QUICK
from vlanroute.routing.choose import DEADLOCK_FREE_COST, choose_routes
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES


def random_inventory(tmp_path: Path, n: int = 12, seed: int = 3) -> Path:
    g = nx.random_regular_graph(3, n, seed=seed)
    doc = {"name": "rr", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": [f"s{i}" for i in range(n)],
                        "links": [{"a": f"s{a}", "b": f"s{b}"} for a, b in sorted(g.edges)]},
           "hosts": {"per_switch": 3}, "settings": {"learning": {"pool": "10.0.0.0/16"}}}
    path = tmp_path / "rr.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_same_inventory_gives_the_same_bytes_with_or_without_kept_results(tmp_path: Path) -> None:
    inv = random_inventory(tmp_path)
    optimum._SOLVED.clear()
    budget._SEARCHED.clear()
    cold = plan_from_file(inv).to_document().to_json_text()
    warm = plan_from_file(inv).to_document().to_json_text()      # the LP and the budget search kept
    assert cold == warm


def test_acyclic_searches_fully_when_named_and_quickly_for_the_default() -> None:
    topo, _ = fabrics.leaf_spine(4, 2)
    assert ACYCLIC.params(topo, Options()) is FULL
    quick = ACYCLIC.params(topo, Options(quick=True, max_vlans=100, worth_below=3.0))
    assert quick.max_vlans == 100 and quick.worth_below == 3.0 and quick.spread and not FULL.spread
    # the quick search is a smaller one in every count
    assert QUICK.roots <= FULL.roots and QUICK.rounds < FULL.rounds and QUICK.negotiate <= FULL.negotiate
    assert QUICK.refine_iterations < FULL.refine_iterations and QUICK.restarts <= FULL.restarts


def test_the_default_keeps_its_deadlock_free_rule() -> None:
    topo, hosts = fabrics.random_regular(16, 3, seed=5)
    opt = optimum_bound(topo, hosts).value
    choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt)
    best = min(c.peak for c in choice.tried)
    free = [c for c in choice.tried if c.deadlock_free]
    chosen = next(c for c in choice.tried if c.routes is choice.routes)
    if free and min(c.peak for c in free) <= DEADLOCK_FREE_COST * best * (1 + 1e-9):
        assert chosen.deadlock_free
        assert fabrics.channel_dependencies_acyclic(choice.routes.parents, hosts, choice.routes.splits)
    # the heavy engine goes last: it starts from what the others found
    assert [c.engine for c in choice.tried][-1] == "acyclic" or "acyclic" not in [c.engine for c in choice.tried]
