"""The what-if of every single neighbour-pair failure, fast, with exactly the figures of
`repair` (routing/repair/engine.py).

Without the deadlock guard, `repair` mends each tree a dead pair breaks by one link
exchange (its fast path): the trees in turn, each taking the live link across its cut with
the lowest (max load per cable over the fabric, max over the arcs the exchange changes,
link), and adding its load changes to the book before the next tree. This module makes
the same choices in the same order, from the same integer loads, but prices a candidate
link in constant time instead of the time of its two paths:

- every tree is rooted once (Euler intervals and subtree sums of senders and hosts), so a
  cut's two parts and each node's sums in a part rooted at the cut's end need no search,
  and the candidates (the live links with one end in the cut-off subtree's interval) are
  found with numpy from each tree's positions of every link's ends (`Crossing`);
- an exchange changes the loads of the new link, of the cut link, and of the tree's arcs
  on the way from the new link's ends to the cut's ends (`Exchanges.delta`), and each of
  those changes depends only on the node it passes, so the largest load per cable on the
  way from a node to the cut's end is kept per node (memo), as is which of the fabric's
  most loaded arcs lie on that way (a bit mask); a way is walked by each tree's table of
  steps (parent, arc indices, sums: `RootedTree.steps`), and down towards the cut's upper
  end only as far as r's ancestors have been met (`Side.toward`);
- the largest load off the changed arcs is then the first of the fabric's arcs, in
  decreasing load (sorted when a tree must be priced), that the candidate does not change;
- the dead pair's two arcs are never priced (as in `repair`): every broken tree leaves
  them, so their load while the trees are mended one by one says nothing of the result.

A failure whose broken trees do not all take the fast path of `repair` (a tree that the
cut leaves without a live link across it, a tree that misses a host switch) goes to
`repair` itself, as does every failure of a plan kept deadlock-free.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Mapping

import numpy as np

from vlanroute.model.links import Link, link
from vlanroute.routing.repair.model import Tree, subtree_sums

TOP = 62             # the most loaded arcs tracked in the bit masks (fits a small int)
MIN_TOP = 16         # fewer left in the prefix: sorted again
SMALL = 24           # a cut-off subtree of at most this many switches: its links searched one by one


class RootedTree:
    """One VLAN's tree rooted at its smallest switch: parents, Euler intervals (preorder
    positions), subtree sums of senders and hosts."""

    def __init__(self, tree: Tree, hosts: Mapping[str, int]) -> None:
        adj: dict[str, list[str]] = {}
        for a, b in sorted(tree.links):
            adj.setdefault(a, []).append(b)
            adj.setdefault(b, []).append(a)
        root = min(adj)
        parent: dict[str, str | None] = {root: None}
        pre: list[str] = []
        stack = [root]
        while stack:
            u = stack.pop()
            pre.append(u)
            for v in adj[u]:
                if v not in parent:
                    parent[v] = u
                    stack.append(v)
        tin = {v: i for i, v in enumerate(pre)}
        s, h = subtree_sums(pre, parent, tree.senders(hosts), hosts)
        size = dict.fromkeys(pre, 1)
        for v in reversed(pre[1:]):
            p = parent[v]
            assert p is not None
            size[p] += size[v]
        self.parent, self.pre, self.tin, self.size = parent, pre, tin, size
        self.s, self.h = s, h
        self.S, self.H = s[root], h[root]
        self._step: dict[str, tuple[str, int, int, int, int]] = {}
        self._step_arcs: Mapping[tuple[str, str], int] | None = None

    def steps(self, arcs: Mapping[tuple[str, str], int]) -> dict[str, tuple[str, int, int, int, int]]:
        """Each switch but the root: (its parent, the index of its arc up, of its arc down,
        the senders and hosts below it), for these arc indices (kept: one lookup per step
        of the walks up the tree)."""
        if self._step_arcs is not arcs:
            self._step = {v: (p, arcs[(v, p)], arcs[(p, v)], self.s[v], self.h[v])
                          for v, p in self.parent.items() if p is not None}
            self._step_arcs = arcs
        return self._step

    def below(self, c: str, q: str) -> bool:
        """q lies in c's subtree."""
        t = self.tin[c]
        return t <= self.tin[q] < t + self.size[c]


