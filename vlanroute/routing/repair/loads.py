"""Every VLAN's load on every arc during a repair (`LoadBook`), and one link of a tree
exchanged for another across the same cut, tried in the time of the two paths it changes
(`Exchanges`, `trial_peak`).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from vlanroute.model.links import Arc, Link, link
from vlanroute.routing.repair.model import Degraded, adjacency, tree_arc_loads


class LoadBook:
    """The raw load of every VLAN on every arc, their sum, and the arcs by load per cable
    (a heap with stale entries skipped), to try an exchange of one link in one tree
    against the others in the time of the paths it changes."""

    def __init__(self, fabric: Degraded, senders: Mapping[int, Mapping[str, int]],
                 per_vlan: dict[int, dict[Arc, float]], total: dict[Arc, float],
                 fallback: Mapping[int, dict[Arc, float]] | None = None, cables: dict[Arc, int] | None = None,
                 heap: list[tuple[float, Arc]] | None = None) -> None:
        """heap: (-load per cable, arc) of every arc of total, heapified, when the caller has
        it (the what-if's dead switches compute every load per cable with numpy anyway)."""
        self.fabric = fabric
        self.senders = senders
        self.per_vlan = per_vlan
        self.fallback = fallback or {}        # read-only loads of the VLANs not in per_vlan
        self.total = total
        # per arc, the cables of its link (cached; `cables`: the caller's, the same figures)
        self._cables: dict[Arc, int] = dict(cables) if cables is not None else {}
        if heap is None:
            heap = [(-self.per_cable(a, x), a) for a, x in total.items()]
            heapq.heapify(heap)
        self._heap: list[tuple[float, Arc]] = heap
        self._journal: list[tuple[int, dict[Arc, float]]] | None = None     # `begin`

    @classmethod
    def of(cls, trees: Mapping[int, frozenset[Link]], senders: Mapping[int, Mapping[str, int]],
           fabric: Degraded) -> LoadBook:
        per_vlan = {vid: tree_arc_loads(links, senders[vid], fabric.hosts) for vid, links in trees.items()}
        total: dict[Arc, float] = {}
        for loads in per_vlan.values():
            for arc, x in loads.items():
                total[arc] = total.get(arc, 0.0) + x
        return cls(fabric, senders, per_vlan, total)

    def per_cable(self, arc: Arc, raw: float) -> float:
        n = self._cables.get(arc)
        if n is None:
            n = self._cables[arc] = self.fabric.cables.get(link(*arc), 0)
        return raw / n if n else (float("inf") if raw > 1e-9 else 0.0)

    def max_load(self) -> float:
        return self.peak_except(set())

    def hottest(self) -> Arc | None:
        while self._heap:
            load, arc = self._heap[0]
            if abs(-load - self.per_cable(arc, self.total.get(arc, 0.0))) < 1e-9:
                return arc
            heapq.heappop(self._heap)
        return None

    def at_peak(self) -> tuple[float, list[Arc]]:
        """The max load per cable and every arc at it (the heap's valid entries at its top)."""
        aside = []
        found: float | None = None
        arcs: list[Arc] = []
        while self._heap:
            load, arc = self._heap[0]
            if abs(-load - self.per_cable(arc, self.total.get(arc, 0.0))) > 1e-9:
                heapq.heappop(self._heap)           # stale
                continue
            if found is not None and -load != found:
                break
            found = -load
            if arc not in arcs:
                arcs.append(arc)
            aside.append(heapq.heappop(self._heap))
        for item in aside:
            heapq.heappush(self._heap, item)
        return (found or 0.0), arcs

    def peak_except(self, arcs: set[Arc]) -> float:
        """The highest load per cable over the arcs not in `arcs`."""
        aside = []
        found = 0.0
        while self._heap:
            load, arc = self._heap[0]
            if abs(-load - self.per_cable(arc, self.total.get(arc, 0.0))) > 1e-9:
                heapq.heappop(self._heap)           # stale
                continue
            if arc in arcs:
                aside.append(heapq.heappop(self._heap))
                continue
            found = -load
            break
        for item in aside:
            heapq.heappush(self._heap, item)
        return found

    def top(self, k: int) -> list[tuple[float, Arc]]:
        """Up to k arcs by load per cable, most loaded first, as peak_except meets them: the
        largest load off a set of arcs is that of the first arc here not in the set (when
        there is one)."""
        aside = []
        out: list[tuple[float, Arc]] = []
        seen: set[Arc] = set()
        while self._heap and len(out) < k:
            load, arc = self._heap[0]
            if abs(-load - self.per_cable(arc, self.total.get(arc, 0.0))) > 1e-9:
                heapq.heappop(self._heap)           # stale
                continue
            aside.append(heapq.heappop(self._heap))
            if arc not in seen:
                seen.add(arc)
                out.append((-load, arc))
        for item in aside:
            heapq.heappush(self._heap, item)
        return out

    def loads(self, vid: int) -> dict[Arc, float]:
        got = self.per_vlan.get(vid)
        return got if got is not None else self.fallback.get(vid, {})

    def begin(self) -> None:
        """Record the changes from here on, for `undo`."""
        self._journal = []

    def commit(self) -> None:
        """Keep the changes since `begin`."""
        self._journal = None

    def undo(self) -> None:
        """Take back the changes since `begin`. The loads are sums of products of host
        counts, whole numbers, so taking a change back restores them exactly (and the
        heap's order, by load then arc, with them)."""
        journal, self._journal = self._journal or [], None
        for vid, delta in reversed(journal):
            self.add(vid, {arc: -d for arc, d in delta.items()})

    def add(self, vid: int, delta: Mapping[Arc, float]) -> None:
        if self._journal is not None:
            self._journal.append((vid, dict(delta)))
        if vid not in self.per_vlan:
            self.per_vlan[vid] = dict(self.fallback.get(vid, {}))
        loads = self.per_vlan[vid]
        for arc, d in delta.items():
            x = self.total.get(arc, 0.0) + d
            self.total[arc] = x
            loads[arc] = loads.get(arc, 0.0) + d
            heapq.heappush(self._heap, (-self.per_cable(arc, x), arc))

    def set(self, vid: int, links: frozenset[Link]) -> None:
        """VLAN vid's loads are now those of `links`."""
        new = tree_arc_loads(links, self.senders[vid], self.fabric.hosts)
        old = self.loads(vid)
        delta = {a: new.get(a, 0.0) - old.get(a, 0.0) for a in set(new) | set(old)}
        self.add(vid, {a: d for a, d in delta.items() if d})
        self.per_vlan[vid] = new


class Exchanges:
    """The exchanges of one link (x, y) of a tree for another across the same cut, each
    tried in the time of the two paths it changes: the part of y moves from x to the new
    link's end in x's part, so only the arcs on the way from x to that end (and likewise
    in y's part) carry other loads (module docstring: the senders on one side times the
    hosts on the other)."""

    def __init__(self, links: frozenset[Link], cut: Link, senders: Mapping[str, int],
                 hosts: Mapping[str, int]) -> None:
        x, y = cut
        adj = adjacency(links)
        parent: dict[str, str | None] = {x: None}
        order = [x]
        up: list[int] = []                  # each switch's parent's position, along order[1:]
        for i, u in enumerate(order):
            for v in adj[u]:
                if v not in parent:
                    parent[v] = u
                    order.append(v)
                    up.append(i)
        # Subtree sums over lists by BFS position (dicts by name at the end): the what-if
        # with a dead switch builds this for hundreds of trees.
        sl = [senders.get(v, 0) for v in order]
        hl = [hosts.get(v, 0) for v in order]
        for i in range(len(up) - 1, -1, -1):
            p = up[i]
            sl[p] += sl[i + 1]
            hl[p] += hl[i + 1]
        s = dict(zip(order, sl))
        h = dict(zip(order, hl))
        self.parent, self.order, self.s, self.h = parent, order, s, h
        # y's part: y and its descendants, when rooted at x.
        self.far = self.below(y)
        self.x, self.y = x, y
        self.s2, self.h2 = self.s[y], self.h[y]
        self.s1, self.h1 = self.s[x] - self.s2, self.h[x] - self.h2

    def below(self, v: str) -> set[str]:
        """v and its descendants, when rooted at x (a BFS order lists them after v)."""
        out = {v}
        parent = self.parent
        for u in self.order[self.order.index(v) + 1:]:
            if parent[u] in out:
                out.add(u)
        return out

    def candidates(self, adj: Mapping[str, list[str]]) -> list[Link]:
        near = [v for v in self.parent if v not in self.far]
        small, other_far = (self.far, False) if len(self.far) <= len(near) else (set(near), True)
        out = set()
        for a in small:
            for b in adj.get(a, ()):
                if b in self.parent and (b in self.far) == other_far:
                    out.add(link(a, b))
        return sorted(out)

    def delta(self, new: Link) -> dict[Arc, float]:
        """Raw load changes of this tree when `new` replaces the cut link."""
        a, b = new
        if a in self.far:
            a, b = b, a                            # a in x's part, b in y's part
        x, y = self.x, self.y
        s1, h1, s2, h2 = self.s1, self.h1, self.s2, self.h2
        out: dict[Arc, float] = {}

        def put(arc: Arc, d: float) -> None:
            if d:
                out[arc] = out.get(arc, 0.0) + d
        put((x, y), -s1 * h2)
        put((y, x), -s2 * h1)
        put((a, b), s1 * h2)
        put((b, a), s2 * h1)
        q = a                                      # x's part: y's part moves from x to a
        while q != x:
            p = self.parent[q]
            assert p is not None
            sq, hq = self.s[q], self.h[q]
            put((p, q), (s1 - sq) * (hq + h2) - (s1 - sq + s2) * hq)
            put((q, p), (sq + s2) * (h1 - hq) - sq * (h1 - hq + h2))
            q = p
        q = b                                      # y's part: x's part moves from y to b
        while q != y:
            p = self.parent[q]
            assert p is not None
            sq, hq = self.s[q], self.h[q]
            put((p, q), (s2 - sq) * (hq + h1) - (s2 - sq + s1) * hq)
            put((q, p), (sq + s1) * (h2 - hq) - sq * (h2 - hq + h1))
            q = p
        return out


def trial_peak(book: LoadBook, delta: Mapping[Arc, float],
               ignore: frozenset[Arc] = frozenset()) -> tuple[float, float]:
    """(max load per cable over the fabric, max over the arcs changed) after `delta`, the
    arcs of `ignore` left out of both."""
    local = 0.0                        # loads are never negative: 0 is max()'s default
    total, per_cable = book.total, book.per_cable
    for a, d in delta.items():
        if a not in ignore:
            x = per_cable(a, total.get(a, 0.0) + d)
            if x > local:
                local = x
    return max(local, book.peak_except(set(delta) | ignore if ignore else set(delta))), local
