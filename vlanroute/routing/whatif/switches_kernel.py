"""A dead switch's common tree, compiled: `SwitchIndex._one_kid` (routing/whatif/switches.py)
with numba, the same join and the same load corrections.

In most trees of a large torus the dead switch w has a parent and one child c. `_one_kid`
then joins c's subtree and the rest by the first live link from the larger part to the
smaller (by its end in the larger part, then that end's neighbour order), and corrects the
loads along four chains of the intact tree, each with constant offsets. On the 32x32 torus
that is about a fifth of a dead switch's time, 512 trees per switch, in interpreted walks;
here it runs over the arrays of pairs_kernel.Rooted. The links across the cut, which
`Cuts` needs only when it prices an exchange, are listed by `_one_kid` itself, later and
only then.

Imported only where numba is (failures.use_kernel), as pairs_kernel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from vlanroute.routing.whatif.pairs_kernel import Array, Rooted, _value, jit

if TYPE_CHECKING:
    from vlanroute.routing.whatif.switches import SwitchIndex


class OneKid:
    """The fabric's neighbour lists (in `adj`'s order, each with the rank of the link's
    other end's neighbour list entry) by switch number, beside the trees of `rooted`."""

    def __init__(self, rooted: Rooted, adj: Mapping[str, list[str]], rank: Mapping[tuple[str, str], int],
                 arcs: Mapping[tuple[str, str], int]) -> None:
        self.rooted = rooted
        self._index: SwitchIndex | None = None       # join_all's: the index its tables are of,
        self._rows: np.ndarray | None = None         # each tree's row, w's children per row,
        self._vids: list[int] = []                   # the trees where each switch sends
        self._kids: np.ndarray = np.zeros((0, 0), dtype=np.int64)
        self._sends: dict[str, np.ndarray] = {}
        number = rooted.number
        n = len(rooted.names)
        start = np.zeros(n + 1, dtype=np.int64)
        for s, nbs in adj.items():
            start[number[s] + 1] = len(nbs)
        self.start = np.cumsum(start)
        self.nb = np.zeros(int(self.start[-1]), dtype=np.int64)
        self.nb_rank = np.zeros(int(self.start[-1]), dtype=np.int64)     # rank[(u, z)] for z's neighbour u
        self.nb_arc = np.zeros(int(self.start[-1]), dtype=np.int64)      # the arc z -> u
        for z, nbs in adj.items():
            k = int(self.start[number[z]])
            for u in nbs:
                self.nb[k] = number[u]
                self.nb_rank[k] = rank[(u, z)]
                self.nb_arc[k] = arcs[(z, u)]
                k += 1

    def join_all(self, index: SwitchIndex, w: str, hw: int, total: np.ndarray
                 ) -> dict[int, tuple[str, tuple[str, str] | None]]:
        """join() for every tree of index (in its order) that _tree hands to _one_kid and
        where w sends nothing (those few run as before), in one call: by VLAN, w's child
        and the join (u in the larger part, z), None where no live link joins the parts."""
        r = self.rooted
        if self._rows is None or self._index is not index:
            self._index = index
            self._rows = np.array([r.row[t.vid] for t in index.trees], dtype=np.int64)
            self._vids = [t.vid for t in index.trees]
            kids = np.zeros_like(r.parent)
            rows, nodes = np.nonzero(r.parent >= 0)
            np.add.at(kids, (rows, r.parent[rows, nodes]), 1)
            self._kids = kids
            self._sends = {}
        sends = self._sends.get(w)
        if sends is None:
            sends = self._sends[w] = np.array([index.senders[v].get(w, 0) != 0 for v in self._vids], dtype=np.bool_)
        rows = self._rows
        iw = r.number[w]
        first = r.tin[rows, iw] + 1                  # w's only child comes right after it in preorder
        alone = (r.parent[rows, iw] >= 0) & (self._kids[rows, iw] == 1) & ~sends
        c = r.pre[rows, np.minimum(first, r.pre.shape[1] - 1)]
        alone &= 2 * r.size[rows, c] != r.count[rows] - 1
        at = np.flatnonzero(alone)
        out = np.zeros((2, len(at)), dtype=np.int64)
        _one_kid_all(rows[at], c[at], iw, hw, total, out, r.parent, r.tin, r.size, r.s, r.h, r.arc_up, r.arc_down,
                     r.pre, r.count, r.total_s, r.total_h, self.start, self.nb, self.nb_rank, self.nb_arc)
        names, vids = r.names, self._vids
        got: dict[int, tuple[str, tuple[str, str] | None]] = {}
        for i, ci, u, z in zip(at.tolist(), c[at].tolist(), out[0].tolist(), out[1].tolist()):
            got[vids[i]] = (names[ci], (names[u], names[z]) if u >= 0 else None)
        return got

    def join(self, vid: int, w: str, c: str, hw: int, sw: int, total: np.ndarray) -> tuple[str, str] | None:
        """_one_kid's join (u in the larger part, z in the smaller) and its corrections of
        total (changed in place); None when no live link joins the two parts."""
        r = self.rooted
        got = _one_kid(r.row[vid], r.number[w], r.number[c], hw, sw, total, r.parent, r.tin, r.size, r.s, r.h,
                       r.arc_up, r.arc_down, r.pre, r.count, r.total_s, r.total_h, self.start, self.nb, self.nb_rank,
                       self.nb_arc)
        if got[0] < 0:
            return None
        return r.names[got[0]], r.names[got[1]]


