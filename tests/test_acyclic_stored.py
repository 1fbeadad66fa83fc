"""Stored plans of tori (routing/acyclic/stored.py): the 8x8 torus's plan, written by
`python bench/torus_order_walk.py --save`, is checked here from its routes with the project's
own acyclicity test (routing/depgraph.py) and networkx's, and its load against the exact LP;
the acyclic engine and the default (802.3x flow control on) use it; any torus's trees
survive the encoding, and a file whose trees are not a deadlock-free plan is refused."""

from __future__ import annotations

import json
from importlib.resources import files

import fabrics
import pytest
from fabrics import channel_dependencies_acyclic, max_load
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic import spans

from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.engine import FULL, QUICK
from vlanroute.routing.acyclic.stored import acyclic_dependencies, decode, encode, stored_plan
from vlanroute.routing.choose import choose_routes
from vlanroute.routing.engine import Options
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.registry import ENGINES
from vlanroute.routing.turns import turn_routes

ACYCLIC = ENGINES["acyclic"]


def saved(name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(files("vlanroute.routing.acyclic").joinpath("plans", name).read_text())
    return data


def checked_stored_plan(topo: Topology, hosts: dict[str, int], k: int) -> tuple[str, float]:
    """The stored plan of the k x k torus `topo`: its file name and its load over the LP
    optimum, after checking every tree spans and the channel dependencies are acyclic
    (ours and networkx's)."""
    got = stored_plan(topo, hosts)
    assert got is not None and got[0] == f"torus-{k}x{k}.json"
    trees = got[1]
    assert all(spans(topo, s, trees[s]) for s in topo.switches)
    assert acyclic_dependencies(topo, trees) and channel_dependencies_acyclic(trees, hosts)
    return got[0], max_load(topo, hosts, trees) / optimum_bound(topo, hosts).value


@pytest.mark.parametrize("k", [8, 6])
@pytest.mark.parametrize("per", [4, 1, 3])
def test_the_stored_plans_are_deadlock_free_within_1_25_of_the_optimum(k: int, per: int) -> None:
    """Issue 40's target without virtual lanes on the 8x8 torus: what OpenSM's torus-2QoS
    needs two lanes for. With equal hosts every load and the optimum scale alike, so the
    ratio holds for any count."""
    topo, hosts = fabrics.torus([k, k], per)
    name, ratio = checked_stored_plan(topo, hosts, k)
    assert ratio <= 1.25 + 1e-9
    data = saved(name)
    assert ratio == pytest.approx(data["load_over_optimum"])
    assert str(data["generated_by"]).startswith(f"python bench/torus_order_walk.py {k} ")


def test_unequal_hosts_or_other_shapes_get_no_stored_plan() -> None:
    topo, hosts = fabrics.torus([8, 8])
    assert stored_plan(topo, {**hosts, "sw5": 2}) is None
    assert stored_plan(topo, {**hosts, "sw5": 0}) is None
    assert stored_plan(*fabrics.torus([5, 5])) is None
    assert stored_plan(*fabrics.torus([8, 6])) is None
    assert stored_plan(*fabrics.degraded_torus(8, 1, 3)) is None      # a custom fabric


def test_the_engine_takes_the_stored_plan() -> None:
    topo, hosts = fabrics.torus([8, 8])
    stored = stored_plan(topo, hosts)
    assert stored is not None
    routes = ACYCLIC.route(topo, hosts, FULL)
    assert routes.parents == stored[1] and not routes.splits
    record = routes.choices.record()
    assert record["stored"] == "torus-8x8" and record["root"] == "stored" and record["escaped"] == 0


@pytest.mark.slow
def test_the_default_takes_it_under_flow_control() -> None:
    """dor reaches the optimum but may deadlock under 802.3x PAUSE; the stored plan is within
    the 1.25 the default accepts for deadlock freedom (routing/choose.py), so it is chosen,
    with the hosts of some switches on several trees where that lowers the load."""
    topo, hosts = fabrics.torus([8, 8])
    opt = optimum_bound(topo, hosts).value
    choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt)
    assert choice.routes.algorithm == "acyclic"
    assert channel_dependencies_acyclic(choice.routes.parents, hosts, choice.routes.splits)
    assert max_load(topo, hosts, choice.routes.parents, choice.routes.splits) <= 1.25 * opt * (1 + 1e-9)
    assert QUICK.spread


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=3, max_value=7), st.integers(min_value=3, max_value=7))
def test_any_torus_plan_survives_the_encoding(a: int, b: int) -> None:
    topo = Topology.from_generator("torus", [a, b])
    hosts = {s: 2 for s in topo.switches}
    parents = turn_routes(topo, hosts).parents
    rows = encode(topo, parents)
    assert decode(topo, rows) == parents


def test_a_plan_that_may_deadlock_is_refused() -> None:
    # Shortest-path trees of a torus turn every way: their dependencies have cycles.
    topo, hosts = fabrics.torus([5, 5])
    dor = ENGINES["dor"].route(topo, hosts, ENGINES["dor"].params(topo, Options()))
    assert not channel_dependencies_acyclic(dor.parents, hosts)
    assert decode(topo, encode(topo, dor.parents)) is None
    # ...and so is a row whose parents do not lead back to its source: (0, 1) and (0, 2)
    # each other's parent ('b': one step up the second dimension, 'B': one down).
    good = encode(topo, turn_routes(topo, hosts).parents)
    assert decode(topo, good) is not None
    src, steps = good[0]
    assert src == [0, 0] and isinstance(steps, str)
    looped = steps[0] + "bB" + steps[3:]
    assert decode(topo, [[src, looped], *good[1:]]) is None


@settings(max_examples=6, deadline=None)
@given(k=st.sampled_from([6, 8]), seed=st.integers(0, 10_000), per=st.integers(1, 4))
def test_a_torus_listed_as_custom_cables_gets_its_stored_plan(k: int, seed: int, per: int) -> None:
    """An 8x8 or 6x6 torus written as `kind: custom` (shuffled names, cables listed) is
    recognised: its trees are the stored plan's under some isomorphism, so deadlock-free
    and at the stored ratio of the LP optimum."""
    import random

    import networkx as nx
    grid = nx.grid_2d_graph(k, k, periodic=True)
    names = [f"n{i}" for i in range(k * k)]
    random.Random(seed).shuffle(names)
    name = dict(zip(sorted(grid), names))
    topo, hosts = fabrics.custom([(name[a], name[b]) for a, b in grid.edges], None, per)
    assert topo.kind == "custom"
    name, ratio = checked_stored_plan(topo, hosts, k)
    assert ratio == pytest.approx(saved(name)["load_over_optimum"])


def test_custom_fabrics_that_are_no_stored_torus_get_no_stored_plan() -> None:
    assert stored_plan(*fabrics.random_regular(64, 4, seed=3)) is None
    assert stored_plan(*fabrics.random_regular(36, 4, seed=1)) is None
    assert stored_plan(*fabrics.degraded_torus(8, 1, seed=0)) is None
    # An 8x8 torus with one cable moved: as many cables, every switch of degree 4 but not a torus.
    import networkx as nx
    g = nx.grid_2d_graph(8, 8, periodic=True)
    g.remove_edges_from([((0, 0), (0, 1)), ((4, 4), (4, 5))])
    g.add_edges_from([((0, 0), (4, 4)), ((0, 1), (4, 5))])
    name = {v: f"sw{v[0] * 8 + v[1]}" for v in g}
    assert nx.is_connected(g) and all(d == 4 for _, d in g.degree)
    assert stored_plan(*fabrics.custom([(name[a], name[b]) for a, b in g.edges])) is None
