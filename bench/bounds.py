"""How tight the VLAN-budget lower bound is (routing/bounds.py) on tiny graphs.

Run: python bench/bounds.py [--markdown]
For rings, meshes, tori and complete graphs small enough to search exhaustively (every
choice of k spanning trees, every assignment of sources to them: tests/exhaustive_trees.py),
the least possible maximum load per cable with at most k VLANs, the bound, their ratio and
which argument gives the bound. Hosts per switch: one, two, or 1, 2, 3, 1, 2, 3, ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from exhaustive_trees import PATTERNS, SMALL, budget_optimum, topology_of, work  # noqa: E402
from vlanroute.routing.bounds import load_bounds  # noqa: E402


def main() -> int:
    markdown = "--markdown" in sys.argv
    head = ["graph", "hosts", "k", "optimum", "bound", "optimum/bound", "binding"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
    else:
        print(f"{head[0]:<10} {head[1]:<7} {head[2]:>2} {head[3]:>8} {head[4]:>8} {head[5]:>13} {head[6]}")
    ratios = []
    for name, g in SMALL.items():
        for pattern, h in PATTERNS.items():
            hosts = {v: h(i) for i, v in enumerate(g.nodes)}
            for k in (1, 2, 3):
                if work(g, hosts, k) > 300_000:
                    continue
                opt = budget_optimum(g, hosts, k)
                b = load_bounds(topology_of(nx.Graph(g)), hosts, k)
                ratios.append(opt / b.best)
                row = [name, pattern, str(k), f"{opt:g}", f"{b.best:.4g}", f"{opt / b.best:.3f}", b.binding]
                if markdown:
                    print("| " + " | ".join(row) + " |")
                else:
                    print(f"{row[0]:<10} {row[1]:<7} {row[2]:>2} {row[3]:>8} {row[4]:>8} {row[5]:>13} {row[6]}")
    exact = sum(1 for r in ratios if r < 1 + 1e-9)
    print(f"\n{len(ratios)} cases: bound = optimum in {exact}, optimum/bound at most {max(ratios):.3f}, "
          f"geometric mean {(__import__('math').prod(ratios)) ** (1 / len(ratios)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
