"""Every ordered host pair's unicast, checked by equivalence classes: exact, and without a
loop over the pairs (268 million of them for 16,384 hosts).

Header space analysis (P. Kazemian, G. Varghese, N. McKeown, "Header Space Analysis:
Static Checking for Networks", NSDI 2012) and VeriFlow (A. Khurshid, X. Zou, W. Zhou,
M. Caesar, P. B. Godfrey, "VeriFlow: Verifying Network-Wide Invariants in Real Time",
NSDI 2013) check classes of packets that every device treats alike instead of single
packets. An 802.1Q bridge forwards a known unicast by (VLAN, destination MAC) alone, so
here the classes are:

- sources: hosts on one bridge whose ports are configured alike (PVID, memberships,
  acceptable frames, filtering) and that the plan puts in one VLAN. Their untagged frames
  enter the same VLAN and are forwarded alike, except that a bridge filters a frame whose
  destination it learned on the ingress port: sources on the port the first bridge
  would send the frame out of are followed on their own.
- destinations: hosts with one attachment signature (`MemoisedSimulator`): every bridge but their
  own learned them on the same port, so frames to any of them take one path up to their
  bridge; there, each one's own port is checked once per arrival (bridge, port, VLAN).
- a VLAN whose active topology is a clean forest, and destinations learned by that
  forest's flood: the unicast follows the forest path, so one walk of the tree from the
  source bridge answers every destination bridge (and the plan comparison) at once.

The verdict of every pair is the one `BridgeNetwork.send` gives frame by frame; checked against
that per-pair reference in tests/test_verify_classes.py (random fabrics, random mistakes).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from vlanroute.verify.simulate import BridgePort, MemoisedSimulator, BridgeNetwork, PathResult


@dataclass(frozen=True)
class PairBlock:
    """Every ordered pair (a, b) of sources x dests with a != b fails with `problem`
    (the text after "a -> b (VLAN vid): ")."""

    sources: tuple[str, ...]
    dests: tuple[str, ...]
    vid: int
    problem: str

    def count(self) -> int:
        both = len(set(self.sources).intersection(self.dests))
        return len(self.sources) * len(self.dests) - both

    def pairs(self) -> Iterator[tuple[str, str]]:
        for a in self.sources:
            for b in self.dests:
                if a != b:
                    yield a, b


@dataclass
class UnicastReport:
    ok_pairs: int                        # ordered pairs delivered cleanly on the planned path
    source_problems: list[tuple[str, str]]   # (source host, message): its untagged frames go wrong
    failures: list[PairBlock]            # every other failing pair, each exactly once
    dropped: list[str]                   # sources whose untagged frames are dropped at once


class PlanTrees:
    """The plan's tree of each VLAN (its links), walked from a source switch."""

    def __init__(self, links: Mapping[int, Iterable[tuple[str, str]]]) -> None:
        self.adj: dict[int, dict[str, list[str]]] = {}
        for vid, pairs in links.items():
            adj: dict[str, list[str]] = defaultdict(list)
            for a, b in pairs:
                adj[a].append(b)
                adj[b].append(a)
            self.adj[vid] = adj

    def parents(self, vid: int, root: str) -> dict[str, str | None]:
        """Every switch connected to `root` in VLAN vid's tree -> its neighbour towards root."""
        adj = self.adj.get(vid, {})
        parent: dict[str, str | None] = {root: None}
        queue = deque([root])
        while queue:
            x = queue.popleft()
            for y in adj.get(x, ()):
                if y not in parent:
                    parent[y] = x
                    queue.append(y)
        return parent


def _walk(parent: Mapping[str, str | None], src: str, dst: str) -> tuple[str, ...] | None:
    """The path src .. dst in a tree given by parents towards src; None if not connected."""
    if dst not in parent:
        return None
    path = [dst]
    x = parent[dst]
    while x is not None:
        path.append(x)
        x = parent[x]
    return tuple(reversed(path)) if path[-1] == src else None


@dataclass
class _LastHop:
    ok: tuple[str, ...]                                  # destinations delivered cleanly
    bad: list[tuple[str, tuple[str, ...]]]               # (problem, destinations)