class Side:
    """One part of a cut tree, rooted at its end r of the cut: each node's way to r, the
    load changes on it, and (memo) the largest load per cable and the top arcs on it."""

    def __init__(self, rt: RootedTree, r: str, c: str, own: tuple[int, int], other: tuple[int, int],
                 book: Book) -> None:
        self.rt, self.r, self.c = rt, r, c      # c: the cut's lower end (its subtree is one part)
        self.step = rt.steps(book.arc)          # looked up once per side, not per way
        self.sr, self.hr = own
        self.so, self.ho = other
        # r is the upper end: r's ancestors -> their child towards r, filled from r up as
        # far as a way has met r's ancestors (`top`: the highest so far)
        self.toward: dict[str, str] = {}
        self.top = r
        self.memo: dict[str, tuple[float, int]] = {r: (0.0, 0)}
        # a switch -> its next on the way to r, and the changes on the step's two arcs (i, d), (j, e)
        self.steps: dict[str, tuple[str, int, int, int, int]] = {}

    def way(self, q: str, book: Book) -> tuple[float, int]:
        memo = self.memo
        got = memo.get(q)
        if got is not None:
            return got
        # The loop most of a dead pair's time is spent in (unrolled: the step's two arcs).
        rt = self.rt
        step = self.step
        S, H = rt.S, rt.H
        path = []
        if self.r != self.c:
            tin, size = rt.tin, rt.size
            tr = tin[self.r]
            while q not in memo:
                tq = tin[q]
                if tq <= tr < tq + size[q]:          # an ancestor of r: down towards r
                    t = self.toward.get(q)
                    if t is None:
                        t = self._towards(q)
                    _, iu, idn, st, ht = step[t]
                    path.append((q, t, idn, S - st, H - ht, iu))
                    q = t
                else:
                    p, iu, idn, sq, hq = step[q]
                    path.append((q, p, iu, sq, hq, idn))
                    q = p
        else:
            while q not in memo:
                p, iu, idn, sq, hq = step[q]
                path.append((q, p, iu, sq, hq, idn))
                q = p
        peak, mask = memo[q]
        sr, hr, so, ho = self.sr, self.hr, self.so, self.ho
        total, ncab, bits = book.total, book.ncab, book.bits
        inf = float("inf")
        steps = self.steps
        for v, p, j, sq, hq, i in reversed(path):
            # Exchanges.delta's changes on the two arcs of q's step: i = p->q, j = q->p.
            d = (sr - sq) * ho - so * hq
            e = so * (hr - hq) - sq * ho
            if d:
                x = total[i] + d
                n = ncab[i]
                val = x / n if n else (inf if x > 1e-9 else 0.0)
                if val > peak:
                    peak = val
                mask |= bits[i]
            if e:
                x = total[j] + e
                n = ncab[j]
                val = x / n if n else (inf if x > 1e-9 else 0.0)
                if val > peak:
                    peak = val
                mask |= bits[j]
            memo[v] = (peak, mask)
            steps[v] = (p, i, d, j, e)
        return peak, mask

    def _towards(self, q: str) -> str:
        """q's child towards r (q an ancestor of r), filling `toward` from `top` up to q."""
        parent, toward = self.rt.parent, self.toward
        v = self.top
        while v != q:
            p = parent[v]
            assert p is not None
            toward[p] = v
            v = p
        self.top = q
        return toward[q]

    def deltas(self, q: str, book: Book) -> list[tuple[int, int]]:
        """The load changes on q's way to r (after way(q))."""
        self.way(q, book)
        out: list[tuple[int, int]] = []
        steps = self.steps
        while q != self.r:
            q, i, d, j, e = steps[q]
            if d:
                out.append((i, d))
            if e:
                out.append((j, e))
        return out


