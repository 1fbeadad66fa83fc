"""The compiled pair failures (routing/whatif/pairs_kernel.py) against the interpreted ones
(routing/whatif/pairs.py pair_failure, itself checked against `repair` in
test_whatif_reference.py) on random fabrics larger than the reference can afford (hypothesis):
every dead pair's max load per cable after the repair, or None where pair_failure gives
None (a tree that misses a host switch, a cut with no live link across), must be equal.
The trees carry host shares, the cables run in parallel, some switches have no hosts, and
the kernel tracks as few as one most loaded arc, so that candidates take the scan of
every arc. The test extras install numba, which pairs_kernel imports: without it this
file fails to load rather than pass."""

from __future__ import annotations

import random

import networkx as nx
from fabrics import random_graph, random_hosts_and_groups, random_spanning_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.model.links import link
from vlanroute.routing.repair.loads import LoadBook
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.whatif import pairs_kernel
from vlanroute.routing.whatif.pairs import Book, Crossing, RootedTree, pair_failure
from vlanroute.routing.whatif.switches import SwitchIndex


def _case(seed: int, n: int, k: int, parallel: bool, empty: bool, shares: bool
          ) -> tuple[list[Tree], dict[tuple[str, str], int], dict[str, int], list[str]]:
    rng = random.Random(seed)
    g = random_graph(rng, n)
    names = sorted(g.nodes)
    cables, hosts, groups = random_hosts_and_groups(rng, g, parallel, (0, 1, 3) if empty else (1, 2, 5), k)
    trees = []
    for vid, group in enumerate(groups, start=101):
        part = tuple((s, rng.randrange(0, hosts[s] + 1)) for s in group if shares and rng.random() < 0.3)
        if rng.random() < 0.1:           # a tree that misses switches: pair_failure's None
            sub = g.subgraph(names[: max(2, n // 2)])
            links = random_spanning_tree(sub, rng) if nx.is_connected(sub) else random_spanning_tree(g, rng)
        else:
            links = random_spanning_tree(g, rng)
        trees.append(Tree(vid, tuple(group), links, part))
    return trees, cables, hosts, names


def _both(trees: list[Tree], cables: dict[tuple[str, str], int], hosts: dict[str, int], names: list[str],
          tracked: int = pairs_kernel.TOP) -> list[tuple[object, object]]:
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees},
                       Degraded(cables, frozenset(), hosts))
    rooted = {t.vid: RootedTree(t, hosts) for t in trees if t.links}
    index = SwitchIndex.of(trees, rooted, cables, base, hosts, names)
    wanted = Degraded(cables, frozenset(), hosts).host_switches()
    crossing = Crossing(index.adj, wanted)
    compiled = pairs_kernel.Rooted(rooted, index.arcs, crossing.links, wanted, index.base_total, tracked)
    assert compiled.usable
    out = []
    for pair in sorted(cables):
        broken = [t.vid for t in trees if pair in t.links]
        ncab = list(index.ncab)
        ncab[index.arcs[pair]] = ncab[index.arcs[pair[::-1]]] = 0
        want = pair_failure(rooted, broken, pair, index.adj, wanted,
                            Book(index.arcs, list(index.base_total), ncab), crossing)
        got = compiled.pair_failure(broken, pair, index.base_total, ncab, index.arcs)
        out.append((got, want))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40), st.integers(1, 12), st.booleans(), st.booleans(),
       st.booleans(), st.sampled_from([pairs_kernel.TOP, pairs_kernel.TOP, 1, 3]))
def test_the_compiled_pair_failures_equal_pair_failure(seed: int, n: int, k: int, parallel: bool, empty: bool,
                                                       shares: bool, tracked: int) -> None:
    # tracked 1 or 3: the two dead arcs fill the masks, so most candidates take the scan
    trees, cables, hosts, names = _case(seed, n, k, parallel, empty, shares)
    for got, want in _both(trees, cables, hosts, names, tracked):
        assert got == want


