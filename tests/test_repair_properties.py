"""routing/repair/ on random fabrics with random failures (hypothesis).

Everything is checked against independent computations: trees and components with
networkx, loads and channel dependencies by walking every host pair's path.
"""

from __future__ import annotations

import itertools
import random
from unittest import mock

import networkx as nx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import vlanroute.routing.repair.engine as repair_module
from vlanroute.model.links import link
from vlanroute.routing.repair.engine import repair
from vlanroute.routing.repair.guard import channel_cycle
from vlanroute.routing.repair.loads import LoadBook
from vlanroute.routing.repair.model import Degraded, RepairResult, Tree
from vlanroute.routing.repair.push_order import push_order


def _fabric(seed: int, n: int, extra: int) -> tuple[nx.Graph, dict[tuple[str, str], int], dict[str, int]]:
    rng = random.Random(seed)
    names = [f"s{i}" for i in range(n)]
    g = nx.Graph()
    g.add_nodes_from(names)
    for i in range(1, n):                                  # a random tree keeps it connected
        g.add_edge(names[i], names[rng.randrange(i)])
    for _ in range(extra):
        a, b = rng.sample(names, 2)
        g.add_edge(a, b)
    cables = {link(a, b): rng.choice((1, 1, 2)) for a, b in g.edges}
    hosts = {s: rng.choice((0, 1, 2, 3)) for s in names}
    hosts[names[0]] = hosts[names[0]] or 1
    hosts[names[-1]] = hosts[names[-1]] or 2
    return g, cables, hosts


def _trees(g: nx.Graph, hosts: dict[str, int], seed: int, k: int) -> list[Tree]:
    rng = random.Random(seed + 1)
    names = sorted(g.nodes)
    groups: list[list[str]] = [[] for _ in range(k)]
    for s in names:
        groups[rng.randrange(k)].append(s)
    out = []
    for i, sources in enumerate(g for g in groups if g):
        w = nx.Graph()
        w.add_weighted_edges_from((a, b, rng.random()) for a, b in g.edges)
        mst = nx.minimum_spanning_tree(w)
        out.append(Tree(100 + i, tuple(sources), frozenset(link(a, b) for a, b in mst.edges)))
    return out


def _loads(trees: dict[int, frozenset[tuple[str, str]]], sources: dict[int, tuple[str, ...]],
           fabric: Degraded) -> float:
    """Max load per cable by walking every host pair's path in its source's tree."""
    load: dict[tuple[str, str], float] = {}
    alive_hosts = {s: n for s, n in fabric.hosts.items() if n and s not in fabric.dead_switches}
    for vid, links in trees.items():
        t = nx.Graph()
        t.add_edges_from(links)
        for s in sources[vid]:
            if s not in alive_hosts:
                continue
            for d, m in alive_hosts.items():
                if d == s:
                    continue
                p = nx.shortest_path(t, s, d)
                for a, b in itertools.pairwise(p):
                    load[(a, b)] = load.get((a, b), 0.0) + alive_hosts[s] * m
    return max((x / fabric.cables[link(*arc)] for arc, x in load.items()), default=0.0)


def _deadlock_free(trees: dict[int, frozenset[tuple[str, str]]], sources: dict[int, tuple[str, ...]],
                   fabric: Degraded) -> bool:
    cdg = nx.DiGraph()
    alive_hosts = {s for s, n in fabric.hosts.items() if n and s not in fabric.dead_switches}
    for vid, links in trees.items():
        t = nx.Graph()
        t.add_edges_from(links)
        for s in sources[vid]:
            if s not in alive_hosts:
                continue
            for d in alive_hosts - {s}:
                p = nx.shortest_path(t, s, d)
                for a, b, c in zip(p, p[1:], p[2:]):
                    cdg.add_edge((a, b), (b, c))
    return nx.is_directed_acyclic_graph(cdg)


