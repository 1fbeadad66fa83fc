"""`balanced_shortest_parents` (routing/balance.py), compiled: the same trees, entry for entry.

On a 1,024-switch fabric the two balanced builders of `shortest` rebuild 1,024 trees three
times each, about 3 ms of dict walks per tree: 28 s of the 56 s that `shortest` took on a
32x32 torus with a cable gone, which `repair` runs as its comparison re-plan. Here the same
rounds run over flat arrays:
- switches by their index in the topology (the interpreted `order`), each switch's
  neighbours in that order (`adj` sorted by it), with the arc from each neighbour;
- the load of every arc in one array, where the interpreted code keeps a dict: every
  update is the same float operation in the same order (`load + sign * x / cables`), so the
  loads, and every choice made on them, are the same floats. An arc the dict never touched
  reads 0.0 there (`load.get(arc, 0.0)`) and here.
- each tree's entries come back in the order the interpreted builder inserts them (the
  order of a parent map steers the searches that start from it: routing/balance.py).

numba is optional (the extra `fast`): only callers that found it working (routing/jit.py)
import this module. The first call compiles it, a few seconds, cached on disk.
"""

from __future__ import annotations

import numpy as np

from vlanroute.routing.numba_jit import jit

Array = np.ndarray


@jit
def _distances(ptr: Array, nbr: Array, src: int, dist: Array, queue: Array) -> int:
    """Hops from src into `dist` (-1: not reached); returns the farthest."""
    dist[:] = -1
    dist[src] = 0
    queue[0] = src
    head, tail, far = 0, 1, 0
    while head < tail:
        u = queue[head]
        head += 1
        for j in range(ptr[u], ptr[u + 1]):
            v = nbr[j]
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                far = dist[v]
                queue[tail] = v
                tail += 1
    return far


@jit
def _by_distance(dist: Array, far: int) -> Array:
    """The reached switches by (distance, index): each level in index order."""
    n = dist.shape[0]
    count = np.zeros(far + 2, dtype=np.int64)
    for v in range(n):
        if dist[v] >= 0:
            count[dist[v] + 1] += 1
    for d in range(far + 1):
        count[d + 1] += count[d]
    out = np.empty(count[far + 1], dtype=np.int64)
    fill = count[:far + 1].copy()
    for v in range(n):
        d = dist[v]
        if d >= 0:
            out[fill[d]] = v
            fill[d] += 1
    return out


@jit
def _bottom_up(ptr: Array, nbr: Array, arc_in: Array, cables: Array, hosts: Array, weight: float,
               load: Array, dist: Array, ranked: Array, far: int, parent: Array, via: Array, seq: Array) -> None:
    """balance.balanced_tree: from the farthest level inwards, a level's switches by (most
    hosts below first, index), each to the equally near neighbour of the least key."""
    below = np.zeros(dist.shape[0], dtype=np.float64)
    for i in range(ranked.shape[0]):
        v = ranked[i]
        below[v] = float(hosts[v])
    # ranked holds each level contiguously, nearest first
    start = np.zeros(far + 2, dtype=np.int64)
    for i in range(ranked.shape[0]):
        start[dist[ranked[i]] + 1] = i + 1
    k = 0
    for d in range(far, 0, -1):
        level = ranked[start[d]:start[d + 1]]
        keys = np.empty(level.shape[0], dtype=np.float64)
        for i in range(level.shape[0]):
            keys[i] = -below[level[i]]
        # stable: equal keys keep the index order the level is in
        for i in np.argsort(keys, kind="mergesort"):
            v = level[i]
            best, ba = -1, -1
            bx, bb = 0.0, 0.0
            for j in range(ptr[v], ptr[v + 1]):
                p = nbr[j]
                if dist[p] != d - 1:
                    continue
                a = arc_in[j]
                x = load[a] + weight * below[v] / cables[a]
                if best < 0 or x < bx or (x == bx and (below[p] < bb or (below[p] == bb and p < best))):
                    best, ba, bx, bb = p, a, x, below[p]
            parent[v] = best
            via[v] = ba
            seq[k] = v
            k += 1
            below[best] += below[v]


