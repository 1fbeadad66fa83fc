"""The what-if of every single neighbour-pair failure (routing/whatif/pairs.py), compiled:
the same choices as `pair_failure`, so the same figures as `repair`, with numba.

`pair_failure` prices a candidate link in constant time, but each broken tree still costs
about a hundred microseconds of interpreted walks: on a 32x32 torus a dead pair breaks 256
trees, and the 2,048 pairs took about half of `vlanroute whatif`'s two minutes. Here the
same algorithm runs over flat arrays, every tree's rooting stacked by row (`Rooted`):

- the broken trees in turn, each cut at the dead pair into the part below its lower end c
  and the part above it; the candidates are the live links from one part to the other, in
  the order of their names (`Crossing.across`);
- a candidate's key is (the max load per cable over the fabric after the exchange, the
  max over the arcs the exchange changes, the link), the lowest taken: the changed arcs are
  the new link's and those on the tree's way from its ends to the cut's ends, each change a
  closed form of the subtree sums (`Side.way`), kept per switch (memo) with the largest load
  on the way and which of the fabric's most loaded arcs it passes (a bit mask); the max off
  the changed arcs is the first of those arcs not in the mask, or a scan of every arc;
- the dead pair's arcs are never priced.

The keys are compared as floats, where `pair_failure` rounds them to 9 digits first: every
load is an integer count of host pairs (`usable` checks it) over a small number of cables,
so two different loads differ by far more than that and the rounding never merges two keys.

numba is optional (the extra `fast`): this module imports it, so only callers that found
it import this module (failures.use_kernel). The first call compiles the kernel, about 4 s,
cached on disk by numba for the next runs (0.3 s to load).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vlanroute.routing.numba_jit import jit
from vlanroute.routing.whatif.pairs import RootedTree

TOP = 62             # the most loaded arcs tracked in the bit masks, as pairs.TOP
TOP_MAX = 63         # bits of an int64 mask

Array = np.ndarray       # the kernels' arrays: int64, float64 or bool, one or two dimensions


class Rooted:
    """Every tree's rooting (pairs.RootedTree) as arrays by row and switch number, with the
    fabric's arcs and links by number: what the kernel reads."""

    def __init__(self, rooted: Mapping[int, RootedTree], arcs: Mapping[tuple[str, str], int],
                 links: Sequence[tuple[str, str]], wanted: set[str], base_total: Sequence[float],
                 tracked: int = TOP) -> None:
        """tracked: the most loaded arcs kept in the bit masks (at most 63; fewer only to
        test the scan of every arc that follows when an exchange changes all of them)."""
        assert 1 <= tracked <= TOP_MAX
        self.tracked = tracked
        names = sorted({s for a in arcs for s in a} | {s for rt in rooted.values() for s in rt.tin})
        number = {s: i for i, s in enumerate(names)}
        n, k = len(names), len(rooted)
        self.names, self.number = names, number
        self.row = {vid: r for r, vid in enumerate(rooted)}
        self.parent = np.full((k, n), -2, dtype=np.int64)
        self.tin = np.full((k, n), -1, dtype=np.int64)
        self.size = np.zeros((k, n), dtype=np.int64)
        self.s = np.zeros((k, n), dtype=np.int64)
        self.h = np.zeros((k, n), dtype=np.int64)
        self.arc_up = np.full((k, n), -1, dtype=np.int64)       # v -> its parent
        self.arc_down = np.full((k, n), -1, dtype=np.int64)     # its parent -> v
        self.pre = np.full((k, n), -1, dtype=np.int64)
        self.total_s = np.zeros(k, dtype=np.int64)
        self.total_h = np.zeros(k, dtype=np.int64)
        self.count = np.zeros(k, dtype=np.int64)               # switches on the tree
        self.covers = np.zeros(k, dtype=np.bool_)
        for r, rt in enumerate(rooted.values()):
            for v, p in rt.parent.items():
                i = number[v]
                self.tin[r, i] = rt.tin[v]
                self.size[r, i] = rt.size[v]
                self.s[r, i] = rt.s[v]
                self.h[r, i] = rt.h[v]
                if p is None:
                    self.parent[r, i] = -1
                else:
                    self.parent[r, i] = number[p]
                    self.arc_up[r, i] = arcs[(v, p)]
                    self.arc_down[r, i] = arcs[(p, v)]
            self.pre[r, :len(rt.pre)] = [number[v] for v in rt.pre]
            self.total_s[r], self.total_h[r] = rt.S, rt.H
            self.count[r] = len(rt.pre)
            self.covers[r] = wanted <= rt.tin.keys()
        # the links in the order of their names (a key's last field), each end's links
        self.link_a = np.array([number[a] for a, _ in links], dtype=np.int64)
        self.link_b = np.array([number[b] for _, b in links], dtype=np.int64)
        self.link_ab = np.array([arcs[(a, b)] for a, b in links], dtype=np.int64)
        self.link_ba = np.array([arcs[(b, a)] for a, b in links], dtype=np.int64)
        self.link_index = {l: i for i, l in enumerate(links)}
        ends: list[list[int]] = [[] for _ in names]
        for i, (a, b) in enumerate(links):
            ends[number[a]].append(i)
            ends[number[b]].append(i)
        self.end_start = np.zeros(n + 1, dtype=np.int64)
        self.end_start[1:] = np.cumsum([len(e) for e in ends])
        self.end_link = np.array([i for e in ends for i in e], dtype=np.int64)
        # every load an integer count of host pairs, exactly held: the keys compare unrounded
        self.usable = all(float(x).is_integer() and abs(x) < 2.0 ** 52 for x in base_total)
        # the numbering the arrays were built with: a caller sharing them checks its own against it
        self.arcs, self.links = arcs, list(links)

    def pair_failure(self, broken: Sequence[int], pair: tuple[str, str], total: Sequence[float],
                     ncab: Sequence[int], arcs: Mapping[tuple[str, str], int]) -> float | None:
        """pairs.pair_failure's figure (the max load per cable after `repair` mends the
        broken trees of a dead pair; total: the intact loads, ncab: the cables per arc with
        this pair's at 0), or None where it gives None."""
        got = self.mend([(vid, pair) for vid in broken], [pair], np.array(total, dtype=np.float64), ncab, arcs)
        return None if np.isnan(got) else got

    def mend(self, plans: Sequence[tuple[int, tuple[str, str]]], dead: Sequence[tuple[str, str]],
             total: np.ndarray, ncab: Sequence[int], arcs: Mapping[tuple[str, str], int]) -> float:
        """doubles_pairs._mend: each tree of plans (vid, its one dead link) in turn, mended as
        pair_failure mends it, the links `dead` never taken, the arcs of the plans' dead
        links never priced (total: the loads, changed in place). The max load per cable
        after, or NaN when a tree misses a host switch or has no live link across its cut."""
        number, index = self.number, self.link_index
        rows = np.array([self.row[vid] for vid, _ in plans], dtype=np.int64)
        xs = np.array([number[x] for _, (x, _) in plans], dtype=np.int64)
        ys = np.array([number[y] for _, (_, y) in plans], dtype=np.int64)
        cut_xy = np.array([arcs[(x, y)] for _, (x, y) in plans], dtype=np.int64)
        cut_yx = np.array([arcs[(y, x)] for _, (x, y) in plans], dtype=np.int64)
        excluded = np.zeros(len(self.link_a), dtype=np.bool_)
        excluded[[index[l] for l in dead]] = True
        unpriced = np.array([arcs[a] for x, y in sorted({l for _, l in plans}) for a in ((x, y), (y, x))],
                            dtype=np.int64)
        return float(_mend(rows, xs, ys, cut_xy, cut_yx, excluded, unpriced, total,
                           np.array(ncab, dtype=np.float64), self.tracked, self.parent, self.tin, self.size,
                           self.s, self.h, self.arc_up, self.arc_down, self.pre, self.total_s, self.total_h,
                           self.count, self.covers, self.link_a, self.link_b, self.link_ab, self.link_ba,
                           self.end_start, self.end_link))


