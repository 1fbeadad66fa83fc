"""What heals by itself: the failure classes a plan, its backup VLANs and the site's watch
policy heal, stated and checked before any incident (docs/failures.md, "What heals by
itself: the guarantees").

A failure set (one dead neighbour pair or switch, or two of them) is classed by what the
watcher does with it (docs/watch.md): its remedy is made from the published plan for every
failure that counts at that moment, so a second failure while the first is healed gets the
remedy of both together, and that is what is classed here.

- `failover+repair`: every routing VLAN the dead pairs (a dead switch's among them) cut
  has a backup VLAN that avoids them and joins every live switch with hosts (bundle/failedover.py `choose`, the very choice of
  `repair --failover`), and the watcher's strategies fail over: delivery comes back with a
  PVID change on the source switches; the balanced repair follows.
- `repair`: the live fabric still joins every live switch with hosts, so the minimal
  repair (routing/repair/engine.py, `vlanroute repair`) joins every broken tree again (it searches
  the live links through any switch; it fails only when no path is left).
- `split`: the live fabric falls into parts that each hold hosts: no tree can join them;
  the host pairs across the parts stay cut until a cable or switch returns.

Hosts on a dead switch are lost whatever heals (named); a dead switch fails over as its
dead pairs do, its own hosts aside (every routing VLAN it carried through to switches with
hosts has a backup that avoids it), and its neighbours' ports towards it lose their VLANs.
Whether the watcher acts by itself is
the policy's (`operation.watch`: `auto`, and every class of the set in `heal`), else it
only proposes and a person pushes.

Two levels. `classify` is cheap (the live fabric's connectivity, the failover's choice,
the policy): `plan` states it for every single failure and a sample of double ones. The
figures (`price`, `vlanroute whatif`): the host pairs cut, the repair itself (its max load,
and for a plan that was deadlock-free whether it stays so, else a cycle of channels it
closes), the load and deadlock freedom while failed over.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from math import comb
from typing import TYPE_CHECKING, Any

import networkx as nx

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failedover import choose
from vlanroute.bundle.failures import Failures
from vlanroute.bundle.repaired import trees_of
from vlanroute.model.operation import WatchSpec
from vlanroute.model.links import Link, link
from vlanroute.routing.repair.engine import repair
from vlanroute.routing.repair.guard import acyclic, channel_cycle, tree_dependencies
from vlanroute.routing.repair.loads import LoadBook
from vlanroute.routing.repair.model import Degraded, Tree
from vlanroute.routing.whatif.doubles_switches import double_failure
from vlanroute.routing.whatif.doubles_pairs import DeadPairs
from vlanroute.routing.whatif.failures import use_kernel
from vlanroute.routing.whatif.pairs import RootedTree
from vlanroute.routing.whatif.switches import SwitchIndex

if TYPE_CHECKING:
    from vlanroute.plan.build import Plan

HEALS = ("failover+repair", "repair")          # the classes that heal; the other is "split"


@dataclass(frozen=True)
class Policy:
    """The watcher's policy as far as healing goes (plan.json `operation.watch`)."""
    mode: str                      # "auto" | "propose"
    heal: frozenset[str]           # the failure classes `auto` heals
    strategies: tuple[str, ...]    # how, in order

    @classmethod
    def of(cls, doc: PlanDocument) -> Policy:
        """The plan's policy, or the watcher's defaults when it has none (docs/watch.md)."""
        spec = doc.operation.watch if doc.operation is not None and doc.operation.watch is not None else WatchSpec()
        return cls(spec.policy, frozenset(spec.heal), tuple(str(x) for x in spec.strategies))

    @property
    def fails_over(self) -> bool:
        return "failover" in self.strategies

    def why_not(self, kinds: Iterable[str]) -> str:
        """Why the watcher would not heal failures of these classes by itself ("" if it would)."""
        if self.mode != "auto":
            return f"the watch policy is {self.mode}: the watcher writes the heal and notifies, a person pushes it"
        missing = sorted(set(kinds) - self.heal)
        if missing:
            allowed = " and ".join(sorted(self.heal)) or "no"
            return f"the watch policy heals {allowed} failures only: a dead {' and '.join(missing)} is proposed"
        return ""

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.mode, "heal": sorted(self.heal), "strategies": list(self.strategies)}