class Book:
    """The raw load of every arc and the cables per arc; the most loaded arcs, in decreasing
    load per cable, each with a bit (`topbit`), and on demand every arc so sorted.

    The most loaded arcs are kept as an exact prefix of that order while loads change
    (`add`): an arc that rises to the prefix's last load or above joins it, one of the
    prefix that falls below the rest of it leaves it. Every arc outside then stays at or
    below the prefix's last load, so the first arc of the prefix that an exchange does not
    change carries the largest load off the changed arcs. Only when the prefix has shrunk
    below MIN_TOP arcs is it sorted again from scratch (numpy's partition): an exchange
    changes the loads of a few dozen arcs, a full sort per broken tree cost most of it."""

    def __init__(self, arc: Mapping[tuple[str, str], int], total: list[float], ncab: list[int]) -> None:
        self.arc, self.total, self.ncab = arc, total, ncab
        self._ncab = np.asarray(ncab, dtype=float)
        self._order: list[tuple[float, int]] | None = None
        self._top: list[tuple[float, int]] = []           # (-load per cable, arc), ascending
        self._in_top: dict[int, float] = {}                # arc -> its key in _top
        self._fresh = False                                 # _top is an exact prefix
        self._marked = False                                # topbit and topval match _top
        self.topbit: dict[int, int] = {}
        self.bits = [0] * len(total)                        # topbit as a list by arc (0: not tracked)
        self.topval: list[float] = []
        self.rounded: dict[float, float] = {}               # round(x, 9) of the values met, kept

    def per_cable(self, i: int, raw: float) -> float:
        n = self.ncab[i]
        return raw / n if n else (float("inf") if raw > 1e-9 else 0.0)

    def after(self, i: int, d: float) -> float:
        return self.per_cable(i, self.total[i] + d)

    def add(self, i: int, d: float) -> None:
        x = self.total[i] + d
        self.total[i] = x
        self._order = None
        if not self._fresh:
            return
        top = self._top
        key = -self.per_cable(i, x)
        old = self._in_top.pop(i, None)
        if old is not None:
            del top[bisect_left(top, (old, i))]
            self._marked = False
        if top and key <= top[-1][0]:
            insort(top, (key, i))
            self._in_top[i] = key
            self._marked = False
            if len(top) > TOP:
                _, j = top.pop()
                del self._in_top[j]
        elif not top:
            self._fresh = False

    def add_all(self, changes: Iterable[tuple[int, float]]) -> None:
        """add(i, d) for each change in turn but those with d = 0, inline (an exchange
        makes a few dozen)."""
        total, ncab, in_top = self.total, self.ncab, self._in_top
        inf = float("inf")
        for i, d in changes:
            if not d:
                continue
            x = total[i] + d
            total[i] = x
            self._order = None
            if not self._fresh:
                continue
            top = self._top
            n = ncab[i]
            key = -(x / n if n else (inf if x > 1e-9 else 0.0))      # per_cable, inline
            old = in_top.pop(i, None)
            if old is not None:
                del top[bisect_left(top, (old, i))]
                self._marked = False
            if top and key <= top[-1][0]:
                insort(top, (key, i))
                in_top[i] = key
                self._marked = False
                if len(top) > TOP:
                    _, j = top.pop()
                    del in_top[j]
            elif not top:
                self._fresh = False

    def replace(self, total: list[float]) -> None:
        """Every arc's raw load at once (the compiled kernel's result)."""
        self.total[:] = total
        self._order = None
        self._fresh = self._marked = False

    def mark_top(self) -> None:
        """The most loaded arcs (up to TOP), in decreasing load per cable, each with its bit."""
        if not self._fresh or len(self._top) < MIN_TOP:
            raw = np.asarray(self.total, dtype=float)
            vals = np.where(self._ncab > 0, raw / np.where(self._ncab > 0, self._ncab, 1.0),
                            np.where(raw > 1e-9, np.inf, 0.0))
            k = min(TOP, len(vals))
            idx = np.argpartition(-vals, k - 1)[:k] if 0 < k < len(vals) else np.arange(len(vals))
            idx = idx[np.lexsort((idx, -vals[idx]))]
            self._top = [(-float(vals[i]), int(i)) for i in idx]
            self._in_top = {i: k for k, i in self._top}
            self._fresh, self._marked = bool(self._top), False
        if not self._marked:
            bits = self.bits
            for i in self.topbit:
                bits[i] = 0
            self.topbit = {i: 1 << n for n, (_, i) in enumerate(self._top)}
            for i, b in self.topbit.items():
                bits[i] = b
            self.topval = [-k for k, _ in self._top]
            self._marked = True

    @property
    def order(self) -> list[tuple[float, int]]:
        """Every arc as (-load per cable, index), most loaded first."""
        if self._order is None:
            vals = self.values()
            self._order = [(-vals[i], i) for i in sorted(range(len(vals)), key=vals.__getitem__, reverse=True)]
        return self._order

    def values(self) -> list[float]:
        """Every arc's load per cable (per_cable, inline)."""
        inf = float("inf")
        return [x / n if n else (inf if x > 1e-9 else 0.0) for x, n in zip(self.total, self.ncab)]

    def peak_except(self, mask: int, changed: list[tuple[int, int]] | None) -> float:
        """The largest load per cable off the changed arcs (their bits in mask, or, past the
        tracked arcs, the list itself); after mark_top."""
        free = ~mask & (mask + 1)
        n = free.bit_length() - 1
        if n < len(self.topval):
            return self.topval[n]
        skip = {a for a, _ in changed or ()}
        for k, i in self.order:
            if i not in skip:
                return -k
        return 0.0

    def max_load(self) -> float:
        return max(self.values(), default=0.0)


