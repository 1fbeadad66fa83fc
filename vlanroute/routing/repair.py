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

Loads are the plan's (plan/metrics.py): all-to-all host traffic, one unit per ordered pair
of distinct hosts, per cable and direction; a neighbour pair that lost some of its cables
keeps its links but its load is divided by the cables left.

Deadlock freedom is the plan's too: the channel dependency graph (Dally and Seitz 1987)
has a dependency p->q => q->r wherever a route crosses p, q, r; in a VLAN's tree a route
from a source host crosses q from p to r exactly when a sender lies on p's side of q and a
host on r's side (`tree_dependencies`).

`extra_changes` allows that many more link exchanges in any tree (broken or not), each
chosen greedily: an exchange in a tree that crosses the most loaded arc, the one that
lowers the maximum load the most; it stops early when no exchange lowers it.

Pure: no I/O; networkx only for the cycle test.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Protocol

import networkx as nx

Link = tuple[str, str]            # a neighbour pair, (a, b) with a < b
Arc = tuple[str, str]             # a direction of a neighbour pair


def link(a: str, b: str) -> Link:
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True)
class Tree:
    """A routing VLAN as the repair sees it: its id, the switches whose hosts send in it
    (their PVID), and its links; `shares`: the sources that send only some of their hosts
    in it (routing below the switch), with how many."""
    vid: int
    sources: tuple[str, ...]
    links: frozenset[Link]
    shares: tuple[tuple[str, int], ...] = ()

    def senders(self, hosts: Mapping[str, int], skip: Iterable[str] = ()) -> dict[str, int]:
        """Each source (but those in `skip`) -> its hosts that send in this VLAN."""
        part = dict(self.shares)
        gone = set(skip)
        return {s: part.get(s, hosts.get(s, 0)) for s in self.sources if s not in gone}

    @cached_property
    def switches(self) -> frozenset[str]:
        """The switches its links join (cached: a what-if asks once per failure)."""
        return frozenset(s for l in self.links for s in l)

    @cached_property
    def preorder(self) -> tuple[list[str], dict[str, int], list[int]] | None:
        """A depth-first preorder of its links from the smallest switch, each switch's
        position in it and, by position, the end of its subtree's range; None when the
        links are not one tree (cached: the parts a failure leaves are then ranges of it)."""
        if not self.links:
            return None
        order, parent, adj = rooted_tree(self.links)
        if len(order) != len(self.switches):
            return None
        kids: dict[str, list[str]] = {v: [] for v in order}
        for v in order[1:]:
            p = parent[v]
            assert p is not None
            kids[p].append(v)
        pre: list[str] = []
        todo = [order[0]]
        while todo:
            u = todo.pop()
            pre.append(u)
            todo.extend(reversed(kids[u]))
        tin = {v: i for i, v in enumerate(pre)}
        end = [i + 1 for i in range(len(pre))]
        for i in range(len(pre) - 1, 0, -1):
            p = parent[pre[i]]
            assert p is not None
            j = tin[p]
            if end[i] > end[j]:
                end[j] = end[i]
        return pre, tin, end


@dataclass(frozen=True)
class Degraded:
    """The fabric after the failures: live cables per neighbour pair (a pair absent or 0
    is dead), dead switches, and the hosts per live switch."""
    cables: Mapping[Link, int]
    dead_switches: frozenset[str]
    hosts: Mapping[str, int]

    def alive(self, a: str, b: str) -> bool:
        return (self.cables.get(link(a, b), 0) > 0 and a not in self.dead_switches
                and b not in self.dead_switches)

    @cached_property
    def live(self) -> frozenset[Link]:
        """The pairs (a, b) `alive` holds true of, both ways round: a set lookup per tree
        link (a dead switch breaks most trees, each of hundreds of links)."""
        out = set()
        for a, b in self.cables:
            if self.alive(a, b):
                out.add((a, b))
                out.add((b, a))
        return frozenset(out)

    def adjacency(self) -> dict[str, list[str]]:
        adj: dict[str, list[str]] = {}
        for (a, b), n in sorted(self.cables.items()):
            if n > 0 and a not in self.dead_switches and b not in self.dead_switches:
                adj.setdefault(a, []).append(b)
                adj.setdefault(b, []).append(a)
        return adj

    def host_switches(self) -> set[str]:
        return {s for s, n in self.hosts.items() if n > 0 and s not in self.dead_switches}