@dataclass
class Verdict:
    """One failure set, classed (`classify`) and, for whatif, priced (`price`)."""
    failures: Failures
    kind: str                      # "pair", "switch", "pair+pair", "pair+switch", "switch+switch"
    heal: str                      # "failover+repair" | "repair" | "split"
    failover: str                  # "covers" | "partial" | "none" | "no-backups" | "not-needed" | "switch"
    automatic: bool                # the watcher heals it by itself under the policy
    why_not: str                   # why not, when it would heal but not by itself
    hosts_lost: list[str]          # on the dead switches
    cut_off: list[list[str]]       # split: the parts (their switches with hosts) apart from the largest
    cut_off_hosts: int
    pairs_cut: int | None = None               # ordered surviving host pairs cut before any heal
    max_link_load: float | None = None         # per cable after the repair
    max_link_load_failed_over: float | None = None
    deadlock_free: bool | None = None          # after the repair; None: the plan was not deadlock-free
    deadlock_note: str = ""
    deadlock_free_failed_over: bool | None = None

    @property
    def heals(self) -> bool:
        return self.heal in HEALS

    @property
    def outage(self) -> str:
        """What the surviving host pairs the failures cut see: `none` (none is cut),
        `failover` (detection and a PVID push), `repair` (detection, the repair's push and the
        hosts' re-learning), `person` (until a person pushes the proposed heal),
        `until-return` (split: until a cable or switch returns)."""
        if not self.heals:
            return "until-return"
        if self.pairs_cut == 0:
            return "none"
        if not self.automatic:
            return "person"
        return "failover" if self.heal == "failover+repair" else "repair"

    def name(self) -> str:
        return " + ".join([f"pair {a}-{b}" for a, b in self.failures.pairs] +
                          [f"switch {s}" for s in self.failures.switches])

    def to_json(self) -> dict[str, Any]:
        def load(x: float | None) -> float | None:
            return None if x is None else round(x, 4)
        return {"heal": self.heal, "heals": self.heals, "outage": self.outage, "automatic": self.automatic,
                "not_automatic_because": self.why_not, "failover": self.failover, "hosts_lost_names": self.hosts_lost,
                "cut_off": self.cut_off, "cut_off_hosts": self.cut_off_hosts,
                "max_link_load_failed_over": load(self.max_link_load_failed_over),
                "deadlock_free_after": self.deadlock_free, "deadlock_note": self.deadlock_note,
                "deadlock_free_failed_over": self.deadlock_free_failed_over}


