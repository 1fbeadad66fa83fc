"""Fast all-to-all link loads of routes given as trees, for choosing between routings.

A source's routes are a tree; under all-to-all traffic (one unit per ordered pair of
distinct hosts) the link p->v of the tree of source s carries hosts(s) x (hosts in the
subtree below v). One pass over the tree from the leaves up gives every link: O(switches)
per source. metrics.py computes the reported figures; this module only has to rank
candidate routings quickly and identically to it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

ParentMap = dict[str, str]
Arc = tuple[str, str]


def bfs_order(parent: ParentMap, src: str) -> list[str]:
    """The tree's switches, each after its parent (breadth-first from src)."""
    kids: dict[str, list[str]] = {}
    for v, p in parent.items():
        kids.setdefault(p, []).append(v)
    out = [src]
    q = deque([src])
    while q:
        for v in kids.get(q.popleft(), ()):
            out.append(v)
            q.append(v)
    return out


def source_arc_loads(parent: ParentMap, src: str, hosts: dict[str, int],
                     order: list[str] | None = None, weight: float | None = None) -> Iterable[tuple[Arc, float]]:
    """(p, v), load for every tree link p->v that carries traffic of source `src`."""
    if order is None:
        order = bfs_order(parent, src)
    hs = hosts.get(src, 0) if weight is None else weight
    if not hs:
        return []
    below = {v: hosts.get(v, 0) for v in order}
    for v in reversed(order[1:]):
        below[parent[v]] += below[v]
    return [((parent[v], v), hs * below[v]) for v in order[1:] if below[v]]


def arc_loads(parents: dict[str, ParentMap], hosts: dict[str, int], cables: dict[Arc, int]) -> dict[Arc, float]:
    """Load per cable and direction of the whole routing (sources = switches with hosts)."""
    load: dict[Arc, float] = {}
    for src, par in parents.items():
        if not hosts.get(src):
            continue
        for arc, x in source_arc_loads(par, src, hosts):
            load[arc] = load.get(arc, 0.0) + x
    return {a: x / cables[a] for a, x in load.items()}


def max_load(parents: dict[str, ParentMap], hosts: dict[str, int], cables: dict[Arc, int]) -> float:
    return max(arc_loads(parents, hosts, cables).values(), default=0.0)


def tree_depths(parent: ParentMap, src: str) -> dict[str, int]:
    depth = {src: 0}
    for v in bfs_order(parent, src)[1:]:
        depth[v] = depth[parent[v]] + 1
    return depth