@jit
def _value(x: float, n: float) -> float:
    """Book.per_cable: a raw load per cable (a link without live cables: inf if loaded)."""
    if n > 0:
        return x / n
    return np.inf if x > 1e-9 else 0.0


@jit
def _walk(q: int, r: int, sr: int, hr: int, so: int, ho: int, row: int, parent: Array, tin: Array, size: Array,
          s: Array, h: Array, arc_up: Array, arc_down: Array, big_s: int, big_h: int, toward: Array, total: Array,
          ncab: Array, bits: Array, stamp: Array, epoch: int, mpeak: Array, mmask: Array, nxt: Array, ci: Array,
          cd: Array, cj: Array, ce: Array, buf: Array) -> tuple[float, int]:
    """Side.way: fill the memo on q's way to r, the cut's end in q's part: up the tree, but
    from an ancestor of r (only in the part above the cut) down towards r."""
    n = 0
    tr = tin[row, r]
    while stamp[q] != epoch:
        if tin[row, q] <= tr < tin[row, q] + size[row, q]:
            t = toward[q]                    # q's child towards r
            buf[n, 0] = q
            buf[n, 1] = t
            buf[n, 2] = arc_down[row, t]     # q -> t
            buf[n, 3] = big_s - s[row, t]
            buf[n, 4] = big_h - h[row, t]
            buf[n, 5] = arc_up[row, t]       # t -> q
            q = t
        else:
            p = parent[row, q]
            buf[n, 0] = q
            buf[n, 1] = p
            buf[n, 2] = arc_up[row, q]       # q -> p
            buf[n, 3] = s[row, q]
            buf[n, 4] = h[row, q]
            buf[n, 5] = arc_down[row, q]     # p -> q
            q = p
        n += 1
    peak = mpeak[q]
    mask = mmask[q]
    for k in range(n - 1, -1, -1):
        v = buf[k, 0]
        j = buf[k, 2]
        sq = buf[k, 3]
        hq = buf[k, 4]
        i = buf[k, 5]
        d = (sr - sq) * ho - so * hq         # on i, the arc into v
        e = so * (hr - hq) - sq * ho         # on j, the arc out of v
        # written out twice here and in _mend's candidates: a jitted helper returning the
        # pair (peak, mask) made the kernel half as slow again (6.7 -> 10.1 ms a pair)
        if d != 0:
            val = _value(total[i] + d, ncab[i])
            if val > peak:
                peak = val
            mask |= bits[i]
        if e != 0:
            val = _value(total[j] + e, ncab[j])
            if val > peak:
                peak = val
            mask |= bits[j]
        stamp[v] = epoch
        mpeak[v] = peak
        mmask[v] = mask
        nxt[v] = buf[k, 1]
        ci[v] = i
        cd[v] = d
        cj[v] = j
        ce[v] = e
    return peak, mask