@dataclass
class TreeChange:
    vid: int
    removed: list[Link]             # dead links, links of parts no longer needed, exchanged links
    added: list[Link]
    forced: bool                    # broken by the failures (else: an extra change for load)


@dataclass
class RepairResult:
    trees: dict[int, frozenset[Link]]        # every VLAN's links after the repair
    changes: dict[int, TreeChange]           # the VLANs that changed
    unrepairable: dict[int, str]             # VLAN -> why its hosts cannot all be joined again
    max_load: float                          # per cable, after the repair
    deadlock_free: bool
    deadlock_note: str = ""
    extra_used: int = 0
    notes: list[str] = field(default_factory=list)
    # Each VLAN's channel dependencies after the repair, where it computed them (to say
    # whether it kept the plan deadlock-free): `channel_cycle` reads them instead of
    # computing every tree's again.
    dependencies: dict[int, set[tuple[str, str, str]]] = field(default_factory=dict)

    @property
    def links_added(self) -> int:
        return sum(len(c.added) for c in self.changes.values())

    def switches_touched(self) -> list[str]:
        """Switches whose VLAN memberships change: both ends of every removed or added link."""
        touched = {s for c in self.changes.values() for l in (*c.removed, *c.added) for s in l}
        return sorted(touched)


# ------------------------------------------------------------------ loads and dependencies


def rooted_tree(links: Iterable[Link]) -> tuple[list[str], dict[str, str | None], dict[str, list[str]]]:
    """A BFS order, parents and adjacency of a tree (one component: the first link's)."""
    adj: dict[str, list[str]] = {}
    for a, b in links:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    if not adj:
        return [], {}, adj
    root = min(adj)
    parent: dict[str, str | None] = {root: None}
    order = [root]
    for u in order:
        for v in adj[u]:
            if v not in parent:
                parent[v] = u
                order.append(v)
    return order, parent, adj


