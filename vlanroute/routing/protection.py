"""Protection trees: backup VLANs planned ahead, so that when a link of a VLAN's tree dies
(every cable between two neighbours: a whole LAG), its hosts' traffic goes on in a backup
VLAN whose tree avoids that link, by a PVID change on the source hosts' ports alone.

Why this shape (the fast failover of docs/failures.md): nothing else has to change at the
moment of the failure. The backup VLAN's tree is configured on the switches in advance,
the hosts send their learning frames in it with the others (every switch of the backup
already knows every host there), and every host port is a member of it as of every routing
VLAN, so a frame in the backup VLAN reaches any host. Moving a source's hosts onto the
backup is a change of their ports' PVID on the switches the hosts hang off, which changes
no inter-switch membership: it cannot close a loop, and it needs neither the switches next
to the failure nor the hosts. As Lee et al. (Mathematical Problems in Engineering 2015) and
Viking (INFOCOM 2004) do with pre-planned VLAN trees, without their per-switch failover
agents: the source switches are the only ones that act.

For each VLAN's tree T, over the switches it must span:
1. if the fabric without T's links still joins them, one backup tree avoiding all of T
   covers every link of T (a 4-edge-connected fabric, a torus among them, has two
   edge-disjoint spanning trees (Nash-Williams), though not every T leaves one behind);
2. else backups are added greedily: the first link not yet covered is left out, and as many
   other uncovered links as the fabric allows; each backup covers the links of T it avoids;
3. a link of T whose loss splits the fabric between switches T must span (a bridge for
   them: every path between its two sides uses it) cannot be protected: it is reported,
   never silently assumed covered. A tree that spans only the switches with hosts (a
   leaf-spine's VLAN through one spine) is joined again through switches outside it.
Every backup is a shortest-path tree from the VLAN's first source in which a link costs
more the more trees (routing and backup) already use it, so the backups that take over
together spread their load (ties broken by the switches' order, as the engines do), pruned
to the switches it must span; identical backups of different VLANs share one VLAN.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from vlanroute.model.links import Link, link
from vlanroute.routing.trees import adjacency, reroot


@dataclass(frozen=True)
class Primary:
    """A VLAN's tree as protection needs it."""

    vid: int
    links: frozenset[Link]
    switches: frozenset[str]         # the switches its tree must span (those with its hosts, and more)
    sources: tuple[str, ...]         # the switches whose hosts send in it (the root: the first)


@dataclass
class Backup:
    """One backup VLAN: its tree and, per primary VLAN, the links of its tree it covers."""

    links: frozenset[Link]
    switches: frozenset[str]
    covers: dict[int, frozenset[Link]] = field(default_factory=dict)


@dataclass
class Protection:
    backups: list[Backup]
    failover: dict[tuple[int, Link], int]        # (primary VLAN, dead link) -> index into backups
    unprotected: dict[int, frozenset[Link]]      # primary VLAN -> links no backup can avoid (bridges)

    def backup_for(self, vid: int, dead: Link) -> Backup | None:
        i = self.failover.get((vid, dead))
        return self.backups[i] if i is not None else None


def _connected(adj: Mapping[str, Iterable[str]], nodes: Iterable[str]) -> bool:
    nodes = list(nodes)
    if not nodes:
        return True
    seen = {nodes[0]}
    stack = [nodes[0]]
    while stack:
        u = stack.pop()
        for v in adj.get(u, ()):
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return all(n in seen for n in nodes)


def _without(links: Iterable[Link], gone: Iterable[Link]) -> dict[str, list[str]]:
    gone = set(gone)
    return adjacency([lk for lk in links if lk not in gone])