def _route_dependencies(links: frozenset[tuple[str, str]], sources: tuple[str, ...],
                        fabric: Degraded) -> set[tuple[str, str, str]]:
    """(p, q, r) wherever a host pair's path in the tree crosses q from p to r."""
    alive_hosts = {s for s, n in fabric.hosts.items() if n and s not in fabric.dead_switches}
    t = nx.Graph()
    t.add_edges_from(links)
    out = set()
    for s in sources:
        if s in alive_hosts:
            for d in alive_hosts - {s}:
                p = nx.shortest_path(t, s, d)
                out |= set(zip(p, p[1:], p[2:]))
    return out


def _live_graph(g: nx.Graph, fabric: Degraded) -> nx.Graph:
    live = nx.Graph()
    live.add_nodes_from(s for s in g.nodes if s not in fabric.dead_switches)
    live.add_edges_from(l for l in fabric.cables if fabric.alive(*l))
    return live


def _every_state_loop_free(old: dict[int, frozenset[tuple[str, str]]], new: dict[int, frozenset[tuple[str, str]]],
                           order: list[str]) -> None:
    state = {(v, x, y) for v, links in old.items() for a, b in links for x, y in ((a, b), (b, a))}
    after = {(v, x, y) for v, links in new.items() for a, b in links for x, y in ((a, b), (b, a))}
    for sw in order:
        steps = [(True, m) for m in sorted(after - state) if m[1] == sw] + \
                [(False, m) for m in sorted(state - after) if m[1] == sw]
        for add, m in steps:
            (state.add if add else state.discard)(m)
            for v in old:
                g = nx.Graph()
                g.add_edges_from((x, y) for w, x, y in state if w == v and (w, y, x) in state)
                assert g.number_of_nodes() == 0 or nx.is_forest(g), (v, sw, m)


def _check_dependencies(trees: list[Tree], result: RepairResult, fabric: Degraded) -> None:
    """The dependencies a repair of a deadlock-free plan hands on are every repaired tree's,
    its verdict is networkx's on them, and the cycle reported from them is the one computed
    from the trees themselves."""
    sources = {t.vid: t.sources for t in trees}
    assert set(result.dependencies) == set(result.trees)
    for vid, links in result.trees.items():
        assert result.dependencies[vid] == _route_dependencies(links, sources[vid], fabric), vid
    assert _deadlock_free(result.trees, sources, fabric) == result.deadlock_free
    senders = {t.vid: t.senders(fabric.hosts, fabric.dead_switches) for t in trees}
    cycle = channel_cycle(result.trees, senders, fabric.hosts, result.dependencies)
    assert cycle == channel_cycle(result.trees, senders, fabric.hosts)
    assert (cycle == []) == result.deadlock_free


# (seed, switches, extra cables, VLANs) of deadlock-free plans that one dead cable leaves with
# no deadlock-free repair (found by a scan of seeds; random.Random's sequence is fixed), one
# whose repair stayed deadlock-free only once the guards stopped counting the first repairs
# of the trees still to come, and one that needs a second pass with the tree the first one
# failed on moved first.
NO_FREE_REPAIR = [(580, 8, 6, 3), (1068, 7, 5, 2), (1074, 9, 5, 3), (1376, 7, 5, 3)]
FREE_ONCE_FINAL_ONLY = (273, 5, 7, 4)
FREE_ON_A_SECOND_PASS = (821, 8, 7, 3)


def _one_dead_cable(seed: int, n: int, extra: int, k: int) -> tuple[list[Tree], Degraded]:
    g, cables, hosts = _fabric(seed, n, extra)
    trees = _trees(g, hosts, seed, k)
    assert _deadlock_free({t.vid: t.links for t in trees}, {t.vid: t.sources for t in trees},
                          Degraded(cables, frozenset(), hosts))
    live = dict(cables)
    live[random.Random(seed + 2).choice(sorted(cables))] = 0
    return trees, Degraded(live, frozenset(), hosts)


