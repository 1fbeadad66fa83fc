"""Benchmark: the deadlock-free engine on more fabrics of issue 23's irregular kinds than
bench/quality.py's fixed rows: random 3-regular graphs of 24 switches over ten seeds and of
48 switches over five, dragonflies of several shapes, leaf-spines of several shapes (hosts
on the leaves).

Run: python bench/irregular_kinds.py [--markdown]

Per fabric, 4 hosts per (hosted) switch: `acyclic`'s all-to-all max link load over the
exact optimum (routing/optimum.py's LP), whether its channel dependency graph is acyclic
(computed from the routes), whether the order LP refined its channel order (custom fabrics
of 20 to 64 switches, routing/acyclic/refine.py), its CPU seconds, and where one is known a
floor for any plan
with one tree per source switch: on a leaf-spine of L leaves and S spines a leaf sends each
other leaf's traffic through one spine, so some uplink carries ceil((L-1)/S) leaves' worth
(pigeonhole) against the optimum's (L-1)/S.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402

from vlanroute.model.topology import Topology  # noqa: E402
from vlanroute.routing.engine import Options  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.registry import ENGINES  # noqa: E402

Fabric = Callable[[], tuple[Topology, dict[str, int]]]


def cases() -> list[tuple[str, Fabric, float | None]]:
    out: list[tuple[str, Fabric, float | None]] = []
    for seed in range(10):
        out.append((f"random 3-regular 24, seed {seed}", lambda seed=seed: F.random_regular(24, 3, seed), None))
    for seed in range(5):
        out.append((f"random 3-regular 48, seed {seed}", lambda seed=seed: F.random_regular(48, 3, seed), None))
    for groups, routers in [(4, 4), (5, 4), (6, 3), (6, 4), (7, 4), (8, 4), (9, 3), (9, 4), (8, 5)]:
        out.append((f"dragonfly {groups} groups x {routers}",
                    lambda g=groups, r=routers: F.dragonfly(g, r), None))
    for leaves, spines in [(4, 4), (6, 3), (8, 2), (8, 4), (12, 4), (16, 4), (16, 8)]:
        floor = math.ceil((leaves - 1) / spines) / ((leaves - 1) / spines)
        out.append((f"leaf-spine {leaves}x{spines}", lambda a=leaves, b=spines: F.leaf_spine(a, b), floor))
    return out


def main() -> None:
    markdown = "--markdown" in sys.argv[1:]
    head = ["fabric", "acyclic", "df", "refined", "cpu s", "tree floor"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(f"{head[0]:<34} {head[1]:>8} {head[2]:>4} {head[3]:>7} {head[4]:>6} {head[5]:>10}")
    engine = ENGINES["acyclic"]
    for title, make, floor in cases():
        topo, hosts = make()
        opt = optimum_bound(topo, hosts).value
        c0 = time.process_time()
        routes = engine.route(topo, hosts, engine.params(topo, Options()))
        took = time.process_time() - c0
        cells = [title, f"{F.max_load(topo, hosts, routes.parents) / opt:.3f}",
                 "yes" if F.channel_dependencies_acyclic(routes.parents, hosts) else "NO",
                 "yes" if routes.choices.record().get("refined") else "-", f"{took:.1f}",
                 f"{floor:.3f}" if floor is not None else "-"]
        if markdown:
            print("| " + " | ".join(cells) + " |", flush=True)
        else:
            print(f"{cells[0]:<34} {cells[1]:>8} {cells[2]:>4} {cells[3]:>7} {cells[4]:>6} {cells[5]:>10}", flush=True)


if __name__ == "__main__":
    main()
