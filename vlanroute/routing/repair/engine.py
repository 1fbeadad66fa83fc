"""Repair a plan's VLAN trees around failed links and switches with the fewest link changes.

Every routing VLAN is one tree over the switches with hosts. A dead neighbour pair (every
cable of it, or the whole LAG) cuts each tree that uses it in two; a dead switch cuts each
tree through it into as many parts as it had tree neighbours. A tree that loses nothing is
left exactly as it is, and so are the hosts' PVIDs (a host's VLAN is its switch's source
tree): only the broken trees change, and only by links added to join their parts again.

The repair of one broken tree (`repair_tree`):
1. drop the dead links and switches: the tree falls into parts (a forest);
2. join the parts that hold hosts, always by the shortest way from the part already joined
   to another (a breadth-first search over live links, through switches outside the tree
   and hostless parts, which then join too); one live link between two parts is the
   fewest possible, so for one dead pair the repair is exactly one link where the parts
   have a live link between them;
3. parts left without hosts are no longer needed: their links leave the VLAN;
4. each added link is then exchanged for the best other live link across the same cut
   (`improve_tree`): the link that gives the lowest maximum load per cable over the whole
   fabric, among those that keep a deadlock-free plan deadlock-free. For one cut this
   tries every candidate, so the choice is exact; for several it is a local search. The
   broken trees are chosen one after another, each against the final trees only (those
   the failure left alone and those chosen before it: `_choose_keeping`); where one has no
   choice that keeps the plan deadlock-free, again with that tree first (KEEPING_TRIES
   passes at most), and then every tree is chosen by load alone.

Loads are the plan's (model.py), and so is deadlock freedom: the channel dependencies of
every VLAN's tree (guard.py).

`extra_changes` allows that many more link exchanges in any tree (broken or not), each
chosen greedily: an exchange in a tree that crosses the most loaded arc, the one that
lowers the maximum load the most; it stops early when no exchange lowers it.

Pure: no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from functools import partial

from vlanroute.model.links import Arc, Link, link
from vlanroute.routing.repair.guard import (CountedDependencies, Dependency, ExchangedDependencies, Guard, acyclic,
                                            tree_dependencies)
from vlanroute.routing.repair.loads import Exchanges, LoadBook, trial_peak
from vlanroute.routing.repair.model import Degraded, RepairResult, Tree, TreeChange, adjacency


# ------------------------------------------------------------------ one tree


def _components(links: Iterable[Link], nodes: Iterable[str]) -> list[set[str]]:
    """The connected parts of `nodes` joined by `links` (plain search: networkx's graph
    building cost most of a what-if)."""
    adj = adjacency(links)
    seen: set[str] = set()
    out = []
    # The nodes first, then the links' other ends, each once (the parts' order is the
    # same as over an adjacency that lists every node first).
    for n in (*nodes, *adj):
        if n in seen:
            continue
        part = {n}
        todo = [n]
        while todo:
            for v in adj.get(todo.pop(), ()):
                if v not in part:
                    part.add(v)
                    todo.append(v)
        seen |= part
        out.append(part)
    return out


def repair_tree(tree: Tree, fabric: Degraded, adj: Mapping[str, list[str]]) -> tuple[frozenset[Link], str]:
    """The tree's links after the fewest link additions that join its parts with hosts
    again; (links, "") or (the original links, why not) when the live fabric cannot."""
    nodes = (tree.switches | set(tree.sources)) - fabric.dead_switches
    live = fabric.live
    kept = {l for l in tree.links if l in live}
    wanted = fabric.host_switches()
    missing = wanted - nodes
    nodes |= missing                       # a host switch outside the tree: a part of its own
    po = tree.preorder
    if po is not None and tree.switches.issuperset(tree.sources):
        parts = _cut_parts(po, tree.links - kept, fabric.dead_switches) + [{m} for m in missing]
    else:
        parts = _components(kept, nodes)
    part_of: dict[str, int] = {}
    for k, part in enumerate(parts):
        part_of.update(dict.fromkeys(part, k))
    terminal = [i for i, part in enumerate(parts) if part & wanted]
    if len(terminal) <= 1:
        joined = set(terminal)
    else:
        joined = {min(terminal, key=lambda i: (-len(parts[i] & wanted), min(parts[i])))}
    links = set(kept)
    todo = set(terminal) - joined
    inside = {s for i in joined for s in parts[i]}     # every switch of the tree so far
    while todo:
        # Breadth-first from every switch already joined; the first switch reached that
        # belongs to a part still to join ends the shortest way there.
        prev: dict[str, str | None] = {s: None for s in inside}
        queue = deque(sorted(inside))
        found = None
        while queue and found is None:
            here = queue.popleft()
            for v in adj.get(here, ()):
                if v in prev:
                    continue
                prev[v] = here
                i = part_of.get(v)
                if i in todo:
                    found = v
                    break
                queue.append(v)
                if i is not None and i not in joined:
                    # A hostless part on the way is reached whole, along its own links,
                    # so that no way re-enters it (which would close a loop).
                    for a in _walk_part(v, parts[i], kept, prev):
                        queue.append(a)
        if found is None:
            cut = sorted(s for i in todo for s in parts[i] & wanted)
            return tree.links, (f"the live fabric has no path from the rest of VLAN {tree.vid} to "
                                f"{', '.join(cut[:5])}{' ...' if len(cut) > 5 else ''}")
        w: str | None = found
        while w is not None and prev[w] is not None:
            u = prev[w]
            assert u is not None
            links.add(link(u, w))
            inside.add(u)
            j = part_of.get(u)
            if j is not None and j not in joined:
                joined.add(j)
                inside |= parts[j]
            w = u
        joined.add(part_of[found])
        todo.discard(part_of[found])
        inside |= parts[part_of[found]]
    # Keep only the component that holds the hosts: parts without hosts leave the VLAN.
    if wanted:
        # `inside` is that component: the joined parts and the ways between them (a part
        # is a component of the kept links, and only the ways' links join parts).
        links = {l for l in links if l[0] in inside}
    return frozenset(links), ""


def _cut_parts(po: tuple[list[str], dict[str, int], list[int]], removed: Iterable[Link],
               dead: frozenset[str]) -> list[set[str]]:
    """The parts of one tree without the `removed` links, as `_components` finds them (in
    another order), from its preorder: each removed link cuts off its lower end's range,
    less the ranges cut off inside it (a link's lower end comes later in the preorder). A
    dead switch loses every link, so its part is itself alone: left out, as `_components`
    never sees it."""
    pre, tin, end = po
    lower = sorted({max(tin[a], tin[b]) for a, b in removed})
    inner: dict[int, list[int]] = {-1: []}       # each part's top (-1: the root's part) -> the tops right below it
    open_: list[int] = []
    for r in lower:
        while open_ and not r < end[open_[-1]]:
            open_.pop()
        inner[open_[-1] if open_ else -1].append(r)
        inner[r] = []
        open_.append(r)
    out = []
    for top, below in inner.items():
        part = set(pre) if top < 0 else set(pre[top:end[top]])
        for r in below:
            part.difference_update(pre[r:end[r]])
        part -= dead
        if part:
            out.append(part)
    return out


def _walk_part(start: str, part: set[str], kept: set[Link], prev: dict[str, str | None]) -> list[str]:
    """Every switch of `part` reached from `start` along the part's links, with prev set."""
    out, todo = [], [start]
    while todo:
        u = todo.pop()
        for a, b in kept:
            if u in (a, b):
                w = b if u == a else a
                if w in part and w not in prev:
                    prev[w] = u
                    out.append(w)
                    todo.append(w)
    return out


def improve_tree(vid: int, links: frozenset[Link], movable: Iterable[Link], fabric: Degraded,
                 adj: Mapping[str, list[str]], book: LoadBook, guard_for: Callable[[], Guard | None] | None
                 ) -> tuple[frozenset[Link], bool]:
    """Exchange each link of `movable` for the live link across the same cut of the tree
    that gives the lowest max load over the fabric (then the lowest over the arcs it
    changes); with `guard_for` (the guard of the other VLANs' channel dependencies, built
    on first use: keep the plan deadlock-free), the best that keeps it so when any does. `book` holds this tree's
    loads on entry and the chosen tree's on return. Returns the tree and whether the guard
    accepted every choice (True without a guard).

    Without the guard, only the candidates whose exchange changes every arc at the max
    load are priced: any other leaves such an arc at the max, so its peak is at least the
    cut link's own (which changes nothing and changes no arc: it wins that tie), and the
    choice is the same as over every candidate."""
    current = links
    guard: Guard | None = None          # built on first use: the other VLANs do not change here
    kept = True
    for cut in sorted(movable):
        if cut not in current:
            continue
        if guard_for is not None and guard is None:
            guard = guard_for()
            if guard is None:           # the others have a cycle: no choice avoids one
                guard_for = None
                kept = False
        if guard_for is None and keeps_the_cut(current, cut, book, adj):
            continue
        ex = Exchanges(current, cut, book.senders[vid], fabric.hosts)
        options = ex.candidates(adj)
        if guard is None:
            options = _may_lower(ex, current, cut, options, book)
        tried = []
        for c in options:
            d = ex.delta(c) if c != cut else {}
            peak, local = trial_peak(book, d)
            tried.append((round(peak, 9), round(local, 9), c != cut, c, d))
        tried.sort(key=lambda t: t[:4])
        chosen = tried[0]
        if guard is not None:
            exchanged = ExchangedDependencies(current, book.senders[vid], fabric.hosts)
            for t in tried:
                if guard.accepts(exchanged.of(cut, t[3])):
                    chosen = t
                    break
            else:
                kept = False
        if chosen[3] != cut:
            current = current - {cut} | {chosen[3]}
            book.add(vid, chosen[4])
    return current, kept


# Passes of `_choose_keeping` at most, each with the tree the last one failed on moved first
# (the most constrained first). Single pair failures that stay deadlock-free on the 6x6
# torus with 3 cables gone (seed 0): 9 of 69 in one pass, 18 in 4, 21 in 11 and in 31; on
# the 8x8 with 6 gone (seed 1): 21 of 122 in one, 37 in 4, 39 in 11. A failed pass costs
# its choices: whatif (200 doubles) on the 8x8 took 83 s by load alone, 96 s in one pass
# and 114 s in up to 4 (docs/failures.md).
KEEPING_TRIES = 4


def _choose_keeping(pending: list[int], new: dict[int, frozenset[Link]], by_vid: Mapping[int, Tree],
                    fabric: Degraded, adj: Mapping[str, list[str]], book: LoadBook,
                    deps_of: Callable[[int], set[Dependency]]) -> CountedDependencies | int:
    """The added links of each pending tree chosen so that the plan stays deadlock-free,
    against the trees that are final: those the failure left alone and the pending ones
    already chosen. The first repair of a tree still to come (repair_tree) is not what it
    will route on, and counted in the guards it closed cycles that left every guard after
    it nothing to accept (a deadlock-free 8x8 degraded torus stayed so after 1 of its 186
    single failures). Each guard holds every tree chosen before, so the last one holds
    them all: when every choice is accepted the plan is deadlock-free, and the counted
    dependencies are returned. At the first tree no guard accepts a choice for, that tree,
    with `new` and `book` as they were on entry."""
    first = {vid: new[vid] for vid in pending}
    counted = CountedDependencies()
    for v in new:
        if v not in first:
            counted.set(v, deps_of(v))
    book.begin()
    for vid in pending:
        new[vid], kept = improve_tree(vid, new[vid], new[vid] - by_vid[vid].links, fabric, adj, book,
                                      partial(counted.except_for, vid))
        if not kept:
            book.undo()
            new.update(first)
            return vid
        counted.set(vid, deps_of(vid))
    book.commit()
    return counted


def keeps_the_cut(links: frozenset[Link], cut: Link, book: LoadBook, adj: Mapping[str, list[str]]) -> bool:
    """True when `_may_lower` would keep the cut link alone, read before the tree is rooted
    (a what-if's dead switch adds joining links to hundreds of trees, and rooting each
    costs its whole tree): the cut is live, so it is a candidate, and the fabric has no
    load, or an arc at the max load lies off the tree, which no exchange in it changes."""
    x, y = cut
    if y not in adj.get(x, ()):
        return False
    peak, hot = book.at_peak()
    if peak <= 0:
        return True
    return any(link(a, b) != cut and link(a, b) not in links for a, b in hot)


def _may_lower(ex: Exchanges, links: frozenset[Link], cut: Link, options: list[Link], book: LoadBook) -> list[Link]:
    """The cut link and the candidates whose exchange changes every arc at the fabric's max
    load (improve_tree) and raises no arc to it: an exchange changes only the arcs of the
    cut link, of the new link (raised by the load across the cut), and of the tree's links
    on the ways from the new link's ends to the cut's, so it changes a tree link's arcs
    exactly when one of its ends lies below that link."""
    if cut not in options:
        return options                   # not the case of the argument above: price them all
    peak, hot = book.at_peak()
    if peak <= 0:
        return [cut]
    keep = options
    for a, b in hot:
        l = link(a, b)
        if l == cut:
            continue
        if l not in links or a not in ex.parent or b not in ex.parent:
            return [cut]                 # an arc off the tree (or off x's part of it): no exchange lowers it
        sub = ex.below(a if ex.parent.get(a) == b else b)
        keep = [c for c in keep if c == cut or c[0] in sub or c[1] in sub]
    # The new link's arcs carry the load that crosses the cut: at the max or above, the
    # exchange cannot lower it.
    out = []
    total, far = book.total, ex.far
    up, down = ex.s1 * ex.h2, ex.s2 * ex.h1
    for c in keep:
        a, b = c
        if a in far:
            a, b = b, a                   # a in x's part, b in y's part
        if c == cut or not ((up and book.per_cable((a, b), total.get((a, b), 0.0) + up) >= peak)
                            or (down and book.per_cable((b, a), total.get((b, a), 0.0) + down) >= peak)):
            out.append(c)
    return out


# ------------------------------------------------------------------ the whole plan


def broken_vlans(trees: Iterable[Tree], fabric: Degraded) -> list[int]:
    """The VLANs whose tree lost a link or a switch, or misses a live host switch."""
    wanted = fabric.host_switches()
    live = fabric.live
    out = []
    for t in trees:
        nodes = t.switches | set(t.sources)
        if (not t.links <= live or nodes & fabric.dead_switches
                or (t.links and not wanted <= nodes) or (not t.links and len(wanted) > 1)):
            out.append(t.vid)
    return out


def repair(trees: list[Tree], fabric: Degraded, keep_deadlock_free: bool = True,
           extra_changes: int = 0, base: LoadBook | None = None, check_deadlock: bool = True,
           broken: list[int] | None = None) -> RepairResult:
    """The repaired trees of every VLAN; see the module docstring. `keep_deadlock_free`:
    the plan was deadlock-free (plan.json metrics.deadlock_free), so prefer replacement
    links that keep it so."""
    adj = fabric.adjacency()
    by_vid = {t.vid: t for t in trees}
    senders = {t.vid: t.senders(fabric.hosts, fabric.dead_switches)
               for t in trees}
    if broken is None:                  # the what-if knows them from its index
        broken = broken_vlans(trees, fabric)
    new: dict[int, frozenset[Link]] = {t.vid: t.links for t in trees}
    unrepairable: dict[int, str] = {}
    # One dead link in a tree whose two parts have a live link between them (every pair
    # failure, mostly): its exchanges are tried straight from the old tree's loads. Not
    # under the deadlock guard, which compares each VLAN with the others' repaired trees.
    fast: dict[int, tuple[Exchanges, list[Link], Link]] = {}
    if not keep_deadlock_free and not fabric.dead_switches:
        wanted = fabric.host_switches()
        # No dead switch here: a link is dead exactly when no cable of it is left.
        live = frozenset(x for (a, b), n in fabric.cables.items() if n > 0 for x in ((a, b), (b, a)))
        for vid in broken:
            t = by_vid[vid]
            dead = sorted(t.links - live)
            if len(dead) != 1 or not wanted <= t.switches:
                continue
            ex = Exchanges(t.links, dead[0], senders[vid], fabric.hosts)
            options = ex.candidates(adj)
            if options:
                fast[vid] = (ex, options, dead[0])
    slow = [vid for vid in broken if vid not in fast]
    for vid in slow:
        links, why = repair_tree(by_vid[vid], fabric, adj)
        if why:
            unrepairable[vid] = why
            links = frozenset(l for l in by_vid[vid].links if l in fabric.live)
        new[vid] = links
    if base is not None:
        # Per-VLAN loads of the intact trees with these very hosts: only the broken ones change.
        total = dict(base.total)
        for vid in slow:
            for arc, x in base.loads(vid).items():
                total[arc] -= x
        book = LoadBook(fabric, senders, {vid: {} for vid in slow}, total, fallback=base.per_vlan)
        for vid in slow:
            book.set(vid, new[vid])
    else:
        book = LoadBook.of(new, senders, fabric)
    # The dead links' arcs are not priced: every fast tree leaves them, but until the last
    # is mended the others still load them, which would price every candidate at infinity
    # (and pick the smallest link, not the least loaded one).
    dead_arcs = frozenset(arc for _ex, _opts, (a, b) in fast.values() for arc in ((a, b), (b, a)))
    for vid, (ex, options, dead_link) in fast.items():
        tried = []
        for c in options:
            d = ex.delta(c)
            peak, local = trial_peak(book, d, dead_arcs)
            tried.append((round(peak, 9), round(local, 9), c, d))
        best = min(tried, key=lambda t: t[:3])
        book.add(vid, best[3])
        new[vid] = by_vid[vid].links - {dead_link} | {best[2]}

    # Each VLAN's dependencies, kept while its tree stays the same: the guards' passes and
    # the verdict ask for them again, and most trees never change.
    known: dict[int, tuple[frozenset[Link], set[tuple[str, str, str]]]] = {}

    def deps_of(vid: int) -> set[tuple[str, str, str]]:
        got = known.get(vid)
        if got is None or got[0] != new[vid]:
            got = known[vid] = (new[vid], tree_dependencies(new[vid], senders[vid], fabric.hosts))
        return got[1]

    guard = keep_deadlock_free           # the plan was deadlock-free: keep it so if possible
    # The trees whose added links are chosen now, one after another.
    pending = [vid for vid in slow if vid not in unrepairable and new[vid] - by_vid[vid].links]
    counted: CountedDependencies | None = None
    if guard and pending:
        order = list(pending)
        for _ in range(KEEPING_TRIES):
            got = _choose_keeping(order, new, by_vid, fabric, adj, book, deps_of)
            if not isinstance(got, int):
                counted = got
                break
            if got == order[0]:
                break                   # first, it met the fewest trees: no order helps it
            order.remove(got)           # the tree no choice was left for goes first next time
            order.insert(0, got)
    if counted is None:
        # Each tree's added links chosen against every other tree as it stands, the first
        # repairs of the trees still to come included: where the pass above failed, this
        # is the repair as it was before it (a guard that sees a cycle accepts nothing, and
        # the choice is then by load alone).
        for vid in pending:
            guard_for = None
            if guard:
                if counted is None:
                    counted = CountedDependencies()
                    for v in new:
                        counted.set(v, deps_of(v))
                guard_for = partial(counted.except_for, vid)
            new[vid], _ = improve_tree(vid, new[vid], new[vid] - by_vid[vid].links, fabric, adj, book, guard_for)
            if counted is not None:
                counted.set(vid, deps_of(vid))
    extra_used = 0
    for _ in range(extra_changes):
        step = _best_exchange(new, fabric, adj, book)
        if step is None:
            break
        vid, links, delta = step
        new[vid] = links
        book.add(vid, delta)
        if counted is not None:         # it says whether the plan is deadlock-free, below
            counted.set(vid, deps_of(vid))
        extra_used += 1
    changes: dict[int, TreeChange] = {}
    for t in trees:
        if new[t.vid] != t.links:
            changes[t.vid] = TreeChange(t.vid, sorted(t.links - new[t.vid]), sorted(new[t.vid] - t.links),
                                        forced=t.vid in broken)
    # `check_deadlock` False (what-if on a plan that was not deadlock-free): not computed.
    free = False
    dependencies: dict[int, set[tuple[str, str, str]]] = {}
    if check_deadlock or guard:
        dependencies = {v: deps_of(v) for v in new}
        # The counted dependencies are every VLAN's by now: numbered exactly when acyclic.
        free = counted.is_acyclic() if counted is not None else acyclic(set().union(*dependencies.values()))
    note = ""
    if keep_deadlock_free and not free:
        note = ("the degraded fabric leaves no deadlock-free choice of replacement links for every broken "
                "tree: the repaired routes' channel dependency graph has a cycle (a deadlock is possible "
                "under heavy load with 802.3x PAUSE); a full re-plan with a deadlock-free engine avoids it")
    return RepairResult(new, changes, unrepairable, book.max_load(), free, note, extra_used,
                        dependencies=dependencies)


def _best_exchange(trees: Mapping[int, frozenset[Link]], fabric: Degraded, adj: Mapping[str, list[str]],
                   book: LoadBook) -> tuple[int, frozenset[Link], dict[Arc, float]] | None:
    """The one link exchange, in a tree that crosses the most loaded arc, that lowers the
    maximum load the most (greedy); None when none lowers it."""
    hot = book.hottest()
    if hot is None:
        return None
    base = book.max_load()
    best: tuple[float, float, int, frozenset[Link], dict[Arc, float]] | None = None
    hot_link = link(*hot)
    for vid, links in sorted(trees.items()):
        if hot_link not in links or not book.loads(vid).get(hot, 0.0):
            continue
        ex = Exchanges(links, hot_link, book.senders[vid], fabric.hosts)
        for c in ex.candidates(adj):
            if c == hot_link:
                continue
            d = ex.delta(c)
            peak, local = trial_peak(book, d)
            if peak < base - 1e-9 and (best is None or (peak, local) < (best[0], best[1])):
                best = (peak, local, vid, links - {hot_link} | {c}, d)
    if best is None:
        return None
    return best[2], best[3], best[4]
