"""routing/whatif/failures.py (its fast paths: routing/whatif/pairs.py) against a plain reference on
random small fabrics (hypothesis): for every single pair and switch failure, apply the
failure, run `repair` from scratch (no intact loads handed in, no index of the broken
trees), count the cut host pairs by a search in each tree with networkx, and recompute
the repaired trees' max load per cable by walking every host pair's path. The what-if
rows must equal these reference rows exactly."""

from __future__ import annotations

import random

import networkx as nx
from fabrics import random_hosts_and_groups, random_spanning_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.model.links import link
from vlanroute.routing.repair.engine import repair
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.whatif.failures import FailureRow, what_if


def _graph(kind: str, seed: int, size: int) -> nx.Graph:
    rng = random.Random(seed)
    if kind == "torus":
        g = nx.grid_2d_graph(size, 2 + seed % 3, periodic=True)
    elif kind == "regular":
        n = 2 * size + 2
        g = nx.random_regular_graph(3, n, seed=seed)
        while not nx.is_connected(g):
            g = nx.random_regular_graph(3, n, seed=rng.randrange(1 << 30))
    else:
        g = nx.gnp_random_graph(size + 3, 0.4, seed=seed)
        names = list(g.nodes)
        for i in range(1, len(names)):                 # keep it connected
            g.add_edge(names[i], names[rng.randrange(i)])
    return nx.relabel_nodes(g, {v: f"s{i:02d}" for i, v in enumerate(sorted(g.nodes, key=str))})


def _case(kind: str, seed: int, size: int, parallel: bool, k: int, empty: bool
          ) -> tuple[list[Tree], dict[tuple[str, str], int], dict[str, int], list[str]]:
    rng = random.Random(seed * 7 + size)
    g = _graph(kind, seed, size)
    names = sorted(g.nodes)
    cables, hosts, groups = random_hosts_and_groups(rng, g, parallel, (0, 1, 2, 4) if empty else (1, 2, 4), k)
    trees = []
    for vid, group in enumerate(groups, start=101):
        trees.append(Tree(vid, tuple(group), random_spanning_tree(g, rng)))
    return trees, cables, hosts, names


def _cut(trees: list[Tree], hosts: dict[str, int], dead_pair: tuple[str, str] | None, dead: str | None) -> int:
    cut = 0
    for t in trees:
        g = nx.Graph()
        g.add_nodes_from(hosts)
        g.add_edges_from(l for l in t.links if l != dead_pair and dead not in l)
        for s in t.sources:
            for d, n in hosts.items():
                if s not in (d, dead) and d != dead and not nx.has_path(g, s, d):
                    cut += hosts[s] * n
    return cut


def _max_load(trees: dict[int, frozenset[tuple[str, str]]], sources: dict[int, tuple[str, ...]],
              fabric: Degraded) -> float:
    """Every ordered host pair's path in its source's tree, one unit per host pair."""
    load: dict[tuple[str, str], float] = {}
    for vid, links in trees.items():
        g = nx.Graph()
        g.add_edges_from(links)
        for s in sources[vid]:
            if s in fabric.dead_switches or not fabric.hosts.get(s):
                continue
            for d, n in fabric.hosts.items():
                if d == s or not n or d in fabric.dead_switches or s not in g or d not in g:
                    continue
                path = nx.shortest_path(g, s, d)
                for a, b in zip(path, path[1:]):
                    load[(a, b)] = load.get((a, b), 0.0) + fabric.hosts[s] * n
    out = 0.0
    for (a, b), x in load.items():
        n = fabric.cables.get(link(a, b), 0) if fabric.alive(a, b) else 0
        out = max(out, x / n if n else float("inf"))
    return out


def _reference(trees: list[Tree], cables: dict[tuple[str, str], int], hosts: dict[str, int],
               names: list[str], deadlock_free: bool) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    sources = {t.vid: t.sources for t in trees}
    position = {s: i for i, s in enumerate(names)}
    for pair in sorted(cables, key=lambda l: (position[l[0]], position[l[1]])):
        fabric = Degraded({**cables, pair: 0}, frozenset(), hosts)
        r = repair(trees, fabric, keep_deadlock_free=deadlock_free)
        load = None if r.unrepairable else r.max_load
        if load is not None:
            assert load == _max_load(r.trees, sources, fabric)
        rows.append(("pair", f"{pair[0]}:{pair[1]}", _cut(trees, hosts, pair, None), 0,
                     sum(1 for t in trees if pair in t.links), r.links_added, len(r.unrepairable), load))
    for w in names:
        alive = {s: n for s, n in hosts.items() if s != w}
        fabric = Degraded(cables, frozenset({w}), alive)
        r = repair(trees, fabric, keep_deadlock_free=deadlock_free)
        load = None if r.unrepairable else r.max_load
        if load is not None:
            assert load == _max_load(r.trees, sources, fabric)
        rows.append(("switch", w, _cut(trees, hosts, None, w), hosts[w],
                     sum(1 for t in trees if w in t.switches or w in t.sources),
                     r.links_added, len(r.unrepairable), load))
    return rows


def _fast(rows: list[FailureRow]) -> list[tuple[object, ...]]:
    return [(r.kind, r.name, r.pairs_cut, r.hosts_lost, r.trees, r.links_added, r.unrepairable, r.max_load)
            for r in rows]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["torus", "regular", "random"]), st.integers(0, 10_000), st.integers(3, 5),
       st.booleans(), st.integers(1, 4), st.booleans(), st.sampled_from([False, False, False, True]))
def test_whatif_rows_equal_a_repair_from_scratch(kind: str, seed: int, size: int, parallel: bool, k: int,
                                                 empty: bool, deadlock_free: bool) -> None:
    trees, cables, hosts, names = _case(kind, seed, size, parallel, k, empty)
    want = _reference(trees, cables, hosts, names, deadlock_free)
    # the pair failures interpreted (pairs.pair_failure) and compiled (pairs_kernel), which
    # what_if picks by the plan's size: each must give the reference's rows
    assert _fast(what_if(trees, cables, hosts, names, deadlock_free, kernel=False)) == want
    assert _fast(what_if(trees, cables, hosts, names, deadlock_free, kernel=True)) == want