class Crossing:
    """The fabric's links (of adj) in order and, per tree, the preorder position of each
    link's ends (-1: not on the tree), so that the links across a cut (one end inside a
    preorder interval, the other outside) are found with numpy, not by a search."""

    def __init__(self, adj: Mapping[str, list[str]], wanted: set[str]) -> None:
        self.links = sorted({link(a, b) for a, bs in adj.items() for b in bs})
        self.index = {l: i for i, l in enumerate(self.links)}
        self.adj = adj
        self.wanted = wanted
        self._ends: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._covers: dict[int, bool] = {}
        self._arcs: Mapping[tuple[str, str], int] | None = None
        self._with_arcs: list[tuple[Link, int, int]] = []

    def covers(self, vid: int, rt: RootedTree) -> bool:
        """Tree vid holds every switch of `wanted` (the live switches with hosts)."""
        got = self._covers.get(vid)
        if got is None:
            got = self._covers[vid] = self.wanted <= rt.tin.keys()
        return got

    def ends(self, vid: int, rt: RootedTree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per link (in order), the preorder positions of its ends on tree vid (-1: not on
        it) and whether both are on it (kept per tree)."""
        got = self._ends.get(vid)
        if got is None:
            ta = np.array([rt.tin.get(a, -1) for a, _ in self.links], dtype=np.int32)
            tb = np.array([rt.tin.get(b, -1) for _, b in self.links], dtype=np.int32)
            got = self._ends[vid] = (ta, tb, (ta >= 0) & (tb >= 0))
        return got

    def across(self, vid: int, rt: RootedTree, lo: int, hi: int, skip: Link,
               arcs: Mapping[tuple[str, str], int]) -> list[tuple[Link, int, int]]:
        """The links, in order, with one end in the preorder interval [lo, hi) of tree vid
        and the other on the tree outside it, but `skip`; each with the indices of its arcs
        a->b and b->a in `arcs`."""
        if self._arcs is not arcs:
            self._with_arcs = [((a, b), arcs[(a, b)], arcs[(b, a)]) for a, b in self.links]
            self._arcs = arcs
        links = self._with_arcs
        if hi - lo <= SMALL:
            # A small subtree (most cuts: the links near a tree's leaves): its switches'
            # links looked at one by one cost less than numpy's calls over every link.
            tin, index, adj, pre = rt.tin, self.index, self.adj, rt.pre
            found = set()
            for z in pre[lo:hi]:
                for u in adj.get(z, ()):
                    tu = tin.get(u)
                    if tu is not None and not lo <= tu < hi:
                        found.add(index[(z, u) if z < u else (u, z)])
            k = self.index.get(skip)
            found.discard(-1 if k is None else k)
            return [links[i] for i in sorted(found)]
        ta, tb, both = self.ends(vid, rt)
        cross = (((ta >= lo) & (ta < hi)) != ((tb >= lo) & (tb < hi))) & both
        k = self.index.get(skip)
        if k is not None:
            cross[k] = False
        return [links[i] for i in np.flatnonzero(cross).tolist()]


def pair_failure(rooted: Mapping[int, RootedTree], broken: list[int], pair: Link,
                 adj: Mapping[str, list[str]], wanted: set[str], book: Book,
                 crossing: Crossing | None = None) -> float | None:
    """The max load per cable after `repair` mends the broken trees of a dead pair (book:
    the intact loads, this pair's cables at 0; changed in place), or None when a broken tree
    is not one of `repair`'s fast cases (then `repair` itself must run). crossing: the
    fabric's links by adj and the switches `wanted`, kept from one failure to the next."""
    if crossing is None:
        crossing = Crossing(adj, wanted)
    x, y = pair
    plans = []
    for vid in broken:
        rt = rooted[vid]
        if not crossing.covers(vid, rt):
            return None
        c = y if rt.parent.get(y) == x else x
        p = x if c == y else y
        sc, hc = rt.s[c], rt.h[c]
        lower = (sc, hc)
        upper = (rt.S - sc, rt.H - hc)
        # Candidates: live links from one part to the other, as Exchanges.candidates.
        t0 = rt.tin[c]
        found = crossing.across(vid, rt, t0, t0 + rt.size[c], pair, book.arc)
        if not found:
            return None
        plans.append((rt, c, p, lower, upper, found))
    for rt, c, p, lower, upper, options in plans:
        sides = {c: Side(rt, c, c, lower, upper, book), p: Side(rt, p, c, upper, lower, book)}
        sx, sy = sides[x], sides[y]
        s1, h1, s2, h2 = sx.sr, sx.hr, sy.sr, sy.hr
        cut = [(book.arc[(x, y)], -s1 * h2), (book.arc[(y, x)], -s2 * h1)]
        cut = [(a, d) for a, d in cut if d]
        dead = [book.arc[(x, y)], book.arc[(y, x)]]
        best = cheapest(book, rt, c, sx, sy, cut, dead, options)
        a, b = best[2]
        if rt.below(c, a) != (x == c):
            a, b = b, a
        book.add_all(cut + [(book.arc[(a, b)], s1 * h2), (book.arc[(b, a)], s2 * h1)]
                     + sx.deltas(a, book) + sy.deltas(b, book))
    return book.max_load()


def cheapest(book: Book, rt: RootedTree, c: str, sx: Side, sy: Side, cut: list[tuple[int, int]],
              dead: list[int], options: list[tuple[Link, int, int]]) -> tuple[float, float, Link]:
    """repair's choice among the candidate links: the lowest (max load per cable over the
    fabric, max over the arcs the exchange changes, link), the dead pair's arcs left out."""
    book.mark_top()
    s1, h1, s2, h2 = sx.sr, sx.hr, sy.sr, sy.hr
    x = sx.r
    cut_mask = 0
    for i in dead:
        cut_mask |= book.topbit.get(i, 0)
    cut_peak = 0.0
    skip = cut + [(i, 0) for i in dead]
    best: tuple[float, float, Link] | None = None
    # rt.below and Book.peak_except inline: this loop runs per candidate.
    bits, topval = book.bits, book.topval
    rounded = book.rounded
    tin = rt.tin
    lo = tin[c]
    hi = lo + rt.size[c]
    x_lower = x == c
    up, down = s1 * h2, s2 * h1
    total, ncab, inf = book.total, book.ncab, float("inf")
    memo_x, memo_y = sx.memo, sy.memo
    for link_, i, j in options:
        a, b = link_
        if (lo <= tin[a] < hi) != x_lower:
            a, b, i, j = b, a, j, i              # a in x's part, b in y's part; i: a->b, j: b->a
        local, mask = cut_peak, cut_mask
        if up:                                   # book.after, inline
            v = total[i] + up
            n = ncab[i]
            val = v / n if n else (inf if v > 1e-9 else 0.0)
            if val > local:
                local = val
            mask |= bits[i]
        if down:
            v = total[j] + down
            n = ncab[j]
            val = v / n if n else (inf if v > 1e-9 else 0.0)
            if val > local:
                local = val
            mask |= bits[j]
        got = memo_x.get(a)
        pa, ma = got if got is not None else sx.way(a, book)
        got = memo_y.get(b)
        pb, mb = got if got is not None else sy.way(b, book)
        if pa > local:
            local = pa
        if pb > local:
            local = pb
        mask |= ma | mb
        k = (~mask & (mask + 1)).bit_length() - 1
        if k < len(topval):
            rest = topval[k]
        else:
            changed = skip + [(arc, d) for arc, d in ((i, up), (j, down)) if d] + sx.deltas(a, book) + sy.deltas(b, book)
            rest = book.peak_except(mask, changed)
        # round(x, 9), looked up: the loads repeat, and round with digits is slow
        raw = local if local >= rest else rest
        peak = rounded.get(raw)
        if peak is None:
            peak = rounded[raw] = round(raw, 9)
        if best is not None and peak > best[0]:
            continue                             # the key below loses on its first field
        near = rounded.get(local)
        if near is None:
            near = rounded[local] = round(local, 9)
        key = (peak, near, link_)
        if best is None or key < best:
            best = key
    assert best is not None
    return best
