"""The default's fast search (issue 40): the same inventory always gives the same bytes,
whatever the results kept from earlier plans (routing/memo.py); the acyclic engine runs its
full search when named and its quick one, fixed in counts, for the default; and the
default still takes the deadlock-free plan the rule asks for."""

from __future__ import annotations

from pathlib import Path

import fabrics
from hashseed import outputs_under_seeds
import pytest
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


HASHED = """
import hashlib, json, sys
sys.path.insert(0, "tests")
import fabrics
import pytest
from vlanroute.routing.shortest import SHORTEST, ShortestParams
topo, hosts = fabrics.degraded_torus(8, 6, seed=1)
routes = SHORTEST.route(topo, hosts, ShortestParams(spread=False))
assert routes.choices.shared        # share_trees moved sources onto other trees
print(hashlib.sha1(json.dumps([[s, list(t.items())] for s, t in routes.parents.items()]).encode()).hexdigest())
"""


def test_shared_trees_do_not_depend_on_string_hashing() -> None:
    """The trees share_trees hands on, their entries' order included (the budget engine's
    search and the branch moves walk them in that order), are the same whatever Python's
    string hash seed: with the frozenset of a tree's links walked as it came, the budget
    engine's plan of this fabric changed between runs (61 or 62 VLANs)."""
    outs = outputs_under_seeds(HASHED, ("0", "2"))
    assert outs[0] == outs[1] and outs[0].strip()


def test_turn_routes_are_kept_but_each_caller_gets_its_own_trees() -> None:
    from vlanroute.routing.turns import turn_routes

    topo, hosts = fabrics.random_regular(16, 3, seed=5)
    first = turn_routes(topo, hosts)
    first.parents[topo.switches[0]].clear()          # a caller that changes its trees...
    again = turn_routes(topo, hosts)
    assert len(again.parents[topo.switches[0]]) == len(topo.switches) - 1     # ...changes no one else's
    other = {s: n + 1 for s, n in hosts.items()}
    assert turn_routes(topo, other).parents == turn_routes(topo, other).parents


def test_hopeless_acyclic_plans_are_not_spread() -> None:
    """Routing below the switch is skipped where even its largest measured gain
    (SPREAD_REACH) cannot bring the acyclic plan within the default's allowance; where the
    plan can still be chosen, it runs (here it lowers the load)."""
    topo, hosts = fabrics.random_regular(16, 3, seed=5)
    opt = optimum_bound(topo, hosts).value
    open_ = ACYCLIC.route(topo, hosts, ACYCLIC.params(topo, Options(quick=True, max_vlans=4094)))
    assert open_.splits and open_.unspread is not None
    hopeless = ACYCLIC.route(topo, hosts, ACYCLIC.params(topo, Options(quick=True, max_vlans=4094,
                                                                          worth_below=opt * 0.5)))
    assert not hopeless.splits and hopeless.unspread is None


def test_a_plan_at_the_arrival_bound_ends_the_search_with_the_same_choice(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A deadlock-free plan at bounds.py's arrival bound, one VLAN per switch with hosts at
    most, cannot be beaten: the default stops there (the leaf-spine 16x8's `budget`, before
    `acyclic`) and takes the plan the whole search takes."""
    import vlanroute.routing.choose as choose

    topo, hosts = fabrics.leaf_spine(16, 8)
    opt = optimum_bound(topo, hosts).value
    engines = list(ENGINES.values())
    fast = choose_routes(topo, hosts, engines, Options(), True, opt)
    monkeypatch.setattr(choose, "arrival_bound", lambda topo, hosts: 0.0)
    full = choose_routes(topo, hosts, engines, Options(), True, opt)
    assert [c.engine for c in full.tried][-1] == "acyclic" and "acyclic" not in [c.engine for c in fast.tried]
    assert fast.routes.algorithm == full.routes.algorithm
    assert fast.routes.parents == full.routes.parents and fast.routes.splits == full.routes.splits


class _AllowanceSpy:
    """The acyclic engine, recording the `worth_below` the default hands it."""

    def __init__(self) -> None:
        self.seen: list[float | None] = []

    def __getattr__(self, name: str) -> object:
        return getattr(ACYCLIC, name)

    def params(self, topo, options: Options):  # type: ignore[no-untyped-def]
        self.seen.append(options.worth_below)
        return ACYCLIC.params(topo, options)


@pytest.mark.parametrize("flow_control", [True, False])
def test_the_acyclic_search_is_told_what_it_must_get_under(flow_control: bool) -> None:
    """The default takes a plan only below the best so far times its allowance: 1.25 for a
    deadlock-free plan under flow control, 1.0 without flow control (there a deadlock-free
    plan must be lighter outright). The acyclic search is told that bound either way, so it
    skips the steps that cannot get under it: without flow control it once ran them all (22 s
    of CPU on the Desargues graph, for a plan `budget` beat anyway)."""
    topo, hosts = fabrics.random_regular(16, 3, seed=5)      # no engine before acyclic at the optimum
    opt = optimum_bound(topo, hosts).value
    spy = _AllowanceSpy()
    engines = [spy if e is ACYCLIC else e for e in ENGINES.values()]
    choice = choose_routes(topo, hosts, engines, Options(), flow_control, opt)  # type: ignore[arg-type]
    before = [c.peak for c in choice.tried if c.engine != "acyclic"]
    assert len(spy.seen) == 1 and before, (spy.seen, choice.tried)
    allowance = DEADLOCK_FREE_COST if flow_control else 1.0
    assert spy.seen[0] == pytest.approx(min(before) * allowance)
