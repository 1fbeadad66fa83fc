"""The what-if of every single switch failure, fast, with exactly the figures of `repair`
(routing/repair/engine.py), in the common case: every live switch has hosts and every VLAN's tree
spans every switch (a torus planned by dimension order, for one). Anything else goes to
`repair` itself (`switch_failure` returns None).

A dead switch w breaks every tree; each tree falls into the parts below w's children and
the part above w. `repair_tree` joins them from the largest part by breadth-first search;
with hosts on every live switch each part is reached in one link, the first link (the
joined switch first by name, then its neighbour in the fabric's order) from the joined
parts to another part. Here that link is found from the parts' Euler intervals, without a
search over the tree.

The loads after the repair, from the intact plan's: losing w's hosts changes every arc of
every tree by a term of one subtree sum (senders below times w's hosts, up; w's senders
times hosts below, down), summed over the trees once (`SwitchIndex.up`); the arcs whose
sides the repair itself changes are those on the tree's way from w and from each joining
link's ends up to their part's top, recomputed from subtree sums and the parts' sums. In
most trees w has one child and a parent: then the join is searched from the smaller part
only and each of those arcs changes by a closed form of its intact subtree sums, with
offsets constant along four chains (`SwitchIndex._one_kid`); parts too large to search
link by link are searched with numpy over every link end (`SwitchIndex._across`).

`repair` then tries to exchange each joining link for a better one (`improve_tree`); an
exchange is taken only when it lowers the fabric's max load, so only when it changes every
arc at that max. When some arc at the max is neither a link of the tree nor across the
joining link's cut, no exchange changes it and the repair keeps the link: the figures are
final. Otherwise the exchanges are made here (`Cuts.improve`) with improve_tree's choices,
each priced from the intact rooted tree: a switch's way to the cut in the joined tree and
its sums come from the intact tree's intervals, the joins and the parts' sums, kept (memo)
with the largest load after the exchange on it, so an exchange costs the ways it changes.
The fabric's max load and the arcs at it, which decide where an exchange could help, are
kept per arc through the exchanges: only the arcs an exchange changed are computed again.
Where numba is (what_if sets `SwitchIndex.exchange`), the exchanges run compiled instead
(switches_kernel.Exchange: every switch's way priced once from a search of the joined
tree, every live link across the cut in name order), with the same choices.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import TYPE_CHECKING

from collections.abc import Callable

import numpy as np

from vlanroute.model.links import Arc, Link, link
from vlanroute.routing.repair.loads import LoadBook, trial_peak
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.whatif.pairs import Crossing, RootedTree

if TYPE_CHECKING:
    from vlanroute.routing.whatif.pairs_kernel import Rooted
    from vlanroute.routing.whatif.switches_kernel import Exchange, OneKid


class SwitchIndex:
    """What every switch failure of one plan shares: the trees rooted, the intact loads, the
    per-arc sums of the host-loss terms, the fabric's neighbour order."""

    def __init__(self, trees: list[Tree], rooted: Mapping[int, RootedTree], arcs: Mapping[Arc, int],
                 base_total: list[float], ncab: list[int], adj: Mapping[str, list[str]],
                 hosts: Mapping[str, int], switches: list[str]) -> None:
        self.trees, self.rooted, self.arcs = trees, rooted, arcs
        self.base_total, self.ncab, self.adj, self.hosts = base_total, ncab, adj, hosts
        self.rank = {(u, v): i for u, vs in adj.items() for i, v in enumerate(vs)}
        self.arc_list = list(arcs)
        self.arc_cables = {a: ncab[i] for a, i in arcs.items()}   # LoadBook.per_cable's, any switch dead
        self.senders = {t.vid: t.senders(hosts) for t in trees}
        self.ncab_array = np.array(ncab, dtype=float)
        everyone = set(switches)
        self.chains = True                # _one_kid: off only to test it against the general walk
        # switch_failure keeps each arc's load per cable through the exchanges (only the
        # arcs an exchange changes recomputed): off only to test it against a recount from
        # the book after each; trace: every (max load, arcs at it) it finds, when a list
        self.kept = True
        self.rounded: dict[float, float] = {}      # round(x, 9) of the exchanges' loads, kept
        self.trace: list[tuple[float, list[Arc]]] | None = None
        # Every link end (z, u) of adj, by switch number, for _across (parts this large or more)
        self.many = 64
        self.names = sorted(adj)
        number = {s: i for i, s in enumerate(self.names)}
        ends = [(z, u) for z in self.names for u in adj[z]]
        self.end_z = np.array([number[z] for z, _ in ends], dtype=np.int64)
        self.end_u = np.array([number[u] for _, u in ends], dtype=np.int64)
        self.ends = ([z for z, _ in ends], [u for _, u in ends], [self.rank[(u, z)] for z, u in ends])
        self._positions: dict[int, np.ndarray] = {}
        # _one_kid compiled (routing/whatif/switches_kernel.py), set by what_if where numba is
        self.kernel: OneKid | None = None
        # Cuts._exchange compiled (switches_kernel.Exchange), set by what_if beside kernel
        self.exchange: Exchange | None = None
        self._compiled: Rooted | None = None               # compiled(), once _built
        self._built = False
        self._work: tuple[np.ndarray, np.ndarray] | None = None      # base_total, up as arrays
        self.empty = {s for s, n in hosts.items() if n == 0}
        self.usable = all(t.vid in rooted and rooted[t.vid].tin.keys() == everyone for t in trees)
        self.up = [0] * len(arcs)
        self.children: dict[int, dict[str, list[str]]] = {}
        for t in trees:
            if t.vid not in rooted:
                continue
            rt = rooted[t.vid]
            kids: dict[str, list[str]] = {v: [] for v in rt.pre}
            for v in rt.pre[1:]:
                p = rt.parent[v]
                assert p is not None
                self.up[arcs[(v, p)]] += rt.s[v]
                kids[p].append(v)
            self.children[t.vid] = kids

    @classmethod
    def of(cls, trees: list[Tree], rooted: Mapping[int, RootedTree], cables: Mapping[Link, int], base: LoadBook,
           hosts: Mapping[str, int], switches: list[str]) -> SwitchIndex:
        """The index of a fabric (`cables` keyed as repair.link orders a pair) and its intact
        loads: both arcs of each pair in `cables`' order."""
        arcs = {x: i for i, x in enumerate(a for (u, v) in cables for a in ((u, v), (v, u)))}
        return cls(trees, rooted, arcs, [base.total.get(a, 0.0) for a in arcs], [cables[link(*a)] for a in arcs],
                   Degraded(cables, frozenset(), hosts).adjacency(), hosts, switches)

    def compiled(self) -> Rooted | None:
        """The trees' rootings as the kernels' arrays (pairs_kernel.Rooted, needs numba), built
        once: whatif's pair failures and dead switches and the pair+pair doubles
        (doubles_pairs.DeadPairs) share them. None where a load is not a whole number."""
        if not self._built:
            from vlanroute.routing.whatif.pairs_kernel import Rooted     # imports numba: only here
            wanted = {s for s, n in self.hosts.items() if n > 0}
            got = Rooted(self.rooted, self.arcs, Crossing(self.adj, wanted).links, wanted, self.base_total)
            self._compiled, self._built = (got if got.usable else None), True
        return self._compiled

    def switch_failure(self, w: str, cables: Mapping[Link, int]) -> tuple[float, int] | None:
        """(max load per cable, links added) after `repair` with w dead, or None."""
        if not self.usable or len(self.empty) > (w in self.empty):
            return None                    # a live switch without hosts
        hw = self.hosts[w]
        work: list[float] | np.ndarray
        if self.kernel is None:
            work = [b - hw * u for b, u in zip(self.base_total, self.up)]
        else:                              # the kernel writes into an array
            if self._work is None:
                self._work = (np.asarray(self.base_total, dtype=np.float64), np.asarray(self.up, dtype=np.float64))
            work = self._work[0] - hw * self._work[1]
        added = 0
        cuts: dict[int, Cuts] = {}
        # the trees _one_kid joins, joined and corrected compiled in one call (the kernel's)
        batch = self.kernel.join_all(self, w, hw, work) if self.kernel is not None and self.chains \
            and isinstance(work, np.ndarray) else {}
        for t in self.trees:
            done = batch.get(t.vid)
            if done is None:
                got = self._tree(t, w, hw, work)
            elif done[1] is None:
                return None                # no live link joins the two parts
            else:
                got = self._one_kid(t, self.rooted[t.vid], w, done[0], hw, 0, work, done[1])
            if got is None:
                return None
            added += len(got.joins)
            cuts[t.vid] = got
        total: list[float] = work.tolist() if isinstance(work, np.ndarray) else work
        alive = {s: n for s, n in self.hosts.items() if s != w}
        fabric = Degraded(cables, frozenset({w}), alive)
        # t.senders(alive, (w,)): the intact senders but w's
        senders = {vid: ({s: n for s, n in got.items() if s != w} if w in got else got)
                   for vid, got in self.senders.items()}
        return self.improve_all(cuts, total, fabric, senders, self.ncab_array, self.arc_cables), added

    def improve_all(self, cuts: Mapping[int, Cuts], total: list[float], fabric: Degraded,
                    senders: Mapping[int, Mapping[str, int]], ncab_array: np.ndarray,
                    arc_cables: dict[Arc, int]) -> float:
        """improve_tree on every tree's joining links in turn, from the loads `total` of
        the joined trees (indexed as arcs); the max load per cable after it."""
        # Every arc's load per cable, kept up to date through the exchanges (only the arcs
        # an exchange changes are computed again), for the max and the arcs at it; the
        # book's heap made from it (the same figures as LoadBook.per_cable's, in arc order).
        values = self._per_cable(np.array(total, dtype=float), ncab_array)
        heap = list(zip((-values).tolist(), self.arc_list))
        heapq.heapify(heap)
        book = LoadBook(fabric, senders, {}, dict(zip(self.arc_list, total)), cables=arc_cables, heap=heap)
        peak, hot = self._hot(values)
        arcs = self.arcs
        # the compiled exchanges read each arc's raw load from an array, kept with the book
        raw = Raw(self.exchange, np.array(total, dtype=np.float64), ncab_array, arcs) if self.exchange else None
        for t in self.trees:
            c = cuts[t.vid]
            if not c.joins or all(c.fixed(n, hot, book, peak) for n in range(len(c.joins))):
                continue               # improve_tree would keep every joining link
            changed = c.improve(book, self.rounded, raw)
            if changed:
                if self.kept:
                    at = np.fromiter((arcs[a] for a in changed), dtype=np.int64, count=len(changed))
                    values[at] = self._per_cable(np.array([book.total[a] for a in changed], dtype=float),
                                                 ncab_array[at])
                else:
                    values = self._per_cable(np.fromiter(book.total.values(), dtype=float, count=len(arcs)),
                                             ncab_array)
                peak, hot = self._hot(values)
        return book.max_load()

    @staticmethod
    def _per_cable(raw: np.ndarray, ncab: np.ndarray) -> np.ndarray:
        """LoadBook.per_cable over arrays."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ncab > 0, raw / np.maximum(ncab, 1), np.where(raw > 1e-9, np.inf, 0.0))

    def _hot(self, values: np.ndarray) -> tuple[float, list[Arc]]:
        """The fabric's max load per cable and the arcs at it (none when it is 0)."""
        peak = float(values.max()) if len(values) else 0.0
        hot = [self.arc_list[i] for i in np.flatnonzero(values == peak)] if peak > 0 else []
        if self.trace is not None:
            self.trace.append((peak, hot))
        return peak, hot

    def _tree(self, t: Tree, w: str, hw: int, total: list[float] | np.ndarray) -> Cuts | None:
        """Join the parts of t without w as repair_tree does and add the loads' corrections
        to total; the joining links, each with the parts on its far side; None: not joined."""
        rt = self.rooted[t.vid]
        arcs, adj, rank = self.arcs, self.adj, self.rank
        kids = self.children[t.vid][w]
        sw = self.senders[t.vid].get(w, 0)
        S, H = rt.S, rt.H                  # intact tree sums (H: every host; the tree spans all)
        S2, H2 = S - sw, H - hw
        parent, s, h = rt.parent, rt.s, rt.h
        if sw:                             # w's senders leave: the down arcs lose sw x hosts below
            for v in rt.pre[1:]:
                p = parent[v]
                assert p is not None
                total[arcs[(p, v)]] -= sw * h[v]
        if self.chains and len(kids) == 1 and parent[w] is not None and 2 * rt.size[kids[0]] != len(rt.pre) - 1:
            return self._one_kid(t, rt, w, kids[0], hw, sw, total)
        # Parts: index i < len(kids): subtree of kids[i]; len(kids): the rest (w not the root).
        top = len(kids)
        sums: dict[int, tuple[int, int]] = {i: (s[c], h[c]) for i, c in enumerate(kids)}
        size = {i: rt.size[c] for i, c in enumerate(kids)}
        if parent[w] is not None:
            sums[top] = (S - s[w], H - h[w])
            size[top] = len(rt.pre) - rt.size[w]

        def nodes(i: int) -> list[str]:
            if i < top:
                t0 = rt.tin[kids[i]]
                return rt.pre[t0:t0 + size[i]]
            t0 = rt.tin[w]
            return rt.pre[:t0] + rt.pre[t0 + rt.size[w]:]

        parts = list(sums)
        first = max(parts, key=lambda i: size[i])
        if sum(1 for i in parts if size[i] == size[first]) > 1:
            first = min((i for i in parts if size[i] == size[first]), key=lambda i: min(nodes(i)))
        # Every link from a part other than the first to another part, found in one pass
        # (the part of a switch from the preorder intervals, as _Parts.of).
        tin = rt.tin
        wlo = tin[w]
        whi = wlo + rt.size[w]
        spans = [(tin[c], tin[c] + rt.size[c]) for c in kids]
        one = len(kids) == 1
        across: list[tuple[str, int, str, int, int]] = []     # (u, rank of u-z, z, part of u, part of z)
        if sum(size[i] for i in parts if i != first) >= self.many:
            across = self._across(t.vid, rt, w, spans, first, top)
            parts_far: list[int] = []
        else:
            parts_far = [i for i in parts if i != first]
        for i in parts_far:
            for z in nodes(i):
                for u in adj.get(z, ()):
                    if u == w:
                        continue
                    tu = tin[u]
                    j = top
                    if wlo < tu < whi:
                        if one:                     # w's only child: the common case
                            j = 0
                        else:
                            for k, (lo, hi) in enumerate(spans):
                                if lo <= tu < hi:
                                    j = k
                                    break
                    if j != i:
                        across.append((u, rank[(u, z)], z, j, i))
        joins = join_parts(across, first, len(parts))
        if joins is None:
            return None
        below, hang = branch_sums(joins, {i: sums[i] for i in parts}, (S2, H2))
        for u, z, _j, i in joins:
            bs, bh = below[i]
            total[arcs[(u, z)]] += (S2 - bs) * bh
            total[arcs[(z, u)]] += bs * (H2 - bh)
        # Arcs whose sides change: the ways up from w and from every join end to their part's top.
        changed: set[str] = set()
        for g in [*hang, w]:
            up: str | None = g if g != w else parent[w]
            while up is not None and parent[up] is not None and parent[up] != w and up not in changed:
                changed.add(up)
                up = parent[up]
        # Each changed arc's new load from its sides' sums (_correct inline: this loop runs
        # for every tree and switch).
        tin, tsize = rt.tin, rt.size
        wlo = tin[w]
        whi = wlo + tsize[w]
        sw_, hw_ = s[w], h[w]
        hung = [(tin[g], sum(e[0] for e in extra), sum(e[1] for e in extra)) for g, extra in hang.items()]
        for v in changed:
            p = parent[v]
            assert p is not None
            lo = tin[v]
            hi = lo + tsize[v]
            sv, hv = s[v], h[v]
            above_w = lo <= wlo < hi
            if above_w:
                ss, hh = sv - sw_, hv - hw_
            else:
                ss, hh = sv, hv
            for tg, es, eh in hung:
                if lo <= tg < hi and not (above_w and wlo <= tg < whi):
                    ss += es
                    hh += eh
            # was: the intact loads less the host-loss terms (see _correct)
            total[arcs[(v, p)]] += ss * (H2 - hh) - (sv * (H - hv) - hw * sv)
            total[arcs[(p, v)]] += (S2 - ss) * hh - ((S - sv) * hv - sw * hv)
        for v in [w, *kids] if parent[w] is not None else kids:   # the dead arcs
            p = parent[v]
            assert p is not None
            self._correct(total, rt, v, p, hw, sw, 0, 0)
        return Cuts(t, rt, w, kids, joins, nodes, hang, below, (S2, H2), first, size, across, self.arc_cables)

    def _across(self, vid: int, rt: RootedTree, w: str, spans: list[tuple[int, int]], first: int,
                top: int) -> list[tuple[str, int, str, int, int]]:
        """_tree's links from a part other than the first to another, (u, rank of u-z, z,
        part of u, part of z), found with numpy over every link end of the fabric (the
        parts from the preorder positions), for parts too large to search link by link."""
        pos = self._positions.get(vid)
        if pos is None:
            pos = self._positions[vid] = np.array([rt.tin[s] for s in self.names], dtype=np.int32)
        tz, tu = pos[self.end_z], pos[self.end_u]
        wlo = rt.tin[w]
        pz = np.full(len(tz), top, dtype=np.int32)
        pu = np.full(len(tu), top, dtype=np.int32)
        for k, (lo, hi) in enumerate(spans):
            pz[(tz >= lo) & (tz < hi)] = k
            pu[(tu >= lo) & (tu < hi)] = k
        chosen = np.flatnonzero((pz != first) & (pu != pz) & (tz != wlo) & (tu != wlo)).tolist()
        zs, us, ranks = self.ends
        got_z, got_u = pz.tolist(), pu.tolist()
        return [(us[e], ranks[e], zs[e], got_u[e], got_z[e]) for e in chosen]

    def _one_kid(self, t: Tree, rt: RootedTree, w: str, c: str, hw: int, sw: int,
                 total: list[float] | np.ndarray, joined: tuple[str, str] | None = None) -> Cuts | None:
        """_tree when w has a parent and one child c, and its two parts (c's subtree, the
        rest) differ in size (most trees): one join, from the larger part to the smaller.
        The arcs whose sides change lie on four chains, each with constant offsets (a, b)
        from the intact subtree sums of its side's senders and hosts, so that an arc v-p of
        a chain changes by -b s(v) - a h(v) + a (H2 - b) up and -a h(v) - b s(v) + b (S2 - a)
        down (_tree's correction, expanded): from the join's end o outside w's subtree up to
        the first ancestor m of w (+ c's subtree: it hangs below o now), w's ancestors below
        m (- w's subtree), m and above (- w alone), from the join's end i in c's subtree up
        to c (+ the rest of the tree, which hangs below i). joined: the join (u, z), found and
        corrected already (OneKid.join_all)."""
        arcs, adj, rank = self.arcs, self.adj, self.rank
        parent, s, h, tin, pre = rt.parent, rt.s, rt.h, rt.tin, rt.pre
        S, H = rt.S, rt.H
        S2, H2 = S - sw, H - hw
        top = 1
        lo = tin[c]
        hi = lo + rt.size[c]
        wlo = tin[w]
        whi = wlo + rt.size[w]
        n = len(pre)
        # Part 0: c's subtree; part top: the rest. The join: the first live link from the
        # larger part to the smaller, by its end in the larger part, then neighbour order.
        first = top if 2 * rt.size[c] < n - 1 else 0

        def crossing() -> list[tuple[str, int, str, int, int]]:
            """Every live link from the larger part to the smaller: (its end u in the
            larger, rank of u-z, its end z in the smaller, their parts)."""
            out = []
            if first == top:
                for z in pre[lo:hi]:
                    for u in adj.get(z, ()):
                        if u != w and not lo <= tin[u] < hi:
                            out.append((u, rank[(u, z)], z, top, 0))
            else:
                for z in pre[:wlo] + pre[whi:]:
                    for u in adj.get(z, ()):
                        if u != w and wlo < tin[u] < whi:
                            out.append((u, rank[(u, z)], z, 0, top))
            return out

        sc, hc = s[c], h[c]
        ss, hs = S - s[w], H - h[w]                   # the rest's senders and hosts
        size = {0: rt.size[c], top: n - rt.size[w]}
        below = {0: (sc, hc), top: (ss + sc, hs + hc)} if first == top else {0: (sc + ss, hc + hs), top: (ss, hs)}
        j, i = (top, 0) if first == top else (0, top)
        bs, bh = below[i]

        def nodes(i: int) -> list[str]:
            if i < top:
                return pre[lo:hi]
            return pre[:wlo] + pre[whi:]

        if joined is None and self.kernel is not None and isinstance(total, np.ndarray):
            # the join and every correction below, compiled; the links across listed
            # only if an exchange is priced (Cuts.across)
            joined = self.kernel.join(t.vid, w, c, hw, sw, total)
            if joined is None:
                return None
        if joined is not None:
            u, z = joined
            hang = {u: [(bs, bh)], z: [(S2 - bs, H2 - bh)]}
            return Cuts(t, rt, w, [c], [(u, z, j, i)], nodes, hang, below, (S2, H2), first, size, None,
                         self.arc_cables, crossing)
        across = crossing()
        if not across:
            return None
        u, _, z, j, i = min(across)
        inner, outer = (z, u) if first == top else (u, z)
        hang = {u: [(bs, bh)], z: [(S2 - bs, H2 - bh)]}
        total[arcs[(outer, inner)]] += ss * hc
        total[arcs[(inner, outer)]] += sc * hs

        # The chains walked up by each node's step (parent, arcs up and down, sums): one
        # lookup per node. "q is an ancestor of w" from the preorder intervals.
        step = rt.steps(arcs)
        tsize = rt.size
        q = outer                          # outer up to m, the first ancestor of w: + c's subtree
        cu, cd = sc * (H2 - hc), hc * (S2 - sc)
        while not (tin[q] <= wlo < tin[q] + tsize[q]):
            q, iu, idn, sv, hv = step[q]
            total[iu] += cu - hc * sv - sc * hv
            total[idn] += cd - sc * hv - hc * sv
        m = q
        a, b = -s[w], -h[w]                # w's ancestors below m: - w's subtree
        cu, cd = a * (H2 - b), b * (S2 - a)
        pw = parent[w]
        assert pw is not None
        q = pw
        while q != m:
            q, iu, idn, sv, hv = step[q]
            total[iu] += cu - b * sv - a * hv
            total[idn] += cd - a * hv - b * sv
        a, b = -sw, -hw                    # m and above but the root: - w alone
        cu, cd = a * (H2 - b), b * (S2 - a)
        got = step.get(q)
        while got is not None:
            q, iu, idn, sv, hv = got
            total[iu] += cu - b * sv - a * hv
            total[idn] += cd - a * hv - b * sv
            got = step.get(q)
        q = inner                          # inner up to c (not c): + the rest
        cu, cd = ss * (H2 - hs), hs * (S2 - ss)
        while q != c:
            q, iu, idn, sv, hv = step[q]
            total[iu] += cu - hs * sv - ss * hv
            total[idn] += cd - ss * hv - hs * sv
        for v in (w, c):                   # the dead arcs
            p = parent[v]
            assert p is not None
            self._correct(total, rt, v, p, hw, sw, 0, 0)
        return Cuts(t, rt, w, [c], [(u, z, j, i)], nodes, hang, below, (S2, H2), first, size, across,
                     self.arc_cables)

    def _correct(self, total: list[float] | np.ndarray, rt: RootedTree, v: str, p: str, hw: int, sw: int,
                 new_up: int, new_down: int) -> None:
        """Arc v->p and p->v of tree rt now carry new_up and new_down; total holds their
        intact loads less the host-loss terms."""
        old_up = rt.s[v] * (rt.H - rt.h[v]) - hw * rt.s[v]
        old_down = (rt.S - rt.s[v]) * rt.h[v] - sw * rt.h[v]
        total[self.arcs[(v, p)]] += new_up - old_up
        total[self.arcs[(p, v)]] += new_down - old_down


