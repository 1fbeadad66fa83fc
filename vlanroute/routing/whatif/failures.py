"""What if: every single failure of a neighbour pair and of a switch, repaired in turn.

For each failure: the ordered host pairs it cuts before any repair (a pair is cut when the
tree of the source's VLAN no longer joins the two hosts' switches; pairs with a host on a
dead switch are lost, not cut), the trees to repair, the links the minimal repair adds
(routing/repair/engine.py, the same algorithm as `vlanroute repair`), the max load per cable after
it, and a lower bound of the degraded fabric's max load.

Speed (a 16x16 torus has 512 pairs and 256 switches, 128 VLANs of 255 links each): only the
broken trees are looked at, found by an index of the VLANs per link and per switch; the
loads of the intact plan are computed once and each pair failure starts from them
(`repair(base=...)`: only its broken trees' loads change); a dead switch removes hosts,
which changes every load, so its repair starts from scratch. The bound is the distance
bound D / 2C (routing/bounds.py) with the intact fabric's distances: links that die only
make distances longer, so it stays a lower bound of the degraded fabric (the exact degraded
bound, which `repair` reports, needs a search from every switch per failure).
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from vlanroute.model.links import link
from vlanroute.routing.jit import compiled_allowed
from vlanroute.routing.repair.engine import repair
from vlanroute.routing.repair.guard import channel_cycle
from vlanroute.routing.repair.loads import LoadBook
from vlanroute.routing.repair.model import Degraded, RepairResult, Tree, rooted_tree, subtree_sums
from vlanroute.routing.whatif.pairs import Book, Crossing, RootedTree, pair_failure
from vlanroute.routing.whatif.switches import SwitchIndex

# Tree links over the plan from which the pair failures and the dead switches' common
# trees run compiled (pairs_kernel, switches_kernel, where numba is installed): a 16x16 torus
# has 32,640 (whatif 9 s -> 7.5 s), a 32x32 523,776, a 12x12 10,296 and a 64-switch random
# fabric about 4,000. Below it the interpreted path costs less than loading the compiled
# kernels (0.5 s from numba's disk cache; the first run after an install compiles them, 5 s).
KERNEL_FROM = 20_000


@dataclass
class FailureRow:
    kind: str                 # "pair" | "switch"
    name: str                 # "sw1:sw2" | "sw3"
    pairs_cut: int            # ordered host pairs cut before the repair
    hosts_lost: int
    trees: int                # VLAN trees to repair
    links_added: int
    unrepairable: int         # trees whose hosts the live fabric cannot join again
    max_load: float | None    # per cable after the minimal repair (None: not repairable)
    bound: float              # a lower bound of the degraded fabric's max load
    # After the repair, for a plan that was deadlock-free (None otherwise: nothing to keep):
    # whether it still is, and if not one cycle of channels the repaired routes close.
    deadlock_free: bool | None = None
    deadlock_cycle: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "failure": self.name, "pairs_cut": self.pairs_cut,
                "hosts_lost": self.hosts_lost, "trees": self.trees, "links_added": self.links_added,
                "unrepairable": self.unrepairable,
                "max_link_load": round(self.max_load, 4) if self.max_load is not None else None,
                "link_load_lower_bound": round(self.bound, 4)}


Link = tuple[str, str]


def _row_sums(cables: Mapping[Link, int], hosts: Mapping[str, int], switches: list[str]) -> dict[str, int]:
    """R_s = sum over switches t of hosts(t) x hop distance(s, t), in the intact fabric."""
    adj: dict[str, list[str]] = {s: [] for s in switches}
    for a, b in cables:
        adj[a].append(b)
        adj[b].append(a)
    out = {}
    for s in switches:
        dist = {s: 0}
        q = deque([s])
        total = 0
        while q:
            u = q.popleft()
            total += hosts.get(u, 0) * dist[u]
            for v in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        out[s] = total
    return out


def what_if(trees: list[Tree], cables: Mapping[Link, int], hosts: Mapping[str, int], switches: list[str],
            deadlock_free: bool = False, base: LoadBook | None = None,
            index: SwitchIndex | None = None, kernel: bool | None = None) -> list[FailureRow]:
    """One row per neighbour pair, then one per switch, in `switches` order. `base` (the
    intact loads) and `index` (SwitchIndex.of these trees and cables): a caller's, when it
    keeps them for more failures (bundle/guarantees.py Fabric, for the double failures).
    kernel: the pair failures and the dead switches' common trees compiled (pairs_kernel,
    switches_kernel) or not; None: compiled where numba is installed and the plan has
    KERNEL_FROM tree links or more (the figures are the same)."""
    # The failures make many short-lived objects but no reference cycles, so the cyclic
    # collector only walks the plan's long-lived trees again and again (about a sixth of
    # the dead switches' time on the 32x32 torus): it pauses meanwhile.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _what_if(trees, cables, hosts, switches, deadlock_free, base, index, kernel)
    finally:
        if paused:
            gc.enable()


def _what_if(trees: list[Tree], cables: Mapping[Link, int], hosts: Mapping[str, int], switches: list[str],
             deadlock_free: bool, base: LoadBook | None, index: SwitchIndex | None,
             kernel: bool | None) -> list[FailureRow]:
    cables = {link(*l): n for l, n in cables.items()}
    by_link: dict[Link, list[int]] = {}
    by_switch: dict[str, list[int]] = {}
    for t in trees:
        for l in t.links:
            by_link.setdefault(l, []).append(t.vid)
        for s in {s for l in t.links for s in l} | set(t.sources):
            by_switch.setdefault(s, []).append(t.vid)
    senders = {t.vid: t.senders(hosts) for t in trees}
    intact = Degraded(cables, frozenset(), hosts)
    if base is None:
        base = LoadBook.of({t.vid: t.links for t in trees}, senders, intact)
    rows = _row_sums(cables, hosts, switches)
    distance_sum = sum(hosts.get(s, 0) * rows[s] for s in switches)
    total_cables = sum(cables.values())
    position = {s: i for i, s in enumerate(switches)}
    cuts, switch_cut = cuts_before_repair(trees, hosts)
    out = []
    # The pair failures' fast path (routing/whatif/pairs.py): the same choices as `repair`.
    if index is None:
        index = SwitchIndex.of(trees, {t.vid: RootedTree(t, hosts) for t in trees if t.links}, cables, base,
                               hosts, switches)
    rooted, arcs, base_total, base_ncab, adj = index.rooted, index.arcs, index.base_total, index.ncab, index.adj
    wanted = intact.host_switches()
    crossing = Crossing(adj, wanted)
    if kernel is None:
        kernel = use_kernel(trees)
    compiled = None
    index.kernel = None
    index.exchange = None
    if kernel and not deadlock_free:
        from vlanroute.routing.whatif.switches_kernel import Exchange, OneKid     # imports numba: only here
        compiled = index.compiled()
        if compiled is not None and index.usable:     # the dead switches' common trees too (_one_kid)
            index.kernel = OneKid(compiled, adj, index.rank, arcs)
            index.exchange = Exchange(compiled)      # and their exchanges (Cuts.improve)
    for pair in sorted(cables, key=lambda l: (position[l[0]], position[l[1]])):
        a, b = sorted(pair, key=position.__getitem__)
        broken = by_link.get(pair, [])
        cut = cuts.get(pair, 0)
        peak = None
        max_load: float | None
        if not deadlock_free:
            ncab = list(base_ncab)
            ncab[arcs[pair]] = ncab[arcs[pair[::-1]]] = 0
            if compiled is not None:
                peak = compiled.pair_failure(broken, pair, base_total, ncab, arcs)
            else:
                peak = pair_failure(rooted, broken, pair, adj, wanted, Book(arcs, list(base_total), ncab), crossing)
        free: tuple[bool | None, tuple[tuple[str, str], ...]] = (None, ())
        if peak is not None:
            added, unrepairable, max_load = len(broken), 0, peak
        else:
            fabric = Degraded({**cables, pair: 0}, frozenset(), hosts)    # a copy per failure: only here
            result = repair(trees, fabric, keep_deadlock_free=deadlock_free, base=base, broken=broken,
                            check_deadlock=False)
            added, unrepairable = result.links_added, len(result.unrepairable)
            max_load = None if result.unrepairable else result.max_load
            if deadlock_free and not result.unrepairable:
                free = _deadlock_after(trees, result, fabric)
        live = total_cables - cables[pair]
        out.append(FailureRow("pair", f"{a}:{b}", cut, 0, len(broken), added, unrepairable, max_load,
                              distance_sum / (2 * live) if live else 0.0, *free))
    for w in switches:
        broken = by_switch.get(w, [])
        cut = switch_cut.get(w, 0)
        fast = None if deadlock_free else index.switch_failure(w, cables)
        free = (None, ())
        if fast is not None:
            max_load, added, unrepairable = fast[0], fast[1], 0
        else:
            alive_hosts = {s: n for s, n in hosts.items() if s != w}
            fabric = Degraded(cables, frozenset({w}), alive_hosts)
            result = repair(trees, fabric, keep_deadlock_free=deadlock_free, broken=broken, check_deadlock=False)
            max_load = None if result.unrepairable else result.max_load
            added, unrepairable = result.links_added, len(result.unrepairable)
            if deadlock_free and not result.unrepairable:
                free = _deadlock_after(trees, result, fabric)
        live = total_cables - sum(n for l, n in cables.items() if w in l)
        d_w = distance_sum - 2 * hosts.get(w, 0) * rows[w]
        out.append(FailureRow("switch", w, cut, hosts.get(w, 0), len(broken), added, unrepairable, max_load,
                              d_w / (2 * live) if live else 0.0, *free))
    return out


def use_kernel(trees: list[Tree]) -> bool:
    """The failures of this plan run compiled (pairs_kernel, switches_kernel): it has KERNEL_FROM tree
    links or more, numba is installed (the extra `fast`) and imports, and VLANROUTE_NO_JIT is not set."""
    return sum(len(t.links) for t in trees) >= KERNEL_FROM and compiled_allowed()


def _deadlock_after(trees: list[Tree], result: RepairResult, fabric: Degraded
                    ) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """Whether a repair of a deadlock-free plan kept it so (`repair` computes it under its
    guard), and if not one cycle of channels the repaired routes close."""
    if result.deadlock_free:
        return True, ()
    senders = {t.vid: t.senders(fabric.hosts, fabric.dead_switches) for t in trees}
    return False, tuple(channel_cycle(result.trees, senders, fabric.hosts, result.dependencies))


def cuts_before_repair(trees: list[Tree], hosts: Mapping[str, int]) -> tuple[dict[Link, int], dict[str, int]]:
    """Ordered host pairs each neighbour pair's failure and each switch's death cut before
    any repair, in one pass per tree (rooted once, with subtree sums of senders S' and
    hosts H' below each switch):
    - a tree link with S' and H' below it cuts S'(H - H') + (S - S')H';
    - without switch w its tree falls into the subtrees of w's children and the part above
      w; a part with senders s and hosts h loses its senders' traffic to the live hosts
      outside it, s x (H - hosts(w) - h). Hosts and senders count on the tree's switches
      only, like a search in the tree."""
    pairs: dict[Link, int] = {}
    switches: dict[str, int] = {}
    h_all = sum(hosts.values())
    for t in trees:
        if not t.links:
            continue
        senders = t.senders(hosts)
        s_all = sum(senders.values())
        order, parent, adj = rooted_tree(t.links)
        s_below, h_below = subtree_sums(order, parent, senders, hosts)
        for v in reversed(order[1:]):
            p = parent[v]
            assert p is not None
            key = link(p, v)
            pairs[key] = pairs.get(key, 0) + s_below[v] * (h_all - h_below[v]) + (s_all - s_below[v]) * h_below[v]
        root = order[0]
        s_tree, h_tree = s_below[root], h_below[root]
        for w in order:
            h_alive = h_all - hosts.get(w, 0)
            cut = 0
            for c in adj[w]:
                if parent.get(c) == w:
                    s_part, h_part = s_below[c], h_below[c]
                else:
                    s_part, h_part = s_tree - s_below[w], h_tree - h_below[w]
                cut += s_part * (h_alive - h_part)
            switches[w] = switches.get(w, 0) + cut
    return pairs, switches


def pair_cuts(trees: list[Tree], hosts: Mapping[str, int]) -> dict[Link, int]:
    """Ordered host pairs each neighbour pair's failure cuts before any repair (cuts_before_repair)."""
    return cuts_before_repair(trees, hosts)[0]


def switch_cuts(trees: list[Tree], hosts: Mapping[str, int]) -> dict[str, int]:
    """Ordered host pairs each switch's death cuts before any repair (cuts_before_repair)."""
    return cuts_before_repair(trees, hosts)[1]
