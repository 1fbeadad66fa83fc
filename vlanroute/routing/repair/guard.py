"""Deadlock freedom of a repaired plan, and the guard that keeps a deadlock-free plan so.

The channel dependency graph (Dally and Seitz 1987) has a dependency p->q => q->r wherever
a route crosses p, q, r; in a VLAN's tree a route from a source host crosses q from p to r
exactly when a sender lies on p's side of q and a host on r's side (`tree_dependencies`).
A plan is deadlock-free when the dependencies of all its VLANs have no cycle. The repair
asks, for every candidate link of every repaired tree, whether the others' dependencies
stay acyclic with that tree's added (`AcyclicWith`, `CountedDependencies`), without
building the whole graph each time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import networkx as nx

from vlanroute.model.links import Arc, Link
from vlanroute.routing.repair.model import rooted_tree, subtree_sums


def tree_dependencies(links: Iterable[Link], senders: Mapping[str, int],
                      hosts: Mapping[str, int]) -> set[tuple[str, str, str]]:
    """(p, q, r): some route of this VLAN crosses q from p to r, so channel p->q waits for q->r."""
    order, parent, adj = rooted_tree(links)
    return _dependencies_at(order, order, parent, adj, senders, hosts)


def _dependencies_at(at: Iterable[str], order: list[str], parent: Mapping[str, str | None],
                     adj: Mapping[str, list[str]], senders: Mapping[str, int],
                     hosts: Mapping[str, int]) -> set[tuple[str, str, str]]:
    """The dependencies (p, q, r) of the tree rooted as `order`, `parent`, `adj`
    (rooted_tree) whose middle switch q is one of `at`."""
    below_s, below_h = subtree_sums(order, parent, senders, hosts)
    total_h = sum(hosts.values())
    total_s = sum(senders.values())

    def side(q: str, n: str) -> tuple[int, int]:
        """(senders, hosts) on n's side of q."""
        if parent[n] == q:
            return below_s[n], below_h[n]
        return total_s - below_s[q], total_h - below_h[q]

    deps: set[tuple[str, str, str]] = set()
    for q in at:
        sides = {n: side(q, n) for n in adj[q]}
        for p, (s, _) in sides.items():
            if not s:
                continue
            for r, (_, h) in sides.items():
                if r != p and h:
                    deps.add((p, q, r))
    return deps


class ExchangedDependencies:
    """`tree_dependencies` of each tree made from `links` by exchanging one link for another
    across the same cut, computed only where they change. A dependency (p, q, r) depends on
    which switches lie on each side of q; the exchange changes that only for the switches on
    the cycle the new link closes with the tree (for any other q, the cycle lies in one of
    its sides, which keeps its switches), so those are recomputed and the rest kept (the
    deadlock guard of `improve_tree` asks this for every candidate link)."""

    def __init__(self, links: frozenset[Link], senders: Mapping[str, int], hosts: Mapping[str, int]) -> None:
        self.links, self.senders, self.hosts = links, senders, hosts
        self.order, self.parent, self.adj = rooted_tree(links)
        self.all = _dependencies_at(self.order, self.order, self.parent, self.adj, senders, hosts)
        self.by_middle: dict[str, set[tuple[str, str, str]]] = {}
        for d in self.all:
            self.by_middle.setdefault(d[1], set()).add(d)
        self.depth = {self.order[0]: 0} if self.order else {}
        for v in self.order[1:]:
            p = self.parent[v]
            assert p is not None
            self.depth[v] = self.depth[p] + 1

    def cycle(self, a: str, b: str) -> set[str]:
        """The switches on the tree's path between a and b."""
        out = {a, b}
        while a != b:
            if self.depth[a] < self.depth[b]:
                a, b = b, a
            up = self.parent[a]
            assert up is not None
            a = up
            out.add(a)
        return out

    def of(self, cut: Link, new: Link) -> set[tuple[str, str, str]]:
        """tree_dependencies(links - {cut} | {new}): `new` joins the two parts `cut` leaves."""
        if new == cut:
            return set(self.all)
        on = self.cycle(*new)
        out = set(self.all)
        for q in on:
            out -= self.by_middle.get(q, set())
        order, parent, adj = rooted_tree(self.links - {cut} | {new})
        return out | _dependencies_at(on, order, parent, adj, self.senders, self.hosts)


def acyclic(deps: Iterable[tuple[str, str, str]]) -> bool:
    cdg = nx.DiGraph()
    cdg.add_edges_from(((a, b), (b, c)) for a, b, c in deps)
    return nx.is_directed_acyclic_graph(cdg)