class _Parts:
    """The part of a switch once w is gone (index into w's children, or their count: the
    part above w), from the preorder positions: outside w's interval, the part above w;
    inside, the child's whose interval holds it."""

    def __init__(self, rt: RootedTree, w: str, kids: list[str]) -> None:
        self.tin = rt.tin
        self.lo, self.hi = rt.tin[w], rt.tin[w] + rt.size[w]
        self.kids = [(rt.tin[c], rt.tin[c] + rt.size[c]) for c in kids]
        self.top = len(kids)

    def of(self, q: str) -> int:
        t = self.tin[q]
        if not self.lo < t < self.hi:
            return self.top
        for i, (lo, hi) in enumerate(self.kids):
            if lo <= t < hi:
                return i
        return self.top


class Cuts:
    """A tree without w, its parts joined again: which exchange of a joining link could
    lower the max load (`fixed`: none could)."""

    def __init__(self, t: Tree, rt: RootedTree, w: str, kids: list[str],
                 joins: list[tuple[str, str, int, int]], nodes: Callable[[int], list[str]],
                 hang: dict[str, list[tuple[int, int]]], below: dict[int, tuple[int, int]],
                 totals: tuple[int, int], first: int, size: Mapping[int, int],
                 across: list[tuple[str, int, str, int, int]] | None, cables: Mapping[Arc, int] | None = None,
                 crossing: Callable[[], list[tuple[str, int, str, int, int]]] | None = None) -> None:
        """across None: crossing() lists it when first asked."""
        self.t, self.rt, self.w, self.kids, self.joins, self.nodes = t, rt, w, kids, joins, nodes
        self._parts: _Parts | None = None            # made when first asked (most trees never ask)
        self.hang, self.below, self.totals = hang, below, totals
        self._hung: list[tuple[int, int, int]] | None = None     # hang by preorder position, summed
        self._sums: dict[str, tuple[int, int]] = {}                # side_sums, kept until the joins change
        self.first, self.size = first, size
        # every live link from a part but the first to another (the first is in no far branch,
        # so every candidate of every exchange is here): (u, rank, z, part of u, part of z)
        self._across = across
        self._crossing = crossing
        self.cables = cables           # the cables of every arc (the book's), or None: ask the book
        self.rounded: dict[float, float] = {}     # round(x, 9) of the values met (improve's)
        self.up_part = {i: (j, u, z) for u, z, j, i in joins}     # part -> (parent part, u there, z here)
        self.links = {(u, z) if u < z else (z, u) for u, z, _, _ in joins}
        self._toward: dict[str, dict[str, str]] = {}
        self._part: dict[str, int] = {}
        self._exits: dict[tuple[int, int], tuple[str, str, int, int]] = {}

    @property
    def across(self) -> list[tuple[str, int, str, int, int]]:
        if self._across is None:
            assert self._crossing is not None
            self._across = self._crossing()
        return self._across

    def part(self, q: str) -> int:
        got = self._part.get(q)
        if got is None:
            if self._parts is None:
                self._parts = _Parts(self.rt, self.w, self.kids)
            got = self._part[q] = self._parts.of(q)
        return got

    def below_in_parts(self, i: int, top: int) -> bool:
        """Part i hangs (at any depth) below part top in the parts' tree."""
        while i in self.up_part:
            i = self.up_part[i][0]
            if i == top:
                return True
        return False

    def side_sums(self, v: str) -> tuple[int, int]:
        """Senders and hosts on v's side of the tree link from v up to its parent, in the
        joined tree (as _tree computes them)."""
        got = self._sums.get(v)
        if got is not None:
            return got
        rt, w = self.rt, self.w
        hung = self._hung
        if hung is None:
            tin = rt.tin
            hung = self._hung = [(tin[g], sum(e[0] for e in extra), sum(e[1] for e in extra))
                                 for g, extra in self.hang.items()]
        lo = rt.tin[v]
        hi = lo + rt.size[v]
        wlo = rt.tin[w]
        if lo <= wlo < hi:                       # v above w: w's subtree is gone from below v
            whi = wlo + rt.size[w]
            ss, hh = rt.s[v] - rt.s[w], rt.h[v] - rt.h[w]
            for tg, es, eh in hung:
                if lo <= tg < hi and not wlo <= tg < whi:
                    ss += es
                    hh += eh
        else:
            ss, hh = rt.s[v], rt.h[v]
            for tg, es, eh in hung:
                if lo <= tg < hi:
                    ss += es
                    hh += eh
        self._sums[v] = (ss, hh)
        return ss, hh

    def lowered(self, arc: Arc, v: str, p: str, side_cut: bool, far: set[int], book: LoadBook,
                peak: float) -> bool:
        """Would an exchange whose way passes the tree link v-p bring arc below peak? Its
        change there is the same for every such exchange (Exchanges.delta)."""
        S2, H2 = self.totals
        ss, hh = self.side_sums(v)
        # The part beyond the link seen from the cut: v's side, unless the cut is there.
        q, r, (sb, hb) = (p, v, (S2 - ss, H2 - hh)) if side_cut else (v, p, (ss, hh))
        fs, fh = self.below[self.joins_far_root(far)]
        own, other = ((fs, fh), (S2 - fs, H2 - fh)) if self.part(v) in far else ((S2 - fs, H2 - fh), (fs, fh))
        (sr, hr), (so, ho) = own, other
        d = (sr - sb) * ho - so * hb if arc == (r, q) else so * (hr - hb) - sb * ho
        return d < 0 and book.per_cable(arc, book.total.get(arc, 0.0) + d) < peak

    def joins_far_root(self, far: set[int]) -> int:
        return next(i for i in far if self.up_part[i][0] not in far)

    def fixed(self, n: int, hot: list[Arc], book: LoadBook, peak: float) -> bool:
        """No exchange of the n-th joining link lowers every hot arc: some hot arc is not a
        link of the tree (an exchange only raises the arcs of the link it adds), or lies
        where no exchange's ways pass (no candidate's end beyond it from the cut)."""
        if not hot:
            return True
        # First the cheap proof: a hot arc off the tree (not a join's, not dead) rises or
        # stays with every exchange, whichever link is cut. The loop below may stop at a
        # hot arc an exchange could lower before it meets that one.
        links = self.t.links
        for a, b in hot:
            l = (a, b) if a < b else (b, a)
            if l not in links and l not in self.links and not self.dead_link(l):
                return True
        u0, z0, _, i0 = self.joins[n]
        cut = (u0, z0) if u0 < z0 else (z0, u0)
        far = {i0} | {i for i in self.up_part if self.below_in_parts(i, i0)}
        ends: list[str] | None = None
        for a, b in hot:
            l = (a, b) if a < b else (b, a)
            if l == cut:
                return False
            if self.dead_link(l):
                continue
            if l in self.links:
                return False              # an earlier join: not priced here
            if l not in self.t.links:
                return True
            v, p = (a, b) if self.rt.parent.get(a) == b else (b, a)
            side_cut = self._side(v, u0)
            # Two proofs that no exchange lowers this arc, the cheaper first: its change is
            # not a fall below the peak; no candidate's end lies beyond it from the cut.
            if not self.lowered((a, b), v, p, side_cut, far, book, peak):
                return True
            if ends is None:
                ends = self._ends(far)
            if not any(self._side(v, e) != side_cut for e in ends):
                return True
        return False

    def _ends(self, far: set[int]) -> list[str]:
        """Both ends of every live link across the cut (the candidates)."""
        out = []
        for u, _, z, j, i in self.across:
            if (i in far) != (j in far):
                out += [z, u]
        return out

    def _side(self, v: str, q: str) -> bool:
        """q lies on v's side of the tree link from v up to its parent, in the joined tree."""
        rt = self.rt
        home = self.part(v)
        i = self.part(q)
        if i != home:
            # The part of q reaches v's part through the join below it, or through the join above.
            g = None
            k = i
            while k in self.up_part:
                j, u, _ = self.up_part[k]
                if j == home:
                    g = u
                    break
                k = j
            if g is None:
                g = self.up_part[home][2]
            q = g
        lo = rt.tin[v]
        return lo <= rt.tin[q] < lo + rt.size[v]

    # ---------------------------------------------------------------- the exchanges
    # improve_tree (routing/repair/engine.py, without the deadlock guard) on the joined tree, with
    # the same choices from the same integer load changes, but without rooting the joined
    # tree again per joining link (Exchanges): a switch's way to a cut end and its sums so
    # rooted come from the intact rooted tree, the joins and the parts' branch sums.

    def improve(self, book: LoadBook, rounded: dict[float, float] | None = None, raw: Raw | None = None
                ) -> list[Arc]:
        """Exchange each joining link, in turn by link, as improve_tree does; the book takes
        the load changes. The arcs whose loads changed (empty: no link was exchanged).
        rounded: round(x, 9) of the values met, kept from one call to the next; raw: the
        book's loads as an array, for the compiled exchange (kept up to date here)."""
        self.rounded = {} if rounded is None else rounded
        changed: list[Arc] = []
        for cut in sorted(self.links):
            got = self._exchange(cut, book) if raw is None else self._exchange_compiled(cut, book, raw)
            if got is not None:
                new, delta = got
                book.add(self.t.vid, delta)
                if raw is not None:
                    raw.took(delta, book)
                self._rejoin(cut, new)
                changed += delta
        return changed

    def _exchange(self, cut: Link, book: LoadBook) -> tuple[Link, dict[Arc, float]] | None:
        """improve_tree's choice for the joining link `cut` (None: it keeps the link)."""
        x, y = cut
        u0, z0, _, i0 = next(j for j in self.joins if {j[0], j[1]} == {x, y})
        branch = {i0} | {i for i in self.up_part if self.below_in_parts(i, i0)}
        S2, H2 = self.totals
        bs, bh = self.below[i0]
        # y's side: the branch below the joining link, or the rest.
        y_parts = branch if y == z0 else {i for i in self.size if i not in branch}
        s2, h2 = (bs, bh) if y == z0 else (S2 - bs, H2 - bh)
        s1, h1 = S2 - s2, H2 - h2
        options = self._options(y_parts)
        peak, hot = book.at_peak()
        if peak <= 0:
            return None
        keep = options
        for a, b in hot:
            l = (a, b) if a < b else (b, a)
            if l == cut:
                continue
            inside = self._beyond(l, x)
            if inside is None:
                return None             # an arc off the tree: no exchange lowers it
            keep = [c for c in keep if c == cut or inside(c[0]) or inside(c[1])]
        up, down = s1 * h2, s2 * h1
        total = book.total
        sums = (s1, h1, s2, h2)
        top = book.top(TOP)
        bits = {arc: 1 << n for n, (_, arc) in enumerate(top)}
        ways = _Ways(self, book, bits, x, y, sums)
        # The cut link's arcs change with every exchange.
        cut_local, cut_mask = 0.0, 0
        for arc, d in (((x, y), -s1 * h2), ((y, x), -s2 * h1)):
            if d:
                cut_local = max(cut_local, book.per_cable(arc, total.get(arc, 0.0) + d))
                cut_mask |= bits.get(arc, 0)
        tried: list[tuple[float, float, bool, Link]] = []
        rounded = self.rounded
        bound = inf = float("inf")       # the least first field of `tried` so far
        cables, per_cable, way, memo = self.cables, book.per_cable, ways.way, ways.memo
        part = self.part
        for c in keep:
            if c == cut:
                r = _round(rounded, peak)
                tried.append((r, 0.0, False, c))
                if r < bound:
                    bound = r
                continue
            a, b = c
            if part(a) in y_parts:
                a, b = b, a                      # a on x's side, b on y's
            if cables is None:
                new_ab = per_cable((a, b), total.get((a, b), 0.0) + up)
                new_ba = per_cable((b, a), total.get((b, a), 0.0) + down)
            else:                                # book.per_cable, inline
                v = total[(a, b)] + up
                n = cables[(a, b)]
                new_ab = v / n if n else (inf if v > 1e-9 else 0.0)
                v = total[(b, a)] + down
                n = cables[(b, a)]
                new_ba = v / n if n else (inf if v > 1e-9 else 0.0)
            if (up and new_ab >= peak) or (down and new_ba >= peak):
                continue
            local, mask = cut_local, cut_mask
            if up:
                if new_ab > local:
                    local = new_ab
                mask |= bits.get((a, b), 0)
            if down:
                if new_ba > local:
                    local = new_ba
                mask |= bits.get((b, a), 0)
            # The exchange's max load is at least its local max: once that rounds above a
            # key already tried, it cannot be the least (the ways left unwalked).
            if _round(rounded, local) > bound:
                continue
            got = memo.get(a)
            la, ma = got if got is not None else way(a, x)
            if la > local:
                local = la
                if _round(rounded, local) > bound:
                    continue
            got = memo.get(b)
            lb, mb = got if got is not None else way(b, y)
            if lb > local:
                local = lb
            mask |= ma | mb
            n = (~mask & (mask + 1)).bit_length() - 1
            if n < len(top):
                p = top[n][0]
                if local > p:
                    p = local
            else:                                  # every tracked arc changes: price it in full
                p, local = trial_peak(book, ways.changes(a, b))
            r = _round(rounded, p)
            tried.append((r, _round(rounded, local), True, c))
            if r < bound:
                bound = r
        best = min(tried)
        if best[3] == cut:
            return None
        a, b = best[3]
        if self.part(a) in y_parts:
            a, b = b, a
        return best[3], ways.changes(a, b)

    def _exchange_compiled(self, cut: Link, book: LoadBook, raw: Raw) -> tuple[Link, dict[Arc, float]] | None:
        """_exchange's choice by the compiled kernel (switches_kernel.Exchange), which
        prices every live link across the cut."""
        x, y = cut
        u0, z0, _, i0 = next(j for j in self.joins if {j[0], j[1]} == {x, y})
        peak, hot = raw.at_peak(book)
        if peak <= 0:
            return None
        for a, b in hot:
            l = (a, b) if a < b else (b, a)
            if l != cut and l not in self.links and (l not in self.t.links or self.dead_link(l)):
                return None             # an arc off the tree: no exchange lowers it
        S2, H2 = self.totals
        bs, bh = self.below[i0]
        s2, h2 = (bs, bh) if y == z0 else (S2 - bs, H2 - bh)      # y's side
        return raw.exchange.choose(self.t.vid, x, y, (S2 - s2, H2 - h2, s2, h2), peak, raw.top(book),
                                   [(u, z) for u, z, _, _ in self.joins], self.severed(), raw.total, raw.ncab)

    def severed(self) -> list[str]:
        """The lower end of every link of the intact tree that the failure took."""
        return self.kids + ([self.w] if self.rt.parent[self.w] is not None else [])

    def _options(self, y_parts: set[int]) -> list[Link]:
        """Every live link across the cut (the cut itself too), sorted: Exchanges.candidates."""
        return sorted({(u, z) if u < z else (z, u) for u, _, z, j, i in self.across if (i in y_parts) != (j in y_parts)})

    def _beyond(self, l: Link, x: str) -> Callable[[str], bool] | None:
        """Whether a switch lies on the far side from x of tree link l (None: l is not a
        link of the joined tree): an exchange changes l's arcs exactly when one end of the
        new link lies there (improve_tree's _may_lower)."""
        a, b = l
        if l in self.links:
            u, z, _j, i = next(j for j in self.joins if {j[0], j[1]} == {a, b})
            branch = {i} | {k for k in self.up_part if self.below_in_parts(k, i)}
            x_in = self.part(x) in branch
            return lambda q: (self.part(q) in branch) != x_in
        if l not in self.t.links or self.dead_link(l):
            return None
        v = a if self.rt.parent.get(a) == b else b
        x_side = self._side(v, x)
        return lambda q: self._side(v, q) != x_side

    def _step(self, q: str, r: str, R: int | None = None) -> tuple[str, int, int]:
        """q's neighbour on its way to r in the joined tree, and the senders and hosts on
        q's side of the link between them. R: r's part, when known."""
        P = self.part(q)
        if R is None:
            R = self.part(r)
        if P == R:
            g = r
        else:
            key = (P, R)
            ex = self._exits.get(key)
            if ex is None:
                ex = self._exits[key] = self._exit(P, R)
            g, over, es, eh = ex
            if q == g:
                return over, es, eh
        rt = self.rt
        t0 = rt.tin[q]
        if t0 <= rt.tin[g] < t0 + rt.size[q]:
            child = self._child_toward(q, g)
            cs, ch = self.side_sums(child)
            S2, H2 = self.totals
            return child, S2 - cs, H2 - ch
        p = rt.parent[q]
        assert p is not None
        ss, hh = self.side_sums(q)
        return p, ss, hh

    def _exit(self, P: int, R: int) -> tuple[str, str, int, int]:
        """Where the way from part P to part R leaves P: the join's end in P, its other end,
        and the sums on P's side of that join."""
        k = R
        while k in self.up_part:
            j, u, z = self.up_part[k]
            if j == P:
                S2, H2 = self.totals
                bs, bh = self.below[k]
                return u, z, S2 - bs, H2 - bh
            k = j
        _, u, z = self.up_part[P]
        bs, bh = self.below[P]
        return z, u, bs, bh

    def _child_toward(self, q: str, g: str) -> str:
        """q's child (intact tree) on the way down to g, which lies below q."""
        toward = self._toward.get(g)
        if toward is None:
            toward = self._toward[g] = {}
            v = g
            parent = self.rt.parent
            while True:
                p = parent[v]
                if p is None or p == self.w:
                    break
                toward[p] = v
                v = p
        return toward[q]

    def _rejoin(self, cut: Link, new: Link) -> None:
        """The joining link `cut` is exchanged for `new`: the parts' tree again, from the
        first part (up_part, branch sums, what hangs off each join end)."""
        ends = [(u, z) for u, z, _, _ in self.joins if {u, z} != set(cut)] + [new]
        near: dict[int, list[tuple[str, str, int]]] = {}
        for a, b in ends:
            pa, pb = self.part(a), self.part(b)
            near.setdefault(pa, []).append((a, b, pb))
            near.setdefault(pb, []).append((b, a, pa))
        joins: list[tuple[str, str, int, int]] = []
        seen = {self.first}
        todo = [self.first]
        while todo:
            j = todo.pop(0)
            for u, z, i in near.get(j, ()):
                if i not in seen:
                    seen.add(i)
                    joins.append((u, z, j, i))
                    todo.append(i)
        below, hang = branch_sums(joins, self._part_sums(), self.totals)
        self.joins, self.below, self.hang = joins, below, hang
        self._hung = None
        self._sums = {}
        self.up_part = {i: (j, u, z) for u, z, j, i in joins}
        self.links = {(u, z) if u < z else (z, u) for u, z, _, _ in joins}
        self._exits = {}

    def _part_sums(self) -> dict[int, tuple[int, int]]:
        """Each part's own senders and hosts (its switches only)."""
        rt = self.rt
        below = {i: (rt.s[c], rt.h[c]) for i, c in enumerate(self.kids)}
        for i in self.size:
            if i not in below:             # the part above w
                below[i] = (rt.S - rt.s[self.w], rt.H - rt.h[self.w])
        return below

    def dead_link(self, l: Link) -> bool:
        """A link of the intact tree that the failure took."""
        return self.w in l


