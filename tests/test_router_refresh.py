"""The acyclic engine's greedy router (routing/acyclic/router.py Router.route) refreshes,
after each destination loads its path, only the costs of the switches in that
destination's branch (below the source's neighbour towards it): elsewhere the same sum
of the same loads gives every cost as it is. The plain path, kept here as it was (every
settled switch's cost recomputed), must grow the same trees, take the same turns, leave
the same loads and escape the same sources, on random fabrics, at both sharpnesses,
routing every source and then routing each again (rip-up and re-route)."""

from __future__ import annotations

import heapq

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import hosted
from topologies import connected_graphs

from vlanroute.routing.acyclic.engine import SHARPNESS
from vlanroute.routing.acyclic.router import Router
from vlanroute.routing.acyclic.negotiate import charge_path
from vlanroute.routing.trees import ParentMap, reroot


class _PlainRouter(Router):
    def route(self, src: str, fallback: bool = True) -> bool:
        """Grow src's tree greedily: the next switch is the one whose path costs least at
        the current loads (its own earlier destinations included), through a turn the
        dependency graph accepts. Stuck: the escape tree (`fallback`) or False."""
        hs = self.hosts.get(src, 0)
        cap, load, arc_id = self.cap, self.load, self.arc_id
        scale, sharp = self.bound, self.sharpness

        def weight(a: int) -> float:
            return 1.0 + (load[a] / cap[a] / scale) ** sharp

        parent: ParentMap = {}
        into: dict[str, int] = {}
        cost = {src: 0.0}
        used: list[tuple[int, int]] = []
        heap: list[tuple[float, int, str, str]] = []
        count = 0
        for w in self.adj[src]:
            heapq.heappush(heap, (weight(arc_id[(src, w)]), count, w, src))
            count += 1
        n = len(self.topo.switches)
        added: list[tuple[int, float]] = []
        while heap and len(cost) < n:
            key, _, w, v = heapq.heappop(heap)
            if w in cost:
                continue
            a = arc_id[(v, w)]
            now = cost[v] + weight(a)
            if now > key * (1 + 1e-9):          # loads rose since: re-queue at the true cost
                heapq.heappush(heap, (now, count, w, v))
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
            demand = float(hs * self.hosts.get(w, 0))
            if demand:
                # w's traffic now loads its path: later destinations see it.
                charge_path(load, added, parent, into, src, w, demand)
                # the costs of settled switches on heavier links are stale (recomputed,
                # parents before children: `cost` is in settling order; the link cost
                # inlined, a call per switch was most of it); the re-queue above corrects
                # every candidate as it is popped
                for x in cost:
                    if x != src:
                        b = into[x]
                        cost[x] = cost[parent[x]] + (1.0 + (load[b] / cap[b] / scale) ** sharp)
            for x in self.adj[w]:
                if x not in cost:
                    heapq.heappush(heap, (cost[w] + weight(arc_id[(w, x)]), count, x, w))
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



def run(cls: type[Router], g: nx.Graph, per: int, root_pick: int, sharpness: float) -> tuple[object, ...]:
    topo, hosts = hosted(g, per)
    root = topo.switches[root_pick % len(topo.switches)]
    r = cls(topo, hosts, root, sharpness)
    sources = sorted(topo.switches, key=lambda s: (-hosts.get(s, 0), topo.index(s)))
    for s in sources:
        r.route(s)
    first = ({s: dict(t) for s, t in r.trees.items()}, list(r.load), sorted(r.escaped))
    for s in sources:
        r.reroute(s)
    return first, {s: dict(t) for s, t in r.trees.items()}, list(r.load), sorted(r.escaped), \
        {s: list(u) for s, u in r.used.items()}, list(r.deps.order)


@settings(max_examples=60, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3), st.integers(min_value=0, max_value=11),
       st.sampled_from(SHARPNESS))
def test_the_branch_refresh_routes_exactly_as_the_plain_path(g: nx.Graph, per: int, root_pick: int,
                                                            sharpness: float) -> None:
    assert run(Router, g, per, root_pick, sharpness) == run(_PlainRouter, g, per, root_pick, sharpness)