@jit
def _one_kid_all(rows: Array, cs: Array, w: int, hw: int, total: Array, out: Array, parent: Array, tin: Array,
                 size: Array, s: Array, h: Array, arc_up: Array, arc_down: Array, pre: Array, count: Array,
                 total_s: Array, total_h: Array, start: Array, nb: Array, nb_rank: Array, nb_arc: Array) -> None:
    """_one_kid for every row (w's child cs[k], w sending nothing there): the joins in out."""
    for k in range(len(rows)):
        u, z = _one_kid(rows[k], w, cs[k], hw, 0, total, parent, tin, size, s, h, arc_up, arc_down, pre, count,
                        total_s, total_h, start, nb, nb_rank, nb_arc)
        out[0, k] = u
        out[1, k] = z


@jit
def _one_kid(row: int, w: int, c: int, hw: int, sw: int, total: Array, parent: Array, tin: Array, size: Array,
             s: Array, h: Array, arc_up: Array, arc_down: Array, pre: Array, count: Array, total_s: Array,
             total_h: Array, start: Array, nb: Array, nb_rank: Array, nb_arc: Array) -> tuple[int, int]:
    n = count[row]
    big_s = total_s[row]
    big_h = total_h[row]
    s2 = big_s - sw
    h2 = big_h - hw
    lo = tin[row, c]
    hi = lo + size[row, c]
    wlo = tin[row, w]
    whi = wlo + size[row, w]
    # the join: the least (u, rank of u-z) over the links from the larger part to the smaller
    smaller_is_c = 2 * size[row, c] < n - 1
    best_u = -1
    best_rank = -1
    best_z = -1
    if smaller_is_c:
        for pos in range(lo, hi):
            z = pre[row, pos]
            for k in range(start[z], start[z + 1]):
                u = nb[k]
                if u != w and not (lo <= tin[row, u] < hi):
                    if best_u < 0 or u < best_u or (u == best_u and nb_rank[k] < best_rank):
                        best_u, best_rank, best_z = u, nb_rank[k], z
    else:
        for part in range(2):
            p0 = 0 if part == 0 else whi
            p1 = wlo if part == 0 else n
            for pos in range(p0, p1):
                z = pre[row, pos]
                for k in range(start[z], start[z + 1]):
                    u = nb[k]
                    if u != w and wlo < tin[row, u] < whi:
                        if best_u < 0 or u < best_u or (u == best_u and nb_rank[k] < best_rank):
                            best_u, best_rank, best_z = u, nb_rank[k], z
    if best_u < 0:
        return -1, -1
    u = best_u
    z = best_z
    if smaller_is_c:
        inner, outer = z, u
    else:
        inner, outer = u, z
    sc = s[row, c]
    hc = h[row, c]
    ss = big_s - s[row, w]                   # the rest's senders and hosts
    hs = big_h - h[row, w]
    # the joining link's arcs: outer -> inner carries the rest's senders to c's hosts
    total[_arc_to(outer, inner, start, nb, nb_arc)] += ss * hc
    total[_arc_to(inner, outer, start, nb, nb_arc)] += sc * hs
    m = outer                               # the first ancestor of w from the join's outer end
    while not (tin[row, m] <= wlo < tin[row, m] + size[row, m]):
        m = parent[row, m]
    _chain(total, row, outer, m, sc, hc, s2, h2, parent, s, h, arc_up, arc_down)     # + c's subtree
    _chain(total, row, parent[row, w], m, -s[row, w], -h[row, w], s2, h2, parent, s, h, arc_up,
           arc_down)                                                                   # - w's subtree
    _chain(total, row, m, pre[row, 0], -sw, -hw, s2, h2, parent, s, h, arc_up, arc_down)   # - w alone
    _chain(total, row, inner, c, ss, hs, s2, h2, parent, s, h, arc_up, arc_down)       # + the rest
    for v in (w, c):                        # the dead arcs (SwitchIndex._correct, to 0)
        sv = s[row, v]
        hv = h[row, v]
        total[arc_up[row, v]] -= sv * (big_h - hv) - hw * sv
        total[arc_down[row, v]] -= (big_s - sv) * hv - sw * hv
    return u, z