class Raw:
    """The book's raw loads as an array (by arc number), for the compiled exchange, and its
    max load, the arcs at it and its most loaded arcs, kept until the book changes."""

    def __init__(self, exchange: Exchange, total: np.ndarray, ncab: np.ndarray, arcs: Mapping[Arc, int]) -> None:
        self.exchange, self.total, self.ncab, self.arcs = exchange, total, ncab, arcs
        self._peak: tuple[float, list[Arc]] | None = None
        self._top: list[tuple[float, Arc]] | None = None

    def took(self, delta: Mapping[Arc, float], book: LoadBook) -> None:
        """The book took these changes: copy its new loads."""
        for a in delta:
            self.total[self.arcs[a]] = book.total[a]
        self._peak = self._top = None

    def read(self, book: LoadBook) -> None:
        """Every load again from the book, which changed by other means."""
        for a, i in self.arcs.items():
            self.total[i] = book.total[a]
        self._peak = self._top = None

    def at_peak(self, book: LoadBook) -> tuple[float, list[Arc]]:
        if self._peak is None:
            self._peak = book.at_peak()
        return self._peak

    def top(self, book: LoadBook) -> list[tuple[float, Arc]]:
        if self._top is None:
            self._top = book.top(TOP)
        return self._top


def join_parts(across: list[tuple[str, int, str, int, int]], first: int, count: int
               ) -> list[tuple[str, str, int, int]] | None:
    """repair_tree's joins of `count` parts with hosts on every live switch: from the first
    part, each time the first link (by its joined end, then the neighbour order) to a part
    not joined yet; (u joined, z reached, part of u, part of z) per join, None: not joined.
    across: (u, rank of u-z, z, part of u, part of z), every link from a part but the first
    to another."""
    inside = {first}
    joins: list[tuple[str, str, int, int]] = []
    while len(inside) < count:
        best = min((a for a in across if a[3] in inside and a[4] not in inside), default=None)
        if best is None:
            return None
        u, _, z, j, i = best
        joins.append((u, z, j, i))
        inside.add(i)
    return joins


