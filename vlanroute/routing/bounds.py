"""Lower bounds on the all-to-all maximum link load, with and without a VLAN budget.

Traffic: one unit per ordered pair of distinct hosts, so source switch s sends h(s) h(t)
to every other switch t (h = hosts per switch, W = all hosts). The load of a cable is the
traffic crossing it in one direction; a neighbour pair with C parallel cables is one LAG
and shares its load equally (per-cable load = pair load / C). Every bound below holds for
*every* routing that meets its premise, so the best plan cannot be below the largest.

Switch tagging puts all frames of one source switch into one VLAN, and a VLAN's links form
one tree: with at most k VLANs there are at most k trees T_1..T_k, the sources are split
into k groups G_1..G_k, and group g's routes are the paths of T_g. (Sources of one VLAN
whose trees differ only in switches without hosts load the same links, so "k VLANs" and
"k trees" are the same here.) docs/routing-bounds.md has the derivations with examples.

1. Distance (any routing): every route is at least a shortest path, so all routes
   together put at least D = sum h(s) h(t) dist(s, t) on the cables; spread perfectly over
   all 2 x cables directed cables: L >= D / (2 x cables).
2. Switch (any routing): switch v sends h(v) (W - h(v)) through its own cables:
   L >= h(v) (W - h(v)) / cables(v). Bridge (any routing): a link whose removal splits
   the switches into A and B carries all h(A) h(B) of A's traffic to B: L >= h(A) h(B) /
   cables of the link (exact on tree topologies).
3. Union (k trees): only the links of the k trees carry traffic, at most k (n - 1) links:
   L >= D / (2 x cables of the k (n - 1) links with most cables).
4. Centroid edge (k trees): every tree T has a centroid c, a switch whose removal leaves
   parts of at most W/2 hosts each (Jordan 1869, with host weights). Its parts hang from at
   most deg(c) links and hold W - h(c) hosts, so some part B holds a >= (W - h(c)) / deg(c)
   hosts (a <= W/2). The link c-B splits the hosts a : W - a; if sigma of the group's w
   source hosts lie in B, one direction carries sigma (W - a), the other (w - sigma) a, and
   the larger of the two is at least w a (W - a) / W (equal at sigma = w a / W). Some group
   has w >= W / k hosts. With unequal cables at c, the least L for which c's parts can
   hold W - h(c) hosts is found by bisection (part i holds at most the largest integer
   x <= W/2 with w x (W - x) / W <= L C_i).
5. Shared tree (k trees): in a tree T with centroid c, every group source t != c sends
   h(t) (W - u) over the link to its parent (towards c), u = hosts in t's subtree <= W/2.
   Taking the group sources nearest to c (their subtrees a, disjoint, sum u_a <= W - h(c))
   and sigma_a = group hosts in subtree a: L C* >= sigma_a (W - u_a), so u_a >= W - L C* /
   sigma_a and sigma_a <= 2 L C* / W (C* = most cables of a pair). Splitting u_a among
   the sources of subtree a in proportion to their hosts, each source t gets at least
   max(h(t), W - L C* / h(t)) (the share grows with sigma_a below 2 L C* / W), hence
       sum over group sources t != c of max(h(t), W - L C* / h(t)) <= W - h(c)
   and L >= h(t) W / (2 C*). Some group has at least ceil(sources / k) sources; the bound
   takes the lightest ones and the heaviest switch as c. Two sources sharing one tree
   already put h W / 2 on one cable: on a hyper-crossbar with 10 hosts per switch that is
   8 times the distance bound, whatever the trees.
6. Arrival (any number of VLANs, even one per host): a host's frames follow its VLAN's
   tree, so everything one source host sends to the h(t) hosts of switch t arrives over
   one link into t: W - h(t) pieces of h(t) units each, which cannot split. With c_a
   cables on link a into t, a per-cable load L lets a hold at most floor(L c_a / h(t))
   pieces, so L is at least the least value with sum_a floor(L c_a / h(t)) >= W - h(t)
   (arrival_bound). On a leaf-spine of 48 leaves of 4 hosts and 16 spines: 188 pieces of
   4 over 16 cables, 12 on some cable, 48 against the LP optimum's 47.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import networkx as nx

from vlanroute.model.topology import Topology


@dataclass(frozen=True)
class LoadBounds:
    """The separate bounds (loads per cable and direction); `best` is their maximum."""
    distance: float
    switch: float
    bridge: float
    union: float
    centroid: float
    shared: float

    @property
    def best(self) -> float:
        return max(self.distance, self.switch, self.bridge, self.union, self.centroid, self.shared)

    @property
    def binding(self) -> str:
        """Which argument gives the bound (the first of equals, in the order above)."""
        parts = {"distance": self.distance, "switch": self.switch, "bridge": self.bridge, "union": self.union,
                 "centroid": self.centroid, "shared": self.shared}
        return max(parts, key=lambda k: parts[k])


def distance_sum(topo: Topology, host_count: dict[str, int]) -> int:
    """D = sum over ordered host pairs of the hop distance between their switches."""
    g = topo.simple()
    adj = {s: list(g.neighbors(s)) for s in topo.switches}
    total = 0
    for s in topo.switches:
        hs = host_count.get(s, 0)
        if not hs:
            continue
        dist = {s: 0}
        q = deque([s])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        total += hs * sum(host_count.get(t, 0) * d for t, d in dist.items())
    return total


def budget_lower_bound(topology: Topology, host_count: dict[str, int], k: int | None,
                       distance_total: int | None = None) -> float:
    """A lower bound on the all-to-all maximum load per cable with at most k VLANs (None:
    no limit). `distance_total` (D, see `distance_sum`) saves its BFS when known."""
    return load_bounds(topology, host_count, k, distance_total).best


def load_bounds(topo: Topology, host_count: dict[str, int], k: int | None,
                distance_total: int | None = None) -> LoadBounds:
    """Every bound of the module docstring for all-to-all traffic on `topo`; the union,
    centroid and shared-tree bounds only when `k` VLANs are fewer than the sources (with
    a tree per source, k trees constrain nothing)."""
    g = topo.simple()
    weights = {s: host_count.get(s, 0) for s in topo.switches}
    total = sum(weights.values())
    sources = sorted(h for h in weights.values() if h)
    cables = {frozenset((a, b)): d["cables"] for a, b, d in g.edges(data=True)}
    all_cables = sum(cables.values())
    if len(sources) < 2 or not all_cables:
        return LoadBounds(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    d_total = distance_sum(topo, host_count) if distance_total is None else distance_total
    distance = d_total / (2 * all_cables)
    switch = max(h * (total - h) / sum(d["cables"] for d in g[v].values())
                 for v, h in weights.items() if h)
    bridge = _bridge_bound(g, weights, total)
    if k is None or k >= len(sources):
        return LoadBounds(distance, switch, bridge, 0.0, 0.0, 0.0)

    n = len(topo.switches)
    union = 0.0
    if k * (n - 1) < len(cables):
        most = sorted(cables.values(), reverse=True)[:k * (n - 1)]
        union = d_total / (2 * sum(most))

    # The heaviest group: at least W/k hosts, at least the heaviest source, and two of the
    # k + 1 heaviest sources share a group (pigeonhole).
    desc = sources[::-1]
    heaviest_group = max(math.ceil(total / k), desc[0], desc[k - 1] + desc[k] if len(desc) > k else 0)
    centroid = _centroid_bound(g, weights, total, heaviest_group)
    biggest_group = math.ceil(len(sources) / k)
    shared = _shared_tree_bound(sources, total, biggest_group, max(cables.values()))
    return LoadBounds(distance, switch, bridge, union, centroid, shared)


def _bridge_bound(g: nx.Graph, weights: dict[str, int], total: int) -> float:
    """Bound 2 for links whose removal disconnects the switches (every spanning tree, so
    every depth-first tree, holds them; the side below one is its subtree)."""
    if not nx.is_connected(g):
        return 0.0
    root = next(iter(g.nodes))
    parent = nx.dfs_predecessors(g, root)
    below = dict(weights)
    for v in reversed(list(nx.dfs_preorder_nodes(g, root))[1:]):
        below[parent[v]] += below[v]
    best = 0.0
    for a, b in nx.bridges(g):
        x = below[b if parent.get(b) == a else a]
        best = max(best, x * (total - x) / g[a][b]["cables"])
    return best


def _centroid_bound(g: nx.Graph, weights: dict[str, int], total: int, w: int) -> float:
    """Bound 4: the least, over switches c that could be a tree's centroid, of the load the
    heaviest group (w source hosts) must put on one of c's links. A part's hosts are a sum
    of switches' host counts, so a multiple of their greatest common divisor."""
    unit = math.gcd(*weights.values())
    half = total // 2 // unit * unit          # the most hosts one part of a centroid may hold
    best = math.inf
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for c in g.nodes:
        key = (weights[c], tuple(sorted(d["cables"] for d in g[c].values())))
        if key in seen:
            continue
        seen.add(key)
        need = total - weights[c]            # hosts in the parts hanging from c
        caps = key[1]
        if not caps or half * len(caps) < need:
            continue                         # c cannot be a centroid: some part exceeds W/2
        if need <= 0:
            return 0.0

        def fits(load: float) -> bool:
            held = 0
            for cab in caps:
                held += _largest_part(total, w, load * cab, unit, half)
                if held >= need:
                    return True
            return False

        if len(set(caps)) == 1:              # equal cables: the largest part is ceil(need / deg)
            a = -(-need // (len(caps) * unit)) * unit
            value = w * a * (total - a) / (total * caps[0])
        else:
            lo, hi = 0.0, w * half * (total - half) / total / min(caps)
            for _ in range(100):
                mid = (lo + hi) / 2
                if fits(mid):
                    hi = mid
                else:
                    lo = mid
            value = lo
        best = min(best, value)
    return 0.0 if best == math.inf else best


def _largest_part(total: int, w: int, pair_load: float, unit: int, half: int) -> int:
    """The most hosts (a multiple of `unit`, at most `half`) a part behind one link may hold
    if that link (all its cables) carries at most `pair_load`: w a (W - a) / W <= pair_load."""
    def ok(a: int) -> bool:
        return w * a * (total - a) <= pair_load * total * (1 + 1e-12)

    if ok(half):
        return half
    # w a (W - a) / W is increasing on [0, W/2]: solve the quadratic, then fix rounding.
    disc = total * total - 4 * pair_load * total / w
    a = int((total - math.sqrt(max(disc, 0.0))) / 2) // unit * unit
    while a > 0 and not ok(a):
        a -= unit
    while a + unit <= half and ok(a + unit):
        a += unit
    return max(a, 0)


def _shared_tree_bound(sources: list[int], total: int, m: int, most_cables: int) -> float:
    """Bound 5 for a group of at least m sources (`sources`: hosts per source, ascending)."""
    if m < 2:
        return 0.0
    light = sources[:m - 1]                    # the group's sources other than the centroid
    room = total - sources[-1]                 # hosts outside the centroid switch

    def fits(load: float) -> bool:
        lc = load * most_cables
        return sum(max(h, total - lc / h) for h in light) <= room * (1 + 1e-12)

    lo = light[0] * total / (2 * most_cables)  # the lightest still sends h W / 2 over one link
    if fits(lo):
        return lo
    hi = light[-1] * total / most_cables       # every share is h(t) here, and those fit
    for _ in range(100):
        mid = (lo + hi) / 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return lo


def arrival_bound(topo: Topology, host_count: dict[str, int]) -> float:
    """Bound 6 of the module docstring: the least per-cable load at which every switch with
    hosts can take in its W - h(t) unsplittable pieces of h(t) units over its links."""
    total = sum(host_count.get(s, 0) for s in topo.switches)
    cables_in: dict[str, list[int]] = {}
    for (_u, v), c in topo.arc_cables().items():
        cables_in.setdefault(v, []).append(c)
    best = 0.0
    for t in topo.switches:
        q, links = host_count.get(t, 0), cables_in.get(t, [])
        if q and total > q and links:
            best = max(best, _least_load(q, total - q, links))
    return best


def _least_load(q: int, pieces: int, links: list[int]) -> float:
    """The least per-cable load L at which links of these cable counts hold `pieces` pieces
    of q units (a link of c cables holds floor(L c / q)). It is q k / c for some link's c
    and integer k: per distinct c, the least such k by bisection (holding grows with L)."""
    def holds(value: float) -> bool:
        return sum(math.floor(value * c / q + 1e-9) for c in links) >= pieces

    least = math.inf
    for c in set(links):
        lo, hi = 0, math.ceil(pieces * c / min(links))          # holds(q hi / c): every link takes all
        while lo < hi:
            mid = (lo + hi) // 2
            if holds(q * mid / c):
                hi = mid
            else:
                lo = mid + 1
        least = min(least, q * lo / c)
    return least
