"""Pieces the acyclic engine's compiled kernels share (negotiate_kernel.py, pricing_kernel.py,
polish_kernel.py): a binary heap ordered as Python orders its (cost, number) tuples, the
max load per cable, and tree walks over child lists that follow routing/trees.py's
(bfs_order, preorder) entry for entry.

numba is optional (the extra `fast`): only modules that callers import after finding it
working (routing/jit.py) import this one.
"""

from __future__ import annotations

import numpy as np

from vlanroute.routing.numba_jit import jit

Array = np.ndarray


@jit
def before(c1: float, n1: int, c2: float, n2: int) -> bool:
    """(c1, n1) < (c2, n2), as Python compares the heap's tuples."""
    return c1 < c2 or (c1 == c2 and n1 < n2)


@jit
def push(hc: Array, hn: Array, ha: Array, size: int, c: float, count: int, a: int) -> int:
    """Puts (c, count) with payload a on the heap of `size` entries; returns the new size."""
    i = size
    while i > 0:
        p = (i - 1) >> 1
        if before(c, count, hc[p], hn[p]):
            hc[i], hn[i], ha[i] = hc[p], hn[p], ha[p]
            i = p
        else:
            break
    hc[i], hn[i], ha[i] = c, count, a
    return size + 1


@jit
def pop(hc: Array, hn: Array, ha: Array, size: int) -> int:
    """Takes the least entry off (the caller read it at index 0 first); returns the new size."""
    size -= 1
    c, count, a = hc[size], hn[size], ha[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and before(hc[child + 1], hn[child + 1], hc[child], hn[child]):
            child += 1
        if before(hc[child], hn[child], c, count):
            hc[i], hn[i], ha[i] = hc[child], hn[child], ha[child]
            i = child
        else:
            break
    hc[i], hn[i], ha[i] = c, count, a
    return size


@jit
def peak(load: Array, cap: Array) -> float:
    """The max load per cable (0 without channels)."""
    top = 0.0
    for a in range(load.shape[0]):
        x = load[a] / cap[a]
        if a == 0 or x > top:
            top = x
    return top


@jit
def child_lists(parent: Array, members: Array, kid_ptr: Array, kids: Array) -> None:
    """Each switch's children (kids[kid_ptr[v]:kid_ptr[v + 1]]) in the order `members` lists
    them, as a dict of child lists filled in that order has them; parent[v] per member."""
    n = kid_ptr.shape[0] - 1
    kid_ptr[:] = 0
    for v in members:
        kid_ptr[parent[v] + 1] += 1
    for v in range(n):
        kid_ptr[v + 1] += kid_ptr[v]
    fill = np.zeros(n, dtype=np.int64)
    for v in members:
        p = parent[v]
        kids[kid_ptr[p] + fill[p]] = v
        fill[p] += 1


@jit
def breadth_first(src: int, kid_ptr: Array, kids: Array, order: Array) -> int:
    """trees.bfs_order from the child lists into `order`; returns how many it holds."""
    order[0] = src
    length = 1
    i = 0
    while i < length:
        u = order[i]
        for j in range(kid_ptr[u], kid_ptr[u + 1]):
            order[length] = kids[j]
            length += 1
        i += 1
    return length


@jit
def preorder(src: int, kid_ptr: Array, kids: Array, first: Array, seq: Array) -> None:
    """trees.preorder from the child lists: each switch's number (`first`) and the switches
    in that order (`seq`), the last child first as the interpreted stack takes them."""
    stack = np.empty(seq.shape[0], dtype=np.int64)
    stack[0] = src
    top = 1
    number = 0
    while top > 0:
        top -= 1
        x = stack[top]
        first[x] = number
        seq[number] = x
        number += 1
        for j in range(kid_ptr[x], kid_ptr[x + 1]):
            stack[top] = kids[j]
            top += 1
