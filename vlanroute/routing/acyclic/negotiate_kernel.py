"""`negotiate`'s rounds (routing/acyclic/negotiate.py), compiled: the same trees, entry for entry.

Every round re-routes every sender's tree with a Dijkstra over the switches; interpreted,
that is about 3 ms per tree on a 256-switch fabric, so 40 rounds of 256 trees took 15 s of
the 35 s default plan of a 16x16 torus with a cable gone, and 1.3 s of the 5.9 s on a random
4-regular graph of 64 switches. Here the same rounds run over flat arrays:
- switches and channels numbered as OrderedRouter numbers them; each switch's channels in
  its `out` order, which is the order the interpreted search queues them in;
- the heap orders its entries by (cost, when queued), as the interpreted heap's tuples do,
  and no two entries were queued at once, so both pop the same entries in the same order;
- every cost is the same float operations in the same order: `factor * (1 + (load / cap /
  target) ** sharpness)` (the power is the C library's pow in both), the history factor
  `1 + h`, the peak `load / cap`;
- loads are sums of host products, whole numbers that floats hold exactly, so taking a tree
  off and putting it back gives the same loads in any order;
- each tree's entries come back in the order the interpreted search inserts them (the order
  it settles the switches; a tree never re-routed keeps the order it came in).

numba is optional (the extra `fast`): only callers that found it working (routing/jit.py)
import this module. The first call compiles it, a few seconds, cached on disk.
"""

from __future__ import annotations

import numpy as np

from vlanroute.routing.acyclic.kernel_parts import peak as _peak
from vlanroute.routing.acyclic.kernel_parts import pop as _pop
from vlanroute.routing.acyclic.kernel_parts import push as _push
from vlanroute.routing.numba_jit import jit

Array = np.ndarray


@jit
def _route(src: int, out_ptr: Array, out_to: Array, out_arc: Array, head: Array, tail: Array, rank: Array,
           ordered: bool, cap: Array, dist: Array, row: int, factor: Array, load: Array, target: float,
           sharp: float, parent: Array, into: Array, order: Array, settled: Array, queued: Array,
           hc: Array, hn: Array, ha: Array) -> int:
    """OrderedRouter._route's search from src into `parent`, `into` and `order` (the settling
    order, src first); returns how many switches it reached. `row` >= 0: shortest routes
    only, by the hops in dist[row]."""
    n = out_ptr.shape[0] - 1
    settled[:] = False
    queued[:] = np.inf
    settled[src] = True
    parent[src] = -1
    order[0] = src
    size = 0
    count = 0
    for j in range(out_ptr[src], out_ptr[src + 1]):
        w, a = out_to[j], out_arc[j]
        if row >= 0 and dist[row, w] != 1:
            continue
        c = factor[a] * (1.0 + (load[a] / cap[a] / target) ** sharp)
        if c < queued[w]:
            queued[w] = c
            size = _push(hc, hn, ha, size, c, count, a)
            count += 1
    reached = 1
    while size > 0 and reached < n:
        now, a = hc[0], ha[0]
        size = _pop(hc, hn, ha, size)
        w = head[a]
        if settled[w]:
            continue
        settled[w] = True
        parent[w] = tail[a]
        into[w] = a
        order[reached] = w
        reached += 1
        for j in range(out_ptr[w], out_ptr[w + 1]):
            x, b = out_to[j], out_arc[j]
            if settled[x]:
                continue
            if row >= 0 and dist[row, x] != dist[row, w] + 1:
                continue
            if ordered and rank[b] <= rank[a]:
                continue
            c = now + factor[b] * (1.0 + (load[b] / cap[b] / target) ** sharp)
            if c < queued[x]:
                queued[x] = c
                size = _push(hc, hn, ha, size, c, count, b)
                count += 1
    return reached


@jit
def negotiate_rounds(out_ptr: Array, out_to: Array, out_arc: Array, head: Array, tail: Array, rank: Array,
                     ordered: bool, cap: Array, host_of: Array, key_root: Array, key_weight: Array,
                     dist: Array, key_row: Array, parent: Array, order: Array, olen: Array,
                     carried_ch: Array, carried_x: Array, clen: Array, load: Array, schedule: Array,
                     target: float, sharp: float, history_step: float, eps: float,
                     best_peak: float) -> tuple[float, Array, Array, Array]:
    """negotiate's rounds from the trees given (per key: parent per switch, -1 for none;
    entries in `order[k, 1:olen[k]]` after the root; carried (channel, load) pairs, already
    on `load`), re-routing the keys of each row of `schedule` in turn. Returns the best peak
    and its trees (parent, order, olen), those given if no round beats `best_peak`."""
    n = out_ptr.shape[0] - 1
    m = head.shape[0]
    best_parent, best_order, best_olen = parent.copy(), order.copy(), olen.copy()
    history = np.zeros(m)
    factor = np.ones(m)                 # 1 + history, per channel
    new_parent = np.empty(n, dtype=parent.dtype)
    into = np.empty(n, dtype=np.int64)
    new_order = np.empty(n, dtype=order.dtype)
    settled = np.zeros(n, dtype=np.bool_)
    queued = np.empty(n)
    below = np.zeros(n, dtype=np.int64)
    hc = np.empty(m + 1)
    hn = np.empty(m + 1, dtype=np.int64)
    ha = np.empty(m + 1, dtype=np.int64)
    for rnd in range(schedule.shape[0]):
        for j in range(schedule.shape[1]):
            k = schedule[rnd, j]
            for i in range(clen[k]):
                load[carried_ch[k, i]] -= carried_x[k, i]
            reached = _route(key_root[k], out_ptr, out_to, out_arc, head, tail, rank, ordered, cap, dist,
                             key_row[k], factor, load, target, sharp, new_parent, into, new_order, settled,
                             queued, hc, hn, ha)
            if reached < n:
                for i in range(clen[k]):
                    load[carried_ch[k, i]] += carried_x[k, i]
                continue
            hs = key_weight[k]
            for i in range(n):
                v = new_order[i]
                below[v] = host_of[v]
            for i in range(n - 1, 0, -1):
                v = new_order[i]
                below[new_parent[v]] += below[v]
            c = 0
            if hs:
                for i in range(1, n):
                    v = new_order[i]
                    if below[v]:
                        carried_ch[k, c] = into[v]
                        carried_x[k, c] = float(hs * below[v])
                        load[into[v]] += carried_x[k, c]
                        c += 1
            clen[k] = c
            parent[k, :] = new_parent
            order[k, :] = new_order
            olen[k] = n
        peak = _peak(load, cap)
        if peak < best_peak - eps:
            best_peak = peak
            best_parent[:, :] = parent
            best_order[:, :] = order
            best_olen[:] = olen
        for a in range(m):
            if load[a] / cap[a] > target:
                history[a] += history_step
        for a in range(m):
            factor[a] = 1.0 + history[a]
    return best_peak, best_parent, best_order, best_olen