def test_a_torus_planned_by_trees_of_every_switch() -> None:
    # 8x8 torus, a tree per switch: 64 trees of 63 links, 128 pairs of 32 broken trees each,
    # more arcs than the kernel tracks, the common case of the what-if on a large torus
    rng = random.Random(7)
    g = nx.relabel_nodes(nx.grid_2d_graph(8, 8, periodic=True), lambda v: f"s{v[0]}{v[1]}")
    names = sorted(g.nodes)
    cables = {link(a, b): 1 for a, b in g.edges}
    hosts = dict.fromkeys(names, 4)
    trees = [Tree(100 + i, (s,), random_spanning_tree(g, rng)) for i, s in enumerate(names)]
    pairs = _both(trees, cables, hosts, names)
    assert all(want is not None for _, want in pairs)
    assert [got for got, _ in pairs] == [want for _, want in pairs]


def test_what_if_compiles_the_pairs_only_for_large_plans_and_not_when_switched_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from vlanroute.routing.whatif import failures
    rng = random.Random(3)
    g = random_graph(rng, 12)
    trees = [Tree(101 + i, (s,), random_spanning_tree(g, rng)) for i, s in enumerate(sorted(g.nodes))]
    links = sum(len(t.links) for t in trees)                 # 12 trees of 11 links
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(failures, "KERNEL_FROM", links + 1)
    assert not failures.use_kernel(trees)
    monkeypatch.setattr(failures, "KERNEL_FROM", links)
    assert failures.use_kernel(trees)
    monkeypatch.setenv("VLANROUTE_NO_JIT", "1")
    assert not failures.use_kernel(trees)


def test_the_pair_doubles_share_the_single_failures_arrays(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # whatif builds the kernels' arrays once (SwitchIndex.compiled) for the single failures,
    # and the pair+pair doubles take the same object, not a second build
    from pathlib import Path

    from vlanroute import api
    from vlanroute.bundle.guarantees import Fabric
    from vlanroute.routing.whatif import failures
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(failures, "KERNEL_FROM", 0)
    inventory = Path(__file__).resolve().parent.parent / "inventories" / "seed-torus.yaml"
    fab = Fabric.of(api.plan(inventory, ("topology.dims=[5,5]", "routing.algorithm=shortest")).to_document())
    assert not fab.deadlock_free
    index = fab.switch_index()
    failures.what_if(fab.trees, fab.cables, fab.hosts, fab.switches, fab.deadlock_free, fab.intact_loads(), index)
    shared = index.compiled()
    assert shared is not None and index.kernel is not None
    priced = 0
    for f in fab.doubles(200, 0):
        v = fab.classify(f)
        if v.kind == "pair+pair" and v.heals:
            fab.price(v)
            priced += 1
    assert priced and fab._dead_pairs is not None and fab._dead_pairs.compiled is shared


def test_a_broken_numba_costs_the_compiled_path_with_one_warning(monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    import importlib.util
    import sys

    from vlanroute.routing import jit
    from vlanroute.routing.whatif import failures
    rng = random.Random(3)
    g = random_graph(rng, 8)
    trees = [Tree(101 + i, (s,), random_spanning_tree(g, rng)) for i, s in enumerate(sorted(g.nodes))]
    monkeypatch.delenv("VLANROUTE_NO_JIT", raising=False)
    monkeypatch.setattr(failures, "KERNEL_FROM", 0)
    found = importlib.util.find_spec("numba")
    monkeypatch.setattr(jit.importlib.util, "find_spec", lambda name: found)        # "installed"
    monkeypatch.setitem(sys.modules, "numba", None)                                  # import fails
    jit.numba_works.cache_clear()
    try:
        assert not failures.use_kernel(trees) and not failures.use_kernel(trees)
    finally:
        jit.numba_works.cache_clear()
    warned = [r.getMessage() for r in caplog.records if r.name == jit.__name__]
    assert len(warned) == 1 and "numba is installed but does not import" in warned[0]
    assert "VLANROUTE_NO_JIT=1" in warned[0] and "vlanroute[fast]" in warned[0]
