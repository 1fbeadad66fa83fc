"""Benchmark: the acyclic engine on intact tori under shuffled switch names
(routing/acyclic/restarts.py), against the same search under the grid-order names.

Run: python bench/torus_shuffles.py [--markdown] [--seeds N] [DIMS ...]   (DIMS like 8x8; default 5x5 7x7 8x6 8x8)

Per torus, 4 hosts per switch: the all-to-all max link load over the exact optimum
(routing/optimum.py) of the engine's search under the real names (the turns start, the
guided orders), then of the search of the same torus as a custom fabric under each shuffle
1..N (default: restarts.RESTARTS), whether each plan's channel dependency graph is
acyclic (computed from its routes), and the CPU seconds of each search. The engine keeps
the lightest of the first and, above restarts.ABOVE, of the shuffles.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402

from vlanroute.routing.acyclic import engine as A  # noqa: E402
from vlanroute.routing.acyclic.restarts import RESTARTS  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.turns import turn_routes  # noqa: E402


def main() -> int:
    args = sys.argv[1:]
    markdown = "--markdown" in args
    seeds = RESTARTS
    if "--seeds" in args:
        seeds = int(args[args.index("--seeds") + 1])
        del args[args.index("--seeds"):args.index("--seeds") + 2]
    shapes = [a for a in args if not a.startswith("--")] or ["5x5", "7x7", "8x6", "8x8"]
    head = ["torus", "grid names", *[f"shuffle {s}" for s in range(1, seeds + 1)], "all df", "cpu s"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(" ".join(f"{h:>11}" for h in head))
    for shape in shapes:
        topo, hosts = F.torus([int(x) for x in shape.split("x")])
        opt = optimum_bound(topo, hosts).value
        cells, cpu, free = [], [], True
        t = time.process_time()
        own = A.acyclic_routes(topo, hosts, "acyclic", turn_routes(topo, hosts), A.guide_for(topo, hosts))
        cpu.append(time.process_time() - t)
        cells.append(F.max_load(topo, hosts, own.parents) / opt)
        free &= F.channel_dependencies_acyclic(own.parents, hosts)
        for seed in range(1, seeds + 1):
            t = time.process_time()
            got = A.shuffled_routes(topo, hosts, seed)
            cpu.append(time.process_time() - t)
            cells.append(F.max_load(topo, hosts, got.parents) / opt)
            free &= F.channel_dependencies_acyclic(got.parents, hosts)
        row = [shape, *[f"{c:.3f}" for c in cells], "yes" if free else "NO", "/".join(f"{c:.0f}" for c in cpu)]
        print(("| " + " | ".join(row) + " |") if markdown else " ".join(f"{c:>11}" for c in row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
