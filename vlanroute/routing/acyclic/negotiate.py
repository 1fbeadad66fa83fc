"""Negotiated congestion on a fixed channel order: the acyclic engine's last improvement.

A deadlock-free routing's channel dependency graph is acyclic (Dally and Seitz 1987), so its
channels have a topological order, and every route whose channels increase in that order
keeps the graph acyclic, whatever the other routes do. With the order fixed (taken from a
routing the acyclic engine grew, routing/acyclic/engine.py), sources can be routed again and again
independently, which the growing search cannot afford: there each new turn depends on
every other source's turns, so once all sources are routed hardly any turn is left free.

The rounds follow PathFinder (McMurchie and Ebeling, "PathFinder: a negotiation-based
performance-driven router for FPGAs", FPGA 1995): every source's tree is routed again
(a Dijkstra over the switches whose arcs must increase in the order, one parent per switch)
against the others' loads, with a link cost that rises steeply above a target load, and a
history cost that grows on every link left above the target after a round, so the sources
that can avoid a hot link learn to and the ones that cannot keep it. The target is a
given multiple of the distance bound (`scale`). Measured on the 6x6 torus with 3 cables
gone: 1.698x the optimum without negotiation, 1.392x with it (bench/quality.py).

The splittable optimum of one fixed order (an LP, bench/order_lp.py) shows how much of the
gap is the order's and how much the trees': 1.324x for an order of that negotiated plan.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Mapping

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.jit import compiled_allowed, long_run
from vlanroute.routing.trees import ParentMap, bfs_order, hop_distances, source_arc_loads

ROUNDS = 40            # rounds of re-routing every source (20 and 40 measured: 40 is better on some)
TARGET = 1.3           # links above this multiple of `scale` (the distance bound) are "hot"
HISTORY = 0.2          # added to a link's history cost per round it ends hot
SHARPNESS = 8.0        # link cost (1 + history) (1 + (load / target) ** SHARPNESS)
_INF = float("inf")
# Rounds x senders x channels from which the rounds run compiled (routing/acyclic/
# negotiate_kernel.py, the same trees) where numba works: below it the interpreted rounds take
# less than importing numba and loading the kernel, about 0.7 s on the 2-core machine, once
# per process; once loaded, or once the process has run long (routing/jit.py `long_run`), from
# KERNEL_WARM_WORK (a 64-switch fabric's 20 rounds: 85 ms a call interpreted, 16 ms compiled).
KERNEL_WORK = 500_000
KERNEL_WARM_WORK = 10_000
_kernel_loaded = False


class OrderedRouter:
    """Trees whose routes increase in a fixed channel rank, and their loads.

    Switches and channels are numbered inside (lists, not dictionaries: the Dijkstra of
    `_route` is most of the acyclic engine's and routing below the switch's time). Loads
    are sums of host products, whole numbers that floats hold exactly, so a tree's load is
    taken off and put back in any order with the same result."""

    def __init__(self, topo: Topology, hosts: dict[str, int], rank: dict[Arc, int] | None,
                 roots: Mapping[str, str] | None = None, weights: Mapping[str, int] | None = None,
                 minimal: bool = False) -> None:
        """Trees keyed by source switch, or by sender (a group of a switch's hosts: routing
        below the switch) with `roots` (its switch) and `weights` (its hosts). No rank: any
        turn (routing/spread.py, for plans that need not be deadlock-free); `minimal`: every
        route a shortest path."""
        cables = topo.arc_cables()
        self.topo, self.hosts = topo, hosts
        self.roots, self.weights = roots, weights
        self.arcs = sorted(cables)
        self.arc_id = {a: i for i, a in enumerate(self.arcs)}
        # no order: every channel ranked 0 and every turn allowed (`ordered` False)
        self.ordered = rank is not None
        self.rank = [rank[a] for a in self.arcs] if rank is not None else [0] * len(self.arcs)
        self.cap = [float(cables[a]) for a in self.arcs]
        self.names = list(topo.switches)
        self.index = {s: i for i, s in enumerate(self.names)}
        index = self.index
        # per switch: (neighbour, channel id) in channel order
        self.out: list[list[tuple[int, int]]] = [[] for _ in self.names]
        for i, (a, b) in enumerate(self.arcs):
            self.out[index[a]].append((index[b], i))
        self.tail = [index[a] for a, _ in self.arcs]      # per channel: the switch it leaves
        self.head = [index[b] for _, b in self.arcs]      # ...and the one it enters
        self.host_of = [hosts.get(s, 0) for s in self.names]
        # per channel a = (u, v): the channels (w, channel id) out of v a route may take next,
        # those ranked above a (every one without an order), in `out`'s order
        self.onward: list[list[tuple[int, int]]] = [
            [(x, b) for x, b in self.out[index[v]] if not self.ordered or self.rank[b] > self.rank[i]]
            for i, (_, v) in enumerate(self.arcs)]
        self.load = [0.0] * len(self.arcs)
        self.trees: dict[str, ParentMap] = {}
        self._carried: dict[str, list[tuple[int, float]]] = {}     # per key: (channel, load) of its tree
        self.dist: dict[str, list[int]] | None = None      # hops from each root, with `minimal`
        # with `minimal`, per root: the channels (w, channel id) out of each switch one hop
        # further from the root, in `out`'s order (the only ones a shortest route takes)
        self.away: dict[str, list[list[tuple[int, int]]]] = {}
        if minimal:
            nbrs = [[j for j, _ in self.out[i]] for i in range(len(self.names))]
            self.dist = {}
            for r in set(roots.values()) if roots is not None else topo.switches:
                d = self.dist[r] = hop_distances(nbrs, index[r])
                self.away[r] = [[(x, b) for x, b in self.out[i] if d[x] == d[i] + 1] for i in range(len(self.names))]

    def set_tree(self, src: str, tree: ParentMap) -> None:
        old = self._carried.get(src)
        if old is not None:
            self._charge(old, -1.0)
        self.trees[src] = tree
        carried = self._tree_carried(src, tree)
        self._carried[src] = carried
        self._charge(carried, 1.0)

    def peak(self) -> float:
        return max((x / c for x, c in zip(self.load, self.cap)), default=0.0)

    def root(self, key: str) -> str:
        return self.roots[key] if self.roots is not None else key

    def weight(self, key: str) -> int:
        return self.weights[key] if self.weights is not None else self.hosts.get(key, 0)

    def increasing(self, key: str, tree: ParentMap) -> bool:
        """Whether every route of the tree turns only to a higher-ranked channel."""
        src = self.root(key)
        if not self.ordered:
            return True
        for v, p in tree.items():
            if p != src and self.rank[self.arc_id[(tree[p], p)]] >= self.rank[self.arc_id[(p, v)]]:
                return False
        return True

    def reroute(self, src: str, factor: list[float], target: float) -> bool:
        """src's tree again against the others' loads (link cost factor (1 + (load / target)
        ** SHARPNESS) per cable, `factor` 1 + the link's history cost); kept as it was if
        the search is stuck."""
        old = self._carried[src]
        self._charge(old, -1.0)
        got = self._route(src, factor, target)
        if got is None:
            self._charge(old, 1.0)
            return False
        self.trees[src], self._carried[src] = got
        return True

    def _route(self, sender: str, factor: list[float],
               target: float) -> tuple[ParentMap, list[tuple[int, float]]] | None:
        """Dijkstra over the switches: a switch is reached once, and from it only on
        channels ranked above the one it was reached on. The tree found is loaded (with its
        (channel, load) list); a stuck search (None) leaves no load.

        Two things this search once did are gone, each because it could not change a
        tree (the trees and loads are the same, bit for bit):
        - Each destination's traffic loaded its path as soon as it was reached, "so that the
          later ones see it". They never did: those loads land on channels into switches
          already reached, and a channel is only priced when queued towards a switch not yet
          reached, so no price ever read them. The tree is charged once at the end instead
          (whole numbers, exact in floats in any order).
        - A channel was queued even when an earlier entry of the heap already reached its
          switch at a cost no higher; such an entry is always popped after that one (the
          heap orders by cost, then by when queued) and then skipped. Only entries that
          lower a switch's best queued cost are pushed now."""
        rank, load, out, host_of, cap = self.rank, self.load, self.out, self.host_of, self.cap
        root = self.root(sender)
        src, hs = self.index[root], self.weight(sender)
        ordered = self.ordered
        dist = self.dist[root] if self.dist is not None else None
        onward = self.onward
        away = self.away.get(root, [])
        n = len(self.names)
        parent = [-1] * n
        into = [-1] * n
        settled = [False] * n
        settled[src] = True
        queued = [_INF] * n          # per switch: the least cost queued for it so far
        order = [src]
        # (cost, when queued, channel): the channel's ends are `tail` and `head`
        heap: list[tuple[float, int, int]] = []
        head, tail = self.head, self.tail
        push, pop, sharp = heapq.heappush, heapq.heappop, SHARPNESS
        count = 0
        for w, a in out[src]:
            if dist is not None and dist[w] != 1:
                continue
            c = factor[a] * (1.0 + (load[a] / cap[a] / target) ** sharp)
            if c < queued[w]:
                queued[w] = c
                push(heap, (c, count, a))
                count += 1
        reached = 1
        while heap and reached < n:
            # A queued channel's key is its cost: no load changes during the search (the
            # tree is charged at the end), so a channel costs what it cost when queued.
            now, _, a = pop(heap)
            w = head[a]
            if settled[w]:
                continue
            settled[w] = True
            parent[w], into[w] = tail[a], a
            order.append(w)
            reached += 1
            if dist is None:
                # the channels a route may take after a (ranked above it), listed once per order
                for x, b in onward[a]:
                    if not settled[x]:
                        c = now + factor[b] * (1.0 + (load[b] / cap[b] / target) ** sharp)
                        if c < queued[x]:
                            queued[x] = c
                            push(heap, (c, count, b))
                            count += 1
                continue
            for x, b in away[w]:
                if not settled[x]:
                    if not ordered or rank[b] > rank[a]:
                        c = now + factor[b] * (1.0 + (load[b] / cap[b] / target) ** sharp)
                        if c < queued[x]:
                            queued[x] = c
                            push(heap, (c, count, b))
                            count += 1
        if len(order) < n:
            return None
        # what each channel of the tree carries: the hosts below it (leaves up)
        below = [0] * n
        for v in order:
            below[v] = host_of[v]
        for v in reversed(order[1:]):
            below[parent[v]] += below[v]
        carried = [(into[v], float(hs * below[v])) for v in order[1:] if below[v]] if hs else []
        self._charge(carried, 1.0)
        names = self.names
        return {names[v]: names[parent[v]] for v in order[1:]}, carried

    def _tree_carried(self, key: str, tree: ParentMap) -> list[tuple[int, float]]:
        """(channel id, load) of every channel of the key's tree that carries its traffic."""
        hs = self.weight(key)
        if not hs:
            return []
        arc_id = self.arc_id
        return [(arc_id[a], float(x)) for a, x in source_arc_loads(tree, self.root(key), self.hosts, weight=hs)]

    def _charge(self, carried: list[tuple[int, float]], sign: float) -> None:
        load = self.load
        # (x added or taken off: the same sums as adding sign * x, without the product)
        if sign > 0:
            for a, x in carried:
                load[a] += x
        else:
            for a, x in carried:
                load[a] -= x


def negotiate(topo: Topology, hosts: dict[str, int], rank: dict[Arc, int] | None, trees: dict[str, ParentMap],
              scale: float, rounds: int = ROUNDS, seed: int = 0, target_factor: float = TARGET,
              roots: Mapping[str, str] | None = None, weights: Mapping[str, int] | None = None,
              minimal: bool = False) -> tuple[float, dict[str, ParentMap]]:
    """The best (max load per cable, trees) over `rounds` rounds of negotiated re-routing
    from `trees`, whose routes must increase in `rank` (every channel ranked; None: any
    turn). `trees` are keyed by source switch, or by sender with `roots` and `weights`;
    `minimal`: shortest routes only (OrderedRouter)."""
    r = OrderedRouter(topo, hosts, rank, roots, weights, minimal)
    for s, t in trees.items():
        assert r.increasing(s, t), "the start's routes increase in the order"
        r.set_tree(s, t)
    best = (r.peak(), dict(r.trees))
    history = [0.0] * len(r.arcs)
    if roots is None:
        sources = sorted(topo.switches, key=lambda s: (-hosts.get(s, 0), topo.index(s)))
    else:
        sources = sorted(trees, key=lambda k: (-r.weight(k), topo.index(r.root(k)), k))
    rnd = random.Random(seed)
    target = max(target_factor * scale, 1e-9)
    work = rounds * len(trees) * len(r.arcs)
    if work >= (KERNEL_WARM_WORK if _kernel_loaded or long_run() else KERNEL_WORK) and compiled_allowed():
        schedule = []
        for _ in range(rounds):
            rnd.shuffle(sources)
            schedule.append(list(sources))
        return _compiled_rounds(r, schedule, target, best[0])
    factor = [1.0 + h for h in history]     # the history cost as the link cost's factor, per round
    load, cap = r.load, r.cap
    for _ in range(rounds):
        rnd.shuffle(sources)
        for s in sources:
            r.reroute(s, factor, target)
        peak = r.peak()
        if peak < best[0] - 1e-9:
            best = (peak, dict(r.trees))
        for a, x in enumerate(load):
            if x / cap[a] > target:
                history[a] += HISTORY
        factor = [1.0 + h for h in history]
    return best


def _compiled_rounds(r: OrderedRouter, schedule: list[list[str]], target: float,
                     peak: float) -> tuple[float, dict[str, ParentMap]]:
    """negotiate's rounds by negotiate_kernel.negotiate_rounds, from the router's trees and
    loads: the same (peak, trees), each tree's entries in the same order. `schedule`: the
    senders of each round, in the order they are re-routed."""
    global _kernel_loaded
    from vlanroute.routing.acyclic.negotiate_kernel import negotiate_rounds
    n, keys = len(r.names), list(r.trees)
    at = {key: k for k, key in enumerate(keys)}
    index = r.index
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for i, links in enumerate(r.out):
        out_ptr[i + 1] = out_ptr[i] + len(links)
    out_to = np.array([x for links in r.out for x, _ in links], dtype=np.int64)
    out_arc = np.array([b for links in r.out for _, b in links], dtype=np.int64)
    parent = np.full((len(keys), n), -1, dtype=np.int64)
    order = np.zeros((len(keys), n), dtype=np.int64)
    olen = np.zeros(len(keys), dtype=np.int64)
    carried_ch = np.zeros((len(keys), max(n - 1, 1)), dtype=np.int64)
    carried_x = np.zeros((len(keys), max(n - 1, 1)))
    clen = np.zeros(len(keys), dtype=np.int64)
    for k, key in enumerate(keys):
        tree = r.trees[key]
        seq = [index[r.root(key)], *(index[v] for v in tree)]
        order[k, :len(seq)] = seq
        olen[k] = len(seq)
        for v, p in tree.items():
            parent[k, index[v]] = index[p]
        carried = r._carried[key]
        clen[k] = len(carried)
        for i, (a, x) in enumerate(carried):
            carried_ch[k, i], carried_x[k, i] = a, x
    roots = sorted({r.root(key) for key in keys}, key=index.__getitem__)
    if r.dist is not None:
        dist = np.array([r.dist[s] for s in roots], dtype=np.int64)
        row = {s: i for i, s in enumerate(roots)}
        key_row = np.array([row[r.root(key)] for key in keys], dtype=np.int64)
    else:
        dist = np.zeros((0, n), dtype=np.int64)
        key_row = np.full(len(keys), -1, dtype=np.int64)
    load = np.array(r.load)
    best_peak, best_parent, best_order, best_olen = negotiate_rounds(
        out_ptr, out_to, out_arc, np.array(r.head, dtype=np.int64), np.array(r.tail, dtype=np.int64),
        np.array(r.rank, dtype=np.int64), r.ordered, np.array(r.cap), np.array(r.host_of, dtype=np.int64),
        np.array([index[r.root(key)] for key in keys], dtype=np.int64),
        np.array([r.weight(key) for key in keys], dtype=np.int64), dist, key_row, parent, order, olen,
        carried_ch, carried_x, clen, load, np.array([[at[s] for s in row_] for row_ in schedule], dtype=np.int64)
        .reshape(len(schedule), len(keys)), target, SHARPNESS, HISTORY, 1e-9, peak)
    _kernel_loaded = True
    names = r.names
    trees: dict[str, ParentMap] = {}
    for k, key in enumerate(keys):
        seq_ = best_order[k, 1:best_olen[k]].tolist()
        par = best_parent[k].tolist()
        trees[key] = {names[v]: names[par[v]] for v in seq_}
    return float(best_peak), trees


def add_tree_load(load: list[float], arc_id: dict[tuple[str, str], int], hosts: dict[str, int], src: str,
                  tree: ParentMap, sign: float, weight: int | None = None) -> None:
    """Add (sign 1) or remove (-1) the all-to-all load of `src`'s hosts (or `weight` of them)
    along its tree: each arc carries them to the hosts below it (shared by acyclic.py's
    router and negotiation)."""
    hs = hosts.get(src, 0) if weight is None else weight
    if not hs:
        return
    below = {v: hosts.get(v, 0) for v in tree}
    order = bfs_order(tree, src)
    for v in reversed(order[1:]):
        p = tree[v]
        if p != src:
            below[p] += below[v]
    for v in order[1:]:
        load[arc_id[(tree[v], v)]] += sign * hs * below[v]


def charge_path(load: list[float], added: list[tuple[int, float]], parent: ParentMap, into: dict[str, int],
                src: str, w: str, demand: float) -> None:
    """Load `demand` on every arc of the tree path from `src` to `w` (into[x]: the arc id
    entering x), noting each in `added` so the caller can take it off again."""
    x = w
    while x != src:
        b = into[x]
        load[b] += demand
        added.append((b, demand))
        x = parent[x]
