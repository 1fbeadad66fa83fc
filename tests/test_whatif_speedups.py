"""The shortcuts that make `vlanroute whatif` fast (issue 40), each against a plain reference
on random small fabrics (hypothesis):

- Fabric.pairs_cut (bundle/guarantees.py) from subtree sums, against a search with networkx
  from every source to every live host switch, for every single and double failure;
- improve_tree (routing/repair/engine.py) prices only the candidates that change every arc at the
  max load: its trees and loads equal those of a plain loop that prices every candidate;
- a dead switch's exchanges of the links that join its trees again (routing/whatif/switches.py
  Cuts.improve, from the intact rooted tree): the trees and loads of improve_tree;
- a dead switch's trees where it has one child (routing/whatif/switches.py
  SwitchIndex._one_kid: the join and the load corrections along four chains in closed
  form) and the links between large parts found with numpy (SwitchIndex._across): the
  loads, joins and candidates of the general walk;
- a dead switch's loads per cable kept through the exchanges (routing/whatif/switches.py
  SwitchIndex.switch_failure, only the changed arcs recomputed): the max load and the arcs at
  it after every exchange of a recount from the book;
- the what-if's book of loads (routing/whatif/pairs.py Book) keeps its most loaded arcs as a
  prefix of the sorted order while loads change: after every change, the largest load off
  any set of arcs equals the maximum over the others; its changes in a batch (add_all,
  inline) leave the book as one at a time (add).
"""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
from fabrics import random_spanning_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.bundle.failures import Failures
from vlanroute.bundle.guarantees import Fabric, Policy
from vlanroute.model.links import Link, link
from vlanroute.routing.repair.engine import improve_tree
from vlanroute.routing.repair.loads import Exchanges, LoadBook, trial_peak
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.whatif import pairs
from vlanroute.routing.whatif.pairs import TOP, Book, Crossing, RootedTree
from vlanroute.routing.whatif.pairs_kernel import Rooted
from vlanroute.routing.whatif.switches import SwitchIndex
from vlanroute.routing.whatif.switches_kernel import OneKid


def _graph(seed: int, n: int) -> nx.Graph:
    rng = random.Random(seed)
    g = nx.cycle_graph(n)
    for _ in range(rng.randrange(0, n + 1)):
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            g.add_edge(a, b)
    return nx.relabel_nodes(g, {i: f"s{i:02d}" for i in range(n)})


def _trees(g: nx.Graph, hosts: dict[str, int], rng: random.Random, k: int, shares: bool) -> list[Tree]:
    names = sorted(g.nodes)
    groups: list[list[str]] = [[] for _ in range(k)]
    for s in names:
        groups[rng.randrange(k)].append(s)
    out = []
    for vid, group in enumerate(groups, start=101):
        part = tuple((s, rng.randrange(0, hosts[s] + 1)) for s in group if shares and rng.random() < 0.3)
        links = frozenset() if rng.random() < 0.1 else random_spanning_tree(g, rng)
        out.append(Tree(vid, tuple(group), links, part))
    return out


def _reference_cut(trees: list[Tree], hosts: dict[str, int], f: Failures) -> int:
    dead = set(f.switches)
    dead_pairs = {link(*p) for p in f.pairs}
    live = {s: n for s, n in hosts.items() if s not in dead}
    cut = 0
    for t in trees:
        g = nx.Graph()
        g.add_nodes_from(live)
        g.add_edges_from(l for l in t.links if l not in dead_pairs and not set(l) & dead)
        for s, n in t.senders(live, dead).items():
            for d, m in live.items():
                if d != s and not nx.has_path(g, s, d):
                    cut += n * m
    return cut


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 9), st.integers(1, 4), st.booleans(), st.booleans())
def test_pairs_cut_equals_a_search_from_every_source(seed: int, n: int, k: int, empty: bool, shares: bool) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    switches = sorted(g.nodes)
    hosts = {s: rng.choice((0, 1, 3)) if empty else rng.choice((1, 2)) for s in switches}
    trees = _trees(g, hosts, rng, k, shares)
    host_list = [(f"h{s}-{i}", s) for s in switches for i in range(hosts[s])]
    fab = Fabric(switches, list(g.edges), host_list, trees, False, Policy("propose", frozenset(), ("repair",)),
                 False, lambda: None)  # type: ignore[arg-type,return-value]
    for f in [*fab.singles(), *fab.doubles(60, seed)]:
        assert fab.pairs_cut(f) == _reference_cut(trees, hosts, f), f


