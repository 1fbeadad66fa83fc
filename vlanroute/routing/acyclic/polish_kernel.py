"""`polish`'s branch moves (routing/acyclic/polish.py), compiled: the same trees, entry for
entry, and the same count of moves looked at.

The branch moves were 6 % to 10 % of the default plan on the fabrics furthest from issue 40's
5 s (the degraded tori, the dragonfly 6x4, random 4-regular 64), in every engine that
polishes (acyclic, budget, routing below the switch). Here the same hill climbing runs over
flat arrays:
- switches numbered as the topology numbers them, channels as the sorted cables, each
  switch's neighbours in `_Trees.adj`'s order (with `minimal`, those one hop nearer the
  sender's switch, in that order);
- the senders numbered in the order `polish` tries them (`_Trees.place`), so that the trees
  holding a link, in that order, are the senders in number order whose tree holds it;
- a tree's child lists follow the order of its entries, as `_Trees._shape`'s do (that order
  never changes: a move replaces an entry's value), and so do its depth-first numbers and
  the order in which a hot link's subtree is walked;
- every load is a sum of host products, whole numbers that floats hold exactly, and every
  test is `(load + demand) / cap` against `level +- EPS`, as interpreted;
- the count of moves looked at rises where the interpreted one does and stops the search
  at the same `max_work`; an ejection chain that fails undoes its moves, as interpreted.

numba is optional (the extra `fast`): only callers that found it working (routing/jit.py)
import this module. The first call compiles it, a few seconds, cached on disk.
"""

from __future__ import annotations

import numpy as np

from vlanroute.routing.acyclic.kernel_parts import breadth_first, child_lists, peak, preorder
from vlanroute.routing.numba_jit import jit

Array = np.ndarray


@jit
def _shape(k: int, parent: Array, keys: Array, root: Array, weight: Array, hosts: Array, tin: Array, tout: Array,
           seq: Array, carried: Array, kid_ptr: Array, kids: Array) -> None:
    """_Trees._shape of sender k: child lists in entry order (kid_ptr/kids), depth-first
    entry and exit numbers, the preorder `seq`, and what each switch's branch carries."""
    n = parent.shape[1]
    src = root[k]
    child_lists(parent[k], keys[k], kid_ptr, kids)
    order = np.empty(n, dtype=np.int64)
    breadth_first(src, kid_ptr, kids, order)
    below = np.empty(n, dtype=np.int64)
    size = np.ones(n, dtype=np.int64)
    for j in range(n):
        below[order[j]] = hosts[order[j]]
    for j in range(n - 1, 0, -1):
        v = order[j]
        p = parent[k, v]
        below[p] += below[v]
        size[p] += size[v]
    hs = weight[k]
    for v in range(n):
        carried[v] = float(hs * below[v]) if v != src else 0.0
    # depth-first preorder from the child lists, the last child first (trees.preorder)
    preorder(src, kid_ptr, kids, tin, seq)
    for v in range(n):
        tout[v] = tin[v] + size[v]


@jit
def _path(k: int, v: int, parent: Array, arc_id: Array, src: int, out: Array) -> int:
    """The channels from the sender's switch to v in its tree, into out[0:length]."""
    length = 0
    x = v
    while x != src:
        length += 1
        x = parent[k, x]
    x = v
    i = length
    while x != src:
        i -= 1
        out[i] = arc_id[parent[k, x], x]
        x = parent[k, x]
    return length


@jit
def _holds(k: int, a: int, parent: Array, tail: Array, head: Array) -> bool:
    return parent[k, head[a]] == tail[a]


