"""Does one state of a fabric hold a loop? The check every step of a transition must pass.

The graph: a node is one VLAN inside one switch, `(switch, vid)`. A cable joins `(a, v)` and
`(b, w)` when a frame can cross it in either direction: tagged `v` out of one end and taken
in `v` by the other, or untagged out of one end and classified into `w` by the other's
PVID (so a VLAN that changes on the way is followed). Ends that are one LAG at each side are
one link; cables between two switches that cannot be read count once.

Spanning tree: a cable with spanning tree running at both ends is *protected*: spanning
tree may keep it forwarding, but never closes a loop over protected cables only. So the
state is loop-free when the unprotected cables form a forest over the components of the
protected ones: contract every component joined by protected cables to one node; then the
unprotected cables must form a forest. Whatever tree spanning tree picks among the
protected cables, together with every unprotected one they are then a forest, and no
broadcast can come back to where it started. A cable that is protected at one end only is
unprotected: the other end neither sends nor heeds BPDUs.

This is conservative: a state that passes has no loop; a state that fails may in rare
hand-made configurations (several untagged VLANs on one inter-switch port) be refused
although it would not loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from vlanroute.transition.fabric import End, FabricView, SwitchView, Wire

Node = tuple[str, int]                 # (switch, VLAN)
VidPair = tuple[int, int]              # (VLAN at the wire's a end, VLAN at its b end)
UNKNOWN = "?"                          # the bridge port of an end that cannot be read


@dataclass(frozen=True)
class Edge:
    a: Node
    b: Node
    protected: bool
    wire: Wire
    link: tuple[object, ...]           # the logical link: (a, a's bridge port, b, b's bridge port)


@dataclass(frozen=True)
class Loop:
    """A cycle of unprotected cables (and protected components) in one or more VLANs."""

    vlans: tuple[int, ...]
    switches: tuple[str, ...]          # along the cycle, the first repeated at the end
    wires: tuple[str, ...]             # the cables of the cycle (labels)

    def describe(self) -> str:
        vl = ", ".join(str(v) for v in self.vlans)
        return f"VLAN {vl} would loop: {' - '.join(self.switches)} (cables {'; '.join(self.wires)})"

    def to_json(self) -> dict[str, object]:
        return {"vlans": list(self.vlans), "switches": list(self.switches), "cables": list(self.wires)}


def link_key(w: Wire, ea: End | None, eb: End | None) -> tuple[object, ...]:
    """Cables whose ends are the same bridge ports (a LAG at each side) are one link; written
    from the lesser switch name so that a cable listed b-a is the same link."""
    a = (w.a, ea.port if ea else UNKNOWN)
    b = (w.b, eb.port if eb else UNKNOWN)
    return (*a, *b) if (a[0], str(a[1])) <= (b[0], str(b[1])) else (*b, *a)


def _vid_pairs(ea: End | None, eb: End | None, vlans: frozenset[int]) -> frozenset[VidPair]:
    """The VLAN pairs a cable joins, given what its ends forward (module docstring)."""
    out: set[VidPair] = set()
    if ea is None and eb is None:
        return frozenset((v, v) for v in vlans)
    if ea is None or eb is None:
        known = ea if ea is not None else eb
        assert known is not None
        same = {v for v in vlans if v in known.egress or known.accepts(v)}
        into = known.untagged_into()
        if into is not None:
            same.add(into)
        return frozenset((v, v) for v in same)
    for v in ea.tagged:
        if eb.accepts(v):
            out.add((v, v))
    for v in eb.tagged:
        if ea.accepts(v):
            out.add((v, v))
    into_b, into_a = eb.untagged_into(), ea.untagged_into()
    if into_b is not None:
        out.update((v, into_b) for v in ea.untagged)
    if into_a is not None:
        out.update((into_a, v) for v in eb.untagged)
    return frozenset(out)


class UnionFind:
    def __init__(self) -> None:
        self.up: dict[Node, Node] = {}

    def find(self, x: Node) -> Node:
        up = self.up
        root = x
        while up.get(root, root) != root:
            root = up[root]
        while up.get(x, x) != root:
            up[x], x = root, up[x]
        return root

    def union(self, x: Node, y: Node) -> bool:
        """Join the two sets; False if they were one already."""
        rx, ry = self.find(x), self.find(y)
        if rx == ry:
            return False
        self.up[rx] = ry
        return True


EdgeKey = tuple[Wire, Node, Node]     # (cable, a, b): one edge whatever its protection and LAG grouping


@dataclass
class LoopChecker:
    """Checks fabric states for loops; remembers the VLAN pairs of each pair of ends seen.
    `accepted`: edges of the loops the fabric held before any change (planner.py): counted
    as if spanning tree protected them, so that a step is refused only for a loop it adds."""

    wires: tuple[Wire, ...]
    vlans: frozenset[int]              # what an unknown switch may carry (fabric.universe)
    _cache: dict[tuple[End | None, End | None], frozenset[VidPair]] = field(default_factory=dict)
    accepted: frozenset[EdgeKey] = frozenset()

    def edges(self, views: FabricView, only: frozenset[int] | None = None) -> list[Edge]:
        """The edges of a state; with `only`, those in or joined to these VLANs."""
        links: set[tuple[object, ...]] = set()
        out: list[Edge] = []
        for w in self.wires:
            va, vb = views.get(w.a), views.get(w.b)
            ea = va.get(w.a_port) if va is not None else None
            eb = vb.get(w.b_port) if vb is not None else None
            if (va is not None and ea is None) or (vb is not None and eb is None):
                continue            # a switch that is read but lacks the port: no link there
            key = link_key(w, ea, eb)
            if key in links:
                continue            # another cable of the same LAG (or of two unknown switches)
            links.add(key)
            out += self.wire_edges(w, ea, eb)
        if only is None:
            return out
        wanted = set(only)
        while True:             # follow VLANs that change on a cable
            grown = {x for e in out if (e.a[1] in wanted) != (e.b[1] in wanted) for x in (e.a[1], e.b[1])}
            if grown <= wanted:
                break
            wanted |= grown
        return [e for e in out if e.a[1] in wanted]

    def wire_edges(self, w: Wire, ea: End | None, eb: End | None) -> list[Edge]:
        """The edges of one cable whose ends forward as `ea` and `eb` (None: unknown)."""
        pairs = self._cache.get((ea, eb))
        if pairs is None:
            pairs = self._cache[(ea, eb)] = _vid_pairs(ea, eb, self.vlans)
        protected = ea is not None and eb is not None and ea.stp and eb.stp
        key = link_key(w, ea, eb)
        return [Edge((w.a, v), (w.b, x), protected, w, key) for v, x in pairs]

    def edges_at(self, views: FabricView, switch: str) -> list[Edge]:
        """The edges of the cables of one switch."""
        return self.sub(tuple(w for w in self.wires if switch in (w.a, w.b))).edges(views)

    def sub(self, wires: tuple[Wire, ...]) -> LoopChecker:
        """The same checker on some of the cables (the cache and the accepted loops shared)."""
        return LoopChecker(wires, self.vlans, self._cache, self.accepted)

    def touched(self, base: FabricView, switch: str, view: SwitchView | None) -> frozenset[int]:
        """The VLANs whose links differ when `switch` goes from its view in `base` to `view`
        (a link that changes only from protected to unprotected counts too)."""
        new = dict(base)
        new[switch] = view
        old_edges = {(e.link, e.a, e.b, e.protected) for e in self.edges_at(base, switch)}
        new_edges = {(e.link, e.a, e.b, e.protected) for e in self.edges_at(new, switch)}
        return frozenset(n[1] for x in old_edges ^ new_edges for n in (x[1], x[2]))

    def loops(self, views: FabricView, only: frozenset[int] | None = None, limit: int = 3) -> list[Loop]:
        """The loops of a state (at most `limit`); [] when it is loop-free."""
        return find_loops(self.edges(views, only), limit, self.accepted)


def key(e: Edge) -> EdgeKey:
    """An edge by its cable, not its link: a loop the fabric held over two cables stays the
    same loop when one end groups them into a LAG half way (push forms LAGs in phase 1)."""
    return (e.wire, e.a, e.b)


def cyclic_edges(edges: Iterable[Edge]) -> frozenset[EdgeKey]:
    """The unprotected edges that lie on a loop (over the protected components): those whose
    two ends stay joined without them."""
    edges = list(edges)
    loose = [e for e in edges if not e.protected]
    out: set[EdgeKey] = set()
    for e in loose:
        uf = UnionFind()
        for f in edges:
            if f is not e:
                uf.union(f.a, f.b)
        if uf.find(e.a) == uf.find(e.b):
            out.add(key(e))
    return frozenset(out)


def find_loops(edges: Iterable[Edge], limit: int = 3, accepted: frozenset[EdgeKey] = frozenset()) -> list[Loop]:
    """Unprotected edges must form a forest over the components of the protected ones (and
    of the `accepted` edges: loops that were there before, which a step may not add to)."""
    edges = list(edges)
    protected = UnionFind()
    for e in edges:
        if e.protected or key(e) in accepted:
            protected.union(e.a, e.b)
    forest = UnionFind()
    adjacent: dict[Node, list[tuple[Node, Edge]]] = {}
    found: list[Loop] = []
    for e in edges:
        if e.protected or key(e) in accepted:
            continue
        ra, rb = protected.find(e.a), protected.find(e.b)
        if forest.union(ra, rb):
            adjacent.setdefault(ra, []).append((rb, e))
            adjacent.setdefault(rb, []).append((ra, e))
            continue
        found.append(_cycle(ra, rb, e, adjacent))
        if len(found) >= limit:
            break
    return found


def _cycle(ra: Node, rb: Node, closing: Edge, adjacent: Mapping[Node, list[tuple[Node, Edge]]]) -> Loop:
    """The loop `closing` makes: the forest's path from rb back to ra, then `closing`."""
    back: dict[Node, tuple[Node, Edge] | None] = {rb: None}
    queue = deque([rb])
    while queue and ra not in back:
        x = queue.popleft()
        for y, e in adjacent.get(x, []):
            if y not in back:
                back[y] = (x, e)
                queue.append(y)
    path: list[Edge] = []
    x = ra
    while back.get(x) is not None:
        prev, e = back[x]          # type: ignore[misc]
        path.append(e)
        x = prev
    cycle = [closing, *path]
    switches = [closing.a[0], closing.b[0]]
    for e in path:
        switches.append(e.a[0] if e.b[0] == switches[-1] else e.b[0])
    vlans = sorted({n[1] for e in cycle for n in (e.a, e.b)})
    if switches[-1] != switches[0]:
        switches.append(switches[0])     # the rest of the way is inside a protected component
    return Loop(tuple(vlans), tuple(switches), tuple(e.wire.label() for e in cycle))
