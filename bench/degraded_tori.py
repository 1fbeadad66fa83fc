"""Benchmark: the deadlock-free engines on tori with failed cables (issue 23's "others of
those kinds" of the degraded 6x6 torus in bench/quality.py).

Run: python bench/degraded_tori.py [--markdown]

For 6x6 and 8x8 tori with 3 to 6 random cables gone (tests/fabrics.py degraded_torus,
seeded, kept connected), 4 hosts per switch: the all-to-all max link load over the exact
optimum (routing/optimum.py's LP) of `acyclic` and `turns` (up*/down* there: a degraded
torus is a custom graph), whether acyclic's channel dependency graph is acyclic (computed
from the routes), and acyclic's CPU seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402

from vlanroute.routing.engine import Options  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.registry import ENGINES  # noqa: E402

CASES = [(6, 3, 0), (6, 3, 1), (6, 3, 5), (6, 4, 2), (6, 4, 7), (6, 5, 3), (6, 6, 4),
         (8, 3, 0), (8, 4, 2), (8, 5, 3), (8, 6, 1)]


def main() -> int:
    markdown = "--markdown" in sys.argv
    head = ["torus", "cables gone", "seed", "acyclic", "df", "cpu s", "turns"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
    else:
        print(" ".join(f"{h:>11}" for h in head))
    acyclic, turns = ENGINES["acyclic"], ENGINES["turns"]
    for k, removed, seed in CASES:
        topo, hosts = F.degraded_torus(k, removed, seed)
        opt = optimum_bound(topo, hosts).value
        c0 = time.process_time()
        parents = acyclic.route(topo, hosts, acyclic.params(topo, Options())).parents
        took = time.process_time() - c0
        df = F.channel_dependencies_acyclic(parents, hosts)
        other = turns.route(topo, hosts, turns.params(topo, Options())).parents
        cells = [f"{k}x{k}", str(removed), str(seed), f"{F.max_load(topo, hosts, parents) / opt:.3f}",
                 "yes" if df else "NO", f"{took:.1f}", f"{F.max_load(topo, hosts, other) / opt:.3f}"]
        print("| " + " | ".join(cells) + " |" if markdown else " ".join(f"{c:>11}" for c in cells))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
