"""Several dead neighbour pairs at once (whatif's pair+pair doubles), fast, with exactly
the max load of `repair` (routing/repair/engine.py) started from the intact loads.

Without the deadlock guard and without a dead switch, `repair` splits the broken trees in
two kinds and mends them in this order:
1. the trees that lost two or more links, or whose one cut has no live link across it
   (`slow`): each joined again by `repair_tree`, its loads set to the joined tree's;
2. the trees that lost one link with a live link across its cut (`fast`), in the trees'
   order: each takes the live link with the lowest (max load per cable, max over the arcs
   the exchange changes, link), the dead pairs' arcs left unpriced;
3. each slow tree's added links exchanged for better ones (`improve_tree`).

Step 2 is the single dead pair's fast path (routing/whatif/pairs.py: `Book`, `Side`,
`cheapest`, each candidate priced in constant time) with every dead pair kept out of the
candidates and of the pricing. On the 16x16 torus about a quarter of a pair+pair double's
broken trees hold both dead pairs (step 1); each falls into parts that are ranges of its
intact preorder less the ranges below (`_Joined`), from which come:
- the links `repair_tree` adds, when every part holds hosts and some live link joins the
  parts already joined to another (its search then ends at the first such link, in name
  order: `DeadPairs._join`); else `repair_tree` itself runs;
- the joined tree's loads, changed only on the ways from the parts' ends up to their
  tops (`_Joined.changed`);
- for step 3, the candidates `improve_tree` would price besides the added link (`_may_lower`:
  across its cut and across the cut of every link at the max load), found with numpy from
  the parts (`_Joined.sides`); the joined tree is rooted only when one is left, and
  `improve_tree` itself runs for a tree once an exchange changed it.
The loads are sums of integers, exact in floats in any order, and a `LoadBook`'s answers
depend only on its loads, so the same choices give the same figures.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from vlanroute.model.links import Link, link
from vlanroute.routing.repair.engine import improve_tree, keeps_the_cut, repair_tree
from vlanroute.routing.repair.loads import LoadBook, trial_peak
from vlanroute.routing.repair.model import Degraded, Tree, tree_arc_loads
from vlanroute.routing.whatif.pairs import Book, Crossing, RootedTree, cheapest, Side

if TYPE_CHECKING:
    from vlanroute.routing.whatif.pairs_kernel import Rooted
    from vlanroute.routing.whatif.switches import Raw
    from vlanroute.routing.whatif.switches_kernel import Exchange


class DeadPairs:
    """What every pairs-only failure of one plan shares: the trees rooted once, the trees
    per link, the intact loads by arc index, the intact fabric's links by tree position."""

    def __init__(self, trees: Sequence[Tree], cables: Mapping[Link, int], hosts: Mapping[str, int],
                 rooted: Mapping[int, RootedTree], base: LoadBook, kernel: bool = False,
                 shared: Rooted | None = None) -> None:
        """kernel: the trees with one dead link mended compiled (routing/whatif/pairs_kernel.py,
        needs numba), not by _mend; the same figures. shared: the arrays of these trees
        already built (SwitchIndex.compiled), used where their arc and link numbering is this
        index's, else built again."""
        self.trees = list(trees)
        self.by_vid = {t.vid: t for t in self.trees}
        self.position = {t.vid: i for i, t in enumerate(self.trees)}
        self.cables = {link(*l): n for l, n in cables.items()}
        self.hosts = hosts
        self.total_h = sum(hosts.values())
        self.rooted = rooted
        self.base = base
        self.by_link: dict[Link, list[int]] = {}
        for t in self.trees:
            for l in t.links:
                self.by_link.setdefault(l, []).append(t.vid)
        self.arcs = {x: i for i, x in enumerate(a for (u, v) in self.cables for a in ((u, v), (v, u)))}
        self.base_total = [base.total.get(a, 0.0) for a in self.arcs]
        self.base_ncab = [self.cables[link(*a)] for a in self.arcs]
        intact = Degraded(self.cables, frozenset(), hosts)
        self.wanted = intact.host_switches()
        self.crossing = Crossing(intact.adjacency(), self.wanted)
        names = sorted({s for l in self.crossing.links for s in l})
        self.sid = {s: i for i, s in enumerate(names)}
        self.la = np.array([self.sid[a] for a, _ in self.crossing.links], dtype=np.int64)
        self.lb = np.array([self.sid[b] for _, b in self.crossing.links], dtype=np.int64)
        # The fast path needs every tree to be one tree over every switch with hosts (else
        # `repair` would also mend trees no failure touched, or root a forest): checked once.
        self.usable = all(t.links and t.vid in rooted and len(rooted[t.vid].pre) == len(t.switches)
                          and self.wanted <= t.switches for t in self.trees)
        self.names = names
        self.host_list = [hosts.get(v, 0) for v in names]
        self.last: dict[tuple[str, str], float] = {}    # the raw loads per arc after the last max_load (tests)
        # per tree, kept once met: its senders and, by preorder position, the switches with
        # hosts below each switch (small: the 32x32 torus has 512 trees of 1,024 switches)
        self._kept: dict[int, tuple[dict[str, int], list[int]]] = {}
        self.compiled: Rooted | None = None
        self._exchange: Exchange | None = None          # made from compiled when first needed
        if kernel and shared is not None and shared.arcs == self.arcs and shared.links == self.crossing.links:
            self.compiled = shared
        elif kernel:
            from vlanroute.routing.whatif.pairs_kernel import Rooted     # imports numba: only here
            compiled = Rooted(rooted, self.arcs, self.crossing.links, self.wanted, self.base_total)
            self.compiled = compiled if compiled.usable else None

    def _tree(self, vid: int) -> tuple[dict[str, int], list[int]]:
        """Tree vid's senders, and by preorder position the switches with hosts below each
        switch (kept)."""
        got = self._kept.get(vid)
        if got is None:
            t, rt = self.by_vid[vid], self.rooted[vid]
            hosted = [1 if self.hosts.get(v, 0) > 0 else 0 for v in rt.pre]
            tin = rt.tin
            for n in range(len(rt.pre) - 1, 0, -1):
                up = rt.parent[rt.pre[n]]
                assert up is not None
                hosted[tin[up]] += hosted[n]
            got = self._kept[vid] = (t.senders(self.hosts), hosted)
        return got

    def _rooting(self, vid: int, jn: _Joined) -> _Rooting:
        """The joined tree jn of tree vid rooted (by switch number), for the ways of its exchanges."""
        sid, t = self.sid, self.by_vid[vid]
        adj: list[list[int]] = [[] for _ in self.names]
        for a, b in t.links:
            adj[sid[a]].append(sid[b])
            adj[sid[b]].append(sid[a])
        by_number = [0] * len(self.names)
        for v, n in self._tree(vid)[0].items():
            if v in sid:
                by_number[sid[v]] = n
        return _Rooting(sid[jn.rt.pre[0]], adj, [(sid[u], sid[w]) for u, w in jn.removed],
                        [(sid[u], sid[w]) for u, w in jn.added], by_number, self.host_list)

    def max_load(self, fabric: Degraded, dead: Sequence[Link]) -> float | None:
        """The max load per cable after `repair(trees, fabric, keep_deadlock_free=False,
        base=intact loads)` with these dead pairs (fabric: the intact one with their cables
        at 0, no dead switch), or None when this path does not apply (`repair` must run)."""
        if not self.usable or fabric.dead_switches:
            return None
        dead_links = sorted({link(*l) for l in dead})
        if any(fabric.cables.get(l, 0) for l in dead_links) or any(l not in self.cables for l in dead_links):
            return None
        hit = {vid for l in dead_links for vid in self.by_link.get(l, ())}
        broken = sorted(hit, key=self.position.__getitem__)
        arcs = self.arcs
        ncab = list(self.base_ncab)
        for x, y in dead_links:
            ncab[arcs[(x, y)]] = ncab[arcs[(y, x)]] = 0
        book = Book(arcs, list(self.base_total), ncab)
        crossing, rooted = self.crossing, self.rooted
        dead_index = [crossing.index[l] for l in dead_links]
        plans: list[_Plan] = []
        fast: list[tuple[int, Link]] = []      # plans' trees and dead links, for the kernel
        slow: list[int] = []
        for vid in broken:
            t = self.by_vid[vid]
            mine = [l for l in dead_links if l in t.links]
            if len(mine) != 1:
                slow.append(vid)
                continue
            pair = mine[0]
            x, y = pair
            rt = rooted[vid]
            c = y if rt.parent.get(y) == x else x
            p = x if c == y else y
            sc, hc = rt.s[c], rt.h[c]
            t0 = rt.tin[c]
            found = crossing.across(vid, rt, t0, t0 + rt.size[c], pair, arcs)
            if len(dead_links) > 1:
                found = [f for f in found if f[0] not in dead_links]
            if not found:
                slow.append(vid)
                continue
            plans.append((rt, pair, c, p, (sc, hc), (rt.S - sc, rt.H - hc), found))
            fast.append((vid, pair))
        # 1. the slow trees joined again (repair_tree), their loads set to the joined trees'
        new: dict[int, frozenset[Link]] = {}
        shape: dict[int, _Joined] = {}
        adj: dict[str, list[str]] = {}
        if slow:
            adj = fabric.adjacency()
            total = book.total
            for vid in slow:
                t = self.by_vid[vid]
                senders, hosted = self._tree(vid)
                base = self.base.loads(vid)
                jn = self._join(vid, dead_links, dead_index, hosted)
                if jn is None:
                    links, why = repair_tree(t, fabric, adj)
                    if why:
                        return None
                    new[vid] = links
                    for arc, load in base.items():
                        total[arcs[arc]] -= load
                    for arc, load in tree_arc_loads(links, senders, fabric.hosts).items():
                        total[arcs[arc]] += load
                    continue
                new[vid] = t.links.difference(jn.removed).union(jn.added)
                shape[vid] = jn
                # tree_arc_loads of the joined tree less the intact tree's: only on the links
                # whose side's sums changed, on the ways up from the parts' ends; the dead
                # links lose theirs, the added ones take theirs
                s_all, h_all = sum(senders.values()), self.total_h
                for v, up, bs, bh in jn.changed():
                    total[arcs[(v, up)]] += float(bs * (h_all - bh)) - base.get((v, up), 0.0)
                    total[arcs[(up, v)]] += float((s_all - bs) * bh) - base.get((up, v), 0.0)
                for u, w in jn.removed:
                    for arc in ((u, w), (w, u)):
                        total[arcs[arc]] -= base.get(arc, 0.0)
        # 2. the fast trees in order; the dead arcs of every fast tree left unpriced
        if self.compiled is not None and plans:
            total_array = np.array(book.total, dtype=np.float64)
            got = self.compiled.mend(fast, dead_links, total_array, ncab, arcs)
            assert not np.isnan(got)           # every fast tree covers and has candidates
            book.replace(total_array.tolist())
        else:
            _mend(book, plans)
        # 3. the slow trees' added links exchanged (improve_tree), on a LoadBook of the same loads
        movable = [(vid, sorted(new[vid] - self.by_vid[vid].links)) for vid in slow]
        if not any(added for _, added in movable):
            self.last = dict(zip(arcs, book.total))
            return book.max_load()
        senders_of = {vid: self._tree(vid)[0] for vid in slow}
        # LoadBook's own heap and cables per arc, from the Book's figures (the same values)
        names = list(arcs)
        heap = [(-x, arc) for arc, x in zip(names, book.values())]
        heapq.heapify(heap)
        loads = LoadBook(fabric, senders_of, {}, dict(zip(names, book.total)),
                         cables=dict(zip(names, ncab)), heap=heap)
        raw = None
        if self.compiled is not None:          # the exchanges compiled (switches_kernel.Exchange)
            from vlanroute.routing.whatif.switches import Raw
            from vlanroute.routing.whatif.switches_kernel import Exchange     # imports numba: only here
            if self._exchange is None:
                self._exchange = Exchange(self.compiled)
            raw = Raw(self._exchange, np.array(book.total, dtype=np.float64), np.array(ncab, dtype=np.float64),
                      arcs)
        for vid, added in movable:
            self._improve(vid, new[vid], added, shape.get(vid), fabric, adj, loads, dead_index, raw)
        self.last = loads.total
        return loads.max_load()

    def _improve(self, vid: int, links: frozenset[Link], added: list[Link], jn: _Joined | None, fabric: Degraded,
                 adj: Mapping[str, list[str]], loads: LoadBook, dead_index: list[int], raw: Raw | None = None
                 ) -> None:
        """improve_tree(vid, links, added, ...) without the deadlock guard, each step from
        the joined tree jn's parts while the tree is still jn (improve_tree roots the whole
        tree per added link): the same candidates, prices and choice. raw: the loads as an
        array for the compiled exchange (switches_kernel.Exchange), which needs only the
        dead links' lower ends and the links added, so it prices every step of jn's tree."""
        current = links
        joins = list(added)
        for cut in added:
            if cut not in current:
                continue
            if jn is None:
                current, _ = improve_tree(vid, current, [cut], fabric, adj, loads, None)
                if raw is not None:
                    raw.read(loads)            # improve_tree changed the book behind the array
                continue
            if keeps_the_cut(current, cut, loads, adj):
                continue
            if raw is not None:
                peak, _ = raw.at_peak(loads)
                got = raw.exchange.choose(vid, cut[0], cut[1], None, peak, raw.top(loads), joins, jn.lows,
                                          raw.total, raw.ncab)
                if got is not None:
                    new, delta = got
                    current = current - {cut} | {new}
                    loads.add(vid, delta)
                    raw.took(delta, loads)
                    joins = [new if j == cut else j for j in joins]
                continue
            options = self._options(vid, jn, cut, loads, dead_index)
            if not options:
                continue
            peak, local = trial_peak(loads, {})
            best: tuple[float, float, bool, Link, dict[tuple[str, str], float]] = (
                round(peak, 9), round(local, 9), False, cut, {})
            total = loads.total
            for c, d in options:
                # trial_peak(loads, d), its search of the heap skipped when the arcs d
                # changes already reach past the best peak (the peak is at least that)
                local = 0.0
                for arc, x in d.items():
                    v = loads.per_cable(arc, total.get(arc, 0.0) + x)
                    if v > local:
                        local = v
                near = round(local, 9)
                if near > best[0]:
                    continue
                key = (round(max(local, loads.peak_except(set(d))), 9), near, True, c, d)
                if key[:4] < best[:4]:
                    best = key
            if best[3] != cut:
                current = current - {cut} | {best[3]}
                loads.add(vid, best[4])
                jn = None                        # another tree now: improve_tree alone

    def _join(self, vid: int, dead_links: list[Link], dead_index: list[int],
              hosted: list[int]) -> _Joined | None:
        """The links `repair_tree` adds to tree vid (every one of its parts holding hosts),
        from its preorder, or None when this is not that case (then repair_tree runs).

        Its search joins the part with the most switches with hosts (then the smallest
        switch) to the others one at a time, each by the first live link, in (switch
        already joined, neighbour) order, from a joined switch to a switch of a part still
        to join: the first way it finds is then that one link (the search lists switches
        and their neighbours in name order)."""
        rt = self.rooted[vid]
        t = self.by_vid[vid]
        lows = sorted((a if rt.parent.get(a) == b else b for a, b in dead_links if (a, b) in t.links),
                      key=rt.tin.__getitem__)
        k = len(lows)
        spans = [(rt.tin[c], rt.tin[c] + rt.size[c]) for c in lows]
        # each part's nearest part above (-1: the root's part), its switches with hosts
        above = []
        for j in range(k):
            lo = spans[j][0]
            above.append(next((i for i in range(j - 1, -1, -1) if spans[i][0] <= lo < spans[i][1]), -1))
        count = [hosted[rt.tin[c]] for c in lows] + [hosted[0]]      # index -1: the root's part
        for j in range(k):
            count[above[j]] -= hosted[rt.tin[lows[j]]]
        parts = list(range(-1, k))
        if any(count[i] <= 0 for i in parts):
            return None                      # a part without hosts: the search walks through it
        most = max(count[i] for i in parts)
        first = [i for i in parts if count[i] == most]
        if len(first) > 1:
            def smallest(i: int) -> str:
                lo, hi = (0, len(rt.pre)) if i < 0 else spans[i]
                inner = [spans[j] for j in range(k) if above[j] == i]
                return min(v for n, v in enumerate(rt.pre[lo:hi], lo) if not any(a <= n < b for a, b in inner))
            first = [min(first, key=smallest)]
        ta, tb, both = self.crossing.ends(vid, rt)
        la = np.full(len(ta), -1, dtype=np.int64)
        lb = np.full(len(tb), -1, dtype=np.int64)
        for j, (lo, hi) in enumerate(spans):            # in preorder: the deepest span last
            la[(ta >= lo) & (ta < hi)] = j
            lb[(tb >= lo) & (tb < hi)] = j
        ok = both.copy()
        ok[dead_index] = False
        joined = np.zeros(k + 1, dtype=bool)            # by part + 1
        joined[first[0] + 1] = True
        links = self.crossing.links
        added: list[Link] = []
        for _ in range(k):
            ja, jb = joined[la + 1], joined[lb + 1]
            idx = np.flatnonzero(ok & (ja != jb)).tolist()
            if not idx:
                return None                  # no link from the joined parts: a longer way
            best: tuple[str, str] | None = None
            for i in idx:
                a, b = links[i]
                key = (a, b) if ja[i] else (b, a)
                if best is None or key < best:
                    best = key
            assert best is not None
            here, v = best
            added.append(link(here, v))
            n = self.crossing.index[link(here, v)]
            joined[(la[n] if not ja[n] else lb[n]) + 1] = True
        removed = [l for l in dead_links if l in t.links]
        return _Joined(rt, lows, spans, above, removed, added, la, lb, ta, tb)

    def _options(self, vid: int, jn: _Joined, cut: Link, loads: LoadBook, dead_index: list[int]
                 ) -> list[tuple[Link, dict[tuple[str, str], float]]]:
        """The candidates `_may_lower` keeps besides the cut link in the joined tree jn, each
        with its `Exchanges.delta`: the live links across the cut that also cross the cut
        of each link at the max load (so change its arcs) and whose own arcs stay below
        it. Only after `keeps_the_cut` said no (every hot arc off the cut is on the tree)."""
        peak, hot = loads.at_peak()
        if peak <= 0:
            return []
        ok = jn.ta >= 0
        ok &= jn.tb >= 0
        ok[dead_index] = False
        ok[self.crossing.index[cut]] = False
        for l in [cut] + [link(a, b) for a, b in hot if link(a, b) != cut]:
            in_a, in_b = jn.sides(l)
            ok &= in_a != in_b
        idx = np.flatnonzero(ok).tolist()
        if not idx:
            return []
        x, y = cut
        near = jn.side_parts(cut, jn.part(x))           # the parts on x's side of the cut
        s1 = sum(jn.sums[i][0] for i in near)
        h1 = sum(jn.sums[i][1] for i in near)
        s2, h2 = jn.rt.S - s1, jn.rt.H - h1
        up, down = s1 * h2, s2 * h1
        total = loads.total
        r = jn.rooting
        sid, names = self.sid, self.names
        out = []
        for i in idx:
            c = self.crossing.links[i]
            a, b = c
            if jn.part(a) not in near:
                a, b = b, a                          # a in x's part, b in y's part
            if ((up and loads.per_cable((a, b), total.get((a, b), 0.0) + up) >= peak)
                    or (down and loads.per_cable((b, a), total.get((b, a), 0.0) + down) >= peak)):
                continue
            d: dict[tuple[str, str], float] = {}
            for arc, v in ((cut, -s1 * h2), ((y, x), -s2 * h1), ((a, b), up), ((b, a), down)):
                if v:
                    d[arc] = v
            if r is None:                            # the joined tree rooted, for the ways (kept)
                r = jn.rooting = self._rooting(vid, jn)
            r.walk(sid[a], sid[x], s1, h1, s2, h2, names, d)
            r.walk(sid[b], sid[y], s2, h2, s1, h1, names, d)
            out.append((c, d))
        return out