class Fabric:
    """What every failure of one plan shares: its cables, hosts, trees, the live
    adjacency, the policy. From a plan document (`of`), or from a `Plan` (`of_plan`: what
    `plan` prints, without building the document, a second on a 32x32 torus, unless the
    failover's choice needs it)."""

    def __init__(self, switches: list[str], cables: Iterable[tuple[str, str]], hosts: Iterable[tuple[str, str]],
                 trees: list[Tree], deadlock_free: bool, policy: Policy, has_backups: bool,
                 document: Callable[[], PlanDocument]) -> None:
        """`cables`: one (a, b) per inter-switch cable; `hosts`: (name, switch) in the
        hosts' order; `document`: the plan document, asked for only by the failover."""
        self.policy = policy
        self.switches = switches
        self.position = {s: i for i, s in enumerate(self.switches)}
        self.cables: dict[Link, int] = {}
        for a, b in cables:
            key = link(a, b)
            self.cables[key] = self.cables.get(key, 0) + 1
        # routing/whatif/failures.py's order, so that its rows and `singles` go together
        self.pairs = sorted(self.cables, key=lambda lk: (self.position[lk[0]], self.position[lk[1]]))
        self.hosts = dict.fromkeys(self.switches, 0)
        self.host_names: dict[str, list[str]] = {s: [] for s in self.switches}
        for name, switch in hosts:
            self.hosts[switch] += 1
            self.host_names[switch].append(name)
        self.hosted = [s for s in self.switches if self.hosts[s]]
        self.adj: dict[str, set[str]] = {s: set() for s in self.switches}
        for a, b in self.cables:
            self.adj[a].add(b)
            self.adj[b].add(a)
        self.trees = trees
        self.deadlock_free = deadlock_free
        self.has_backups = has_backups
        self._document = document
        self._doc: PlanDocument | None = None
        self._cuts: tuple[set[Link], set[str]] | None = None
        self._connected: bool | None = None
        self._rooted: dict[int, RootedTree] | None = None
        self._loads: LoadBook | None = None
        self._index: SwitchIndex | None = None
        self._dead_pairs: DeadPairs | None = None

    @classmethod
    def of(cls, doc: PlanDocument, policy: Policy | None = None) -> Fabric:
        hosts = sorted(doc.hosts.items(), key=lambda kv: kv[1].index)
        return cls(list(doc.switches), [(c.a, c.b) for c in doc.cabling], [(n, h.switch) for n, h in hosts],
                   trees_of(doc), bool(doc.metrics.get("deadlock_free", False)), policy or Policy.of(doc),
                   any(v.protects for v in doc.vlans), lambda: doc)

    @classmethod
    def of_plan(cls, plan: Plan, policy: Policy | None = None) -> Fabric:
        """As `of(plan.to_document())` (tests/test_guarantees.py checks it): the trees as
        `trees_of` reads them back, each source's share where it sends only some hosts."""
        spec = plan.inventory.spec.operation.watch or WatchSpec()
        trees = [Tree(v.id, tuple(v.sources), frozenset(link(a, b) for a, b in v.links),
                      tuple((s, v.shares[s]) for s in v.sources if s in v.shares)) for v in plan.vlans]
        return cls(list(plan.topology.switches), [(c.a, c.b) for c in plan.cabling],
                   [(h.name, h.switch) for h in sorted(plan.hosts, key=lambda h: h.index)], trees,
                   plan.metrics.deadlock_free,
                   policy or Policy(spec.policy, frozenset(spec.heal), tuple(str(x) for x in spec.strategies)),
                   any(v.protects for v in plan.vlans), plan.to_document)

    @property
    def doc(self) -> PlanDocument:
        if self._doc is None:
            self._doc = self._document()
        return self._doc

    # ---------------------------------------------------------------- classes

    def parts(self, failures: Failures) -> list[list[str]]:
        """The live fabric's parts that hold hosts, as their switches with hosts (in the
        switches' order), the part with the most hosts first; one part when it holds."""
        dead_pairs = set(failures.pairs)
        dead = set(failures.switches)

        def live(u: str) -> Iterator[str]:
            for v in self.adj[u]:
                if v not in dead and link(u, v) not in dead_pairs:
                    yield v
        if self._no_cut(failures) or all(self._one_part(g, live) for g in self._groups(failures)):
            return [[s for s in self.hosted if s not in dead] if dead else list(self.hosted)]
        seen: set[str] = set()
        out = []
        for s in self.switches:
            if s in dead or s in seen:
                continue
            part = {s}
            todo = [s]
            while todo:
                for v in live(todo.pop()):
                    if v not in part:
                        part.add(v)
                        todo.append(v)
            seen |= part
            with_hosts = sorted((x for x in part if self.hosts[x]), key=self.position.__getitem__)
            if with_hosts:
                out.append(with_hosts)
        out.sort(key=lambda p: (-sum(self.hosts[x] for x in p), self.position[p[0]]))
        return out or [[]]

    def _groups(self, failures: Failures) -> list[set[str]]:
        """The switches next to each dead element: the ends of a dead pair (both live), the
        live neighbours of a block of adjacent dead switches. The intact fabric was
        connected: the live one still is if each group still joins up, since a path of the
        intact fabric that crossed a dead element entered and left it through one group,
        whose switches are then joined without it. Each group is searched from one of its
        switches, stopping once all are found: a few steps in a well-connected fabric."""
        dead = set(failures.switches)
        groups = [set(p) for p in failures.pairs if not set(p) & dead]
        left = set(dead)
        while left:
            block, todo = set(), [left.pop()]
            while todo:
                w = todo.pop()
                block.add(w)
                for v in self.adj[w] & left:
                    left.discard(v)
                    todo.append(v)
            groups.append({v for w in block for v in self.adj[w]} - dead)
        return groups

    def _no_cut(self, failures: Failures) -> bool:
        """A single failure that is no bridge (pair) or articulation point (switch) of a
        connected fabric leaves it connected: found for every failure at once, in linear
        time (networkx), so the single failures of a large fabric need no search."""
        if len(failures.pairs) + len(failures.switches) != 1 or not self._was_connected():
            return False
        if self._cuts is None:
            g = nx.Graph()
            g.add_nodes_from(self.switches)
            g.add_edges_from(self.cables)
            self._cuts = ({link(a, b) for a, b in nx.bridges(g)}, set(nx.articulation_points(g)))
        bridges, points = self._cuts
        return not (set(failures.pairs) & bridges or set(failures.switches) & points)

    def _one_part(self, edge: set[str], live: Callable[[str], Iterator[str]]) -> bool:
        if not self._was_connected():
            return False
        if len(edge) < 2:
            return True
        start = min(edge, key=self.position.__getitem__)
        want = set(edge) - {start}
        seen = {start}
        todo = [start]
        i = 0
        while want and i < len(todo):
            for v in live(todo[i]):
                if v not in seen:
                    seen.add(v)
                    want.discard(v)
                    todo.append(v)
            i += 1
        return not want

    def _was_connected(self) -> bool:
        got = self._connected
        if got is None:
            seen = {self.switches[0]} if self.switches else set()
            todo = list(seen)
            while todo:
                for v in self.adj[todo.pop()]:
                    if v not in seen:
                        seen.add(v)
                        todo.append(v)
            got = self._connected = len(seen) == len(self.switches)
        return got

    def classify(self, failures: Failures) -> Verdict:
        kinds = ["pair"] * len(failures.pairs) + ["switch"] * len(failures.switches)
        parts = self.parts(failures)
        lost = [h for s in failures.switches for h in self.host_names[s]]
        if not self.has_backups:
            failover = "no-backups"
        else:
            c = choose(self.doc, self.dead_pairs(failures), frozenset(failures.switches))
            failover = ("partial" if c.moves else "none") if c.stuck else ("covers" if c.moves else "not-needed")
        if len(parts) > 1:
            heal = "split"
        elif failover == "covers" and self.policy.fails_over:
            heal = "failover+repair"
        else:
            heal = "repair"
        why = self.policy.why_not(kinds) if heal in HEALS else ""
        cut_off = parts[1:] if len(parts) > 1 else []
        return Verdict(failures, "+".join(kinds), heal, failover, heal in HEALS and not why, why, lost,
                       cut_off, sum(self.hosts[s] for p in cut_off for s in p))

    # ---------------------------------------------------------------- figures

    def degraded(self, failures: Failures) -> Degraded:
        cables = {**self.cables, **dict.fromkeys(failures.pairs, 0)}
        hosts = {s: n for s, n in self.hosts.items() if s not in failures.switches}
        return Degraded(cables, frozenset(failures.switches), hosts)

    def pairs_cut(self, failures: Failures) -> int:
        """Ordered surviving host pairs whose source VLAN's tree no longer joins them.

        Per tree, from its Euler intervals (routing/whatif/pairs.py RootedTree, built once):
        the failures remove a few of its links (the dead pairs', the dead switches'), each
        of which cuts off its lower end's subtree; a part is such a subtree less the subtrees
        cut off inside it, so its senders and hosts are differences of subtree sums, and a
        part with senders s and hosts h cuts s x (live hosts - h). A dead switch is a part
        of its own, without live senders or hosts."""
        fabric = self.degraded(failures)
        total = sum(fabric.hosts.values())
        dead = set(failures.switches)
        dead_pairs = {link(a, b) for a, b in failures.pairs}
        rooted = self._rooted_trees()
        cut = 0
        for t in self.trees:
            rt = rooted.get(t.vid)
            if rt is not None and len(rt.pre) != len(t.switches):
                cut += _cut_by_search(t, fabric, total)     # not one tree: search it
                continue
            inside = rt.tin if rt is not None else {}
            for s, n in t.senders(fabric.hosts, dead).items():
                if s not in inside:                 # a source off the tree's links: a part of its own
                    cut += n * (total - fabric.hosts.get(s, 0))
            if rt is None:
                continue
            lower = [a if rt.parent.get(a) == b else b for a, b in dead_pairs if (a, b) in t.links]
            for w in dead:
                if w in inside:
                    lower += [v if rt.parent.get(v) == w else w for v in self.adj[w]
                              if link(w, v) in t.links and link(w, v) not in dead_pairs]
            parts: dict[str | None, list[int]] = {None: [rt.S, rt.H]}     # None: the root's part
            open_: list[str] = []
            for r in sorted(set(lower), key=rt.tin.__getitem__):
                while open_ and not rt.below(open_[-1], r):
                    open_.pop()
                up = parts[open_[-1] if open_ else None]
                up[0] -= rt.s[r]
                up[1] -= rt.h[r]
                parts[r] = [rt.s[r], rt.h[r]]
                open_.append(r)
            root = rt.pre[0]
            for top, (sr, hr) in parts.items():
                if (top if top is not None else root) not in dead:
                    cut += sr * (total - hr)
        return cut

    def dead_pairs(self, failures: Failures) -> set[tuple[str, str]]:
        """The dead neighbour pairs: those named, and every pair of a dead switch."""
        return set(failures.pairs) | {link(s, n) for s in failures.switches for n in self.adj[s]}

    def intact_loads(self) -> LoadBook:
        """Every VLAN's load on every arc of the intact fabric, computed once."""
        if self._loads is None:
            fabric = Degraded(self.cables, frozenset(), self.hosts)
            self._loads = LoadBook.of({t.vid: t.links for t in self.trees},
                                      {t.vid: t.senders(self.hosts) for t in self.trees}, fabric)
        return self._loads

    def switch_index(self) -> SwitchIndex:
        """The single dead switch's index of this plan (routing/whatif/switches.py), built
        once: whatif's single failures and the doubles with a dead switch share it."""
        if self._index is None:
            self._index = SwitchIndex.of(self.trees, self._rooted_trees(), self.cables, self.intact_loads(),
                                         self.hosts, self.switches)
        return self._index

    def _pairs_repaired(self, failures: Failures) -> tuple[float | None, bool | None, tuple[tuple[str, str], ...]] | None:
        """`repair`'s figures for dead pairs alone in a plan that was not deadlock-free, by
        routing/whatif/doubles_pairs.py (the same choices, from the intact loads); None
        when that path does not apply."""
        if self._dead_pairs is None:
            # the kernels' arrays of these trees, where whatif's single failures built them
            kernel = use_kernel(self.trees)
            shared = self._index.compiled() if kernel and self._index is not None else None
            self._dead_pairs = DeadPairs(self.trees, self.cables, self.hosts, self._rooted_trees(),
                                         self.intact_loads(), kernel=kernel, shared=shared)
        peak = self._dead_pairs.max_load(self.degraded(failures), failures.pairs)
        return None if peak is None else (peak, None, ())

    def _rooted_trees(self) -> dict[int, RootedTree]:
        """Every tree with links rooted once (for pairs_cut)."""
        if self._rooted is None:
            self._rooted = {t.vid: RootedTree(t, self.hosts) for t in self.trees if t.links}
        return self._rooted

    def failed_over(self, failures: Failures) -> tuple[float, bool | None]:
        """The max load per cable while failed over around the dead pairs, and (for a plan
        that was deadlock-free) whether the failed-over routes are: the hit VLANs' sources
        send in their backups (bundle/failedover.py's choice), every tree as it stands."""
        c = choose(self.doc, self.dead_pairs(failures), frozenset(failures.switches))
        fabric = self.degraded(failures)
        senders = {t.vid: dict(t.senders(fabric.hosts, fabric.dead_switches)) for t in self.trees}
        for (s, vid), backup in c.new_pvid.items():
            n = senders[vid].pop(s, 0)
            senders[backup][s] = senders[backup].get(s, 0) + n
        links = {t.vid: t.links for t in self.trees}
        load = LoadBook.of(links, senders, fabric).max_load()
        free = None
        if self.deadlock_free:
            deps: set[tuple[str, str, str]] = set()
            for vid, lks in links.items():
                deps |= tree_dependencies(lks, senders[vid], fabric.hosts)
            free = acyclic(deps)
        return load, free

    def price(self, v: Verdict, repaired: tuple[float | None, bool | None, tuple[tuple[str, str], ...]] | None = None
              ) -> Verdict:
        """The figures of a classed failure set: the host pairs cut (unless set), the repair
        (given, as whatif's rows have it: max load, deadlock freedom, a cycle; else run
        here), the failover's. In place; returns v."""
        if v.pairs_cut is None:
            v.pairs_cut = self.pairs_cut(v.failures)
        if v.heals:
            if repaired is None and v.failures.switches and not self.deadlock_free:
                repaired = self._dead_switch_repair(v.failures)
            if repaired is None and not (v.failures.switches or v.failures.cables or self.deadlock_free):
                repaired = self._pairs_repaired(v.failures)
            if repaired is None:
                fabric = self.degraded(v.failures)
                # Without a dead switch the hosts stay: the repair starts from the intact
                # loads and recomputes only the broken trees' (as whatif's single pairs do).
                result = repair(self.trees, fabric, keep_deadlock_free=self.deadlock_free,
                                check_deadlock=self.deadlock_free,
                                base=None if v.failures.switches else self.intact_loads())
                cycle: tuple[tuple[str, str], ...] = ()
                if self.deadlock_free and not result.deadlock_free:
                    senders = {t.vid: t.senders(fabric.hosts, fabric.dead_switches) for t in self.trees}
                    cycle = tuple(channel_cycle(result.trees, senders, fabric.hosts, result.dependencies))
                repaired = (None if result.unrepairable else result.max_load,
                            result.deadlock_free if self.deadlock_free else None, cycle)
            v.max_link_load, v.deadlock_free, cycle = repaired
            v.deadlock_note = deadlock_note(self.deadlock_free, v.deadlock_free, cycle)
        if v.failover in ("covers", "partial") and v.heals:
            load, free = self.failed_over(v.failures)
            v.max_link_load_failed_over = load if v.failover == "covers" else None
            v.deadlock_free_failed_over = free if v.failover == "covers" else None
        return v

    def _dead_switch_repair(self, failures: Failures
                            ) -> tuple[float | None, bool | None, tuple[tuple[str, str], ...]] | None:
        """`repair`'s figures for failures with a dead switch (and at most one dead pair)
        on a plan that was not deadlock-free, from the intact trees
        (routing/whatif/doubles_switches.py); None where its preconditions fail."""
        if len(failures.pairs) > 1 or failures.cables:     # single dead cables: repair() prices them
            return None
        pair = link(*failures.pairs[0]) if failures.pairs else None
        if pair is not None and set(pair) & set(failures.switches):
            return None
        got = double_failure(self.switch_index(), tuple(failures.switches), pair, self.cables)
        return None if got is None else (got[0], None, ())

    # ---------------------------------------------------------------- the sets

    def singles(self) -> list[Failures]:
        """Every neighbour pair, then every switch: whatif's rows, in its order."""
        return [Failures(pairs=(p,)) for p in self.pairs] + [Failures(switches=(s,)) for s in self.switches]

    def row_name(self, failures: Failures) -> str:
        """A single failure as routing/whatif/failures.py names its row: `a:b` in the switches' order, or the switch."""
        if failures.switches:
            return failures.switches[0]
        a, b = sorted(failures.pairs[0], key=self.position.__getitem__)
        return f"{a}:{b}"

    def double_counts(self) -> dict[str, int]:
        """How many distinct double failures of each kind there are (a pair on a dead switch
        is that switch's failure, not a second one)."""
        p, s = len(self.pairs), len(self.switches)
        return {"pair+pair": comb(p, 2), "pair+switch": p * s - 2 * p, "switch+switch": comb(s, 2)}

    def doubles(self, count: int, seed: int) -> list[Failures]:
        """`count` distinct double failures drawn uniformly (seeded) from all of them, or all
        of them when there are no more; in the order pair+pair, pair+switch, switch+switch."""
        counts = self.double_counts()
        total = sum(counts.values())
        picked = range(total) if total <= count else sorted(random.Random(seed).sample(range(total), count))
        return [self._double(i, counts) for i in picked]

    def _double(self, i: int, counts: Mapping[str, int]) -> Failures:
        if i < counts["pair+pair"]:
            a, b = _unrank(i, len(self.pairs))
            return Failures(pairs=(self.pairs[a], self.pairs[b]))
        i -= counts["pair+pair"]
        if i < counts["pair+switch"]:
            for w in self.switches:
                block = len(self.pairs) - len(self.adj[w])       # the pairs not on w
                if i < block:
                    others = (p for p in self.pairs if w not in p)
                    return Failures(pairs=(next(x for j, x in enumerate(others) if j == i),), switches=(w,))
                i -= block
        i -= counts["pair+switch"]
        a, b = _unrank(i, len(self.switches))
        return Failures(switches=(self.switches[a], self.switches[b]))