@jit
def _move(k: int, hot: int, level: float, depth: int, parent: Array, keys: Array, root: Array, weight: Array,
          hosts: Array, adj_ptr: Array, adj: Array, arc_id: Array, tail: Array, head: Array, rank: Array,
          ordered: bool, dist: Array, key_row: Array, load: Array, cap: Array, eps: float, work: Array,
          max_work: float) -> bool:
    """_Trees.try_move of sender k off channel `hot` (the module docstring)."""
    n = parent.shape[1]
    src = root[k]
    tin = np.empty(n, dtype=np.int64)
    tout = np.empty(n, dtype=np.int64)
    seq = np.empty(n, dtype=np.int64)
    carried = np.empty(n)
    kid_ptr = np.zeros(n + 1, dtype=np.int64)
    kids = np.empty(max(n - 1, 1), dtype=np.int64)
    _shape(k, parent, keys, root, weight, hosts, tin, tout, seq, carried, kid_ptr, kids)
    old = np.empty(n, dtype=np.int64)
    to_u = np.empty(n, dtype=np.int64)
    row = key_row[k]
    lo, hi = tin[head[hot]], tout[head[hot]]
    for at in range(lo, hi):
        v = seq[at]
        demand = carried[v]
        if demand == 0.0:
            continue
        have_old = False
        n_old = 0
        old_parent = parent[k, v]
        top = 0                     # the lowest rank of a channel to v's children (has_top)
        has_top = False
        if ordered:
            for j in range(kid_ptr[v], kid_ptr[v + 1]):
                r = rank[arc_id[v, kids[j]]]
                if not has_top or r < top:
                    top = r
                    has_top = True
        v_in, v_out = tin[v], tout[v]
        for j in range(adj_ptr[v], adj_ptr[v + 1]):
            u = adj[j]
            if row >= 0 and dist[row, u] != dist[row, v] - 1:
                continue            # with `minimal`, only switches one hop nearer the sender's
            if u == old_parent:
                continue
            u_in = tin[u]
            below_hot = lo <= u_in and u_in < hi
            if below_hot and v_in <= u_in and u_in < v_out:
                continue
            work[0] += 1
            if work[0] > max_work:
                return False
            if below_hot:
                continue
            arc = arc_id[u, v]
            if ordered and ((has_top and rank[arc] >= top)
                            or (u != src and rank[arc_id[parent[k, u], u]] >= rank[arc])):
                continue
            n_to = _path(k, u, parent, arc_id, src, to_u)
            if not have_old:
                n_old = _path(k, v, parent, arc_id, src, old)
                have_old = True
            i = 0
            while i < n_old and i < n_to and old[i] == to_u[i]:
                i += 1
            allowed = 1 if depth else 0
            over = -1
            n_over = 0
            fits = True
            for x in range(i - 1, n_to):
                a = arc if x == i - 1 else to_u[x]
                ratio = (load[a] + demand) / cap[a]
                if ratio >= level - eps:
                    if ratio > level + eps or n_over == allowed:
                        fits = False
                        break
                    if n_over == 0:
                        over = a
                    n_over += 1
            if not fits:
                continue
            for x in range(i, n_old):
                load[old[x]] += -demand
            load[arc] += demand
            for x in range(i, n_to):
                load[to_u[x]] += demand
            parent[k, v] = u
            if n_over == 0:
                return True
            # the one link it brought to the maximum: move some tree's branch off it in turn
            for s in range(parent.shape[0]):
                if _holds(s, over, parent, tail, head) and _move(
                        s, over, level, depth - 1, parent, keys, root, weight, hosts, adj_ptr, adj, arc_id, tail,
                        head, rank, ordered, dist, key_row, load, cap, eps, work, max_work):
                    return True
            for x in range(i, n_old):
                load[old[x]] -= -demand
            load[arc] -= demand
            for x in range(i, n_to):
                load[to_u[x]] -= demand
            parent[k, v] = old_parent
    return False


@jit
def polish_trees(parent: Array, keys: Array, root: Array, weight: Array, hosts: Array, adj_ptr: Array, adj: Array,
                 arc_id: Array, tail: Array, head: Array, rank: Array, ordered: bool, dist: Array, key_row: Array,
                 load: Array, cap: Array, eps: float, depth: int, passes: int, max_work: float) -> float:
    """polish's passes over the hottest links on `parent` (senders by place, in place) and
    `load`; returns the max load per cable after them."""
    work = np.zeros(1, dtype=np.int64)
    m = load.shape[0]
    hot = np.empty(m, dtype=np.int64)
    for _ in range(passes):
        level = peak(load, cap)
        n_hot = 0
        for a in range(m):
            if load[a] / cap[a] >= level - eps:
                hot[n_hot] = a
                n_hot += 1
        moved = False
        for h in range(n_hot):
            a = hot[h]
            if load[a] / cap[a] < level - eps:
                continue
            for s in range(parent.shape[0]):
                if _holds(s, a, parent, tail, head) and _move(
                        s, a, level, depth, parent, keys, root, weight, hosts, adj_ptr, adj, arc_id, tail, head,
                        rank, ordered, dist, key_row, load, cap, eps, work, max_work):
                    moved = True
                    break
        if not moved or work[0] > max_work:
            break
    return peak(load, cap)
