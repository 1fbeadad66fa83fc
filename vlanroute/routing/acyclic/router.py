"""The acyclic engine's greedy router: one attempt of its search (routing/acyclic/engine.py),
an escape root and the routes and channel dependencies grown from it.

- Escape paths: the channel dependencies of one spanning tree's up*/down* routes (a
  breadth-first tree from the escape root) are put in first. Every source can always use
  the tree itself, so routing never gets stuck: a source whose search cannot reach every
  switch takes the spanning tree (Nue's escape paths, there per virtual lane).
- All sources' trees grow at once (`route_all`), from one heap (a multi-source Dijkstra):
  the cheapest next switch of any source is settled first, so every source's short routes
  take their turns before any source's long ones. Each source keeps one parent per switch
  (VLAN routing); each link is weighted by its current load over the distance bound,
  raised to the attempt's sharpness; a switch is reached through a link only if the turn
  into it is already a dependency or can be added without a cycle (routing/depgraph.py).
- One source again (`reroute`, the engine's rip-up-and-re-route passes): its routes and
  dependencies removed, then grown against the others' loads; its old tree kept if stuck.
"""

from __future__ import annotations

import heapq

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.negotiate import add_tree_load, charge_path
from vlanroute.routing.bounds import distance_sum
from vlanroute.routing.depgraph import DependencyGraph
from vlanroute.routing.trees import ParentMap, reroot


