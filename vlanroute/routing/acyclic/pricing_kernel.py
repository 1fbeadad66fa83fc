"""The column step's pricing (routing/acyclic/columns.py `priced_tree`, `improved_tree`),
compiled: the same trees, entry for entry.

Each pricing round asks, per source switch, for the lightest tree in the channel order under
the LP's duals and for three trees improved by single moves; interpreted, these were 3.4 s of
the 17 s default plan of the 8x8 torus with 6 cables gone (3,377 improved trees, about 1 ms
each). Here the same searches run over flat arrays:
- channels numbered as the column pool numbers them (sorted), switches as the topology does;
- `priced`: the Dijkstra over channels pops its entries by (cost, rank), as the interpreted
  heap's tuples compare (the ranks differ, so the channel itself never decides), and the
  tree grows in rank order with the same test `here <= after * (1 + 1e-12) + EPS`;
- `improved`: each pass walks the tree breadth-first from child lists in the order the tree's
  entries come (as trees.bfs_order does), numbers it in the same depth-first preorder (as
  trees.preorder does), and takes the first strictly best move in the same order;
- every cost is the same float operations in the same order (`cost[p] + weight`,
  `hosts * (cost[u] + w - cost[v])`, the host counts whole numbers).

numba is optional (the extra `fast`): only callers that found it working (routing/jit.py)
import this module. The first call compiles it, a few seconds, cached on disk.
"""

from __future__ import annotations

import numpy as np

from vlanroute.routing.acyclic.kernel_parts import breadth_first, child_lists, pop, preorder, push
from vlanroute.routing.numba_jit import jit

Array = np.ndarray
_NONE = np.iinfo(np.int64).max     # no rank: above every channel's


@jit
def priced(src: int, n: int, tail: Array, head: Array, rank: Array, weight: Array, by_rank: Array,
           out_ptr: Array, out_arc: Array, eps: float, parent: Array, inserted: Array) -> int:
    """columns.priced_tree of src into `parent` (per switch, -1: none) and `inserted` (the
    switches in the order the tree takes them); returns how many it took, or -1 where some
    switch cannot be reached in the order (priced_tree's None). `by_rank`: the channels in
    rank order; out_ptr/out_arc: each switch's channels out, in rank order."""
    m = tail.shape[0]
    dist = np.empty(m)
    done = np.zeros(m, dtype=np.bool_)
    cap = m + 1
    hc = np.empty(cap)
    hr = np.empty(cap, dtype=np.int64)
    ha = np.empty(cap, dtype=np.int64)
    size = 0
    for j in range(out_ptr[src], out_ptr[src + 1]):
        a = out_arc[j]
        if size == hc.shape[0]:
            hc, hr, ha = _grown(hc, hr, ha)
        size = push(hc, hr, ha, size, weight[a], rank[a], a)
    while size > 0:
        d, a = hc[0], ha[0]
        size = pop(hc, hr, ha, size)
        if done[a]:
            continue
        done[a] = True
        dist[a] = d
        v = head[a]
        for j in range(out_ptr[v], out_ptr[v + 1]):
            b = out_arc[j]
            if not done[b] and rank[b] > rank[a] and head[b] != src:
                if size == hc.shape[0]:
                    hc, hr, ha = _grown(hc, hr, ha)
                size = push(hc, hr, ha, size, d + weight[b], rank[b], b)
    reached = np.zeros(n, dtype=np.bool_)
    count = 0
    for a in range(m):
        if done[a] and not reached[head[a]]:
            reached[head[a]] = True
            count += 1
    if count < n - 1:
        return -1
    # per switch, the dist of its reached entries in rank order, and their suffix minima
    entries = np.zeros(n + 1, dtype=np.int64)
    for a in by_rank:
        if done[a]:
            entries[head[a] + 1] += 1
    start = np.cumsum(entries)          # switch v's entries at start[v] .. start[v + 1] - 1
    after = np.full(start[n] + n, np.inf)   # per v: its suffix minima, one more (inf) at the end
    fill = np.zeros(n, dtype=np.int64)
    for a in by_rank:
        if done[a]:
            v = head[a]
            after[start[v] + v + fill[v]] = dist[a]
            fill[v] += 1
    for v in range(n):
        lo = start[v] + v
        for i in range(start[v + 1] - start[v] - 1, -1, -1):
            if after[lo + i + 1] < after[lo + i]:
                after[lo + i] = after[lo + i + 1]
    seen = np.zeros(n, dtype=np.int64)
    entry = np.full(n, _NONE, dtype=np.int64)
    taken = np.zeros(n, dtype=np.bool_)
    cost = np.zeros(n)
    taken[src] = True
    entry[src] = -1
    parent[:] = -1
    took = 0
    for a in by_rank:
        if not done[a]:
            continue
        u, v = tail[a], head[a]
        i = seen[v]
        seen[v] = i + 1
        if taken[v] or not taken[u] or entry[u] >= rank[a]:
            continue
        here = cost[u] + weight[a]
        if here <= after[start[v] + v + i + 1] * (1 + 1e-12) + eps:
            taken[v] = True
            entry[v] = rank[a]
            cost[v] = here
            parent[v] = u
            inserted[took] = v
            took += 1
    return took