def _plain_improve(vid: int, links: frozenset[Link], movable: list[Link], fabric: Degraded,
                   adj: dict[str, list[str]], book: LoadBook) -> frozenset[Link]:
    """improve_tree without its guard, pricing every candidate (its code before the pruning)."""
    current = links
    for cut in sorted(movable):
        if cut not in current:
            continue
        ex = Exchanges(current, cut, book.senders[vid], fabric.hosts)
        tried = []
        for c in ex.candidates(adj):
            d = ex.delta(c) if c != cut else {}
            peak, local = trial_peak(book, d)
            tried.append((round(peak, 9), round(local, 9), c != cut, c, d))
        chosen = min(tried, key=lambda t: t[:4])
        if chosen[3] != cut:
            current = current - {cut} | {chosen[3]}
            book.add(vid, chosen[4])
    return current


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 10), st.integers(2, 5), st.booleans())
def test_improve_tree_chooses_as_if_it_priced_every_candidate(seed: int, n: int, k: int, parallel: bool) -> None:
    rng = random.Random(seed)
    g = _graph(seed, n)
    cables = {link(a, b): rng.choice((1, 2)) if parallel else 1 for a, b in g.edges}
    hosts = {s: rng.choice((1, 2, 4)) for s in g.nodes}
    trees = _trees(g, hosts, rng, k, shares=False)
    fabric = Degraded(cables, frozenset(), hosts)
    adj = fabric.adjacency()
    senders = {t.vid: t.senders(hosts) for t in trees}
    for t in trees:
        if len(t.links) < 2:
            continue
        movable = rng.sample(sorted(t.links), rng.randrange(1, min(3, len(t.links)) + 1))
        books = [LoadBook.of({u.vid: u.links for u in trees}, senders, fabric) for _ in range(2)]
        got, kept = improve_tree(t.vid, t.links, movable, fabric, adj, books[0], None)
        assert kept                     # no guard: nothing to refuse
        want = _plain_improve(t.vid, t.links, movable, fabric, adj, books[1])
        assert got == want
        assert books[0].total == books[1].total
        assert books[0].max_load() == books[1].max_load()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 150), st.integers(1, 300))
def test_the_books_most_loaded_arcs_stay_a_prefix_of_the_order(seed: int, arcs: int, steps: int) -> None:
    rng = random.Random(seed)
    ncab = [rng.choice((0, 1, 1, 2, 3)) for _ in range(arcs)]
    total = [float(rng.randrange(0, 50)) if n else 0.0 for n in ncab]
    book = Book({}, list(total), ncab)
    for _ in range(steps):
        i = rng.randrange(arcs)
        book.add(i, float(rng.randrange(-int(total[i]), 30)) if total[i] else float(rng.randrange(0, 30)))
        total[i] = book.total[i]
        if rng.random() < 0.3:
            continue
        book.mark_top()
        values = book.values()
        assert book.topval == sorted(values, reverse=True)[:len(book.topval)]
        assert [values[i] for i in sorted(book.topbit, key=book.topbit.__getitem__)] == book.topval
        assert book.bits == [book.topbit.get(i, 0) for i in range(arcs)]     # the list the ways read
        assert 0 < len(book.topval) <= TOP
        skip = set(rng.sample(range(arcs), rng.randrange(0, arcs + 1)))
        mask = 0
        for j in skip:
            mask |= book.topbit.get(j, 0)
        want = max((values[j] for j in range(arcs) if j not in skip), default=0.0)
        assert book.peak_except(mask, [(j, 1) for j in skip]) == want


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 150), st.integers(1, 60))
def test_the_books_changes_in_a_batch_equal_one_at_a_time(seed: int, arcs: int, batches: int) -> None:
    """Book.add_all (a dead pair's exchange: its changes in one call, inline) leaves the book
    as Book.add of each change in turn: the loads, the kept prefix of the most loaded arcs
    and their bits, with the prefix sorted again (mark_top) between batches as the what-if
    does between trees."""
    rng = random.Random(seed)
    ncab = [rng.choice((0, 1, 1, 2, 3)) for _ in range(arcs)]
    total = [float(rng.randrange(0, 50)) if n else 0.0 for n in ncab]
    one, batch = Book({}, list(total), ncab), Book({}, list(total), ncab)
    for _ in range(batches):
        one.mark_top()
        batch.mark_top()
        changes = []
        for _ in range(rng.randrange(0, 40)):
            i = rng.randrange(arcs)
            d = float(rng.randrange(-int(one.total[i]), 30)) if one.total[i] else float(rng.randrange(1, 30))
            if d:
                changes.append((i, d))
                one.add(i, d)
        batch.add_all(changes)
        assert (batch.total, batch._top, batch._in_top, batch._fresh, batch._marked) == \
            (one.total, one._top, one._in_top, one._fresh, one._marked)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 11), st.integers(1, 5), st.booleans())