def _cut_by_search(t: Tree, fabric: Degraded, total: int) -> int:
    """The host pairs a tree's sources can no longer reach, by a search from each: what
    Fabric.pairs_cut computes from subtree sums, for a tree whose links are not one tree."""
    senders = t.senders(fabric.hosts, fabric.dead_switches)
    adj: dict[str, list[str]] = {}
    for a, b in t.links:
        if fabric.alive(a, b):
            adj.setdefault(a, []).append(b)
            adj.setdefault(b, []).append(a)
    done: set[str] = set()
    cut = 0
    for s in senders:
        if s in done:
            continue
        part, todo = {s}, [s]
        while todo:
            for v in adj.get(todo.pop(), ()):
                if v not in part:
                    part.add(v)
                    todo.append(v)
        done |= part
        inside = sum(fabric.hosts.get(x, 0) for x in part)
        cut += sum(senders.get(x, 0) for x in part) * (total - inside)
    return cut


def _unrank(i: int, n: int) -> tuple[int, int]:
    """The i-th pair (a < b) of range(n) in lexicographic order."""
    a = 0
    while i >= n - 1 - a:
        i -= n - 1 - a
        a += 1
    return a, a + 1 + i


def deadlock_note(plan_free: bool, after: bool | None, cycle: Iterable[tuple[str, str]]) -> str:
    """Why a heal is not deadlock-free, or "" when it is."""
    if not plan_free:
        return "the plan itself is not deadlock-free under 802.3x PAUSE: nothing to keep"
    if after:
        return ""
    chain = list(cycle)
    shown = " => ".join(f"{a}->{b}" for a, b in chain[:8]) + (" => ..." if len(chain) > 8 else "")
    return ("the repair found no replacement links that keep the channel order (it tries every link across "
            "each cut, one cut at a time): the repaired routes close the channel "
            f"cycle {shown}{' => ' + '->'.join(chain[0]) if chain else ''} (a deadlock is possible under "
            "802.3x PAUSE; a full re-plan with a deadlock-free engine avoids it)")