@jit
def _grown(hc: Array, hr: Array, ha: Array) -> tuple[Array, Array, Array]:
    k = hc.shape[0]
    c2, r2, a2 = np.empty(2 * k), np.empty(2 * k, dtype=np.int64), np.empty(2 * k, dtype=np.int64)
    c2[:k], r2[:k], a2[:k] = hc, hr, ha
    return c2, r2, a2


@jit
def improved(src: int, keys: Array, parent: Array, arc_id: Array, tail: Array, rank: Array, weight: Array,
             hosts: Array, into_ptr: Array, into_arc: Array, eps: float) -> None:
    """columns.improved_tree of src's tree, in place: `parent` per switch (-1: src), `keys`
    the switches in the order the tree's entries come (every switch but src); arc_id[u, v]
    the channel u -> v; into_ptr/into_arc each switch's channels in, in the pool's order."""
    n = parent.shape[0]
    kid_ptr = np.zeros(n + 1, dtype=np.int64)
    kids = np.empty(max(n - 1, 1), dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    seq = np.empty(n, dtype=np.int64)
    cost = np.zeros(n)
    entry = np.zeros(n, dtype=np.int64)
    lowest = np.zeros(n, dtype=np.int64)
    below = np.zeros(n, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.int64)
    while True:
        # breadth-first from child lists in the entries' order (trees.bfs_order)
        child_lists(parent, keys, kid_ptr, kids)
        length = breadth_first(src, kid_ptr, kids, order)
        # costs, entries, lowest rank out, then hosts and sizes below (columns.improved_tree)
        cost[src] = 0.0
        entry[src] = -1
        for j in range(length):
            lowest[order[j]] = _NONE
            below[order[j]] = hosts[order[j]]
            size[order[j]] = 1
        for j in range(1, length):
            v = order[j]
            p = parent[v]
            a = arc_id[p, v]
            cost[v] = cost[p] + weight[a]
            r = rank[a]
            entry[v] = r
            if r < lowest[p]:
                lowest[p] = r
        for j in range(length - 1, 0, -1):
            v = order[j]
            p = parent[v]
            below[p] += below[v]
            size[p] += size[v]
        # the children in breadth-first order, numbered depth-first (trees.preorder)
        child_lists(parent, order[1:length], kid_ptr, kids)
        preorder(src, kid_ptr, kids, first, seq)
        found = False
        best_delta = 0.0
        best_v = -1
        best_u = -1
        for j in range(1, length):
            v = order[j]
            bv = below[v]
            if bv == 0:
                continue
            lo = first[v]
            hi = lo + size[v]
            low = lowest[v]
            old = parent[v]
            cv = cost[v]
            for e in range(into_ptr[v], into_ptr[v + 1]):
                a = into_arc[e]
                u = tail[a]
                r = rank[a]
                if u == old or (lo <= first[u] and first[u] < hi) or entry[u] >= r or low <= r:
                    continue
                delta = bv * (cost[u] + weight[a] - cv)
                if delta < -eps and (not found or delta < best_delta):
                    found = True
                    best_delta, best_v, best_u = delta, v, u
        if not found:
            return
        parent[best_v] = best_u
