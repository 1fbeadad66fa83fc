"""Order walks from up*/down* orders of many roots, for the full search's column step.

The order walk (acyclic/refine.py `order_walk`) is a local search: where it ends depends
on where it starts. The engine walks from its best plan's order and from the optimum's
turns; on some random graphs both stall above 1.2x the optimum (random 3-regular 24,
seed 9: the column step's plan 1.240x from them). Walks from other starts end elsewhere,
and the start's own order LP says little about where: on that graph the up*/down* orders
of the best 4 roots start at 1.83x to 1.95x, and their 600-move walks end at order LPs
of 1.25x, 1.21x, 1.18x and 1.24x; the column step on the 1.18x order gives a plan at
1.198x (2026-11-30, docs/routing-bounds.md "Walks from many starts").

The starts are the orders OpenSM's up*/down* engine routes in (Schroeder et al.,
"Autonet", IEEE JSAC 9(8), 1991): a root, each switch's position (breadth-first distance
from the root, or depth-first preorder as in Sancho, Robles and Duato, "A new methodology
to compute deadlock-free routing tables for irregular networks", CANPC 2000), every "up"
channel (towards a lower position) before every "down" one, up channels by their tail's
position from the farthest, down channels by their tail's position from the nearest. A
route that goes up, then down increases in it, so every pair has an increasing route.
Two per switch; the order LP (routing/order_lp.py) of each ranks them, and the lowest
few are walked.
"""

from __future__ import annotations

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.refine import order_walk, rank_of
from vlanroute.routing.order_lp import OrderLP


def updown_order(topo: Topology, position: dict[str, int]) -> dict[Arc, int]:
    """The up*/down* channel order of `position` (module docstring): every channel's rank."""
    arcs = sorted(topo.arc_cables())
    up = sorted((a for a in arcs if position[a[1]] < position[a[0]]),
                key=lambda a: (-position[a[0]], -position[a[1]]))
    down = sorted((a for a in arcs if position[a[1]] > position[a[0]]),
                  key=lambda a: (position[a[0]], position[a[1]]))
    return {a: i for i, a in enumerate(up + down)}


def positions(topo: Topology, root: str) -> tuple[dict[str, int], dict[str, int]]:
    """Breadth-first and depth-first (preorder) positions of every switch from `root`,
    neighbours taken in the topology's switch order; distinct positions, ties in the
    breadth-first one broken by that order."""
    index = {s: i for i, s in enumerate(topo.switches)}
    near: dict[str, list[str]] = {s: [] for s in topo.switches}
    for u, v in topo.arc_cables():
        near[u].append(v)
    for s in near:
        near[s].sort(key=index.__getitem__)
    level = {root: 0}
    queue = [root]
    for u in queue:
        for v in near[u]:
            if v not in level:
                level[v] = level[u] + 1
                queue.append(v)
    n = len(topo.switches)
    bfs = {s: level[s] * n + index[s] for s in level}
    pre = {root: 0}
    path = [iter(near[root])]
    while path:
        step = next((w for w in path[-1] if w not in pre), None)
        if step is None:
            path.pop()
        else:
            pre[step] = len(pre)
            path.append(iter(near[step]))
    return bfs, pre


def ranked_starts(topo: Topology, lp: OrderLP) -> list[dict[Arc, int]]:
    """The up*/down* orders of every root (breadth-first and depth-first positions), lowest
    order LP first (ties: breadth-first before depth-first, then the root's place in the
    topology's switch order); orders that leave a pair unrouted are left out."""
    ranked: list[tuple[float, int, dict[Arc, int]]] = []
    for i, root in enumerate(topo.switches):
        for j, position in enumerate(positions(topo, root)):
            rank = updown_order(topo, position)
            sol = lp.solve(np.array([float(rank[a]) for a in lp.arcs]))
            if sol is not None:
                ranked.append((round(sol.load, 9), 2 * i + j, rank))
    ranked.sort(key=lambda x: x[:2])
    return [rank for _, _, rank in ranked]


def walked_order(lp: OrderLP, rank: dict[Arc, int], steps: int, iterations: int = 10**12) -> dict[Arc, int]:
    """The best order of an order walk of `steps` moves (or `iterations` simplex iterations:
    a count, the same order on every run) from `rank`."""
    last = None
    for key, _ in order_walk(lp, rank, steps, iterations=iterations):
        last = key
    assert last is not None, "a walk yields its start"
    return rank_of(lp, last)


def start_orders(topo: Topology, host_count: dict[str, int], walks: int, steps: int,
                 iterations: int = 10**12) -> list[dict[Arc, int]]:
    """The best order of each of `walks` order walks (`walked_order`) from the lowest of
    `ranked_starts`."""
    lp = OrderLP(topo, host_count)
    return [walked_order(lp, rank, steps, iterations) for rank in ranked_starts(topo, lp)[:walks]]