def subtree_sums(order: list[str], parent: Mapping[str, str | None], senders: Mapping[str, int],
                 hosts: Mapping[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """Senders and hosts in each switch's subtree (order: the root first, every switch after
    its parent, e.g. a BFS or a DFS preorder)."""
    below_s = {v: senders.get(v, 0) for v in order}
    below_h = {v: hosts.get(v, 0) for v in order}
    for v in reversed(order[1:]):
        p = parent[v]
        assert p is not None
        below_h[p] += below_h[v]
        below_s[p] += below_s[v]
    return below_s, below_h


def adjacency(links: Iterable[Link]) -> dict[str, list[str]]:
    """Each switch's neighbours over `links`, in the links' order (a tree's rooting and
    subtree sums walk it; whatif with a dead switch asks it of every tree)."""
    adj: dict[str, list[str]] = {}
    for a, b in links:
        got = adj.get(a)
        if got is None:
            adj[a] = [b]
        else:
            got.append(b)
        got = adj.get(b)
        if got is None:
            adj[b] = [a]
        else:
            got.append(a)
    return adj


def tree_arc_loads(links: Iterable[Link], senders: Mapping[str, int], hosts: Mapping[str, int]) -> dict[Arc, float]:
    """The all-to-all load of one VLAN on each arc of its tree (not yet per cable): the
    senders on one side times the hosts on the other."""
    # rooted_tree and subtree_sums in one pass over lists (the same order and figures): a
    # what-if with a dead switch asks this of every tree of the plan.
    adj = adjacency(links)
    out: dict[Arc, float] = {}
    if not adj:
        return out
    root = min(adj)
    index = {root: 0}
    order = [root]
    up = [0]                                # each switch's parent's index (the root's: itself)
    for i, u in enumerate(order):
        for v in adj[u]:
            if v not in index:
                index[v] = len(order)
                order.append(v)
                up.append(i)
    below_s = [senders.get(v, 0) for v in order]
    below_h = [hosts.get(v, 0) for v in order]
    for i in range(len(order) - 1, 0, -1):
        j = up[i]
        below_s[j] += below_s[i]
        below_h[j] += below_h[i]
    total_h = sum(hosts.values())
    total_s = sum(senders.values())
    for i in range(1, len(order)):
        v, p, bs, bh = order[i], order[up[i]], below_s[i], below_h[i]
        out[(v, p)] = float(bs * (total_h - bh))
        out[(p, v)] = float((total_s - bs) * bh)
    return out


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


# ------------------------------------------------------------------ the push order


Member = tuple[int, str, str]          # (VLAN, switch, neighbour): the switch's port to the neighbour carries it


def membership_changes(old: Mapping[int, frozenset[Link]], new: Mapping[int, frozenset[Link]]
                       ) -> dict[str, tuple[list[Member], list[Member]]]:
    """Per switch: the (VLAN, switch, neighbour) memberships it gains and loses."""
    out: dict[str, tuple[list[Member], list[Member]]] = {}
    for vid in sorted(old):
        for links, which in ((new[vid] - old[vid], 0), (old[vid] - new[vid], 1)):
            for a, b in sorted(links):
                for x, y in ((a, b), (b, a)):
                    out.setdefault(x, ([], []))[which].append((vid, x, y))
    return out


def forest(links: Iterable[Link]) -> bool:
    """No loop: union-find over the links."""
    root: dict[str, str] = {}

    def find(x: str) -> str:
        while root.get(x, x) != x:
            root[x] = root.get(root[x], root[x])
            x = root[x]
        return x
    for a, b in links:
        ra, rb = find(a), find(b)
        if ra == rb:
            return False
        root[ra] = rb
    return True


class MembershipModel:
    """Which ports carry which VLAN while a push goes on: a link is active in a VLAN when
    the ports at both its ends carry it, whether the cable is up or not (a dead cable may
    be plugged back at any moment, and a dead switch keeps its config). Kept per VLAN:
    a step asks only for the VLANs it changes (on the 32x32 torus a scan of every VLAN's
    members per question took 13 of a repair's 16 s)."""

    def __init__(self, old: Mapping[int, frozenset[Link]]) -> None:
        self.ports: dict[int, set[tuple[str, str]]] = {}
        for vid, links in old.items():
            ports = self.ports.setdefault(vid, set())
            for a, b in links:
                ports.add((a, b))
                ports.add((b, a))

    def has(self, member: Member) -> bool:
        return (member[1], member[2]) in self.ports.get(member[0], ())

    def active(self, vid: int) -> set[Link]:
        ports = self.ports.get(vid, set())
        return {link(x, y) for x, y in ports if (y, x) in ports}

    def apply(self, member: Member, add: bool) -> bool:
        """Add or remove one VLAN on one port; whether that changed anything."""
        vid, x, y = member
        ports = self.ports.setdefault(vid, set())
        if ((x, y) in ports) == add:
            return False
        (ports.add if add else ports.discard)((x, y))
        return True

    def undo(self, applied: list[tuple[Member, bool]]) -> None:
        """Back to the state before `applied` (the changes `apply` made), latest first."""
        for member, add in reversed(applied):
            self.apply(member, not add)

    def loop_free(self, vids: Iterable[int]) -> bool:
        return all(forest(self.active(v)) for v in vids)


def push_order(old: Mapping[int, frozenset[Link]], new: Mapping[int, frozenset[Link]],
               switches: list[str], budget: int = 20_000) -> tuple[list[str], bool]:
    """The switches to push, one at a time, so that no VLAN ever holds a loop; each
    switch applies its additions before its removals, as a push does (device/order.py:
    memberships in phase 1, removals in phase 3), the worst case.

    The state after a set of switches is pushed does not depend on their order, so this
    is a depth-first search over sets (a set that led nowhere is not tried again), trying
    first the switches whose additions make no link active yet (their partner is not
    pushed: always safe) and that remove something, then the natural order. A push that
    stops at a failed switch and rolls it back leaves the state before that switch: one
    this order went through. (order, True), or (natural order, False) when no order
    exists or `budget` steps did not find one."""
    changes = membership_changes(old, new)
    todo = [s for s in switches if s in changes]
    position = {s: i for i, s in enumerate(switches)}
    model = MembershipModel(old)
    dead_ends: set[frozenset[str]] = set()
    order: list[str] = []
    steps = [0]

    def activates(x: str) -> bool:
        return any(model.has((v, y, x)) for v, _, y in changes[x][0])

    def search(left: list[str]) -> bool:
        if not left:
            return True
        if frozenset(order) in dead_ends or steps[0] > budget:
            return False
        for x in sorted(left, key=lambda s: (activates(s), not changes[s][1], position[s])):
            steps[0] += 1
            gained, lost = changes[x]
            vids = {m[0] for m in gained + lost}
            applied = [(m, True) for m in gained if model.apply(m, True)]
            if model.loop_free(vids):
                applied += [(m, False) for m in lost if model.apply(m, False)]
                order.append(x)
                if search([s for s in left if s != x]):
                    return True
                order.pop()
            model.undo(applied)
        dead_ends.add(frozenset(order))
        return False

    if search(todo):
        return order, True
    return todo, False