def branch_sums(joins: list[tuple[str, str, int, int]], own: Mapping[int, tuple[int, int]],
                totals: tuple[int, int]) -> tuple[dict[int, tuple[int, int]], dict[str, list[tuple[int, int]]]]:
    """The parts' tree, each join hanging part i below part j (joins from the first part
    down): each part's branch sums (senders, hosts of it and the parts below it), from each
    part's own; and per join end, the sums hanging off it across its join."""
    S2, H2 = totals
    below = dict(own)
    for _u, _z, j, i in reversed(joins):
        bs, bh = below[i]
        ps, ph = below[j]
        below[j] = (ps + bs, ph + bh)
    hang: dict[str, list[tuple[int, int]]] = {}
    for u, z, _j, i in joins:
        bs, bh = below[i]
        hang.setdefault(u, []).append((bs, bh))
        hang.setdefault(z, []).append((S2 - bs, H2 - bh))
    return below, hang


TOP = 16             # the most loaded arcs tracked in the bit masks of an exchange


def _round(rounded: dict[float, float], x: float) -> float:
    """round(x, 9), looked up first: the loads repeat, and round with digits is slow."""
    got = rounded.get(x)
    if got is None:
        got = rounded[x] = round(x, 9)
    return got


class _Ways:
    """For one exchange of a joining link x-y: each switch's way to its end of the cut
    (x's side to x, y's to y), with (memo) the largest load per cable after the exchange on
    it and the bits of the tracked arcs it changes; the changes per step are those of
    Exchanges.delta, so an exchange costs the ways it adds, not the tree."""

    def __init__(self, cuts: Cuts, book: LoadBook, bits: Mapping[Arc, int], x: str, y: str,
                 sums: tuple[int, int, int, int]) -> None:
        self.cuts, self.book, self.bits, self.x, self.y, self.sums = cuts, book, bits, x, y, sums
        self.memo: dict[str, tuple[float, int]] = {x: (0.0, 0), y: (0.0, 0)}
        self.steps: dict[str, tuple[str, int, int]] = {}     # a switch -> (next, change on next->it, on it->next)

    def way(self, q: str, r: str) -> tuple[float, int]:
        """q's way to r (x or y, the end of the cut on q's side)."""
        memo = self.memo
        got = memo.get(q)
        if got is not None:
            return got
        cuts = self.cuts
        step, R = cuts._step, cuts.part(r)
        path = []
        while q not in memo:
            got_step = step(q, r, R)
            path.append((q, got_step))
            q = got_step[0]
        peak, mask = memo[q]
        s1, h1, s2, h2 = self.sums if r == self.x else (self.sums[2], self.sums[3], self.sums[0], self.sums[1])
        book, bits, total, steps = self.book, self.bits, self.book.total, self.steps
        cables = cuts.cables
        inf = float("inf")
        for v, (p, sq, hq) in reversed(path):
            # Exchanges.delta's changes on the step's two arcs
            down, up = (s1 - sq) * (hq + h2) - (s1 - sq + s2) * hq, (sq + s2) * (h1 - hq) - sq * (h1 - hq + h2)
            steps[v] = (p, down, up)
            if cables is None:
                for arc, d in (((p, v), down), ((v, p), up)):
                    if d:
                        peak = max(peak, book.per_cable(arc, total.get(arc, 0.0) + d))
                        mask |= bits.get(arc, 0)
            else:                                # book.per_cable, inline
                if down:
                    arc = (p, v)
                    x = total[arc] + down
                    n = cables[arc]
                    val = x / n if n else (inf if x > 1e-9 else 0.0)
                    if val > peak:
                        peak = val
                    mask |= bits.get(arc, 0)
                if up:
                    arc = (v, p)
                    x = total[arc] + up
                    n = cables[arc]
                    val = x / n if n else (inf if x > 1e-9 else 0.0)
                    if val > peak:
                        peak = val
                    mask |= bits.get(arc, 0)
            memo[v] = (peak, mask)
        return peak, mask

    def changes(self, a: str, b: str) -> dict[Arc, float]:
        """Exchanges.delta: the raw load changes when a-b (a on x's side) replaces x-y."""
        x, y = self.x, self.y
        s1, h1, s2, h2 = self.sums
        out: dict[Arc, float] = {}
        steps = []
        for q, r in ((a, x), (b, y)):
            self.way(q, r)
            while q != r:
                p, down, up = self.steps[q]
                steps += [((p, q), down), ((q, p), up)]
                q = p
        for arc, d in [((x, y), -s1 * h2), ((y, x), -s2 * h1), ((a, b), s1 * h2), ((b, a), s2 * h1), *steps]:
            if d:
                out[arc] = out.get(arc, 0.0) + d
        return out
