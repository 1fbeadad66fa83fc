"""The host pairs a transition cuts, and during which steps.

A host's untagged frames enter its switch in the VLAN its port classifies them into (the
PVID); a frame is delivered to another host when the destination's switch is reachable in
that VLAN over the active links (spanning tree blocks links but keeps each component
connected, so every active link counts) and the destination's port sends that VLAN out. A
pair delivered at the start and at the end of a transition is *cut* during a step when it
is not delivered in some state the step passes through (after some line, or at the end).

Hosts are grouped by what matters (the switch and the VLAN they send in; the switch and the
VLANs their port sends out), so a state costs groups x groups, not hosts x hosts; and a
state recomputes only the groups whose VLANs or ports its step changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vlanroute.transition.fabric import FabricView, HostAt, SwitchView
from vlanroute.transition.loops import Edge, LoopChecker, Node, UnionFind

Src = tuple[str, int]                       # (switch, VLAN the host sends in)
Dst = tuple[str, frozenset[int]]            # (switch, VLANs its port sends out)
Pair = tuple[str, str]                      # (source host, destination host)


@dataclass(frozen=True)
class Cut:
    """Hosts of `source` sending in `vlan` cannot reach `dest_hosts` (on `dest`) during steps
    `first`..`last` (1-based, inclusive)."""

    first: int
    last: int
    vlan: int
    source: str
    dest: str
    source_hosts: tuple[str, ...]
    dest_hosts: tuple[str, ...]
    pairs: frozenset[Pair]                   # exactly the host pairs cut

    @property
    def count(self) -> int:
        return len(self.pairs)

    def describe(self) -> str:
        when = f"step {self.first}" if self.first == self.last else f"steps {self.first}-{self.last}"
        return (f"{when}: {self.count} host pairs cut: {len(self.source_hosts)} hosts of {self.source} "
                f"(sending in VLAN {self.vlan}) to {len(self.dest_hosts)} hosts of {self.dest}")

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "steps": [self.first, self.last], "vlan": self.vlan, "from_switch": self.source, "to_switch": self.dest,
            "host_pairs": self.count, "source_hosts": list(self.source_hosts), "dest_hosts": list(self.dest_hosts)}
        if self.count != len({(a, b) for a in self.source_hosts for b in self.dest_hosts if a != b}):
            out["pairs"] = [list(p) for p in sorted(self.pairs)]     # not every source to every destination
        return out


def _keys(views: FabricView, hosts: Iterable[HostAt]) -> dict[str, tuple[Src | None, Dst | None]]:
    out: dict[str, tuple[Src | None, Dst | None]] = {}
    for h in hosts:
        view = views.get(h.switch)
        end = view.get(h.port) if view is not None else None
        if end is None:
            out[h.name] = (None, None)
            continue
        into = end.untagged_into()
        out[h.name] = ((h.switch, into) if into is not None else None, (h.switch, end.egress))
    return out


def _delivered(edges: Iterable[Edge], srcs: Iterable[Src], dsts: Iterable[Dst]) -> set[tuple[Src, Dst]]:
    uf = UnionFind()
    for e in edges:
        uf.union(e.a, e.b)
    reach: dict[Dst, set[Node]] = {d: {uf.find((d[0], w)) for w in d[1]} for d in dsts}
    return {(s, d) for s in srcs for d, roots in reach.items() if uf.find(s) in roots}


class Delivery:
    """Which host pairs are delivered in the current state, kept up to date step by step."""

    def __init__(self, checker: LoopChecker, views: FabricView, hosts: Sequence[HostAt]) -> None:
        self.checker, self.hosts = checker, tuple(hosts)
        self.views = dict(views)
        self.keys = _keys(views, hosts)
        self.ok = _delivered(checker.edges(views), self._srcs(), self._dsts())

    def _srcs(self) -> set[Src]:
        return {k[0] for k in self.keys.values() if k[0] is not None}

    def _dsts(self) -> set[Dst]:
        return {k[1] for k in self.keys.values() if k[1] is not None}

    def move(self, switch: str, view: SwitchView | None, vlans: frozenset[int]) -> None:
        """`switch` now has `view`, which changes the links of `vlans`."""
        self.views[switch] = view
        keys = _keys(self.views, [h for h in self.hosts if h.switch == switch])
        self.keys.update(keys)
        moved_src = {k[0] for k in keys.values() if k[0] is not None}
        moved_dst = {k[1] for k in keys.values() if k[1] is not None}
        wanted = set(vlans) | {s[1] for s in moved_src} | {w for d in moved_dst for w in d[1]}
        if not wanted:
            return
        edges = self.checker.edges(self.views, frozenset(wanted))
        joined = {n[1] for e in edges for n in (e.a, e.b)} | wanted
        srcs, dsts = self._srcs(), self._dsts()
        rows = {s for s in srcs if s[1] in joined or s[0] == switch}
        cols = {d for d in dsts if d[0] == switch}
        self.ok = {(s, d) for s, d in self.ok if s not in rows and d not in cols and s in srcs and d in dsts}
        self.ok |= _delivered(edges, rows, dsts)
        self.ok |= _delivered(edges, srcs - rows, cols)

    def _members(self) -> tuple[dict[Src, tuple[str, ...]], dict[Dst, tuple[str, ...]]]:
        by_src: dict[Src, list[str]] = {}
        by_dst: dict[Dst, list[str]] = {}
        for h, (s, d) in self.keys.items():
            if s is not None:
                by_src.setdefault(s, []).append(h)
            if d is not None:
                by_dst.setdefault(d, []).append(h)
        return ({k: tuple(v) for k, v in by_src.items()}, {k: tuple(v) for k, v in by_dst.items()})

    def pairs(self) -> dict[Pair, int]:
        """Host pairs delivered now, each with the VLAN its source sends in."""
        by_src, by_dst = self._members()
        return {(a, b): s[1] for s, d in self.ok for a in by_src.get(s, ()) for b in by_dst.get(d, ()) if a != b}

    def undelivered(self) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
        """The groups of host pairs not delivered now: (source hosts, destination hosts)."""
        by_src, by_dst = self._members()
        return {(hs, hd) for s, hs in by_src.items() for d, hd in by_dst.items() if (s, d) not in self.ok}


def cuts_of(checker: LoopChecker, start: FabricView, end: FabricView, hosts: Sequence[HostAt],
            steps: Sequence[tuple[str, Sequence[tuple[SwitchView, frozenset[int]]]]]) -> list[Cut]:
    """The cuts of a sequence of steps: per step its switch and, per live view, the view and
    the VLANs whose links it changes. Pairs lost during consecutive steps are one window."""
    now = Delivery(checker, start, hosts)
    start_pairs = now.pairs()
    keep = start_pairs.keys() & Delivery(checker, end, hosts).pairs().keys()
    where = {h.name: h.switch for h in hosts}
    opened: dict[Pair, int] = {}
    spans: dict[tuple[int, int, int, str, str], tuple[set[str], set[str], set[Pair]]] = {}

    def close(pair: Pair, first: int, last: int) -> None:
        a, b = pair
        key = (first, last, start_pairs[pair], where[a], where[b])
        srcs, dsts, pairs = spans.setdefault(key, (set(), set(), set()))
        srcs.add(a)
        dsts.add(b)
        pairs.add(pair)

    for i, (switch, views) in enumerate(steps, start=1):
        groups: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
        for view, vlans in views:
            now.move(switch, view, vlans)
            groups |= now.undelivered()
        lost = {(a, b) for hs, hd in groups for a in hs for b in hd if (a, b) in keep}
        for pair in [p for p in opened if p not in lost]:
            close(pair, opened.pop(pair), i - 1)
        for pair in lost:
            opened.setdefault(pair, i)
    for pair, first in opened.items():
        close(pair, first, len(steps))
    out = [Cut(first, last, vlan, src, dst, tuple(sorted(s)), tuple(sorted(d)), frozenset(p))
           for (first, last, vlan, src, dst), (s, d, p) in spans.items()]
    return sorted(out, key=lambda c: (c.first, c.last, c.source, c.dest, c.vlan))