def test_a_dead_switchs_exchanges_equal_improve_tree(seed: int, n: int, k: int, parallel: bool) -> None:
    """routing/whatif/switches.py Cuts.improve exchanges the joining links of a tree that
    lost a switch from the intact rooted tree and the parts' sums; improve_tree (which roots
    the joined tree again per joining link) must give the same trees and loads: every tree
    of every dead switch in turn, whether or not the what-if would try it."""
    rng = random.Random(seed)
    g = _graph(seed, n)
    cables = {link(a, b): rng.choice((1, 2)) if parallel else 1 for a, b in g.edges}
    switches = sorted(g.nodes)
    hosts = {s: rng.choice((1, 2, 4)) for s in switches}
    trees = [Tree(vid, tuple(group), random_spanning_tree(g, rng))
             for vid, group in enumerate([switches[i::k] for i in range(k)], start=101) if group]
    rooted = {t.vid: RootedTree(t, hosts) for t in trees}
    intact = Degraded(cables, frozenset(), hosts)
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees}, intact)
    arcs = {x: i for i, x in enumerate(a for (u, v) in cables for a in ((u, v), (v, u)))}
    base_total = [base.total.get(a, 0.0) for a in arcs]
    index = SwitchIndex(trees, rooted, arcs, base_total, [cables[link(*a)] for a in arcs],
                        intact.adjacency(), hosts, switches)
    for w in switches:
        total = [b - hosts[w] * u for b, u in zip(base_total, index.up)]
        cuts = [index._tree(t, w, hosts[w], total) for t in trees]
        if any(c is None for c in cuts):
            continue                        # the live fabric does not join some tree: repair's case
        alive = {s: m for s, m in hosts.items() if s != w}
        fabric = Degraded(cables, frozenset({w}), alive)
        adj = fabric.adjacency()
        senders = {t.vid: t.senders(alive, (w,)) for t in trees}
        books = [LoadBook(fabric, senders, {}, {a: total[i] for a, i in arcs.items()}) for _ in range(2)]
        for t, c in zip(trees, cuts):
            assert c is not None
            joins = sorted(c.links)
            links = frozenset(l for l in t.links if w not in l) | set(joins)
            want, _ = improve_tree(t.vid, links, joins, fabric, adj, books[1], None)
            c.improve(books[0])
            got = frozenset(l for l in t.links if w not in l) | c.links
            assert got == want
            assert books[0].total == books[1].total


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 10), st.integers(1, 4), st.booleans(), st.booleans())
def test_a_dead_switchs_shortcuts_equal_the_general_walk(seed: int, n: int, k: int, parallel: bool,
                                                                 senders: bool) -> None:
    """routing/whatif/switches.py SwitchIndex._one_kid (w with a parent and one child: the
    join and the load corrections along four chains, in closed form), the same compiled
    (routing/whatif/switches_kernel.py, the links across listed only when asked) and
    SwitchIndex._across (the links between large parts, found with numpy) against _tree's
    general walk (every part's links searched, every changed arc's sides summed): the same
    loads, joins, parts' sums and candidates, for every tree of every dead switch."""
    rng = random.Random(seed)
    g = _graph(seed, n)
    cables = {link(a, b): rng.choice((1, 2)) if parallel else 1 for a, b in g.edges}
    switches = sorted(g.nodes)
    hosts = {s: rng.choice((1, 2, 4)) for s in switches}
    groups = [switches[i::k] for i in range(k)]
    trees = [Tree(vid, tuple(group), random_spanning_tree(g, rng),
                  tuple((s, rng.randrange(0, hosts[s] + 1)) for s in group if senders and rng.random() < 0.5))
             for vid, group in enumerate(groups, start=101) if group]
    rooted = {t.vid: RootedTree(t, hosts) for t in trees}
    intact = Degraded(cables, frozenset(), hosts)
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees}, intact)
    arcs = {x: i for i, x in enumerate(a for (u, v) in cables for a in ((u, v), (v, u)))}
    base_total = [base.total.get(a, 0.0) for a in arcs]
    plain, fast, vector, compiled = (SwitchIndex(trees, rooted, arcs, base_total, [cables[link(*a)] for a in arcs],
                                                 intact.adjacency(), hosts, switches) for _ in range(4))
    plain.chains, plain.many = False, 10**9
    fast.many = 10**9
    vector.chains, vector.many = False, 0          # every part's links found with numpy (_across)
    compiled.many = 10**9                          # _one_kid compiled (switches_kernel)
    arrays = Rooted(rooted, arcs, sorted(cables), set(switches), base_total)
    compiled.kernel = OneKid(arrays, compiled.adj, compiled.rank, arcs)
    for w in switches:
        totals = [[b - hosts[w] * u for b, u in zip(base_total, plain.up)] for _ in range(3)]
        work = np.array(totals[0], dtype=np.float64)       # the compiled kernel's: an array
        for t in trees:
            want = plain._tree(t, w, hosts[w], totals[0])
            for index, total in ((fast, totals[1]), (vector, totals[2]), (compiled, work)):
                got = index._tree(t, w, hosts[w], total)
                assert list(total) == totals[0], (w, t.vid)
                assert (got is None) == (want is None)
                if got is None or want is None:
                    continue
                assert (got.joins, got.below, got.hang, got.first, got.size) == \
                    (want.joins, want.below, want.hang, want.first, want.size)
                assert sorted(got.across) == sorted(want.across)
                assert [got.nodes(i) for i in got.size] == [want.nodes(i) for i in want.size]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 11), st.integers(1, 5), st.booleans())
