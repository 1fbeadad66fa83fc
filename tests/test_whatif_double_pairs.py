"""Several dead neighbour pairs at once, fast (routing/whatif/doubles_pairs.py: whatif's
pair+pair doubles, issue 40), against `repair` itself on random small fabrics and plans
(hypothesis): the same max load per cable and load on every arc; where the preorder's shortcut (`DeadPairs._join`)
answers, the links `repair_tree` adds, and the joined tree's loads (`_Joined.changed`, only
on the links whose sides changed) those of `tree_arc_loads`; with the trees that lose one
link mended interpreted and compiled (routing/whatif/pairs_kernel.py), and the trees that lose
more exchanged interpreted and compiled (routing/whatif/switches_kernel.py Exchange)."""

from __future__ import annotations

import random

from fabrics import random_graph, random_spanning_tree
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vlanroute.bundle.failures import Failures
from vlanroute.bundle.guarantees import Fabric, Policy
from vlanroute.model.links import link
from vlanroute.routing.repair.engine import repair, repair_tree
from vlanroute.routing.repair.loads import LoadBook
from vlanroute.routing.repair.model import Degraded, Tree, tree_arc_loads
from vlanroute.routing.whatif.doubles_pairs import DeadPairs
from vlanroute.routing.whatif.pairs import RootedTree


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 100_000), st.integers(5, 12), st.integers(1, 6), st.integers(1, 3), st.booleans(),
       st.booleans())
@example(15, 10, 3, 3, False, True)     # a tree joined by repair_tree changes the loads before a compiled exchange
@example(25, 10, 3, 3, False, True)
def test_dead_pairs_give_repairs_max_load(seed: int, n: int, k: int, dead: int, parallel: bool, kernel: bool) -> None:
    # kernel: the trees with one dead link mended compiled (routing/whatif/pairs_kernel.py)
    rng = random.Random(seed)
    g = random_graph(seed, n)     # a ring with random chords
    cables = {link(a, b): rng.choice((1, 2)) if parallel else 1 for a, b in g.edges}
    hosts = {s: rng.choice((0, 1, 2, 4)) for s in g.nodes}
    hosts[min(hosts)] = max(hosts[min(hosts)], 1)
    names = sorted(g.nodes)
    groups: list[list[str]] = [[] for _ in range(k)]
    for s in names:
        groups[rng.randrange(k)].append(s)
    trees = []
    for vid, group in enumerate(groups, start=101):
        shares = tuple((s, rng.randrange(0, hosts[s] + 1)) for s in group if rng.random() < 0.2)
        trees.append(Tree(vid, tuple(group), random_spanning_tree(g, rng), shares))
    intact = Degraded(cables, frozenset(), hosts)
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees}, intact)
    index = DeadPairs(trees, cables, hosts, {t.vid: RootedTree(t, hosts) for t in trees}, base, kernel=kernel)
    assert index.usable
    assert (index.compiled is not None) == kernel
    # the shortcut of repair_tree, checked on every tree it answers for
    joins = []
    original = index._join

    def join(vid: int, dead_links: list, dead_index: list, hosted: dict) -> list | None:  # type: ignore[type-arg]
        got = original(vid, dead_links, dead_index, hosted)
        joins.append((vid, dead_links, got))
        return got
    index._join = join  # type: ignore[method-assign]
    pairs = sorted(cables)
    for _ in range(6):
        failed = rng.sample(pairs, min(dead, len(pairs)))
        fabric = Degraded({**cables, **dict.fromkeys(failed, 0)}, frozenset(), hosts)
        want = repair(trees, fabric, keep_deadlock_free=False, check_deadlock=False, base=base)
        joins.clear()
        got = index.max_load(fabric, failed)
        if want.unrepairable:
            assert got is None
            continue
        assert got is not None
        assert got == want.max_load
        after = LoadBook.of(want.trees, {t.vid: t.senders(hosts) for t in trees}, fabric).total
        assert {a: x for a, x in index.last.items() if x} == {a: x for a, x in after.items() if x}
        for vid, _, jn in joins:
            if jn is None:
                continue
            tree = next(t for t in trees if t.vid == vid)
            links, why = repair_tree(tree, fabric, fabric.adjacency())
            assert not why and sorted(links - tree.links) == sorted(jn.added)
            senders = tree.senders(hosts)
            loads = {a: x for a, x in base.loads(vid).items() if link(*a) not in jn.removed}
            s_all, h_all = sum(senders.values()), sum(hosts.values())
            for v, up, bs, bh in jn.changed():
                loads[(v, up)] = float(bs * (h_all - bh))
                loads[(up, v)] = float((s_all - bs) * bh)
            assert loads == tree_arc_loads(links, senders, hosts)


def test_fabric_price_takes_the_fast_path_for_dead_pairs_alone_and_gives_repairs_figures() -> None:
    """The glue (bundle/guarantees.py Fabric.price): two dead pairs in a plan that is not
    deadlock-free go through DeadPairs (a dead switch does not) with repair's max load."""
    rng = random.Random(4)
    g = random_graph(4, 9)
    hosts = {s: 2 for s in g.nodes}
    trees = [Tree(101 + i, (s,), random_spanning_tree(g, rng)) for i, s in enumerate(sorted(g.nodes))]

    def no_document():  # type: ignore[no-untyped-def]
        raise AssertionError("no backups: the failover's choice needs no document")
    fab = Fabric(sorted(g.nodes), [link(a, b) for a, b in g.edges],
                 [(f"h{i}", s) for i, s in enumerate(sorted(g.nodes) * 2)], trees, False,
                 Policy("auto", frozenset({"pair", "switch"}), ("repair",)), False, no_document)
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees},
                       Degraded(fab.cables, frozenset(), hosts))
    pairs = fab.pairs
    priced = 0
    for a, b in [(0, 1), (0, 5), (2, 7), (3, 4), (1, len(pairs) - 1)]:
        failures = Failures(pairs=(pairs[a], pairs[b]))
        v = fab.classify(failures)
        if not v.heals:
            continue
        fab.price(v)
        want = repair(trees, fab.degraded(failures), keep_deadlock_free=False, check_deadlock=False, base=base)
        assert fab._dead_pairs is not None and fab._dead_pairs.last     # the fast path ran
        assert v.max_link_load == want.max_load and v.deadlock_free is None
        priced += 1
    assert priced >= 3
    fab._dead_pairs.last = {}
    v = fab.price(fab.classify(Failures(pairs=(pairs[0],), switches=(sorted(g.nodes)[5],))))
    assert not fab._dead_pairs.last                                      # a dead switch: repair's own