@jit
def _chain(total: Array, row: int, q: int, stop: int, a: int, b: int, s2: int, h2: int, parent: Array, s: Array,
           h: Array, arc_up: Array, arc_down: Array) -> None:
    """_one_kid's corrections on the way up from q to stop (not stop's own arcs): every
    switch v on it has a and b more senders and hosts below it than in the intact tree, so
    its arc up changes by a (h2 - b) - b s(v) - a h(v), its arc down by b (s2 - a) - a h(v) -
    b s(v), with s2, h2 the live senders and hosts of the tree."""
    cu = a * (h2 - b)
    cd = b * (s2 - a)
    while q != stop:
        sv = s[row, q]
        hv = h[row, q]
        total[arc_up[row, q]] += cu - b * sv - a * hv
        total[arc_down[row, q]] += cd - a * hv - b * sv
        q = parent[row, q]


@jit
def _arc_to(z: int, u: int, start: Array, nb: Array, nb_arc: Array) -> int:
    """The fabric's arc z -> u (u a neighbour of z)."""
    for k in range(start[z], start[z + 1]):
        if nb[k] == u:
            return int(nb_arc[k])
    return -1


class Exchange:
    """`Cuts._exchange` compiled: improve_tree's choice of a link in place of one joining
    link x-y of a tree that lost switches, from the intact rooting (pairs_kernel.Rooted).

    The interpreted exchange walks each candidate's ways to the cut's ends one switch at a
    time (`_Ways.way`, memoised), and a dead switch of the 32x32 torus prices about seventy
    such exchanges: two fifths of whatif's time. Here the joined tree less x-y is searched
    breadth first from x and from y (each switch's side, its next switch towards its end of
    the cut, the sums beyond it), each switch's way priced once from its next switch's
    (the same changes per step as `_Ways.way`), then every live link across the cut in the
    order of the links' names. The keys compare unrounded: every load is an integer count of
    host pairs over a few cables (Rooted.usable), so rounding to 9 digits, as
    `Cuts._exchange` does, never merges or reorders two of them (pairs_kernel's argument).
    A candidate no hot arc's filter would keep cannot win here either: it leaves an arc at
    the peak, so its key is at least the kept link's."""

    def __init__(self, rooted: Rooted, tracked: int | None = None) -> None:
        """tracked: the most loaded arcs kept in the bit masks (Cuts' TOP unless given; fewer
        only to test the scan of every arc that follows when an exchange changes all of them)."""
        self.rooted = rooted
        self.tracked = tracked
        n = rooted.s.shape[1]
        # each switch's own senders and hosts per tree: its subtree's less its children's
        self.own_s, self.own_h = rooted.s.copy(), rooted.h.copy()
        rows, kids = np.nonzero(rooted.parent >= 0)
        np.subtract.at(self.own_s, (rows, rooted.parent[rows, kids]), rooted.s[rows, kids])
        np.subtract.at(self.own_h, (rows, rooted.parent[rows, kids]), rooted.h[rows, kids])
        self.arc_list = list(rooted.arcs)
        m = len(self.arc_list)
        # scratch, reset by the kernel after each call
        self.side = np.full(n, -1, dtype=np.int64)
        self.ints = np.zeros((6, n), dtype=np.int64)        # next switch, arc in, arc out, order, sums
        self.walk = np.zeros((3, n), dtype=np.float64)      # peak on the way, changes down and up
        self.mask = np.zeros(n, dtype=np.int64)
        self.severed = np.zeros(n, dtype=np.bool_)
        self.bits = np.zeros(m, dtype=np.int64)
        self.marked = np.zeros(m, dtype=np.bool_)
        self.out_arc = np.zeros(2 * n + 4, dtype=np.int64)
        self.out_d = np.zeros(2 * n + 4, dtype=np.float64)

    def choose(self, vid: int, x: str, y: str, sums: tuple[int, int, int, int] | None, peak: float,
               top: Sequence[tuple[float, tuple[str, str]]], joins: Sequence[tuple[str, str]],
               severed: Sequence[str], total: np.ndarray, ncab: np.ndarray
               ) -> tuple[tuple[str, str], dict[tuple[str, str], float]] | None:
        """The link that replaces x-y and the raw load changes (Cuts._exchange's), or None:
        x-y stays. sums: senders and hosts on x's side, then y's (checked against the
        search's), or None: the search's; peak: the fabric's max load per cable; top: the
        book's most loaded arcs (LoadBook.top); joins: the links added to the tree, x-y
        among them; severed: the lower end of every dead tree link; total, ncab: each arc's
        raw load now and its cables."""
        r = self.rooted
        number, arcs = r.number, r.arcs
        top = top[:self.tracked] if self.tracked is not None else top
        top_arcs = np.array([arcs[a] for _, a in top], dtype=np.int64)
        topv = np.array([v for v, _ in top], dtype=np.float64)
        live = [(u, z) for u, z in joins if {u, z} != {x, y}]
        ju = np.array([number[u] for u, _ in live], dtype=np.int64)
        jz = np.array([number[z] for _, z in live], dtype=np.int64)
        juz = np.array([arcs[(u, z)] for u, z in live], dtype=np.int64)
        jzu = np.array([arcs[(z, u)] for u, z in live], dtype=np.int64)
        cut = np.array([number[v] for v in severed], dtype=np.int64)
        s1, h1, s2, h2 = sums if sums is not None else (-1, -1, -1, -1)
        row = r.row[vid]
        got = _choose(row, number[x], number[y], s1, h1, s2, h2, peak, arcs[(x, y)], arcs[(y, x)], top_arcs, topv,
                      ju, jz, juz, jzu, cut, total, ncab, r.parent, r.tin, r.size, r.pre, self.own_s, self.own_h,
                      r.arc_up, r.arc_down, r.link_a, r.link_b, r.link_ab, r.link_ba, self.side, self.ints,
                      self.walk, self.mask, self.severed, self.bits, self.marked, self.out_arc, self.out_d)
        if got == -2:
            raise AssertionError(f"tree {vid}: the sides' sums differ from the parts' ({x}-{y})")
        if got < 0:
            return None
        delta: dict[tuple[str, str], float] = {}
        names = self.arc_list
        for i in range(int(self.out_arc[0])):
            arc = names[int(self.out_arc[i + 1])]
            delta[arc] = delta.get(arc, 0.0) + float(self.out_d[i + 1])
        return r.links[got], delta