def last_hop_problem(fabric: MemoisedSimulator, arrival: tuple[str, str, int], dst: str,
                     want_tag: int | None = None) -> str:
    """The unicast's last bridge: delivered to `dst` alone, with the tag its host attachment
    makes (`want_tag`, None: untagged), and received by the host (on the sub-interface of
    that VLAN if tagged)."""
    got, problem = fabric.deliver_local(arrival, dst)
    if problem:
        return problem
    if len(got) != 1 or got[0].host != dst:
        return f"delivered to {', '.join(d.host for d in got) or 'nobody'} at {arrival[0]}"
    tag = got[0].tag
    if tag != want_tag:
        if want_tag is None:
            return f"delivered tagged {tag} at {got[0].bridge} port {got[0].port}"
        return (f"delivered {'untagged' if tag is None else f'tagged {tag}'} at {got[0].bridge} port "
                f"{got[0].port}, the plan's host attachment sends it tagged {want_tag}")
    if tag is not None and not fabric.net.hosts[dst].receives(tag):
        return (f"delivered tagged {tag} at {got[0].bridge} port {got[0].port}, but {dst} has no "
                f"sub-interface for VLAN {tag}")
    return ""


class _Checker:
    def __init__(self, net: BridgeNetwork, fabric: MemoisedSimulator, plan: PlanTrees,
                 delivery_tag: Callable[[int, str], int | None] | None) -> None:
        self.net, self.fabric, self.plan = net, fabric, plan
        self.delivery_tag = delivery_tag
        self.ok_pairs = 0
        self.failures: list[PairBlock] = []
        self._last: dict[tuple[tuple[str, str, int], int, int], _LastHop] = {}
        self._dests: dict[int, tuple[frozenset[str], list[frozenset[int]], _LastHop]] = {}
        self._clean: dict[tuple[frozenset[int], frozenset[int], frozenset[int]], frozenset[int]] = {}
        # per signature: the VLANs in which its hosts were learned by a clean forest's
        # flood alone (no stored entry of that VLAN, which could override the forest)
        self.forest_vids: list[frozenset[int]] = []
        for forests, table in zip(fabric.sig_forests, fabric.sig_tables):
            stored = {vid for (_, vid) in table}
            self.forest_vids.append(frozenset(v for v in forests if v not in stored))

    def _clean_vids(self, host: str) -> frozenset[int]:
        """The VLANs in which a unicast that reached host's bridge on another port is
        delivered cleanly: the bridge learned host on its own port in that VLAN (no
        other entry), the port forwards, is an untagged member, and leads to host alone."""
        h = self.net.hosts[host]
        bridge = self.net.bridges[h.bridge]
        bp = bridge.ports[h.port]
        if not bp.forwarding or self.net.peers(h.bridge, h.port) != [("host", host, "")]:
            return frozenset()
        # hosts configured alike share these sets (a frozenset keeps its hash): intersect once
        key = (self.fabric.local[host], bp.untagged, bridge.vlans)
        got = self._clean.get(key)
        if got is None:
            got = self._clean[key] = key[0] & key[1] & key[2]
        return got

    def _dest_info(self, sig: int, group: tuple[str, ...]) -> tuple[frozenset[str], list[frozenset[int]], _LastHop]:
        got = self._dests.get(sig)
        if got is None:
            ports = frozenset(self.net.hosts[b].port for b in group)
            clean = list({self._clean_vids(b) for b in group})
            got = self._dests[sig] = (ports, clean, _LastHop(group, []))
        return got

    def all_clean(self, sig: int, group: tuple[str, ...]) -> tuple[frozenset[str], frozenset[int]]:
        """(the destinations' own ports, the VLANs in which every destination of the group
        is clean): an arrival on another port in such a VLAN delivers to all of them, as
        `last_hops`' common case says (without trunk hosts)."""
        ports, clean, _ = self._dest_info(sig, group)
        return ports, frozenset.intersection(*clean) if clean else frozenset()

    def last_hops(self, arrival: tuple[str, str, int], sig: int, group: tuple[str, ...],
                  want_vid: int) -> _LastHop:
        """The destinations of `group` reached at `arrival` by sources planned in want_vid."""
        tagging = self.delivery_tag is not None
        if not tagging:
            ports, clean, all_ok = self._dest_info(sig, group)
            if arrival[1] not in ports and all(arrival[2] in vids for vids in clean):
                return all_ok            # the common case, without a per-destination step
        # with trunk hosts the expected tag depends on the source's VLAN too
        key = (arrival, sig, want_vid if tagging else 0)
        got = self._last.get(key)
        if got is None:
            ok: list[str] = []
            bad: dict[str, list[str]] = defaultdict(list)
            for b in group:
                want_tag = self.delivery_tag(want_vid, b) if self.delivery_tag is not None else None
                problem = last_hop_problem(self.fabric, arrival, b, want_tag)
                if problem:
                    bad[problem].append(b)
                else:
                    ok.append(b)
            got = _LastHop(tuple(ok), [(p, tuple(d)) for p, d in bad.items()])
            self._last[key] = got
        return got

    def account(self, srcs: tuple[str, ...], group: tuple[str, ...], sig: int, vid: int,
                arrival: tuple[str, str, int], path: tuple[str, ...], plan_problem: str,
                want_vid: int) -> None:
        """Sources srcs (planned in want_vid) reached the destinations' bridge at `arrival`
        along `path`."""
        res = self.last_hops(arrival, sig, group, want_vid)
        shown = " ".join(path)
        for problem, dests in res.bad:
            block = PairBlock(srcs, dests, vid, f"{problem}; path {shown}")
            if block.count():            # not only a host to itself (filtered, never sent)
                self.failures.append(block)
        if not res.ok:
            return
        if plan_problem:
            block = PairBlock(srcs, res.ok, vid, plan_problem)
            if block.count():
                self.failures.append(block)
            return
        both = len(set(srcs).intersection(res.ok)) if path[0] == path[-1] else 0
        self.ok_pairs += len(srcs) * len(res.ok) - both

    def general(self, srcs: tuple[str, ...], port: str, group: tuple[str, ...], sig: int,
                plan_parent: Mapping[str, str | None], want_vid: int) -> None:
        """Follow one frame (MemoisedSimulator.path, memoised) for sources that behave alike."""
        p: PathResult = self.fabric.path(self.net.hosts[srcs[0]].bridge, port, None, group[0])
        assert p.vid is not None
        if not p.ok:
            self.failures.append(PairBlock(srcs, group, p.vid, f"{p.problem}; path {' '.join(p.bridges)}"))
            return
        assert p.arrival is not None
        want = _walk(plan_parent, p.bridges[0], p.bridges[-1]) if len(p.bridges) > 1 else p.bridges
        plan_problem = ""
        if p.bridges != want:
            plan_txt = " ".join(want) if want else f"no path in VLAN {want_vid}"
            plan_problem = f"path {' '.join(p.bridges)}, plan says {plan_txt}"
        self.account(srcs, group, sig, p.vid, p.arrival, p.bridges, plan_problem, want_vid)