_Plan = tuple[RootedTree, Link, str, str, tuple[int, int], tuple[int, int], list[tuple[Link, int, int]]]


def _mend(book: Book, plans: list[_Plan]) -> None:
    """The trees with one dead link, mended in turn as pair_failure mends a single dead
    pair's (routing/whatif/pairs.py), the dead arcs of every one of them left unpriced."""
    arcs = book.arc
    unpriced = [arcs[a] for x, y in sorted({p[1] for p in plans}) for a in ((x, y), (y, x))]
    for rt, (x, y), c, p, lower, upper, options in plans:
        sides = {c: Side(rt, c, c, lower, upper, book), p: Side(rt, p, c, upper, lower, book)}
        sx, sy = sides[x], sides[y]
        s1, h1, s2, h2 = sx.sr, sx.hr, sy.sr, sy.hr
        cut = [(arcs[(x, y)], -s1 * h2), (arcs[(y, x)], -s2 * h1)]
        cut = [(i, d) for i, d in cut if d]
        best = cheapest(book, rt, c, sx, sy, cut, unpriced, options)
        a, b = best[2]
        if rt.below(c, a) != (x == c):
            a, b = b, a
        book.add_all(cut + [(arcs[(a, b)], s1 * h2), (arcs[(b, a)], s2 * h1)]
                     + sx.deltas(a, book) + sy.deltas(b, book))


