"""Negotiation's Dijkstra (routing/acyclic/negotiate.py OrderedRouter._route) takes two
shortcuts: each channel's onward channels (ranked above it) are listed once per order
instead of tested per queued channel, and a popped channel costs its key, no longer
recomputed (loads rise only on the tree's channels, into switches already reached, so a
channel into a switch not yet reached still costs what it cost when queued); since no price
reads those loads, the tree is charged once when found instead of per destination, and a
channel is queued only when it lowers its switch's best queued cost (any other entry is
popped after that one and skipped). The plain path, kept here as it was (recomputing,
re-queueing where the cost rose, every destination charged as reached, every channel
queued; with the history factor 1 + h per round, the same value), must give the same
trees and loads:
negotiation on random fabrics, in a channel order or none, shortest routes only or not,
per switch or per group of hosts, with targets low enough that links run hot."""

from __future__ import annotations

import heapq
import os
from unittest import mock

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import hosted, start_and_order
from topologies import connected_graphs

from vlanroute.routing.acyclic import negotiate as negotiate_module
from vlanroute.routing.acyclic.negotiate import SHARPNESS, OrderedRouter, negotiate
from vlanroute.routing.bounds import distance_sum
from vlanroute.routing.shortest import shortest_routes
from vlanroute.routing.spread import senders_of
from vlanroute.routing.trees import ParentMap


class _PlainRouter(OrderedRouter):
    def _route(self, sender: str, factor: list[float],
               target: float) -> tuple[ParentMap, list[tuple[int, float]]] | None:
        """Dijkstra over the switches: a switch is reached once, and from it only on
        channels ranked above the one it was reached on. Each destination's traffic loads
        its path as soon as it is reached, so the later ones see it; the tree found stays
        loaded (with its (channel, load) list), a stuck search (None) leaves no load."""
        rank, load, out, host_of, cap = self.rank, self.load, self.out, self.host_of, self.cap
        root = self.root(sender)
        src, hs = self.index[root], self.weight(sender)
        ordered = self.ordered
        dist = self.dist[root] if self.dist is not None else None
        n = len(self.names)
        parent = [-1] * n
        into = [-1] * n
        cost = [0.0] * n
        settled = [False] * n
        settled[src] = True
        order = [src]
        heap: list[tuple[float, int, int, int, int]] = []
        push, pop, sharp, slack = heapq.heappush, heapq.heappop, SHARPNESS, 1 + 1e-9
        count = 0
        for w, a in out[src]:
            if dist is not None and dist[w] != 1:
                continue
            push(heap, (factor[a] * (1.0 + (load[a] / cap[a] / target) ** sharp), count, w, src, a))
            count += 1
        reached = 1
        while heap and reached < n:
            key, _, w, v, a = pop(heap)
            if settled[w]:
                continue
            # the link cost inlined (a call per queued channel was a third of the time)
            now = cost[v] + factor[a] * (1.0 + (load[a] / cap[a] / target) ** sharp)
            if now > key * slack:              # loads rose since it was queued
                push(heap, (now, count, w, v, a))
                count += 1
                continue
            settled[w] = True
            cost[w], parent[w], into[w] = now, v, a
            order.append(w)
            reached += 1
            demand = float(hs * host_of[w])
            if demand:
                x = w
                while x != src:
                    load[into[x]] += demand
                    x = parent[x]
            for x, b in out[w]:
                if not settled[x]:
                    if dist is not None and dist[x] != dist[w] + 1:
                        continue
                    if not ordered or rank[b] > rank[a]:
                        push(heap, (now + factor[b] * (1.0 + (load[b] / cap[b] / target) ** sharp),
                                    count, x, w, b))
                        count += 1
        # what each channel of the tree carries: the hosts below it (leaves up)
        below = [0] * n
        for v in order:
            below[v] = host_of[v]
        for v in reversed(order[1:]):
            below[parent[v]] += below[v]
        carried = [(into[v], float(hs * below[v])) for v in order[1:] if below[v]] if hs else []
        if len(order) < n:
            self._charge(carried, -1.0)
            return None
        names = self.names
        return {names[v]: names[parent[v]] for v in order[1:]}, carried


@settings(max_examples=60, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3), st.sampled_from(["order", "none", "minimal"]),
       st.booleans(), st.integers(min_value=1, max_value=6), st.sampled_from([0.2, 0.5, 1.3]))
def test_the_shortcuts_negotiate_exactly_as_the_plain_path(g: nx.Graph, per: int, kind: str, groups: bool,
                                                          rounds: int, target: float) -> None:
    topo, hosts = hosted(g, per)
    if kind == "order":
        start, rank = start_and_order(topo)
    else:
        start, rank = shortest_routes(topo).parents, None
    scale = distance_sum(topo, hosts) / sum(topo.arc_cables().values())
    kwargs: dict[str, object] = {"rounds": rounds, "target_factor": target, "minimal": kind == "minimal"}
    if groups:
        roots, weights = senders_of(hosts, list(topo.switches), 2)
        start = {k: dict(start[s]) for k, s in roots.items()}
        kwargs.update(roots=roots, weights=weights)
    # the interpreted rounds, which the shortcuts are in (the compiled ones: test_negotiate_kernel.py)
    with mock.patch.dict(os.environ, {"VLANROUTE_NO_JIT": "1"}):
        got = negotiate(topo, hosts, rank, start, scale, **kwargs)  # type: ignore[arg-type]
        with mock.patch.object(negotiate_module, "OrderedRouter", _PlainRouter):
            plain = negotiate(topo, hosts, rank, start, scale, **kwargs)  # type: ignore[arg-type]
    assert got == plain