def check_unicast(net: BridgeNetwork, fabric: MemoisedSimulator, want_vlan: Mapping[str, int], plan: PlanTrees,
                  delivery_tag: Callable[[int, str], int | None] | None = None,
                  hosts: Iterable[str] | None = None) -> UnicastReport:
    """Every ordered pair of `hosts` (default: all of the network's, after `fabric.learn`):
    an untagged unicast from a to b, against the learned tables, must be delivered to b
    exactly once, without flooding, along the plan's path in a's VLAN, untagged or with
    the tag `delivery_tag(a's planned VLAN, b)` gives (trunk host attachment; None:
    untagged everywhere)."""
    names = sorted(net.hosts if hosts is None else hosts)
    chk = _Checker(net, fabric, plan, delivery_tag)
    groups: dict[int, list[str]] = defaultdict(list)
    for h in names:
        groups[fabric.signature[h]].append(h)
    by_sig = [(sig, tuple(g), net.hosts[g[0]].bridge) for sig, g in groups.items()]
    classes: dict[tuple[str, BridgePort, int], list[str]] = defaultdict(list)
    for h in names:
        ha = net.hosts[h]
        classes[(ha.bridge, net.bridges[ha.bridge].ports[ha.port], want_vlan[h])].append(h)
    source_problems: list[tuple[str, str]] = []
    dropped: list[str] = []
    # per signature, for the forest shortcut below: (own ports, VLANs clean for all), or None
    # with trunk hosts (the expected tag then depends on the source's VLAN)
    clean_for_all = ([chk.all_clean(sig, group) for sig, group, _ in by_sig]
                     if delivery_tag is None else [None] * len(by_sig))

    for (s, _, want_vid), members in classes.items():
        first = net.hosts[members[0]]
        vid, why = net.bridges[s].ingress(first.port, None)
        if vid is None:
            source_problems.extend((a, f"host {a}: untagged frames dropped at {s} port {net.hosts[a].port}: "
                                       f"{why}") for a in members)
            dropped.extend(members)
            continue
        if vid != want_vid:
            source_problems.extend((a, f"host {a}: untagged frames enter VLAN {vid} at {s} port "
                                       f"{net.hosts[a].port}, plan says VLAN {want_vid}") for a in members)
        plan_parent = plan.parents(want_vid, s)
        by_port: dict[str, list[str]] = defaultdict(list)
        for a in members:
            by_port[net.hosts[a].port].append(a)
        srcs_all = tuple(members)
        # the clean forest of the VLAN the frames enter, walked once from s; same[x]: the
        # forest path s .. x is the plan's path in want_vid's tree
        forest = fabric.forest(vid)
        f_parent: dict[str, str | None] = {}
        same: dict[str, bool] = {}
        if forest is not None and s in forest.comp:
            f_parent[s] = None
            same[s] = s in plan_parent
            queue = deque([s])
            while queue:
                x = queue.popleft()
                for y in forest.adj[x]:
                    if y not in f_parent:
                        f_parent[y] = x
                        same[y] = same[x] and plan_parent.get(y, "") == x
                        queue.append(y)
        for (sig, group, t), fast in zip(by_sig, clean_for_all):
            if t == s:
                # arrives on the source's own port: each port is its own arrival
                for port, srcs in by_port.items():
                    chk.account(tuple(srcs), group, sig, vid, (s, port, vid), (s,), "", want_vid)
                continue
            if forest is not None and t in f_parent and vid in chk.forest_vids[sig]:
                up = f_parent[t]
                assert up is not None
                in_port = forest.adj[t][up]
                if fast is not None and same[t] and in_port not in fast[0] and vid in fast[1]:
                    # last_hops' common case inlined (a million times on a 32x32 torus):
                    # every destination delivered cleanly, on the planned path
                    chk.ok_pairs += len(srcs_all) * len(group)
                    continue
                arrival = (t, in_port, vid)
                res = chk.last_hops(arrival, sig, group, want_vid)
                if not res.bad and same[t]:
                    chk.ok_pairs += len(srcs_all) * len(res.ok)
                    continue
                path = _walk(f_parent, s, t)
                assert path is not None
                plan_problem = ""
                if not same[t]:
                    want = _walk(plan_parent, s, t)
                    plan_txt = " ".join(want) if want else f"no path in VLAN {want_vid}"
                    plan_problem = f"path {' '.join(path)}, plan says {plan_txt}"
                chk.account(srcs_all, group, sig, vid, arrival, path, plan_problem, want_vid)
                continue
            # any other case: follow the frame; sources on the port the frame would leave
            # by at s are filtered there, so they are followed apart
            out = fabric.learned_port(s, vid, group[0])
            for port, srcs in by_port.items():
                if port == out:
                    chk.general(tuple(srcs), port, group, sig, plan_parent, want_vid)
            rest = tuple(a for p, srcs in by_port.items() if p != out for a in srcs)
            if rest:
                chk.general(rest, net.hosts[rest[0]].port, group, sig, plan_parent, want_vid)
    return UnicastReport(chk.ok_pairs, source_problems, chk.failures, dropped)


def check_unicast_pairs(net: BridgeNetwork, fabric: MemoisedSimulator, want_vlan: Mapping[str, int],
                        plan: PlanTrees) -> dict[tuple[str, str], str]:
    """`check_unicast`'s verdicts spelled out pair by pair (small fabrics: tests):
    (a, b) -> "" if delivered cleanly on the planned path, else what went wrong."""
    rep = check_unicast(net, fabric, want_vlan, plan)
    names = sorted(net.hosts)
    got = {(a, b): "" for a in names for b in names if a != b}
    for block in rep.failures:
        for pair in block.pairs():
            assert got[pair] == "", f"{pair} failed twice"
            got[pair] = block.problem
    dropped = {a: m for a, m in rep.source_problems if a in set(rep.dropped)}
    for (a, b) in got:
        if a in dropped:
            assert got[(a, b)] == "", f"{a} is dropped at once, yet {a} -> {b} was followed"
            got[(a, b)] = dropped[a]
    assert rep.ok_pairs == sum(1 for v in got.values() if not v)
    return got