@jit
def _grow(root: int, sd: int, at: int, row: int, parent: Array, tin: Array, size: Array, pre: Array,
          arc_up: Array, arc_down: Array, ju: Array, jz: Array, juz: Array, jzu: Array, severed: Array,
          side: Array, ints: Array) -> int:
    """Breadth first over the joined tree from root (x or y; the joining link x-y is not
    in ju/jz), each switch reached marked with side sd, its next switch towards root and
    the arcs from it (in) and to it (out); the order from position `at` of ints[3]. Returns
    the position after the last."""
    side[root] = sd
    ints[0, root] = -1
    ints[3, at] = root
    head = at
    tail = at + 1
    while head < tail:
        v = ints[3, head]
        head += 1
        p = parent[row, v]
        if p >= 0 and not severed[v] and side[p] < 0:
            tail = _reach(p, v, arc_up[row, v], arc_down[row, v], sd, tail, side, ints)
        pos = tin[row, v] + 1
        end = tin[row, v] + size[row, v]
        while pos < end:
            c = pre[row, pos]
            if not severed[c] and side[c] < 0:
                tail = _reach(c, v, arc_down[row, c], arc_up[row, c], sd, tail, side, ints)
            pos += size[row, c]
        for k in range(len(ju)):
            if ju[k] == v:
                q, a_in, a_out = jz[k], juz[k], jzu[k]
            elif jz[k] == v:
                q, a_in, a_out = ju[k], jzu[k], juz[k]
            else:
                continue
            if side[q] < 0:
                tail = _reach(q, v, a_in, a_out, sd, tail, side, ints)
    return tail


