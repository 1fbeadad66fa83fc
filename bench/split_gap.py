"""Benchmark: how far routing below the switch takes the deadlock-free plans, and what
holds them (issue 40 item 3: irregular and degraded fabrics at or below 1.2x the optimum).

Run: python bench/split_gap.py [--markdown] [--no-lp-walk] [rr|df|dt|dtall ...]

(rr: random 3-regular graphs of 24 switches, seeds 0-9; df: dragonflies 6x4 and 9x4; dt:
bench/quality.py's three degraded tori; dtall: bench/degraded_tori.py's eleven; default
rr df dt.)

Per fabric (4 hosts per hosted switch), the acyclic engine at the default's effort
(Options(quick=True), with no `worth_below`, so nothing is skipped for the chooser's sake),
loads over the exact optimum (routing/optimum.py):
- `one tree`: its best plan with one tree per source switch (Routes.unspread, or the plan
  itself when routing below the switch did not lower the load);
- `split`: the plan, the hosts of some switches on several trees (routing/spread.py,
  acyclic/refine.py `refined_split`), `sw split` switches split, its VLANs;
- `order LP`: the order LP (routing/order_lp.py) of a channel order that every tree of
  the plan increases in: no routing in that order, split however finely, carries less;
- df: Dally and Seitz's criterion computed from every tree the hosts send on;
- CPU seconds of the engine alone.
`--no-lp-walk` leaves out the second order walk from the optimum's turns (acyclic/lp_guide.py),
which the default's effort runs on plans still above 1.2x the optimum after the first.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402

from vlanroute.model.topology import Topology  # noqa: E402
from vlanroute.routing.engine import Options, Routes, packing_of  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.order_lp import OrderLP  # noqa: E402
from vlanroute.routing.registry import ENGINES  # noqa: E402
from vlanroute.routing.trees import pruned_parents  # noqa: E402

Fabric = Callable[[], tuple[Topology, dict[str, int]]]


def cases(kinds: set[str]) -> list[tuple[str, Fabric]]:
    out: list[tuple[str, Fabric]] = []
    if "rr" in kinds:
        out += [(f"random 3-regular 24, seed {s}", lambda s=s: F.random_regular(24, 3, s)) for s in range(10)]
    if "df" in kinds:
        out += [("dragonfly 6 groups x 4", lambda: F.dragonfly(6, 4)),
                ("dragonfly 9 groups x 4", lambda: F.dragonfly(9, 4))]
    if "dt" in kinds:
        out += [("6x6 torus, 3 cables gone", lambda: F.degraded_torus(6, 3, 0)),
                ("6x6 torus, 5 cables gone (seed 3)", lambda: F.degraded_torus(6, 5, seed=3)),
                ("8x8 torus, 6 cables gone", lambda: F.degraded_torus(8, 6, seed=1))]
    if "dtall" in kinds:            # bench/degraded_tori.py's rows
        for k, removed, seed in [(6, 3, 0), (6, 3, 1), (6, 3, 5), (6, 4, 2), (6, 4, 7), (6, 5, 3), (6, 6, 4),
                                 (8, 3, 0), (8, 4, 2), (8, 5, 3), (8, 6, 1)]:
            out.append((f"{k}x{k} torus, {removed} cables gone (seed {seed})",
                        lambda k=k, r=removed, s=seed: F.degraded_torus(k, r, s)))
    return out


def order_floor(topo: Topology, hosts: dict[str, int], routes: Routes) -> float:
    """The order LP of a topological order of the plan's channel dependencies (every tree a
    switch's hosts send on, pruned to the switches with hosts)."""
    hosted = {s for s, n in hosts.items() if n}
    cdg = nx.DiGraph()
    arcs = sorted(topo.arc_cables())
    cdg.add_nodes_from(arcs)
    for src in sorted(hosted):
        trees = [t for t, _ in routes.splits[src]] if src in routes.splits else [routes.parents[src]]
        for tree in trees:
            tree = pruned_parents(tree, src, hosted)
            for v, p in tree.items():
                if p != src:
                    cdg.add_edge((tree[p], p), (p, v))
    rank = {a: i for i, a in enumerate(nx.lexicographical_topological_sort(cdg))}
    lp = OrderLP(topo, hosts)
    sol = lp.solve(np.array([float(rank[a]) for a in lp.arcs]))
    assert sol is not None
    return sol.load


def main() -> int:
    args = sys.argv[1:]
    markdown = "--markdown" in args
    kinds = {a for a in args if not a.startswith("--")} or {"rr", "df", "dt"}
    head = ["fabric", "one tree", "split", "sw split", "VLANs", "order LP", "df", "cpu s"]
    widths = [34, 8, 6, 8, 5, 8, 3, 6]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(" ".join(f"{h:>{w}}" for h, w in zip(head, widths)))
    engine = ENGINES["acyclic"]
    for title, make in cases(kinds):
        topo, hosts = make()
        opt = optimum_bound(topo, hosts).value
        params = engine.params(topo, Options(quick=True))
        if "--no-lp-walk" in args:
            params = replace(params, lp_walk=False)
        c0 = time.process_time()
        routes = engine.route(topo, hosts, params)
        took = time.process_time() - c0
        load = F.max_load(topo, hosts, routes.parents, routes.splits)
        one = routes.unspread[0] if routes.unspread else load
        df = F.channel_dependencies_acyclic(routes.parents, hosts, routes.splits)
        cells = [title, f"{one / opt:.3f}", f"{load / opt:.3f}", str(len(routes.splits)),
                 str(len(packing_of(routes, topo, hosts))), f"{order_floor(topo, hosts, routes) / opt:.3f}",
                 "yes" if df else "NO", f"{took:.1f}"]
        if markdown:
            print("| " + " | ".join(cells) + " |", flush=True)
        else:
            print(" ".join(f"{c:>{w}}" for c, w in zip(cells, widths)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
