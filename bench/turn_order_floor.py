"""Benchmark: how low can a deadlock-free plan go on a torus? The floor of each turn family.

A deadlock-free plan without virtual lanes (802.3x PAUSE) routes over an acyclic set of
turns. For a family of such sets (the dimension order with one cut per ring direction of
the turns engine, turn-model classes, odd-even, routes that cross X in several rows, the
dimension order with every extra turn that keeps the graph acyclic), the least max load of
a splittable all-to-all flow using only the family's turns is an LP (tests/turn_order_lp.py)
and a floor for every plan of the family, VLAN trees or not. Printed over the exact optimum
(routing/optimum.py), with `df`: the family's turns checked acyclic; `-` no route for some
pair; CPU seconds per LP (a busy machine inflates them).

Run: python bench/turn_order_floor.py [k ...]     (k x k tori, 4 hosts per switch; default 6 8)
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import turn_order_lp as T  # noqa: E402
from fabrics import torus  # noqa: E402

from vlanroute.model.topology import Topology  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402

X_PLUS, X_MINUS, Y_PLUS, Y_MINUS = (0, 1), (0, -1), (1, 1), (1, -1)
FAMILIES: list[tuple[str, Callable[[Topology], list[T.Allowed]]]] = [
    ("every turn (not deadlock-free)", lambda t: [lambda a, b: True]),
    ("ring cuts only, every turn between dimensions (not deadlock-free)", lambda t: [T.cuts_only(t)]),
    ("X then Y, one cut per ring direction, staggered (turns)", lambda t: [T.dimension_order_cuts(t)]),
    ("X then Y, parallel rings cut at the same switch", lambda t: [T.dimension_order_cuts(t, stagger=(0, 0))]),
    ("X then Y and every extra turn that stays acyclic (best of 3 random)",
     lambda t: [T.with_extra_turns(t, T.dimension_order_cuts(t), seed) for seed in range(3)]),
    ("negative-first classes (-X, -Y, +X, +Y), cuts staggered",
     lambda t: [T.direction_classes(t, (X_MINUS, Y_MINUS, X_PLUS, Y_PLUS))]),
    ("best of the 24 orders of the four direction classes",
     lambda t: [T.direction_classes(t, p) for p in itertools.permutations((X_PLUS, X_MINUS, Y_PLUS, Y_MINUS))]),
    ("odd-even turns, row cuts aligned, column cuts staggered", lambda t: [T.odd_even(t, (0, 1))]),
    ("X, Y, X (X lines in halves), X cuts aligned", lambda t: [T.x_y_x(t, (0, 1))]),
    ("X, Y, X (X lines in halves), X cuts staggered", lambda t: [T.x_y_x(t, (1, 1))]),
    ("X in rows climbed through (+Y between), -Y last", lambda t: [T.rows_in_sequence(t)]),
]


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [6, 8]
    tori = [torus([k, k]) for k in sizes]
    optima = [optimum_bound(topo, hosts).value for topo, hosts in tori]
    print(f"{'family':70s} " + " ".join(f"{f'{k}x{k}':>16s}" for k in sizes))
    for title, make in FAMILIES:
        cells = []
        for (topo, hosts), opt in zip(tori, optima):
            c0 = time.process_time()
            best: float | None = None
            df = True
            for allowed in make(topo):
                df = df and T.acyclic(topo, allowed)
                got = T.turn_floor(topo, hosts, allowed)
                if got is not None and (best is None or got < best):
                    best = got
            took = time.process_time() - c0
            cells.append(f"{'-' if best is None else f'{best / opt:.3f}'} {'df' if df else '--'} {took:5.1f}s")
        print(f"{title:70s} " + " ".join(f"{c:>16s}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