@jit
def _reach(q: int, v: int, a_in: int, a_out: int, sd: int, tail: int, side: Array, ints: Array) -> int:
    """_grow reaches q from v: its side, next switch, the arcs v -> q (in) and q -> v (out),
    its place in the order; returns the position after it."""
    side[q] = sd
    ints[0, q] = v
    ints[1, q] = a_in
    ints[2, q] = a_out
    ints[3, tail] = q
    return tail + 1


@jit
def _choose(row: int, x: int, y: int, s1: int, h1: int, s2: int, h2: int, peak: float, cut_xy: int, cut_yx: int,
            top_arcs: Array, topv: Array, ju: Array, jz: Array, juz: Array, jzu: Array, cut: Array, total: Array,
            ncab: Array, parent: Array, tin: Array, size: Array, pre: Array, own_s: Array, own_h: Array,
            arc_up: Array, arc_down: Array, link_a: Array, link_b: Array, link_ab: Array, link_ba: Array,
            side: Array, ints: Array, walk: Array, mmask: Array, severed: Array, bits: Array, marked: Array,
            out_arc: Array, out_d: Array) -> int:
    """Exchange.choose: the index of the link chosen (its ends oriented and the changes in
    out_arc/out_d, the count first), -1: the joining link stays, -2: the sides' sums are
    not the parts' (a bug)."""
    for v in cut:
        severed[v] = True
    ntop = len(top_arcs)
    for k in range(ntop):
        bits[top_arcs[k]] = np.int64(1) << np.int64(k)
    mid = _grow(x, 0, 0, row, parent, tin, size, pre, arc_up, arc_down, ju, jz, juz, jzu, severed, side, ints)
    end = _grow(y, 1, mid, row, parent, tin, size, pre, arc_up, arc_down, ju, jz, juz, jzu, severed, side, ints)
    # the sums beyond each switch from its next one (ints[4], ints[5]), leaves first
    for i in range(end):
        v = ints[3, i]
        ints[4, v] = own_s[row, v]
        ints[5, v] = own_h[row, v]
    for i in range(end - 1, -1, -1):
        v = ints[3, i]
        p = ints[0, v]
        if p >= 0:
            ints[4, p] += ints[4, v]
            ints[5, p] += ints[5, v]
    if s1 < 0:                                 # the sides' sums not given: the search's
        s1, h1, s2, h2 = ints[4, x], ints[5, x], ints[4, y], ints[5, y]
    ok = ints[4, x] == s1 and ints[5, x] == h1 and ints[4, y] == s2 and ints[5, y] == h2
    # each switch's way: the largest load per cable on it after the exchange, the tracked
    # arcs it changes (_Ways.way's steps, from its next switch's)
    walk[0, x] = 0.0
    walk[0, y] = 0.0
    mmask[x] = 0
    mmask[y] = 0
    for i in range(end):
        v = ints[3, i]
        p = ints[0, v]
        if p < 0:
            continue
        if side[v] == 0:
            sr, hr, so, ho = s1, h1, s2, h2
        else:
            sr, hr, so, ho = s2, h2, s1, h1
        sq = ints[4, v]
        hq = ints[5, v]
        down = (sr - sq) * (hq + ho) - (sr - sq + so) * hq        # on p -> v
        up = (sq + so) * (hr - hq) - sq * (hr - hq + ho)          # on v -> p
        walk[1, v] = down
        walk[2, v] = up
        pk = walk[0, p]
        mk = mmask[p]
        # written out for both arcs, as in pairs_kernel._walk: a helper returning the pair
        # (peak, mask) slows the kernel there
        if down != 0:
            a = ints[1, v]
            val = _value(total[a] + down, ncab[a])
            if val > pk:
                pk = val
            mk |= bits[a]
        if up != 0:
            a = ints[2, v]
            val = _value(total[a] + up, ncab[a])
            if val > pk:
                pk = val
            mk |= bits[a]
        walk[0, v] = pk
        mmask[v] = mk
    # the joining link's own arcs change with every exchange
    cut_local = 0.0
    cut_mask = np.int64(0)
    d = -s1 * h2
    if d != 0:
        cut_local = max(cut_local, _value(total[cut_xy] + d, ncab[cut_xy]))
        cut_mask |= bits[cut_xy]
    d = -s2 * h1
    if d != 0:
        cut_local = max(cut_local, _value(total[cut_yx] + d, ncab[cut_yx]))
        cut_mask |= bits[cut_yx]
    up = s1 * h2
    down = s2 * h1
    best = -1
    best_p = 0.0
    best_local = 0.0
    best_a = -1
    best_b = -1
    for k in range(len(link_a) if ok else 0):
        a = link_a[k]
        b = link_b[k]
        ab = link_ab[k]
        ba = link_ba[k]
        if side[a] < 0 or side[b] < 0 or side[a] == side[b] or ncab[ab] == 0:
            continue
        if (a == x and b == y) or (a == y and b == x):
            continue
        if side[a] == 1:                       # a on x's side, b on y's
            a, b, ab, ba = b, a, ba, ab
        new_ab = _value(total[ab] + up, ncab[ab])
        new_ba = _value(total[ba] + down, ncab[ba])
        if (up != 0 and new_ab >= peak) or (down != 0 and new_ba >= peak):
            continue
        local = cut_local
        mask = cut_mask
        if up != 0:
            if new_ab > local:
                local = new_ab
            mask |= bits[ab]
        if down != 0:
            if new_ba > local:
                local = new_ba
            mask |= bits[ba]
        if walk[0, a] > local:
            local = walk[0, a]
        if walk[0, b] > local:
            local = walk[0, b]
        mask |= mmask[a] | mmask[b]
        n = 0
        while n < ntop and (mask >> np.int64(n)) & 1:
            n += 1
        if n < ntop:
            p = topv[n] if topv[n] > local else local
        else:                                  # every tracked arc changes: the max off the changed ones
            changes = _changes(a, b, x, y, ab, ba, up, down, cut_xy, cut_yx, ints, walk, out_arc, out_d)
            for i in range(1, changes + 1):
                marked[out_arc[i]] = True
            p = local
            for i in range(len(total)):
                if not marked[i]:
                    val = _value(total[i], ncab[i])
                    if val > p:
                        p = val
            for i in range(1, changes + 1):
                marked[out_arc[i]] = False
        if best < 0 or p < best_p or (p == best_p and local < best_local):
            best, best_p, best_local, best_a, best_b = k, p, local, a, b
    # reset the scratch
    for k in range(ntop):
        bits[top_arcs[k]] = 0
    for v in cut:
        severed[v] = False
    for i in range(end):
        side[ints[3, i]] = -1
    if not ok:
        return -2
    if best < 0 or not best_p < peak:          # the joining link wins every tie
        return -1
    a_arc = link_ab[best] if link_a[best] == best_a else link_ba[best]
    b_arc = link_ba[best] if link_a[best] == best_a else link_ab[best]
    out_arc[0] = _changes(best_a, best_b, x, y, a_arc, b_arc, up, down, cut_xy, cut_yx, ints, walk, out_arc, out_d)
    return best


@jit
def _changes(a: int, b: int, x: int, y: int, ab: int, ba: int, up: int, down: int, cut_xy: int, cut_yx: int,
             ints: Array, walk: Array, out_arc: Array, out_d: Array) -> int:
    """The nonzero load changes of exchanging x-y for a-b (a on x's side), in
    _Ways.changes' order, into out_arc/out_d from position 1; returns how many. The cut's
    arcs lose what the new link's take: up on x -> y and a -> b, down on y -> x and b -> a."""
    n = 0
    for arc, d in ((cut_xy, -up), (cut_yx, -down), (ab, up), (ba, down)):
        if d != 0:
            n += 1
            out_arc[n] = arc
            out_d[n] = d
    for q, r in ((a, x), (b, y)):
        while q != r:
            if walk[1, q] != 0:
                n += 1
                out_arc[n] = ints[1, q]
                out_d[n] = walk[1, q]
            if walk[2, q] != 0:
                n += 1
                out_arc[n] = ints[2, q]
                out_d[n] = walk[2, q]
            q = ints[0, q]
    return n