# -------------------------------------------------------------------- summaries


@dataclass
class Doubles:
    """The sampled double failures, classed (and priced by whatif)."""
    population: dict[str, int]
    seed: int
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def sampled(self) -> int:
        return len(self.verdicts)

    @property
    def healed(self) -> int:
        return sum(1 for v in self.verdicts if v.heals)

    def by_kind(self) -> dict[str, list[Verdict]]:
        out: dict[str, list[Verdict]] = {k: [] for k in self.population}
        for v in self.verdicts:
            out[v.kind].append(v)
        return out

    def to_json(self, with_rows: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"population": dict(self.population), "sampled": self.sampled, "seed": self.seed,
                               "heal": self.healed, "share_heal": round(self.healed / self.sampled, 4) if self.sampled else None,
                               "kinds": {k: group_json(vs) for k, vs in self.by_kind().items()}}
        if with_rows:
            out["failures"] = [{"kind": v.kind, "failures": v.failures.to_json(), "pairs_cut": v.pairs_cut,
                                "hosts_lost": len(v.hosts_lost),
                                "max_link_load": None if v.max_link_load is None else round(v.max_link_load, 4),
                                **v.to_json()} for v in self.verdicts]
        return out


def distribution(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": round(statistics.median(values), 4), "max": round(max(values), 4)}


def group_json(vs: list[Verdict]) -> dict[str, Any]:
    """Counts of a group of verdicts: by heal class, by outage class, automatic, deadlock
    freedom after, and the loads after (median and max over those that heal)."""
    heal: dict[str, int] = {}
    outage: dict[str, int] = {}
    for v in vs:
        heal[v.heal] = heal.get(v.heal, 0) + 1
        outage[v.outage] = outage.get(v.outage, 0) + 1
    checked = [v for v in vs if v.heals and v.deadlock_free is not None]
    return {"count": len(vs), "heal": heal, "outage": outage, "automatic": sum(v.automatic for v in vs),
            "deadlock_checked": len(checked), "deadlock_free_after": sum(bool(v.deadlock_free) for v in checked),
            "max_link_load": distribution([v.max_link_load for v in vs if v.max_link_load is not None]),
            "max_link_load_failed_over": distribution([v.max_link_load_failed_over for v in vs
                                                      if v.max_link_load_failed_over is not None])}


def single_text(kind: str, vs: list[Verdict], policy: Policy, full: bool = False) -> str:
    """One clause: how the single failures of one kind heal; `full` adds deadlock freedom
    after them and the loads (whatif's summary; `plan` has not priced them)."""
    n = len(vs)
    if not n:
        return f"no single {kind} failure to class"
    heals = [v for v in vs if v.heals]
    split = n - len(heals)
    by_failover = sum(1 for v in heals if v.heal == "failover+repair")
    by_repair = len(heals) - by_failover
    if by_failover and by_repair:
        how = f" ({by_failover} by fast failover then repair, {by_repair} by repair)"
    else:
        how = " by fast failover then repair" if by_failover else " by repair"
    if kind == "switch" and any(v.hosts_lost for v in heals):
        how += " (the dead switch's own hosts lost)"
    if not heals:
        text = f"no single {kind} failure heals ({f'all {n} split' if n > 1 else 'it splits'} the fabric)"
    elif not split:
        text = f"every single {kind} failure ({n}) heals{how}"
    else:
        text = f"{len(heals)} of {n} single {kind} failures heal{how}, {split} split the fabric"
    ready = sum(1 for v in heals if v.failover == "covers" and v.heal != "failover+repair")
    if ready:
        text += f"; fast failover ready for {ready}, by hand (the watcher's strategies: {', '.join(policy.strategies)})"
    if full:
        checked = [v for v in heals if v.deadlock_free is not None]
        if checked:
            text += f"; deadlock-free after {sum(bool(v.deadlock_free) for v in checked)}/{len(checked)}"
        loads = distribution([v.max_link_load for v in heals if v.max_link_load is not None])
        if loads:
            text += f"; max load after the repair {loads['median']:g} (median), {loads['max']:g} (worst)"
        over = distribution([v.max_link_load_failed_over for v in heals if v.max_link_load_failed_over is not None])
        if over:
            text += f", while failed over {over['median']:g} (median), {over['max']:g} (worst)"
    return text


def automatic_text(policy: Policy, verdicts: list[Verdict]) -> str:
    """Whether the watcher heals what heals by itself, under the site's policy."""
    heals = [v for v in verdicts if v.heals]
    auto = sum(v.automatic for v in heals)
    where = f"watch policy {policy.mode}" + (f", heal {' and '.join(sorted(policy.heal)) or 'nothing'}"
                                             if policy.mode == "auto" else "")
    if heals and auto == len(heals):
        return f"the watcher heals them by itself ({where})"
    if not auto:
        return f"the watcher heals none by itself ({where}): it proposes, a person pushes"
    return f"the watcher heals {auto} of {len(heals)} by itself ({where}); it proposes the others"


def doubles_text(d: Doubles, full: bool = False) -> str:
    """The share of the sampled double failures that heal; `full` adds it per kind, the
    failover's cover and deadlock freedom after them (whatif's summary)."""
    if not d.sampled:
        return "double failures: none sampled"
    total = sum(d.population.values())
    what = f"all {total}" if d.sampled == total else f"{d.sampled} sampled of {total}"
    text = f"double failures: {100 * d.healed / d.sampled:.0f} % of {what} heal ({d.healed})"
    if full:
        kinds = d.by_kind()
        text += " (" + ", ".join(f"{k} {sum(v.heals for v in vs)}/{len(vs)}" for k, vs in kinds.items() if vs) + ")"
        pairs = kinds.get("pair+pair", [])
        covered = sum(1 for v in pairs if v.failover == "covers")
        if pairs and any(v.failover != "no-backups" for v in pairs):
            text += f"; the backups cover {covered} of {len(pairs)} pair+pair for a fast failover"
        checked = [v for v in d.verdicts if v.heals and v.deadlock_free is not None]
        if checked:
            text += f"; deadlock-free after {sum(bool(v.deadlock_free) for v in checked)}/{len(checked)}"
    return text


def plan_line(fab: Fabric, singles: list[Verdict], doubles: Doubles | None) -> str:
    """`plan`'s line: the classes of every single failure, the share of the sampled double
    failures that heal, and whether the watcher heals them by itself."""
    parts = [single_text(k, [v for v in singles if v.kind == k], fab.policy) for k in ("pair", "switch")]
    if doubles is not None:
        parts.append(doubles_text(doubles))
    parts.append(automatic_text(fab.policy, singles))
    return "self-healing: " + "; ".join(parts)


__all__ = ["Doubles", "Fabric", "HEALS", "Policy", "Verdict", "automatic_text", "deadlock_note", "doubles_text",
           "group_json", "plan_line", "single_text"]