@pytest.mark.parametrize("seed,n,extra,k", NO_FREE_REPAIR)
def test_a_repair_that_cannot_stay_deadlock_free_says_so(seed: int, n: int, extra: int, k: int) -> None:
    """...and is the repair the single pass gives (the guards counting every tree as it
    stands): the pass that counts only final trees took back every change it made."""
    trees, fabric = _one_dead_cable(seed, n, extra, k)
    result = repair(trees, fabric, keep_deadlock_free=True)
    assert result.changes and not result.unrepairable
    assert not result.deadlock_free and result.deadlock_note
    _check_dependencies(trees, result, fabric)
    with mock.patch.object(repair_module, "KEEPING_TRIES", 0):
        single = repair(trees, fabric, keep_deadlock_free=True)
    assert (single.trees, single.max_load, single.deadlock_free) == (result.trees, result.max_load, False)


def test_the_guards_count_only_final_trees() -> None:
    trees, fabric = _one_dead_cable(*FREE_ONCE_FINAL_ONLY)
    result = repair(trees, fabric, keep_deadlock_free=True)
    assert result.changes and result.deadlock_free
    _check_dependencies(trees, result, fabric)
    assert abs(_loads(result.trees, {t.vid: t.sources for t in trees}, fabric) - result.max_load) < 1e-6
    with mock.patch.object(repair_module, "KEEPING_TRIES", 0):
        assert not repair(trees, fabric, keep_deadlock_free=True).deadlock_free


def test_a_second_pass_puts_the_tree_that_failed_first() -> None:
    trees, fabric = _one_dead_cable(*FREE_ON_A_SECOND_PASS)
    with mock.patch.object(repair_module, "KEEPING_TRIES", 1):
        assert not repair(trees, fabric, keep_deadlock_free=True).deadlock_free
    result = repair(trees, fabric, keep_deadlock_free=True)
    assert result.deadlock_free
    _check_dependencies(trees, result, fabric)
    assert abs(_loads(result.trees, {t.vid: t.sources for t in trees}, fabric) - result.max_load) < 1e-6


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 11), st.integers(-50, 50)),
                                       max_size=30))
def test_undo_restores_the_load_book(seed: int, changes: list[tuple[int, int, int]]) -> None:
    """Whole-number deltas added after `begin` and taken back by `undo`: the same loads,
    the same peak and the same arcs at it, in the same order."""
    g, cables, hosts = _fabric(seed, 6, 4)
    trees = _trees(g, hosts, seed, 4)
    fabric = Degraded(cables, frozenset(), hosts)
    senders = {t.vid: t.senders(hosts) for t in trees}
    book = LoadBook.of({t.vid: t.links for t in trees}, senders, fabric)
    before = ({a: x for a, x in book.total.items() if x}, book.max_load(), book.at_peak(), book.top(5))
    arcs = sorted(book.total)
    book.begin()
    for i, j, d in changes:
        vid = trees[i % len(trees)].vid
        arc = arcs[j % len(arcs)]
        book.add(vid, {arc: float(max(d, -book.total[arc]))})     # loads stay >= 0
    book.undo()
    assert ({a: x for a, x in book.total.items() if x}, book.max_load(), book.at_peak(), book.top(5)) == before


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 9), extra=st.integers(0, 8), k=st.integers(1, 4),
       kind=st.sampled_from(["pair", "switch", "cable", "two-pairs"]), extra_changes=st.integers(0, 2))
