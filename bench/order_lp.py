"""Benchmark: how much of a deadlock-free plan's gap to the optimum is its channel order's.

Run: python bench/order_lp.py

For each fabric the acyclic engine plans (routing/acyclic.py); its routes' channel
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

import networkx as nx
import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402

from vlanroute.model.topology import Topology  # noqa: E402
from vlanroute.routing.engine import Options  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.registry import ENGINES  # noqa: E402

Arc = tuple[str, str]


def plan_order(parents: dict[str, dict[str, str]], arcs: list[Arc]) -> dict[Arc, int]:
    """A topological order of the plan's channel dependencies, every arc ranked."""
    cdg = nx.DiGraph()
    cdg.add_nodes_from(arcs)
    for src, tree in parents.items():
        for v, p in tree.items():
            if p != src:
                cdg.add_edge((tree[p], p), (p, v))
    return {a: i for i, a in enumerate(nx.lexicographical_topological_sort(cdg))}


def order_lp(topo: Topology, hosts: dict[str, int], rank: dict[Arc, int]) -> tuple[float, int]:
    """(least max load per cable of a splittable routing increasing in `rank`, variables)."""
    cables = topo.arc_cables()
    arcs = sorted(cables)
    out: dict[str, list[int]] = {}
    for i, (u, _) in enumerate(arcs):
        out.setdefault(u, []).append(i)
    turns = [(i, j) for i, (u, v) in enumerate(arcs) for j in out.get(v, [])
             if arcs[j][1] != u and rank[arcs[i]] < rank[arcs[j]]]
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    b_eq: list[float] = []
    cap_rows: list[int] = []
    cap_cols: list[int] = []
    nv = 0

    def entry(row: int, col: int, val: float) -> None:
        rows.append(row)
        cols.append(col)
        vals.append(val)

    for s in (s for s in topo.switches if hosts.get(s, 0)):
        # Per channel i: what enters it (first hop from s, or a turn into it) equals what
        # ends at its head (absorbed) plus what turns out of it.
        base = len(b_eq)
        b_eq.extend(0.0 for _ in arcs)
        for i in out[s]:
            entry(base + i, nv, 1.0)
            cap_rows.append(i)
            cap_cols.append(nv)
            nv += 1
        for i, j in turns:
            if arcs[i][1] == s:          # never through the source again
                continue
            entry(base + j, nv, 1.0)
            entry(base + i, nv, -1.0)
            cap_rows.append(j)
            cap_cols.append(nv)
            nv += 1
        demand_row = {}
        for v in topo.switches:
            if v != s:
                demand_row[v] = len(b_eq)
                b_eq.append(float(hosts[s] * hosts.get(v, 0)))
        for i, (_, v) in enumerate(arcs):
            if v != s:                   # absorbed at v: leaves channel i, meets v's demand
                entry(base + i, nv, -1.0)
                entry(demand_row[v], nv, 1.0)
                nv += 1
    load = nv
    nv += 1
    a_eq = coo_matrix((vals, (rows, cols)), shape=(len(b_eq), nv)).tocsr()
    m = len(arcs)
    a_ub = coo_matrix(([1.0] * len(cap_rows) + [-float(cables[a]) for a in arcs],
                       (cap_rows + list(range(m)), cap_cols + [load] * m)), shape=(m, nv)).tocsr()
    c = np.zeros(nv)
    c[load] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=np.array(b_eq), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"the order LP did not solve: {res.message}")
    return float(res.x[load]), nv


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