@jit
def _least_loaded(ptr: Array, nbr: Array, arc_in: Array, load: Array, dist: Array, ranked: Array,
                  parent: Array, via: Array, seq: Array) -> None:
    """balance.least_loaded_tree: nearest switches first (by distance, then index), each to
    the equally near neighbour whose path plus link has the least sum of loads."""
    cost = np.zeros(dist.shape[0], dtype=np.float64)
    for i in range(1, ranked.shape[0]):
        v = ranked[i]
        d = dist[v]
        best = -1
        bx = 0.0
        ba = -1
        for j in range(ptr[v], ptr[v + 1]):
            p = nbr[j]
            if dist[p] != d - 1:
                continue
            x = cost[p] + load[arc_in[j]]
            if best < 0 or x < bx or (x == bx and p < best):
                best, bx, ba = p, x, arc_in[j]
        parent[v] = best
        via[v] = ba
        seq[i - 1] = v
        cost[v] = cost[best] + load[ba]


@jit
def _add(load: Array, cables: Array, hosts: Array, weight: int, parent: Array, via: Array, dist: Array,
         ranked: Array, sign: float) -> None:
    """trees.source_arc_loads then add_loads: each arc p->v of the tree carries weight x
    (hosts below v), added to `load` per cable (sign -1: removed)."""
    if weight == 0:
        return
    below = np.zeros(dist.shape[0], dtype=np.int64)
    for i in range(ranked.shape[0]):
        below[ranked[i]] = hosts[ranked[i]]
    for i in range(ranked.shape[0] - 1, 0, -1):           # farthest first: children before parents
        v = ranked[i]
        below[parent[v]] += below[v]
    for i in range(1, ranked.shape[0]):
        v = ranked[i]
        if below[v]:
            a = via[v]
            x = weight * below[v]
            load[a] = load[a] + sign * x / cables[a]


@jit
def balanced_rounds(ptr: Array, nbr: Array, arc_in: Array, cables: Array, hosts: Array,
                    sources: Array, rounds: int, bottom_up: bool) -> tuple[Array, Array]:
    """balance.balanced_shortest_parents over arrays: each round rebuilds every source's tree
    against the load of all others; rounds stop when the max load stops falling, and the
    best round is returned: each source's parents and the order its tree's entries were
    made in (rows by position in `sources`; -1 past the tree's switches)."""
    n = hosts.shape[0]
    k = sources.shape[0]
    narcs = cables.shape[0]
    load = np.zeros(narcs, dtype=np.float64)
    dist = np.empty((k, n), dtype=np.int64)
    ranked = np.empty((k, n), dtype=np.int64)
    reached = np.zeros(k, dtype=np.int64)
    farthest = np.zeros(k, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    for r in range(k):
        far = _distances(ptr, nbr, sources[r], dist[r], queue)
        got = _by_distance(dist[r], far)
        reached[r] = got.shape[0]
        farthest[r] = far
        ranked[r, :got.shape[0]] = got
    parent = np.full((k, n), -1, dtype=np.int64)
    via = np.full((k, n), -1, dtype=np.int64)        # the arc from each switch's parent to it
    seq = np.full((k, n), -1, dtype=np.int64)
    built = np.zeros(k, dtype=np.bool_)
    best_parent = np.full((k, n), -1, dtype=np.int64)
    best_seq = np.full((k, n), -1, dtype=np.int64)
    best_peak = -1.0
    for _ in range(rounds):
        for r in range(k):
            s = sources[r]
            w = hosts[s]
            m = reached[r]
            if built[r]:
                _add(load, cables, hosts, w, parent[r], via[r], dist[r], ranked[r, :m], -1.0)
            parent[r, :] = -1
            if bottom_up:
                _bottom_up(ptr, nbr, arc_in, cables, hosts, float(w), load, dist[r], ranked[r, :m], farthest[r],
                           parent[r], via[r], seq[r])
            else:
                _least_loaded(ptr, nbr, arc_in, load, dist[r], ranked[r, :m], parent[r], via[r], seq[r])
            built[r] = True
            _add(load, cables, hosts, w, parent[r], via[r], dist[r], ranked[r, :m], 1.0)
        peak = 0.0
        for a in range(narcs):
            if load[a] > peak:
                peak = load[a]
        if best_peak >= 0.0 and peak >= best_peak - 1e-9:
            break
        best_peak = peak
        best_parent[:, :] = parent
        best_seq[:, :] = seq
    return best_parent, best_seq