def _numbering(succ: Mapping[Arc, set[Arc]]) -> tuple[dict[Arc, int], int]:
    """A topological numbering of the channels of `succ` (Kahn's algorithm) and how many
    channels there are: the numbering covers them all exactly when there is no cycle (the
    channels on or after a cycle stay unnumbered)."""
    indegree: dict[Arc, int] = {}
    for p, qs in succ.items():
        indegree.setdefault(p, 0)
        for q in qs:
            indegree[q] = indegree.get(q, 0) + 1
    ready = [ch for ch, d in indegree.items() if d == 0]
    position: dict[Arc, int] = {}
    while ready:
        ch = ready.pop()
        position[ch] = len(position)
        for q in succ.get(ch, ()):
            indegree[q] -= 1
            if indegree[q] == 0:
                ready.append(q)
    return position, len(indegree)


def _acyclic_with(more: Iterable[tuple[str, str, str]], in_base: Callable[[Arc, Arc], bool],
                  base_next: Callable[[Arc], Iterable[Arc]], position: Mapping[Arc, int]) -> bool:
    """Whether an acyclic set of channel dependencies (`in_base`, `base_next`: a dependency's
    presence, a channel's successors) stays acyclic with `more` added, given a topological
    numbering of it (`position`): a cycle must take some added p -> q that does not go
    forward in it, so only from those q is a way back to p looked for."""
    extra: dict[Arc, set[Arc]] = {}
    back: dict[Arc, set[Arc]] = {}          # q -> the p of each added p->q not ordered
    for a, b, c in more:
        p, q = (a, b), (b, c)
        if in_base(p, q):
            continue
        extra.setdefault(p, set()).add(q)
        if p not in position or q not in position or position[p] >= position[q]:
            back.setdefault(q, set()).add(p)
    for start, targets in back.items():
        seen = {start}
        stack = [start]
        while stack:
            ch = stack.pop()
            if ch in targets:
                return False
            for nxt in (*base_next(ch), *extra.get(ch, ())):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return True


class AcyclicWith:
    """Whether a fixed set of channel dependencies (`base`) stays acyclic with others added:
    `acyclic(base | more)` for many `more`, without building the whole graph each time
    (the deadlock guard of `improve_tree` asks it for every candidate link: on a 36-switch
    degraded torus's what-if, two thirds of the CPU went to building those graphs).

    `base` is numbered once in a topological order. A cycle of base and `more` must take
    some added dependency p->q whose q is not after p in that order (base alone has no
    cycle, and along base's own dependencies the numbers rise), so it is enough to look
    from each such q for a way back to p."""

    def __init__(self, base: Iterable[tuple[str, str, str]]) -> None:
        self.succ: dict[Arc, set[Arc]] = {}
        for a, b, c in base:
            self.succ.setdefault((a, b), set()).add((b, c))
        self.position, channels = _numbering(self.succ)
        self.base_acyclic = len(self.position) == channels

    def accepts(self, more: Iterable[tuple[str, str, str]]) -> bool:
        """Whether base and `more` together have no cycle of channel dependencies."""
        if not self.base_acyclic:
            return False
        succ = self.succ
        return _acyclic_with(more, lambda p, q: q in succ.get(p, ()), lambda ch: succ.get(ch, ()), self.position)


Dependency = tuple[str, str, str]


class Guard(Protocol):
    def accepts(self, more: Iterable[Dependency]) -> bool: ...