@jit
def _mark_top(vals: Array, top: Array, topval: Array, bits: Array, m: int) -> int:
    """The len(top) most loaded arcs per cable (vals), in decreasing load (ties in any
    order: only the values are read), each with its bit (the last call's m arcs cleared
    first); returns how many."""
    for k in range(m):
        bits[top[k]] = 0
    size = len(top)
    m = 0
    for i in range(len(vals)):
        val = vals[i]
        if m == size and val <= topval[m - 1]:
            continue
        k = m if m < size else size - 1      # insert, dropping the last when full
        while k > 0 and topval[k - 1] < val:
            topval[k] = topval[k - 1]
            top[k] = top[k - 1]
            k -= 1
        topval[k] = val
        top[k] = i
        if m < size:
            m += 1
    for k in range(m):
        bits[top[k]] = np.int64(1) << np.int64(k)
    return m


@jit
def _add(total: Array, vals: Array, ncab: Array, i: int, d: int) -> None:
    """Book.add: an arc's raw load and its load per cable."""
    total[i] += d
    vals[i] = _value(total[i], ncab[i])


@jit
def _mend(rows: Array, xs: Array, ys: Array, cut_xy: Array, cut_yx: Array, excluded: Array, unpriced: Array,
          total: Array, ncab: Array, tracked: int, parent: Array, tin: Array, size: Array, s: Array, h: Array,
          arc_up: Array, arc_down: Array, pre: Array, total_s: Array, total_h: Array, count: Array, covers: Array,
          link_a: Array, link_b: Array, link_ab: Array, link_ba: Array, end_start: Array, end_link: Array) -> float:
    """pairs._mend over the trees of rows, in turn: tree rows[t] loses its link xs[t]-ys[t]
    (arcs cut_xy[t], cut_yx[t]), and takes the cheapest live link across the cut, the links
    `excluded` left out and the `unpriced` arcs never priced; total changed in place. The
    max load per cable after, or NaN where pair_failure gives None."""
    n = parent.shape[1]
    n_links = len(link_a)
    seen = np.full(n_links, -1, dtype=np.int64)
    found = np.empty(n_links, dtype=np.int64)
    n_arcs = len(total)
    vals = np.empty(n_arcs, dtype=np.float64)
    for arc in range(n_arcs):
        vals[arc] = _value(total[arc], ncab[arc])
    m_top = 0
    top = np.zeros(tracked, dtype=np.int64)
    topval = np.zeros(tracked, dtype=np.float64)
    bits = np.zeros(n_arcs, dtype=np.int64)
    skip = np.full(n_arcs, -1, dtype=np.int64)
    # per side (0: x's, 1: y's), per switch: memo of the way to the cut's end
    stamp = np.zeros((2, n), dtype=np.int64)
    mpeak = np.zeros((2, n), dtype=np.float64)
    mmask = np.zeros((2, n), dtype=np.int64)
    nxt = np.zeros((2, n), dtype=np.int64)
    ci = np.zeros((2, n), dtype=np.int64)
    cd = np.zeros((2, n), dtype=np.int64)
    cj = np.zeros((2, n), dtype=np.int64)
    ce = np.zeros((2, n), dtype=np.int64)
    toward = np.full(n, -1, dtype=np.int64)
    buf = np.zeros((n + 1, 6), dtype=np.int64)
    epoch = 0
    for t in range(len(rows)):
        row = rows[t]
        x = xs[t]
        y = ys[t]
        if not covers[row]:
            return np.nan
        c = y if parent[row, y] == x else x
        p = x if c == y else y
        lo = tin[row, c]
        hi = lo + size[row, c]
        m = 0
        on = count[row]
        # the links across the cut, from the switches of the smaller part
        if hi - lo <= on - (hi - lo):
            a0, a1, b0, b1 = lo, hi, 0, 0
        else:
            a0, a1, b0, b1 = 0, lo, hi, on
        for part in range(2):
            p0 = a0 if part == 0 else b0
            p1 = a1 if part == 0 else b1
            for pos in range(p0, p1):
                z = pre[row, pos]
                for e in range(end_start[z], end_start[z + 1]):
                    li = end_link[e]
                    if excluded[li] or seen[li] == t:
                        continue
                    ta = tin[row, link_a[li]]
                    tb = tin[row, link_b[li]]
                    if ta < 0 or tb < 0:
                        continue
                    if (lo <= ta < hi) != (lo <= tb < hi):
                        seen[li] = t
                        found[m] = li
                        m += 1
        if m == 0:
            return np.nan
        cands = np.sort(found[:m])
        big_s = total_s[row]
        big_h = total_h[row]
        s_low, h_low = s[row, c], h[row, c]
        s_up, h_up = big_s - s_low, big_h - h_low
        # x's side and y's: (its end r, lower part or not, own sums, other sums)
        if x == c:
            s1, h1, s2, h2 = s_low, h_low, s_up, h_up
        else:
            s1, h1, s2, h2 = s_up, h_up, s_low, h_low
        x_lower = x == c
        epoch += 1
        for side in range(2):
            r = x if side == 0 else y
            stamp[side, r] = epoch
            mpeak[side, r] = 0.0
            mmask[side, r] = 0
        # toward: p's ancestors -> their child towards p (the upper part's end)
        v = p
        while parent[row, v] >= 0:
            toward[parent[row, v]] = v
            v = parent[row, v]
        m_top = _mark_top(vals, top, topval, bits, m_top)
        cut_mask = 0
        for k in range(len(unpriced)):
            cut_mask |= bits[unpriced[k]]
        up = s1 * h2
        down = s2 * h1
        best_peak = np.inf
        best_near = np.inf
        best_link = -1
        best_a = -1
        best_b = -1
        for q in range(m):
            li = cands[q]
            a = link_a[li]
            b = link_b[li]
            i = link_ab[li]
            j = link_ba[li]
            if (lo <= tin[row, a] < hi) != x_lower:
                a, b, i, j = b, a, j, i      # a in x's part, b in y's part; i: a->b, j: b->a
            local = 0.0
            mask = cut_mask
            if up != 0:
                val = _value(total[i] + up, ncab[i])
                if val > local:
                    local = val
                mask |= bits[i]
            if down != 0:
                val = _value(total[j] + down, ncab[j])
                if val > local:
                    local = val
                mask |= bits[j]
            if stamp[0, a] == epoch:
                pa, ma = mpeak[0, a], mmask[0, a]
            else:
                pa, ma = _walk(a, x, s1, h1, s2, h2, row, parent, tin, size, s, h, arc_up,
                               arc_down, big_s, big_h, toward, total, ncab, bits, stamp[0], epoch, mpeak[0],
                               mmask[0], nxt[0], ci[0], cd[0], cj[0], ce[0], buf)
            if stamp[1, b] == epoch:
                pb, mb = mpeak[1, b], mmask[1, b]
            else:
                pb, mb = _walk(b, y, s2, h2, s1, h1, row, parent, tin, size, s, h, arc_up,
                               arc_down, big_s, big_h, toward, total, ncab, bits, stamp[1], epoch, mpeak[1],
                               mmask[1], nxt[1], ci[1], cd[1], cj[1], ce[1], buf)
            if pa > local:
                local = pa
            if pb > local:
                local = pb
            mask |= ma | mb
            # the first of the tracked arcs the exchange does not change
            k = 0
            while k < m_top and (mask >> np.int64(k)) & 1:
                k += 1
            if k < m_top:
                rest = topval[k]
            else:                            # every tracked arc changed: scan every arc
                stamp_id = li
                for k in range(len(unpriced)):
                    skip[unpriced[k]] = stamp_id
                if up != 0:
                    skip[i] = stamp_id
                if down != 0:
                    skip[j] = stamp_id
                for side in range(2):
                    v = a if side == 0 else b
                    while v != (x if side == 0 else y):
                        if cd[side, v] != 0:
                            skip[ci[side, v]] = stamp_id
                        if ce[side, v] != 0:
                            skip[cj[side, v]] = stamp_id
                        v = nxt[side, v]
                rest = 0.0
                for arc in range(n_arcs):
                    if skip[arc] != stamp_id and vals[arc] > rest:
                        rest = vals[arc]
                for arc in range(n_arcs):
                    if skip[arc] == stamp_id:
                        skip[arc] = -1
            peak = local if local >= rest else rest
            if (peak < best_peak or (peak == best_peak and (local < best_near
                                                            or (local == best_near and li < best_link)))):
                best_peak, best_near, best_link, best_a, best_b = peak, local, li, a, b
        # mend: the cut's arcs, the new link's, the ways from its ends
        _add(total, vals, ncab, cut_xy[t], -s1 * h2)
        _add(total, vals, ncab, cut_yx[t], -s2 * h1)
        la = best_link
        if link_a[la] == best_a:
            _add(total, vals, ncab, link_ab[la], s1 * h2)
            _add(total, vals, ncab, link_ba[la], s2 * h1)
        else:
            _add(total, vals, ncab, link_ba[la], s1 * h2)
            _add(total, vals, ncab, link_ab[la], s2 * h1)
        for side in range(2):
            v = best_a if side == 0 else best_b
            end = x if side == 0 else y
            while v != end:
                _add(total, vals, ncab, ci[side, v], cd[side, v])
                _add(total, vals, ncab, cj[side, v], ce[side, v])
                v = nxt[side, v]
        # clear toward for the next tree
        v = p
        while parent[row, v] >= 0:
            toward[parent[row, v]] = -1
            v = parent[row, v]
    peak = 0.0
    for arc in range(n_arcs):
        if vals[arc] > peak:
            peak = vals[arc]
    return peak