def test_a_dead_switchs_kept_loads_equal_a_recount(seed: int, n: int, k: int, parallel: bool) -> None:
    """routing/whatif/switches.py SwitchIndex.switch_failure keeps each arc's load per cable
    through the exchanges, recomputing only the arcs an exchange changed: the max load and
    the arcs at it after every exchange, and the result, must equal those of a recount of
    every arc from the book after each exchange (SwitchIndex.kept off), for every switch."""
    rng = random.Random(seed)
    g = _graph(seed, n)
    cables = {link(a, b): rng.choice((1, 2)) if parallel else 1 for a, b in g.edges}
    switches = sorted(g.nodes)
    hosts = {s: rng.choice((1, 2, 4)) for s in switches}
    trees = [Tree(vid, tuple(group), random_spanning_tree(g, rng))
             for vid, group in enumerate([switches[i::k] for i in range(k)], start=101) if group]
    rooted = {t.vid: RootedTree(t, hosts) for t in trees}
    intact = Degraded(cables, frozenset(), hosts)
    base = LoadBook.of({t.vid: t.links for t in trees}, {t.vid: t.senders(hosts) for t in trees}, intact)
    arcs = {x: i for i, x in enumerate(a for (u, v) in cables for a in ((u, v), (v, u)))}
    base_total = [base.total.get(a, 0.0) for a in arcs]
    kept, recount = (SwitchIndex(trees, rooted, arcs, base_total, [cables[link(*a)] for a in arcs],
                                 intact.adjacency(), hosts, switches) for _ in range(2))
    recount.kept = False
    for w in switches:
        kept.trace, recount.trace = [], []
        assert kept.switch_failure(w, cables) == recount.switch_failure(w, cables), w
        assert kept.trace == recount.trace, w


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40), st.integers(0, 6))
def test_the_links_across_a_cut_searched_one_by_one_equal_numpys(seed: int, n: int, pruned: int) -> None:
    """routing/whatif/pairs.py Crossing.across looks at a small cut-off subtree's links one
    by one (at most pairs.SMALL switches) and masks every link with numpy otherwise: both
    must give the same links in the same order with the same arcs, for every cut of a tree
    that spans the fabric or only part of it (leaves pruned). It fails when the search keeps
    a link to a switch off the tree, or the dead pair itself."""
    rng = random.Random(seed)
    g = _graph(seed, n)
    links = set(random_spanning_tree(g, rng))
    for _ in range(pruned):                      # drop a leaf: still a tree, on fewer switches
        ends = [s for l in links for s in l]
        leaves = sorted(s for s in set(ends) if ends.count(s) == 1)
        if len(links) > 1:
            leaf = rng.choice(leaves)
            links = {l for l in links if leaf not in l}
    hosts = dict.fromkeys(g.nodes, 1)
    rt = RootedTree(Tree(1, tuple(sorted(g.nodes)), frozenset(links)), hosts)
    cables = {link(a, b): 1 for a, b in g.edges}
    adj = Degraded(cables, frozenset(), hosts).adjacency()
    arcs = {x: i for i, x in enumerate(a for (u, v) in cables for a in ((u, v), (v, u)))}
    crossing = Crossing(adj, set())
    small = pairs.SMALL
    try:
        for c, p in rt.parent.items():
            if p is None:
                continue
            lo, hi, skip = rt.tin[c], rt.tin[c] + rt.size[c], link(c, p)
            pairs.SMALL = 10**9
            one_by_one = crossing.across(1, rt, lo, hi, skip, arcs)
            pairs.SMALL = -1
            assert crossing.across(1, rt, lo, hi, skip, arcs) == one_by_one
    finally:
        pairs.SMALL = small