class CountedDependencies:
    """Every VLAN's channel dependencies at once, each counted once per VLAN that has it, for
    the deadlock guard of one VLAN after another (`repair`): the guard of VLAN v is the
    other VLANs' dependencies, which `except_for` answers without gathering them. A
    topological numbering of all the dependencies is also one of any part of them, so it is
    kept across VLANs and renumbered only when a tree's new dependencies go against it (a
    what-if on a deadlock-free 8x8 degraded torus gathered and numbered every other VLAN's
    dependencies for each repaired tree: about a quarter of its CPU)."""

    def __init__(self) -> None:
        self.count: dict[Dependency, int] = {}
        self.succ: dict[Arc, set[Arc]] = {}         # p -> q for every dependency (p, q) counted
        self.of_vlan: dict[int, set[Dependency]] = {}
        self.position: dict[Arc, int] | None = {}   # None: to be numbered again
        # A cycle of the counted dependencies when they have one (and `position` is None),
        # kept while its dependencies stay counted: None when not known.
        self.cycle: list[Dependency] | None = None

    def set(self, vid: int, deps: set[Dependency]) -> None:
        """VLAN vid's dependencies are now `deps`."""
        old = self.of_vlan.get(vid, set())
        for t in old - deps:
            n = self.count[t] - 1
            if n:
                self.count[t] = n
            else:
                del self.count[t]
                self.succ[(t[0], t[1])].discard((t[1], t[2]))
                if self.cycle is not None and t in self.cycle:
                    self.cycle = None       # the cycle is broken: look again when asked
        for t in deps - old:
            n = self.count.get(t, 0)
            self.count[t] = n + 1
            if not n:
                p, q = (t[0], t[1]), (t[1], t[2])
                self.succ.setdefault(p, set()).add(q)
                position = self.position
                if position is not None and (p not in position or q not in position or position[p] >= position[q]):
                    self.position = None
        self.of_vlan[vid] = deps

    def _numbered(self) -> dict[Arc, int] | None:
        """A topological numbering of every channel of the dependencies; None if they have a
        cycle (then `cycle` is one)."""
        if self.position is None and self.cycle is None:
            position, channels = _numbering(self.succ)
            if len(position) == channels:
                self.position = position
            else:
                self.cycle = self._a_cycle(position)
        return self.position

    def _a_cycle(self, numbered: Mapping[Arc, int]) -> list[Dependency]:
        """A cycle among the channels Kahn's algorithm left unnumbered: each of them has a
        predecessor among them (the numbered ones were subtracted from its in-degree), so
        walking back from any of them repeats a channel."""
        back: dict[Arc, Arc] = {}
        for p, qs in self.succ.items():
            if p not in numbered:
                for q in qs:
                    back.setdefault(q, p)       # q is unnumbered too: p never was
        at = next(iter(back))
        seen: dict[Arc, int] = {}
        walk: list[Arc] = []
        while at not in seen:
            seen[at] = len(walk)
            walk.append(at)
            at = back[at]
        ring = walk[seen[at]:][::-1]            # each channel waits for the next, the last for the first
        return [(a[0], a[1], b[1]) for a, b in zip(ring, ring[1:] + ring[:1])]

    def is_acyclic(self) -> bool:
        """Whether the counted dependencies have no cycle."""
        return self._numbered() is not None

    def except_for(self, vid: int) -> Guard | None:
        """The guard of VLAN vid: whether the other VLANs' dependencies stay acyclic with more
        added (`AcyclicWith(others).accepts`); None when the others have a cycle already, so
        that nothing added keeps the plan deadlock-free. A what-if's repairs of a deadlock-free
        8x8 degraded torus met that at almost every broken tree: the first repairs, before
        their guard, close cycles, and each guard then gathered every other VLAN's
        dependencies and tried every candidate link against them in vain."""
        mine = self.of_vlan.get(vid, set())
        position = self._numbered()
        if position is not None:
            return _OthersGuard(self.count, self.succ, mine, position)
        assert self.cycle is not None
        if not any(self.count[t] == 1 and t in mine for t in self.cycle):
            return None                 # the cycle is the others' too
        guard = AcyclicWith(t for t, n in self.count.items() if n > 1 or t not in mine)
        return guard if guard.base_acyclic else None


class _OthersGuard:
    """`AcyclicWith.accepts` over the dependencies counted in `count` less `mine`, with a
    numbering of all of them (also one of the others'): the same search from each added
    dependency that does not go forward in it."""

    def __init__(self, count: Mapping[Dependency, int], succ: Mapping[Arc, set[Arc]], mine: set[Dependency],
                 position: Mapping[Arc, int]) -> None:
        self.count, self.succ, self.mine, self.position = count, succ, mine, position

    def _other(self, p: Arc, q: Arc) -> bool:
        """Whether some other VLAN has the dependency p -> q."""
        t = (p[0], p[1], q[1])
        n = self.count.get(t, 0)
        return n > 1 or (n == 1 and t not in self.mine)

    def accepts(self, more: Iterable[Dependency]) -> bool:
        other, succ = self._other, self.succ
        return _acyclic_with(more, other, lambda ch: (q for q in succ.get(ch, ()) if other(ch, q)), self.position)


def channel_cycle(trees: Mapping[int, frozenset[Link]], senders: Mapping[int, Mapping[str, int]],
                  hosts: Mapping[str, int], known: Mapping[int, set[tuple[str, str, str]]] | None = None
                  ) -> list[Arc]:
    """One cycle of the channel dependency graph of these trees, as its channels in order
    (each waits for the next, the last for the first); [] when there is none. What a
    repair that could not keep a plan deadlock-free says as its reason. `known`: the
    dependencies of some of these trees with these senders (RepairResult.dependencies),
    not computed again (a what-if asks this after most failures of a deadlock-free plan)."""
    cdg = nx.DiGraph()
    known = known or {}
    # In sorted order: the dependencies are a set of strings, whose order follows the hash
    # seed, and the cycle found (a what-if's output) follows the order the edges came in.
    for vid in sorted(trees):
        deps = known.get(vid)
        if deps is None:
            deps = tree_dependencies(trees[vid], senders.get(vid, {}), hosts)
        cdg.add_edges_from(((a, b), (b, c)) for a, b, c in sorted(deps))
    try:
        return [u for u, _ in nx.find_cycle(cdg)]
    except nx.NetworkXNoCycle:
        return []
