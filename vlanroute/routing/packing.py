"""How many VLANs a routing needs: put sources whose trees are compatible into one VLAN.

A source's tree, pruned to the switches that have hosts, is the set of links its frames
may cross. Sources with identical trees share a VLAN. Different trees may still share one
when their union stays loop-free: then the path between any two switches in the union is
unique and is each source's own path. Two different trees over the same switch set always
form a loop (both have n-1 links on the same n switches), so only trees over different
switch sets (Steiner trees, when some switches have no hosts) are worth trying to merge.

Routing below the switch (`splits`): each tree a switch's hosts send on is packed like a
source of its own, and the VLAN records how many of that switch's hosts send in it.

The VLAN count is part of a routing's cost (engines choose among equally loaded routings
by it, and the budget engine must stay within it), so the packing lives with the routing;
plan/vlans.py numbers the groups and gives them learning subnets.
"""

from __future__ import annotations

from dataclasses import dataclass

from vlanroute.routing.trees import ParentMap, Splits, pruned_parents, spans_exactly

Link = tuple[str, str]     # an undirected neighbour pair, the lower switch index first


@dataclass(frozen=True)
class SharedTree:
    """The sources of one VLAN and the loop-free links that carry all their routes."""

    sources: tuple[str, ...]
    links: frozenset[Link]
    switches: frozenset[str]
    # The sources that send only some of their hosts in this VLAN (routing below the
    # switch), with how many; a source not listed sends all its hosts in it.
    shares: tuple[tuple[str, int], ...] = ()


def pruned_tree(parent: ParentMap, src: str, targets: set[str], order: dict[str, int]) -> tuple[frozenset[Link], frozenset[str]]:
    """The union of the paths from src to every target, as links (pairs sorted by order)."""
    # a tree over exactly the targets (every switch has hosts: the common case) is its own
    # pruned tree; pruning it would only copy it
    sub = parent if spans_exactly(parent, src, targets) else pruned_parents(parent, src, targets)
    links = frozenset((p, v) if order[p] < order[v] else (v, p) for v, p in sub.items())
    return links, frozenset(sub).union((src,))


@dataclass
class _Group:
    """A VLAN being filled: its sources so far and the union of their trees."""

    sources: list[str]
    links: frozenset[Link]
    switches: frozenset[str]
    shares: dict[str, int]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        p = self.parent.setdefault(x, x)
        while p != self.parent.setdefault(p, p):
            self.parent[x] = self.parent[p]
            x, p = p, self.parent[p]
        return p

    def union(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


def is_forest(links: set[Link] | frozenset[Link]) -> bool:
    """No loop among these links (each link joins two parts that were not yet connected)."""
    uf = _UnionFind()
    return all(uf.union(a, b) for a, b in links)


def pack(parents: dict[str, ParentMap], host_switches: set[str], order: dict[str, int],
         splits: Splits | None = None) -> tuple[SharedTree, ...]:
    """Group the sources (switches with hosts) into as few VLANs as the routing allows.

    Identical trees always share; then, largest tree first, a tree joins the first VLAN
    whose union with it stays loop-free (first fit, as in SPAIN and LASH). The result is
    ordered by each VLAN's first source in switch order.
    """
    # tree -> (sources, switches, hosts of split sources sending on it)
    by_tree: dict[frozenset[Link], tuple[list[str], frozenset[str], dict[str, int]]] = {}
    for src in sorted(host_switches, key=order.__getitem__):
        shares = splits.get(src) if splits else None
        for tree, n in shares or ((parents[src], 0),):
            links, nodes = pruned_tree(tree, src, host_switches, order)
            got = by_tree.get(links)
            if got is None:
                got = by_tree[links] = ([], nodes, {})
            if src not in got[0]:
                got[0].append(src)
            if shares:
                got[2][src] = got[2].get(src, 0) + n

    # One _Group per VLAN. Its sets are frozensets, shared with by_tree until
    # a merge makes a new one (most trees are never merged: no copies); frozensets also
    # cache their hash, so unequal switch sets compare in O(1). A tree spanning every host
    # switch is the common case, so that switch set is one shared object.
    groups: list[_Group] = []
    full = frozenset(host_switches)
    items = sorted(by_tree.items(), key=lambda kv: (-len(kv[0]), order[kv[1][0][0]]))
    for links, (sources, nodes, share) in items:
        if nodes == full:
            nodes = full
        for g in groups:
            if g.switches is nodes or (hash(g.switches) == hash(nodes) and g.switches == nodes):
                continue   # different trees on the same switches always make a loop
            union = g.links | links
            if is_forest(union):
                g.links = union
                merged = g.switches | nodes
                g.switches = full if merged == full else merged
                # a split switch's trees are sources of their own: one may meet another of its trees
                g.sources.extend([s for s in sources if s not in g.sources] if share else sources)
                for s, n in share.items():
                    g.shares[s] = g.shares.get(s, 0) + n
                break
        else:
            groups.append(_Group(list(sources), links, nodes, dict(share)))
    total = {s: sum(n for _, n in splits[s]) for s in splits} if splits else {}
    out = [SharedTree(tuple(sorted(g.sources, key=order.__getitem__)), g.links, g.switches,
                      tuple(sorted(((s, n) for s, n in g.shares.items() if n < total[s]), key=lambda x: order[x[0]])))
           for g in groups]
    out.sort(key=lambda g: order[g.sources[0]])     # stable: a switch's split trees keep their order
    return tuple(out)