def _tree(adj: dict[str, list[str]], root: str, span: frozenset[str], order: Mapping[str, int],
          usage: Mapping[Link, int]) -> frozenset[Link]:
    """A shortest-path tree from `root` where a link costs 1 plus a quarter per tree (routing
    or backup) already on it, so that backups spread over the links (ties by `order`); the
    branches that reach no switch of `span` cut off."""
    import heapq
    dist: dict[str, tuple[float, int]] = {root: (0.0, order.get(root, 0))}
    parent: dict[str, str] = {}
    heap = [(0.0, order.get(root, 0), root)]
    done: set[str] = set()
    while heap:
        d, _, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v in sorted(adj.get(u, ()), key=lambda x: order.get(x, 0)):
            nd = d + 1.0 + 0.25 * usage.get(link(u, v), 0)
            key = (nd, order.get(u, 0))
            if v not in done and (v not in dist or key < dist[v]):
                dist[v] = key
                parent[v] = u
                heapq.heappush(heap, (nd, order.get(v, 0), v))
    keep: set[str] = set()
    for s in span:
        v = s
        while v not in keep:
            keep.add(v)
            if v == root or v not in parent:
                break
            v = parent[v]
    return frozenset(link(v, p) for v, p in parent.items() if v in keep)


def _parts(links: frozenset[Link], cut: Link) -> dict[str, int]:
    """The two sides of a tree without one of its links: switch -> 0 or 1."""
    adj = adjacency([lk for lk in links if lk != cut])
    side: dict[str, int] = {}
    for i, start in enumerate(cut):
        side[start] = i
        stack = [start]
        while stack:
            u = stack.pop()
            for v in adj.get(u, ()):
                if v not in side:
                    side[v] = i
                    stack.append(v)
    return side


def per_link(fabric: Iterable[Link], primaries: Sequence[Primary], order: Sequence[str]) -> Protection:
    """One backup per link of each tree: the tree without it, joined again by the link across
    the same cut that keeps the sources' paths shortest (the smallest change, as a repair
    makes it: every other link of the tree kept, so its load stays the routing's), or, where
    no link joins the two sides directly (a tree over only some switches), by the shortest
    path through switches outside the tree. Costs a VLAN per tree link; `protect` covers
    with fewer."""
    links = sorted({link(*lk) for lk in fabric})
    fabric_adj = adjacency(links)
    rank = {s: i for i, s in enumerate(order)}
    backups: list[Backup] = []
    by_tree: dict[frozenset[Link], int] = {}
    failover: dict[tuple[int, Link], int] = {}
    unprotected: dict[int, frozenset[Link]] = {}
    for p in primaries:
        bridges: set[Link] = set()
        for cut in sorted(p.links):
            side = _parts(p.links, cut)
            across: list[frozenset[Link]] = [frozenset({lk}) for lk in links if lk != cut and lk[0] in side
                                             and lk[1] in side and side[lk[0]] != side[lk[1]]]
            if not across:
                # A tree that spans only some switches (those with hosts): join its two sides
                # through switches outside it, by the fewest links.
                path = _outside_path(fabric_adj, side, cut, rank)
                if path is None:
                    bridges.add(cut)
                    continue
                across = [path]

            def cost(f: frozenset[Link], cut: Link = cut) -> tuple[int, int]:
                tree = (p.links - {cut}) | f
                adj = adjacency(tree)
                total = sum(sum(_hops(adj, src).values()) for src in p.sources)
                return total, min(rank.get(x, 0) for lk in f for x in lk)
            best = min(across, key=cost)
            tree = (p.links - {cut}) | best
            i = by_tree.get(tree)
            if i is None:
                i = by_tree[tree] = len(backups)
                backups.append(Backup(tree, frozenset(s for lk in tree for s in lk) | p.switches))
            backups[i].covers[p.vid] = backups[i].covers.get(p.vid, frozenset()) | {cut}
            failover[(p.vid, cut)] = i
        if bridges:
            unprotected[p.vid] = frozenset(bridges)
    return Protection(backups, failover, unprotected)