# An extra exchange after the guarded choices: the verdict once read dependencies counted
# before it.
@example(seed=65537, n=8, extra=4, k=4, kind="switch", extra_changes=1)
def test_repair_invariants(seed: int, n: int, extra: int, k: int, kind: str, extra_changes: int) -> None:
    g, cables, hosts = _fabric(seed, n, extra)
    trees = _trees(g, hosts, seed, k)
    rng = random.Random(seed + 2)
    dead_switches: frozenset[str] = frozenset()
    live = dict(cables)
    edges = sorted(cables)
    if kind == "pair":
        live[rng.choice(edges)] = 0
    elif kind == "two-pairs":
        for e in rng.sample(edges, min(2, len(edges))):
            live[e] = 0
    elif kind == "cable":
        e = rng.choice(edges)
        live[e] -= 1
    else:
        dead_switches = frozenset({rng.choice(sorted(g.nodes))})
    fabric = Degraded(live, dead_switches, {s: h for s, h in hosts.items() if s not in dead_switches})
    was_free = _deadlock_free({t.vid: t.links for t in trees}, {t.vid: t.sources for t in trees},
                              Degraded(cables, frozenset(), hosts))
    result = repair(trees, fabric, keep_deadlock_free=was_free, extra_changes=extra_changes)
    wanted = {s for s, h in hosts.items() if h and s not in dead_switches}
    live_g = _live_graph(g, fabric)
    if result.unrepairable:
        # Only when the live fabric itself cuts the hosts apart.
        assert not any(wanted <= c for c in nx.connected_components(live_g))
        return
    sources = {t.vid: t.sources for t in trees}
    for t in trees:
        new = result.trees[t.vid]
        nodes = {s for l in t.links for s in l}
        broken = any(not fabric.alive(*l) for l in t.links) or bool(nodes & dead_switches)
        if not broken and not extra_changes:
            assert new == t.links, "a surviving tree changed"
        # A tree of live links over every live host switch: every host pair, exactly one path.
        tg = nx.Graph()
        tg.add_nodes_from(wanted)
        tg.add_edges_from(new)
        assert nx.is_tree(tg), f"VLAN {t.vid} is no tree"
        assert all(fabric.alive(*l) for l in new)
        if broken and not extra_changes:
            kept = {l for l in t.links if fabric.alive(*l)}
            parts = nx.Graph()
            parts.add_nodes_from(wanted)
            parts.add_edges_from(kept)
            with_hosts = [c for c in nx.connected_components(parts) if c & wanted]
            added = new - t.links
            # Never fewer than parts - 1; exactly that when each part has a live link to the rest.
            assert len(added) >= len(with_hosts) - 1
            if kind == "pair" and len(with_hosts) == 2:
                a, b = with_hosts
                if any(live_g.has_edge(x, y) for x in a for y in b):
                    assert len(added) == 1 and t.links - new <= {l for l in t.links if not fabric.alive(*l)}
    assert abs(_loads(result.trees, sources, fabric) - result.max_load) < 1e-6
    assert _deadlock_free(result.trees, sources, fabric) == result.deadlock_free
    if was_free:
        _check_dependencies(trees, result, fabric)
    old = {t.vid: t.links for t in trees}
    order, ok = push_order(old, result.trees, sorted(s for s in g.nodes if s not in dead_switches))
    if ok:
        _every_state_loop_free(old, result.trees, order)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), dims=st.sampled_from([(3, 3), (4, 2), (4, 4), (3, 4)]))
def test_torus_single_pair_repairs_with_one_link_each(seed: int, dims: tuple[int, int]) -> None:
    g = nx.grid_2d_graph(*dims, periodic=True)
    g = nx.relabel_nodes(g, {n: f"s{n[0]}_{n[1]}" for n in g.nodes})
    cables = {link(a, b): 2 for a, b in g.edges}
    hosts = {s: 3 for s in g.nodes}
    trees = _trees(g, hosts, seed, 4)
    e = random.Random(seed).choice(sorted(cables))
    fabric = Degraded({**cables, e: 0}, frozenset(), hosts)
    result = repair(trees, fabric, keep_deadlock_free=False)
    for t in trees:
        if e in t.links:
            assert result.changes[t.vid].removed == [e] and len(result.changes[t.vid].added) == 1
        else:
            assert t.vid not in result.changes
    order, ok = push_order({t.vid: t.links for t in trees}, result.trees, sorted(g.nodes))
    assert ok
    _every_state_loop_free({t.vid: t.links for t in trees}, result.trees, order)