class Router:
    """One attempt: an escape root and the state of the routes and dependencies."""

    def __init__(self, topo: Topology, host_count: dict[str, int], root: str | None, sharpness: float) -> None:
        self.topo = topo
        self.sharpness = sharpness
        self.hosts = host_count
        cables = topo.arc_cables()
        self.arcs = sorted(cables)
        self.arc_id = {a: i for i, a in enumerate(self.arcs)}
        self.cap = [float(cables[a]) for a in self.arcs]
        self.adj: dict[str, list[str]] = {s: [] for s in topo.switches}
        for a, b in self.arcs:
            self.adj[a].append(b)
        # per switch: (neighbour, id of the arc to it), in `adj`'s order (the searches' pushes)
        self.out: dict[str, list[tuple[str, int]]] = {s: [(x, self.arc_id[(s, x)]) for x in self.adj[s]]
                                                      for s in topo.switches}
        self.load = [0.0] * len(self.arcs)
        self.deps = DependencyGraph(len(self.arcs))
        self.root = root
        # The escape tree: breadth-first from the root; its turns are fixed. No root: the
        # routes start from another deadlock-free routing's (`add_tree`), no escape needed.
        tree_parent = reroot(self.adj, root) if root is not None else {}
        self.tree_adj: dict[str, list[str]] = {s: [] for s in topo.switches}
        for v, p in tree_parent.items():
            self.tree_adj[v].append(p)
            self.tree_adj[p].append(v)
        # Every turn of a tree route (no U-turn) is a tree walk, which cannot close a cycle.
        for v in topo.switches:
            for u in self.tree_adj[v]:
                for w in self.tree_adj[v]:
                    if u != w:
                        ok = self.deps.try_add(self.arc_id[(u, v)], self.arc_id[(v, w)], fixed=True)
                        assert ok
        self.trees: dict[str, ParentMap] = {}
        self.used: dict[str, list[tuple[int, int]]] = {}
        self.escaped: set[str] = set()
        # The distance bound D / (2 C), the scale of a "hot" link.
        self.bound = max(distance_sum(topo, host_count) / sum(self.cap), 1e-9) if self.cap else 1.0

    # -- one source

    def unroute(self, src: str) -> None:
        tree = self.trees.pop(src)
        self._add_load(src, tree, -1.0)
        for c, d in self.used.pop(src):
            self.deps.remove(c, d)
        self.escaped.discard(src)

    def add_tree(self, src: str, tree: ParentMap) -> None:
        """Take `tree` as src's routes (its dependencies must keep the graph acyclic)."""
        used = []
        for v, p in tree.items():
            if p != src:
                dep = (self.arc_id[(tree[p], p)], self.arc_id[(p, v)])
                ok = self.deps.try_add(*dep)
                assert ok, "a deadlock-free start is acyclic"
                used.append(dep)
        self.trees[src] = tree
        self.used[src] = used
        self._add_load(src, tree, 1.0)

    def reroute(self, src: str) -> None:
        """Route src again against the others' loads; keep its old tree if stuck."""
        old = self.trees[src]
        was_escaped = src in self.escaped
        self.unroute(src)
        if not self.route(src, fallback=False):
            self.add_tree(src, old)
            if was_escaped:
                self.escaped.add(src)

    def route(self, src: str, fallback: bool = True) -> bool:
        """Grow src's tree greedily: the next switch is the one whose path costs least at
        the current loads (its own earlier destinations included), through a turn the
        dependency graph accepts. Stuck: the escape tree (`fallback`) or False."""
        hs = self.hosts.get(src, 0)
        cap, load = self.cap, self.load
        scale, sharp = self.bound, self.sharpness
        parent: ParentMap = {}
        into: dict[str, int] = {}
        cost = {src: 0.0}
        used: list[tuple[int, int]] = []
        # (cost, when queued, switch, from, arc): the arc's cost inlined (as in the re-costing below)
        heap: list[tuple[float, int, str, str, int]] = []
        out = self.out
        count = 0
        for w, a in out[src]:
            heapq.heappush(heap, (1.0 + (load[a] / cap[a] / scale) ** sharp, count, w, src, a))
            count += 1
        n = len(self.topo.switches)
        added: list[tuple[int, float]] = []
        branch: dict[str, str] = {}             # each settled switch's ancestor next to src
        members: dict[str, list[str]] = {}     # per such ancestor: its branch in settling order
        while heap and len(cost) < n:
            key, _, w, v, a = heapq.heappop(heap)
            if w in cost:
                continue
            now = cost[v] + (1.0 + (load[a] / cap[a] / scale) ** sharp)
            if now > key * (1 + 1e-9):          # loads rose since: re-queue at the true cost
                heapq.heappush(heap, (now, count, w, v, a))
                count += 1
                continue
            if v != src:
                dep = (into[v], a)
                if not self.deps.try_add(*dep):
                    continue
                used.append(dep)
            cost[w] = now
            parent[w] = v
            into[w] = a
            top = w if v == src else branch[v]
            branch[w] = top
            members.setdefault(top, []).append(w)
            demand = float(hs * self.hosts.get(w, 0))
            if demand:
                # w's traffic now loads its path: later destinations see it.
                charge_path(load, added, parent, into, src, w, demand)
                # the costs of settled switches on heavier links are stale (recomputed,
                # parents before children, in settling order; the link cost inlined, a
                # call per switch was most of it); the re-queue above corrects every
                # candidate as it is popped. Only w's branch (the switches below src's
                # neighbour towards w) has such links: elsewhere the same sum of the
                # same loads would give every cost as it is.
                for x in members[top]:
                    b = into[x]
                    cost[x] = cost[parent[x]] + (1.0 + (load[b] / cap[b] / scale) ** sharp)
            for x, b in out[w]:
                if x not in cost:
                    heapq.heappush(heap, (cost[w] + (1.0 + (load[b] / cap[b] / scale) ** sharp), count, x, w, b))
                    count += 1
        if len(cost) == n:
            # the tree's load is on already: every destination charged its path, which adds
            # up to what _add_load would put there (whole numbers, exact in floats)
            self.trees[src] = parent
            self.used[src] = used
            return True
        for b, demand in added:
            load[b] -= demand
        for c, d in used:
            self.deps.remove(c, d)
        if not fallback:
            return False
        parent = reroot(self.tree_adj, src)
        self.escaped.add(src)
        self.trees[src] = parent
        self.used[src] = []
        self._add_load(src, parent, 1.0)
        return True

    def route_all(self, sources: list[str]) -> None:
        """Grow every source's tree at once: one heap over all sources, so the short
        routes of every source take their turns before any source's long ones, and no
        source's early choices close the turns the others need (the greedy `route` of one
        source after another hands the first sources every turn). Stuck: the escape tree."""
        cap, load, arc_id = self.cap, self.load, self.arc_id
        scale, sharp = self.bound, self.sharpness

        def weight(a: int) -> float:
            return 1.0 + (load[a] / cap[a] / scale) ** sharp

        parent: dict[str, ParentMap] = {s: {} for s in sources}
        into: dict[str, dict[str, int]] = {s: {} for s in sources}
        cost: dict[str, dict[str, float]] = {s: {s: 0.0} for s in sources}
        used: dict[str, list[tuple[int, int]]] = {s: [] for s in sources}
        added: dict[str, list[tuple[int, float]]] = {s: [] for s in sources}
        heap: list[tuple[float, int, str, str, str]] = []
        count = 0
        for src in sources:
            for w in self.adj[src]:
                heapq.heappush(heap, (weight(arc_id[(src, w)]), count, src, w, src))
                count += 1
        while heap:
            key, _, src, w, v = heapq.heappop(heap)
            c = cost[src]
            if w in c:
                continue
            a = arc_id[(v, w)]
            now = c[v] + weight(a)
            if now > key * (1 + 1e-9):
                heapq.heappush(heap, (now, count, src, w, v))
                count += 1
                continue
            if v != src:
                dep = (into[src][v], a)
                if not self.deps.try_add(*dep):
                    continue
                used[src].append(dep)
            c[w] = now
            parent[src][w] = v
            into[src][w] = a
            demand = float(self.hosts.get(src, 0) * self.hosts.get(w, 0))
            if demand:
                x = w
                while x != src:
                    b = into[src][x]
                    load[b] += demand
                    added[src].append((b, demand))
                    x = parent[src][x]
            for x in self.adj[w]:
                if x not in c:
                    heapq.heappush(heap, (now + weight(arc_id[(w, x)]), count, src, x, w))
                    count += 1
        n = len(self.topo.switches)
        for src in sources:
            for b, demand in added[src]:
                load[b] -= demand
            if len(cost[src]) < n:
                for c2, d2 in used[src]:
                    self.deps.remove(c2, d2)
                self.trees[src] = reroot(self.tree_adj, src)
                self.used[src] = []
                self.escaped.add(src)
            else:
                self.trees[src] = parent[src]
                self.used[src] = used[src]
            self._add_load(src, self.trees[src], 1.0)

    def _add_load(self, src: str, tree: ParentMap, sign: float) -> None:
        add_tree_load(self.load, self.arc_id, self.hosts, src, tree, sign)

    def peak(self) -> float:
        return max((x / c for x, c in zip(self.load, self.cap)), default=0.0)

    def rank(self) -> dict[Arc, int]:
        """Each channel's place in a topological order of the dependencies: every tree's
        routes increase in it."""
        return {a: self.deps.order[i] for i, a in enumerate(self.arcs)}
