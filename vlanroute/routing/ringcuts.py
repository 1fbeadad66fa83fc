"""The best way round a ring whose channel dependencies must stay acyclic (no virtual
lanes): one cut per direction, and per source the split between the two ways, chosen by an
exact MILP (scipy's HiGHS) for the lowest max load per directed link under uniform traffic.

On a ring of n switches a route set is deadlock-free only if, in each direction, some
switch is never passed straight through (a cut; Dally and Seitz 1987). With one tree per
source (VLAN routing), a source reaches the next a switches one way and the other n-1-a the
other way. The '+' cut at offset 0 and the '-' cut at offset 1 are optimal for every ring
size bench/ring_cut_floor.py tries (4 to 10: it tries every pair of positions); their max
load against the ring's distance bound is the floor of every deadlock-free dimension-order
plan on a torus (1.333 for rings of 6, 1.5 for 8, 1.6 for 10).
"""

from __future__ import annotations

from functools import cache

import numpy as np

MAX_RING = 16          # n^2 binary variables: a few tenths of a second at 16


def split_allowed(n: int, s: int, a: int, p: int | None, q: int | None) -> bool:
    """Source s reaches a switches the '+' way and n-1-a the '-' way without passing
    straight through p ('+' cut) or q ('-' cut)."""
    plus_inner = {(s + i) % n for i in range(1, a)}
    minus_inner = {(s - i) % n for i in range(1, n - 1 - a)}
    return p not in plus_inner and q not in minus_inner


def best_splits(n: int, p: int | None, q: int | None) -> tuple[float, tuple[int, ...]] | None:
    """(lowest max load per directed link, one unit per ordered pair; per source the number
    of switches reached the '+' way), or None when the cuts leave some source no way."""
    from scipy.optimize import Bounds, LinearConstraint, milp    # on first use, as in routing.optimum
    var = [(s, a) for s in range(n) for a in range(n) if split_allowed(n, s, a, p, q)]
    nv = len(var) + 1                                  # the last variable: the max load
    rows, lo, hi = [], [], []
    for s in range(n):                                 # one split point per source
        rows.append([1.0 if v[0] == s else 0.0 for v in var] + [0.0])
        lo.append(1.0)
        hi.append(1.0)
    for i in range(n):
        for d in (1, -1):
            row = []
            for s, a in var:
                offset = (i - s) % n if d == 1 else (s - i) % n
                reach = a if d == 1 else n - 1 - a
                row.append(float(max(0, reach - offset)))
            rows.append(row + [-1.0])
            lo.append(-np.inf)
            hi.append(0.0)
    cost = np.zeros(nv)
    cost[-1] = 1.0
    res = milp(cost, constraints=LinearConstraint(np.array(rows), lo, hi),
               integrality=np.array([1] * (nv - 1) + [0]), bounds=Bounds(0, [1] * (nv - 1) + [np.inf]))
    if not res.success:
        return None
    split = [0] * n
    for (s, a), x in zip(var, res.x[:-1]):
        if x > 0.5:
            split[s] = a
    return float(res.fun), tuple(split)


@cache
def ring_splits(n: int) -> tuple[int, ...] | None:
    """Per source offset from the '+' cut (the '-' cut is the next switch): how many switches
    it reaches the '+' way. None for rings too small to need cuts or too large to solve."""
    if n <= 2 or n > MAX_RING:
        return None
    found = best_splits(n, 0, 1)
    return found[1] if found else None
