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

from collections.abc import Mapping

import numpy as np

from vlanroute.routing.whatif.pairs_kernel import Array, Rooted, jit


class OneKid:
    """The fabric's neighbour lists (in `adj`'s order, each with the rank of the link's
    other end's neighbour list entry) by switch number, beside the trees of `rooted`."""

    def __init__(self, rooted: Rooted, adj: Mapping[str, list[str]], rank: Mapping[tuple[str, str], int],
                 arcs: Mapping[tuple[str, str], int]) -> None:
        self.rooted = rooted
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