class _Joined:
    """A tree less its dead links (`removed`), in parts, plus the links that join them
    again (`added`), from the intact tree's rooting: each part is the range of its top
    (a dead link's lower end; -1: the root's part) in the preorder, less the ranges of
    the parts below it."""

    def __init__(self, rt: RootedTree, lows: list[str], spans: list[tuple[int, int]], above: list[int],
                 removed: list[Link], added: list[Link], la: np.ndarray, lb: np.ndarray,
                 ta: np.ndarray, tb: np.ndarray) -> None:
        self.rt, self.lows, self.spans, self.above = rt, lows, spans, above
        self.removed, self.added = removed, added
        self.la, self.lb, self.ta, self.tb = la, lb, ta, tb      # per fabric link: its ends' parts, positions
        k = len(lows)
        self.parts = list(range(-1, k))
        tops = [rt.pre[0]] + lows
        sums = {i: [rt.s[tops[i + 1]], rt.h[tops[i + 1]]] for i in self.parts}
        for j in range(k):
            sums[above[j]][0] -= rt.s[lows[j]]
            sums[above[j]][1] -= rt.h[lows[j]]
        self.sums = {i: (v[0], v[1]) for i, v in sums.items()}
        self.top = {i: tops[i + 1] for i in self.parts}
        self.ends = [(self.part(u), self.part(w)) for u, w in added]
        self.rooting: _Rooting | None = None

    def part(self, v: str) -> int:
        t = self.rt.tin[v]
        got = -1
        for j, (lo, hi) in enumerate(self.spans):         # in preorder: the deepest last
            if lo <= t < hi:
                got = j
        return got

    def side_parts(self, l: Link, start: int) -> set[int]:
        """The parts joined to `start` by the added links, but `l`."""
        seen = {start}
        todo = [start]
        while todo:
            i = todo.pop()
            for (p, q), a in zip(self.ends, self.added):
                if a == l:
                    continue
                for u, w in ((p, q), (q, p)):
                    if u == i and w not in seen:
                        seen.add(w)
                        todo.append(w)
        return seen

    def _hanging(self, i: int, lo: int, hi: int) -> set[int]:
        """The parts that hang, in the joined tree, from part i's switches at preorder
        positions [lo, hi): through an added link with its end in part i there."""
        out: set[int] = set()
        tin = self.rt.tin
        for (p, q), a in zip(self.ends, self.added):
            for end, mine, other in ((a[0], p, q), (a[1], q, p)):
                if mine == i and lo <= tin[end] < hi:
                    out |= self.side_parts(a, other) - {i}
        return out

    def sides(self, l: Link) -> tuple[np.ndarray, np.ndarray]:
        """Per fabric link, whether each end lies on one side of the joined tree's link l
        (the side away from... any one side: a link crosses l's cut when they differ)."""
        la, lb = self.la, self.lb
        if l in self.added:
            table = np.zeros(len(self.parts) + 1, dtype=bool)
            table[[i + 1 for i in self.side_parts(l, self.ends[self.added.index(l)][0])]] = True
            return table[la + 1], table[lb + 1]
        a, b = l
        rt = self.rt
        v = a if rt.parent.get(a) == b else b
        i = self.part(v)
        lo, hi = rt.tin[v], rt.tin[v] + rt.size[v]
        table = np.zeros(len(self.parts) + 1, dtype=bool)
        hang = self._hanging(i, lo, hi)
        table[[j + 1 for j in hang]] = True
        ta, tb = self.ta, self.tb
        in_a = table[la + 1] | ((la == i) & (ta >= lo) & (ta < hi))
        in_b = table[lb + 1] | ((lb == i) & (tb >= lo) & (tb < hi))
        return in_a, in_b

    def changed(self) -> list[tuple[str, str, int, int]]:
        """(switch, its parent, senders and hosts on its side) of each link of the joined
        tree whose side's sums differ from the intact tree's (with the switch below the
        link when rooted as the intact tree), and of each added link: only links on the
        ways from the parts' ends (of dead and added links) up to their parts' tops can."""
        rt = self.rt
        parent, tin, size, rs, rh = rt.parent, rt.tin, rt.size, rt.s, rt.h
        out = []
        starts: dict[int, list[str]] = {i: [] for i in self.parts}
        # per part, what changes below a switch: the parts cut off below it (less), the
        # parts hanging from an added link's end below it (more), by preorder position
        shift: dict[int, list[tuple[int, int, int]]] = {i: [] for i in self.parts}
        for j, c in enumerate(self.lows):
            up = parent[c]
            assert up is not None
            starts[self.above[j]].append(up)
            shift[self.above[j]].append((tin[c], -rs[c], -rh[c]))
        for (p, q), a in zip(self.ends, self.added):
            for end, mine, other in ((a[0], p, q), (a[1], q, p)):
                starts[mine].append(end)
                far = self.side_parts(a, other)
                shift[mine].append((tin[end], sum(self.sums[k][0] for k in far), sum(self.sums[k][1] for k in far)))
        for i in self.parts:
            top = self.top[i]
            moves = shift[i]
            seen: set[str] = set()
            for u in starts[i]:
                v = u
                while v != top and v not in seen:
                    seen.add(v)
                    lo = tin[v]
                    hi = lo + size[v]
                    s, h = rs[v], rh[v]
                    for t, ds, dh in moves:
                        if lo <= t < hi:
                            s += ds
                            h += dh
                    up = parent[v]
                    assert up is not None
                    if s != rs[v] or h != rh[v]:
                        out.append((v, up, s, h))
                    v = up
        for (_, q), (u, w) in zip(self.ends, self.added):
            side = self.side_parts((u, w), q)
            out.append((w, u, sum(self.sums[j][0] for j in side), sum(self.sums[j][1] for j in side)))
        return out


