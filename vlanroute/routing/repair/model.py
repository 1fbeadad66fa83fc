"""What a repair reads and returns: a routing VLAN's tree (`Tree`), the fabric after the
failures (`Degraded`), the repaired trees and what changed (`RepairResult`); trees rooted,
summed and loaded.

Loads are the plan's (plan/metrics.py): all-to-all host traffic, one unit per ordered pair
of distinct hosts, per cable and direction; a neighbour pair that lost some of its cables
keeps its links but its load is divided by the cables left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from vlanroute.model.links import Arc, Link, link


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
