"""Double failures with a dead switch (a dead switch and a dead pair, or two dead switches),
fast, with exactly the figures of `repair` (routing/repair/engine.py), under the preconditions of
the single dead switch's fast path (routing/whatif/switches.py): every live switch has
hosts and every VLAN's tree spans every switch. Anything else goes to `repair` itself
(`double_failure` returns None).

The single dead switch's machinery, with the parts of a tree made general: the failures
remove some links of each tree (every link of a dead switch, the dead pair if the tree
has it); each removed link cuts off its lower end's subtree, so a part is a subtree of the
intact rooted tree less the subtrees cut off inside it (its "holes"), and a dead switch is
a part of its own, left out. The part of a switch is the innermost cut-off subtree that
holds it (the Euler intervals). `repair_tree` joins the parts from the largest by
breadth-first search; with hosts on every live switch each part is reached in one link,
the first live link from the joined parts to another (the joined switch first by name,
then its neighbour in the fabric's order), as for one dead switch.

The loads: the intact loads less the host-loss terms (the dead switches' hosts times the
senders below each arc, summed over the trees once: SwitchIndex.up), then per tree the
dead switches' senders, the joining links' arcs, the arcs of the removed links (to 0), and
the arcs whose sides change (the ways up from every hole and every joining link's ends to
their part's top), recomputed from the parts' sums. The exchanges of the joining links
(improve_tree) are SwitchIndex's (`Cuts.improve`), on these parts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from vlanroute.model.links import Arc, Link
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.whatif.pairs import RootedTree
from vlanroute.routing.whatif.switches import SwitchIndex, Cuts, branch_sums, join_parts


class _Layout:
    """The parts of one tree without some of its links and switches, from its Euler
    intervals: the cut-off subtrees (each removed link's lower end), nested."""

    def __init__(self, rt: RootedTree, dead: set[str], lower: set[str]) -> None:
        tin, size = rt.tin, rt.size
        root = rt.pre[0]
        order = sorted(lower | {root}, key=tin.__getitem__)
        holes: dict[str, list[str]] = {r: [] for r in order}
        self.up: dict[str, str] = {}         # each cut-off subtree's innermost enclosing one
        stack: list[str] = []
        for r in order:
            lo = tin[r]
            while stack and not lo < tin[stack[-1]] + size[stack[-1]]:
                stack.pop()
            if stack:
                holes[stack[-1]].append(r)
                self.up[r] = stack[-1]
            stack.append(r)
        self.rt = rt
        self.holes = holes
        self.tops = [r for r in order if r not in dead]          # each live part's top, in preorder
        self.index = {r: i for i, r in enumerate(self.tops)}
        # (start, end, part) of every top, innermost first when searched from the last
        self.spans = [(tin[r], tin[r] + size[r], i) for i, r in enumerate(self.tops)]
        self.spans.reverse()

    def part(self, q: str) -> int:
        t = self.rt.tin[q]
        for lo, hi, i in self.spans:
            if lo <= t < hi:
                return i
        raise KeyError(q)                   # a dead switch, or outside the tree

    def sums(self, i: int) -> tuple[int, int, int]:
        """The senders, hosts and switches of part i."""
        rt = self.rt
        r = self.tops[i]
        ss, hh, n = rt.s[r], rt.h[r], rt.size[r]
        for c in self.holes[r]:
            ss -= rt.s[c]
            hh -= rt.h[c]
            n -= rt.size[c]
        return ss, hh, n

    def nodes(self, i: int) -> list[str]:
        rt = self.rt
        r = self.tops[i]
        lo = rt.tin[r]
        out: list[str] = []
        for c in self.holes[r]:
            t = rt.tin[c]
            out += rt.pre[lo:t]
            lo = t + rt.size[c]
        out += rt.pre[lo:rt.tin[r] + rt.size[r]]
        return out


class _CutsN(Cuts):
    """Cuts on a _Layout's parts (any removed links and dead switches)."""

    layout: _Layout
    removed: set[Link]
    _hung_parts: dict[int, list[tuple[int, int, int]]] | None

    def part(self, q: str) -> int:
        got = self._part.get(q)
        if got is None:
            got = self._part[q] = self.layout.part(q)
        return got

    def dead_link(self, l: Link) -> bool:
        return l in self.removed

    def severed(self) -> list[str]:
        parent = self.rt.parent
        return [a if parent[a] == b else b for a, b in sorted(self.removed)]

    def _part_sums(self) -> dict[int, tuple[int, int]]:
        return {i: self.layout.sums(i)[:2] for i in self.size}

    def side_sums(self, v: str) -> tuple[int, int]:
        """Senders and hosts on v's side of the tree link from v up to its parent, in the
        joined tree: v's intact subtree less the holes of its part inside it, plus what
        hangs off the switches of its part there."""
        got = self._sums.get(v)
        if got is not None:
            return got
        got = self._sums[v] = _side_sums(self.rt, self.layout, self.part(v), v, self._hung_by_part())
        return got

    def _hung_by_part(self) -> dict[int, list[tuple[int, int, int]]]:
        hung = self._hung_parts
        if hung is None:
            hung = self._hung_parts = _hung(self.rt, self.hang, self.part)
        return hung

    def _rejoin(self, cut: Link, new: Link) -> None:
        super()._rejoin(cut, new)
        self._hung_parts = None


def _hung(rt: RootedTree, hang: Mapping[str, list[tuple[int, int]]], part: Callable[[str], int]
          ) -> dict[int, list[tuple[int, int, int]]]:
    """What hangs off each join end, summed, by part: (preorder position, senders, hosts)."""
    out: dict[int, list[tuple[int, int, int]]] = {}
    tin = rt.tin
    for g, extra in hang.items():
        out.setdefault(part(g), []).append((tin[g], sum(e[0] for e in extra), sum(e[1] for e in extra)))
    return out


def _side_sums(rt: RootedTree, layout: _Layout, home: int, v: str,
               hung: Mapping[int, list[tuple[int, int, int]]]) -> tuple[int, int]:
    lo = rt.tin[v]
    hi = lo + rt.size[v]
    ss, hh = rt.s[v], rt.h[v]
    tin = rt.tin
    for c in layout.holes[layout.tops[home]]:
        if lo <= tin[c] < hi:
            ss -= rt.s[c]
            hh -= rt.h[c]
    for tg, es, eh in hung.get(home, ()):
        if lo <= tg < hi:
            ss += es
            hh += eh
    return ss, hh


def double_failure(index: SwitchIndex, dead: tuple[str, ...], pair: Link | None,
                   cables: Mapping[Link, int], trees: dict[int, frozenset[Link]] | None = None
                   ) -> tuple[float, int] | None:
    """(max load per cable, links added) after `repair` with the switches `dead` and the
    neighbour pair `pair` (a link(), none of its ends dead) dead, or None: `repair`'s case.
    `trees`: filled with each VLAN's repaired links (for tests)."""
    if not index.usable or any(s not in dead for s in index.empty):
        return None                         # a live switch without hosts
    gone = set(dead)
    hw = sum(index.hosts[d] for d in dead)
    total = [b - hw * u for b, u in zip(index.base_total, index.up)]
    ncab = index.ncab_array
    arc_cables = index.arc_cables
    live_cables = dict(cables)
    if pair is not None:
        a, b = pair
        ncab = ncab.copy()
        ncab[index.arcs[(a, b)]] = ncab[index.arcs[(b, a)]] = 0
        arc_cables = {**arc_cables, (a, b): 0, (b, a): 0}
        live_cables[pair] = 0
    added = 0
    cuts: dict[int, Cuts] = {}
    for t in index.trees:
        got = _tree(index, t, gone, pair, hw, total, arc_cables)
        if got is None:
            return None
        added += len(got.joins)
        cuts[t.vid] = got
    alive = {s: n for s, n in index.hosts.items() if s not in gone}
    fabric = Degraded(live_cables, frozenset(dead), alive)
    senders = {vid: ({s: n for s, n in got.items() if s not in gone} if gone & got.keys() else got)
               for vid, got in index.senders.items()}
    peak = index.improve_all(cuts, total, fabric, senders, ncab, arc_cables)
    if trees is not None:
        for t in index.trees:
            c = cuts[t.vid]
            assert isinstance(c, _CutsN)
            trees[t.vid] = frozenset(l for l in t.links if l not in c.removed) | c.links
    return peak, added


def _tree(index: SwitchIndex, t: Tree, dead: set[str], pair: Link | None, hw: int,
          total: list[float], arc_cables: dict[Arc, int]) -> _CutsN | None:
    """SwitchIndex._tree for these failures: join the parts as repair_tree does and add the
    loads' corrections to total; None: not joined."""
    rt = index.rooted[t.vid]
    arcs, adj, rank = index.arcs, index.adj, index.rank
    parent, s, h = rt.parent, rt.s, rt.h
    kids = index.children[t.vid]
    senders = index.senders[t.vid]
    sw = sum(senders.get(d, 0) for d in dead)
    S, H = rt.S, rt.H
    S2, H2 = S - sw, H - hw
    if sw:                                  # the dead senders leave: the down arcs lose sw x hosts below
        for v in rt.pre[1:]:
            p = parent[v]
            assert p is not None
            total[arcs[(p, v)]] -= sw * h[v]
    lower: set[str] = set()                 # the lower end of every removed link
    for d in dead:
        if parent[d] is not None:
            lower.add(d)
        lower.update(kids[d])
    if pair is not None and pair in t.links:
        a, b = pair
        lower.add(a if parent[a] == b else b)
    removed = {(v, p) if v < p else (p, v) for v in lower for p in (parent[v],) if p is not None}
    layout = _Layout(rt, dead, lower)
    parts = list(range(len(layout.tops)))
    sums: dict[int, tuple[int, int]] = {}
    size: dict[int, int] = {}
    for i in parts:
        ps, ph, n = layout.sums(i)
        sums[i] = (ps, ph)
        size[i] = n
    first = max(parts, key=size.__getitem__)
    if sum(1 for i in parts if size[i] == size[first]) > 1:
        first = min((i for i in parts if size[i] == size[first]), key=lambda i: min(layout.nodes(i)))
    if sum(size[i] for i in parts if i != first) >= index.many:
        across = _across(index, t.vid, rt, layout, dead, pair, first)
    else:
        # The part of each switch outside the first; a live switch not here is in the first.
        far = {z: i for i in parts if i != first for z in layout.nodes(i)}
        across = []
        for z, i in far.items():
            for u in adj.get(z, ()):
                if u in dead or (pair is not None and (u, z) in (pair, pair[::-1])):
                    continue
                j = far.get(u, first)
                if j != i:
                    across.append((u, rank[(u, z)], z, j, i))
    joins = join_parts(across, first, len(parts))
    if joins is None:
        return None
    below, hang = branch_sums(joins, sums, (S2, H2))
    for u, z, _j, i in joins:
        bs, bh = below[i]
        total[arcs[(u, z)]] += (S2 - bs) * bh
        total[arcs[(z, u)]] += bs * (H2 - bh)
    # Arcs whose sides change: the ways up from every join end and every hole's upper end
    # (when live) to their part's top. A way up stays in its part: the part of each switch
    # on it is the start's (a hole's upper end lies in the cut-off subtree around the hole).
    stops = set(layout.tops) | dead
    changed: dict[str, int] = {}
    starts: list[tuple[str | None, int]] = [(g, k) for u, z, j, i in joins for g, k in ((u, j), (z, i))]
    starts += [(parent[r], layout.index[layout.up[r]]) for r in lower if parent[r] not in dead]
    for g, k in starts:
        up: str | None = g
        while up is not None and up not in stops and up not in changed:
            changed[up] = k
            up = parent[up]
    # Each changed arc's sides (_side_sums inline): per part, the holes' and the hanging
    # sums by preorder position, each counted where it lies below the arc.
    tin, tsize = rt.tin, rt.size
    marks: dict[int, list[tuple[int, int, int]]] = {k: [] for k in parts}
    for k in parts:
        marks[k] += [(tin[c], -s[c], -h[c]) for c in layout.holes[layout.tops[k]]]
    for u, z, j, i in joins:
        bs, bh = below[i]
        marks[j].append((tin[u], bs, bh))
        marks[i].append((tin[z], S2 - bs, H2 - bh))
    step = rt.steps(arcs)
    for v, k in changed.items():
        _p, iu, idn, sv, hv = step[v]
        lo = tin[v]
        hi = lo + tsize[v]
        ss, hh = sv, hv
        for tg, es, eh in marks[k]:
            if lo <= tg < hi:
                ss += es
                hh += eh
        # was: the intact loads less the host-loss terms
        total[iu] += ss * (H2 - hh) - (sv * (H - hv) - hw * sv)
        total[idn] += (S2 - ss) * hh - ((S - sv) * hv - sw * hv)
    for v in lower:                         # the removed links' arcs
        p = parent[v]
        assert p is not None
        sv, hv = s[v], h[v]
        total[arcs[(v, p)]] -= sv * (H - hv) - hw * sv
        total[arcs[(p, v)]] -= (S - sv) * hv - sw * hv
    cut = _CutsN(t, rt, "", [], joins, layout.nodes, hang, below, (S2, H2), first, size, across,
                 arc_cables)
    cut.layout, cut.removed = layout, removed
    cut._hung_parts = None
    return cut


def _across(index: SwitchIndex, vid: int, rt: RootedTree, layout: _Layout, dead: set[str],
            pair: Link | None, first: int) -> list[tuple[str, int, str, int, int]]:
    """_tree's links from a part other than the first to another, (u, rank of u-z, z,
    part of u, part of z), with numpy over every link end of the fabric (SwitchIndex._across
    with any parts)."""
    pos = index._positions.get(vid)
    if pos is None:
        pos = index._positions[vid] = np.array([rt.tin[s] for s in index.names], dtype=np.int32)
    tz, tu = pos[index.end_z], pos[index.end_u]
    pz = np.full(len(tz), -1, dtype=np.int32)
    pu = np.full(len(tu), -1, dtype=np.int32)
    for lo, hi, i in reversed(layout.spans):          # outer parts first, inner ones over them
        pz[(tz >= lo) & (tz < hi)] = i
        pu[(tu >= lo) & (tu < hi)] = i
    keep = (pz != first) & (pu != pz)
    for d in dead:
        t = rt.tin[d]
        keep &= (tz != t) & (tu != t)
    if pair is not None:
        a, b = (rt.tin[x] for x in pair)
        keep &= ~(((tz == a) & (tu == b)) | ((tz == b) & (tu == a)))
    chosen = np.flatnonzero(keep).tolist()
    zs, us, ranks = index.ends
    got_z, got_u = pz.tolist(), pu.tolist()
    return [(us[e], ranks[e], zs[e], got_u[e], got_z[e]) for e in chosen]