class _Rooting:
    """A tree (neighbour lists by switch number, less `removed`, plus `added`) rooted at
    `root`: a depth-first preorder, parents, subtree sizes and sums of senders and hosts,
    all by switch number."""

    def __init__(self, root: int, adj: list[list[int]], removed: Sequence[tuple[int, int]],
                 added: Sequence[tuple[int, int]], senders: list[int], hosts: list[int]) -> None:
        nb = list(adj)
        for a, b in removed:
            nb[a] = [v for v in nb[a] if v != b]
            nb[b] = [v for v in nb[b] if v != a]
        for a, b in added:
            nb[a] = nb[a] + [b]
            nb[b] = nb[b] + [a]
        n = len(adj)
        parent = [-2] * n                    # -2: off the tree; the root's: -1
        parent[root] = -1
        pre: list[int] = []
        stack = [root]
        push, pop, put = stack.append, stack.pop, pre.append
        while stack:
            u = pop()
            put(u)
            for v in nb[u]:
                if parent[v] == -2:
                    parent[v] = u
                    push(v)
        s = list(senders)
        h = list(hosts)
        size = [1] * n
        for v in reversed(pre[1:]):
            p = parent[v]
            s[p] += s[v]
            h[p] += h[v]
            size[p] += size[v]
        tin = [-1] * n
        for i, v in enumerate(pre):
            tin[v] = i
        self.pre, self.parent, self.s, self.h, self.size, self.tin = pre, parent, s, h, size, tin
        self._ends: tuple[np.ndarray, np.ndarray] | None = None

    def walk(self, q: int, e: int, s1: int, h1: int, s2: int, h2: int, names: list[str],
             out: dict[tuple[str, str], float]) -> None:
        """Exchanges.delta's changes on the way from q to e, the end of the exchanged link
        in q's part (senders s1 and hosts h1 in it, s2 and h2 in the other), with the part
        rooted at e: up from q along this rooting to the first ancestor of e, then down
        to e, where each switch's subtree towards q is the tree less its child's towards e."""
        parent, tin, size, s, h = self.parent, self.tin, self.size, self.s, self.h
        te = tin[e]
        down: list[int] = []
        v = e
        while q != e:
            tq = tin[q]
            if tq <= te < tq + size[q]:              # an ancestor of e: the rest goes down
                while v != q:                        # e's ancestors up to q, to walk back down
                    down.append(v)
                    v = parent[v]
                break
            p = parent[q]
            _put(out, names[p], names[q], s1, h1, s2, h2, s[q], h[q])
            q = p
        root = self.pre[0]
        S, H = s[root], h[root]
        while down:
            t = down.pop()                           # q's child towards e: q's parent when rooted at e
            _put(out, names[t], names[q], s1, h1, s2, h2, S - s[t], H - h[t])
            q = t

    def span(self, a: int, b: int) -> tuple[int, int]:
        """The preorder range of the lower end of tree link (a, b)."""
        c = a if self.parent[a] == b else b
        lo = self.tin[c]
        return lo, lo + self.size[c]

    def ends(self, la: np.ndarray, lb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per link of the fabric (ends la, lb by switch number), its ends' positions (-1: off the tree)."""
        if self._ends is None:
            pos = np.asarray(self.tin, dtype=np.int64)
            self._ends = (pos[la], pos[lb])
        return self._ends


def _put(out: dict[tuple[str, str], float], p: str, q: str, s1: int, h1: int, s2: int, h2: int, sq: int,
         hq: int) -> None:
    """Exchanges.delta's two changes on the step from q to p (q's subtree: senders sq, hosts hq)."""
    d = (s1 - sq) * (hq + h2) - (s1 - sq + s2) * hq
    if d:
        out[(p, q)] = d
    e = (sq + s2) * (h1 - hq) - sq * (h1 - hq + h2)
    if e:
        out[(q, p)] = e
