"""Benchmark: how much of a deadlock-free plan's gap to the optimum is its channel order's.

Run: python bench/order_lp.py

For each fabric the acyclic engine plans (routing/acyclic/engine.py); its routes' channel
dependencies are acyclic, so they have a topological order (networkx's, lexicographic by
channel). For that order an LP gives the least max load of any *splittable* all-to-all
routing whose paths increase in the order (min L; per source, flow on the first channels
and on the turns the order allows; capacity L per cable and direction; scipy's HiGHS). Then

    plan / optimum  >=  order LP / optimum  >=  1

and the first gap is what trees (one path per pair, one tree per source) cost within the
order, the second what the order costs. Printed: both ratios and the LP's size and time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402

from vlanroute.model.links import Arc  # noqa: E402
from vlanroute.model.topology import Topology  # noqa: E402
from vlanroute.routing.engine import Options  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.order_lp import OrderLP, plan_order  # noqa: E402
from vlanroute.routing.registry import ENGINES  # noqa: E402


def order_lp(topo: Topology, hosts: dict[str, int], rank: dict[Arc, int]) -> tuple[float, int]:
    """(least max load per cable of a splittable routing increasing in `rank`, variables):
    the product's order LP (vlanroute/routing/order_lp.py)."""
    lp = OrderLP(topo, hosts)
    key = np.array([float(rank[a]) for a in lp.arcs])
    sol = lp.solve(key)
    if sol is None:
        raise RuntimeError("the order does not route every pair")
    allowed = int(np.count_nonzero(key[lp.t_in] < key[lp.t_out]))
    return sol.load, len(lp.sources) * (allowed + 2 * len(lp.arcs)) + 1


def main() -> int:
    cases = [
        ("6x6 torus, 3 cables gone", F.degraded_torus),
        ("6x6 torus, 3 cables gone (seed 1)", lambda: F.degraded_torus(6, 3, seed=1)),
        ("6x6 torus, 5 cables gone (seed 3)", lambda: F.degraded_torus(6, 5, seed=3)),
        ("6x6 torus", lambda: F.torus([6, 6])),
        ("leaf-spine 8x4, hosts on leaves", F.leaf_spine),
        ("random 3-regular 24", F.random_regular),
        ("dragonfly 6 groups x 4", F.dragonfly),
    ]
    engine = ENGINES["acyclic"]
    print(f"{'fabric':36} {'plan/opt':>8} {'orderLP/opt':>11} {'variables':>9} {'lp s':>5}")
    for title, make in cases:
        topo, hosts = make()
        opt = optimum_bound(topo, hosts).value
        parents = engine.route(topo, hosts, engine.params(topo, Options())).parents
        rank = plan_order(parents, sorted(topo.arc_cables()))
        c0 = time.process_time()
        bound, nv = order_lp(topo, hosts, rank)
        took = time.process_time() - c0
        print(f"{title:36} {F.max_load(topo, hosts, parents) / opt:8.3f} {bound / opt:11.3f} {nv:9d} {took:5.1f}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