def _outside_path(adj: Mapping[str, Iterable[str]], side: Mapping[str, int], cut: Link,
                  rank: Mapping[str, int]) -> frozenset[Link] | None:
    """The fewest fabric links joining side 0 of a tree to side 1 through switches outside
    the tree only (`side`: the tree's switches), never `cut`; None if there is no such path.
    Any path between the sides in the fabric without `cut` has such a stretch, so None means
    `cut` separates the sides in the fabric too. Ties by the switches' order."""
    starts = sorted((s for s, i in side.items() if i == 0), key=lambda s: rank.get(s, 0))
    parent: dict[str, str | None] = {s: None for s in starts}
    frontier = starts
    while frontier:
        nxt: list[str] = []
        for u in frontier:
            for v in sorted(adj.get(u, ()), key=lambda x: rank.get(x, 0)):
                if link(u, v) == cut or v in parent:
                    continue
                if side.get(v) == 1:
                    out = {link(u, v)}
                    w: str | None = u
                    while w is not None and parent[w] is not None:
                        out.add(link(w, parent[w]))  # type: ignore[arg-type]
                        w = parent[w]
                    return frozenset(out)
                if v in side:
                    continue                         # another switch of side 0: not through it
                parent[v] = u
                nxt.append(v)
        frontier = nxt
    return None


def _hops(adj: Mapping[str, Iterable[str]], src: str) -> dict[str, int]:
    dist = {src: 0}
    frontier = [src]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj.get(u, ()):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    nxt.append(v)
        frontier = nxt
    return dist


def protect(fabric: Iterable[Link], primaries: Sequence[Primary], order: Sequence[str]) -> Protection:
    """Backup trees for every primary (module docstring). `fabric`: every neighbour pair
    with at least one cable; `order`: the switches' canonical order (ties)."""
    links = sorted({link(*lk) for lk in fabric})
    rank = {s: i for i, s in enumerate(order)}
    usage: Counter[Link] = Counter(lk for p in primaries for lk in p.links)
    backups: list[Backup] = []
    by_tree: dict[frozenset[Link], int] = {}
    failover: dict[tuple[int, Link], int] = {}
    unprotected: dict[int, frozenset[Link]] = {}
    for p in primaries:
        uncovered = sorted(p.links)
        root = p.sources[0] if p.sources else min(p.switches, key=lambda s: rank.get(s, 0))
        bridges: set[Link] = set()
        while uncovered:
            adj = _without(links, uncovered)
            if not _connected(adj, p.switches):
                # Leave out the first uncovered link, then every other one the fabric can spare.
                first = uncovered[0]
                if not _connected(_without(links, [first]), p.switches):
                    bridges.add(first)
                    uncovered.remove(first)
                    continue
                left = [first]
                for lk in uncovered[1:]:
                    if _connected(_without(links, [*left, lk]), p.switches):
                        left.append(lk)
                adj = _without(links, left)
            tree = _tree(adj, root, p.switches, rank, usage)
            covered = frozenset(lk for lk in p.links if lk not in tree)
            i = by_tree.get(tree)
            if i is None:
                i = by_tree[tree] = len(backups)
                backups.append(Backup(tree, frozenset(s for lk in tree for s in lk) | p.switches))
                usage.update(tree)
            backups[i].covers[p.vid] = backups[i].covers.get(p.vid, frozenset()) | covered
            for lk in covered:
                failover.setdefault((p.vid, lk), i)
            uncovered = [lk for lk in uncovered if lk not in covered]
        if bridges:
            unprotected[p.vid] = frozenset(bridges)
    return Protection(backups, failover, unprotected)


def failed_over_parents(protection: Protection, primaries: Sequence[Primary], dead: Link,
                        parents: Mapping[str, dict[str, str]], vid_of: Mapping[str, int]) -> dict[str, dict[str, str]]:
    """Every source's tree once `dead` died and the protected VLANs failed over: a source
    whose VLAN's tree used `dead` is rerooted on its backup (`parents`: source -> its tree
    as a parent map; `vid_of`: source -> its VLAN). A source without a backup keeps its tree."""
    out = dict(parents)
    hit = {p.vid for p in primaries if dead in p.links}
    for src, vid in vid_of.items():
        if vid in hit:
            b = protection.backup_for(vid, dead)
            if b is not None:
                out[src] = reroot(adjacency(b.links), src)
    return out


__all__ = ["Backup", "Link", "Primary", "Protection", "failed_over_parents", "link", "per_link", "protect"]
