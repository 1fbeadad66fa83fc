"""Why dimension-order routing cannot be made deadlock-free cheaply on a torus without
virtual lanes: the floor of its ring loads, computed exactly (a MILP, scipy's HiGHS).

With 802.3x PAUSE and no virtual lanes, a route set is deadlock-free only if its channel
dependency graph is acyclic (Dally and Seitz 1987). Under X-then-Y dimension order there are
no Y->X dependencies, so the graph is acyclic exactly when each ring's dependencies are: in
each direction of each ring at least one switch where no route passes straight through (a
cut). With one tree per source switch (VLAN routing), a source's routes along its own row
ring form a path (the ring minus one link): each destination column is reached one way,
unsplit. This script takes a ring of n switches with uniform all-to-all traffic, tries every
placement of the two cuts (one per direction) and every source's split point, and prints the
lowest possible max load per directed link against the ring without cuts (its distance
bound, which the torus LP optimum equals, docs/routing-bounds.md). The ratio is a floor for
every deadlock-free XY-order plan of an n x n torus: its row rings carry exactly this
traffic (times the rows' hosts). Run: python bench/ring_cut_floor.py [n ...]
"""

from __future__ import annotations

import sys

from vlanroute.routing.ringcuts import best_splits


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [4, 6, 8, 10]
    print(f"{'ring':>5} {'no cut (distance bound)':>24} {'best with cuts':>15} {'ratio':>7}  cuts (+, -)")
    for n in sizes:
        bound = sum(min(d, n - d) for d in range(1, n)) / 2      # per directed link, splittable
        tried = [(found[0], p, q) for p in range(n) for q in range(n) if (found := best_splits(n, p, q))]
        best = min(tried)
        print(f"{n:>5} {bound:>24.2f} {best[0]:>15.2f} {best[0] / bound:>7.3f}  {best[1]}, {best[2]}")


if __name__ == "__main__":
    main()
