"""Benchmark: routing quality under a VLAN budget (issue 7).

Run: python bench/quality.py [--quick] [--markdown]
For every topology and budget: VLANs used, all-to-all max link load / its lower bound,
mean stretch (routed hops / shortest hops over all host pairs), planning time (the whole
plan: routing, packing, port plan, metrics, verification). "unlimited" is the default
minimal routing (dor) with no budget but the hardware's; the budgets run
routing.algorithm: budget with routing.max_vlans set.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vlanroute.errors import UserError  # noqa: E402
from vlanroute.plan.build import plan_from_file  # noqa: E402

BIG = ["platform=linux-bridge", "switches={}", "settings.learning.pool=10.0.0.0/8", "topology.links_per_pair=1"]
TORUS = "inventories/seed-torus.yaml"
CASES = [
    ("seed tree", "inventories/seed-tree.yaml", []),
    ("seed ring 8", "inventories/seed-ring.yaml", []),
    ("seed mesh 4x2", "inventories/seed-mesh.yaml", []),
    ("seed torus 4x2", TORUS, []),
    ("seed complete 8", "inventories/seed-complete.yaml", []),
    ("torus 8x8, 4 h/sw", TORUS, ["topology.dims=[8,8]", "hosts={per_switch: 4}", *BIG]),
    ("torus 16x16, 4 h/sw", TORUS, ["topology.dims=[16,16]", "hosts={per_switch: 4}", *BIG]),
    ("torus 8x8x8, 4 h/sw", TORUS, ["topology.dims=[8,8,8]", "hosts={per_switch: 4}", *BIG]),
    ("hyper-crossbar 16x16, 10 h/sw", "inventories/hyper-crossbar-16x16.yaml", []),
]
BUDGETS: list[int | None] = [1, 2, 4, 8, 16, 64, None]


def main() -> int:
    quick = "--quick" in sys.argv
    markdown = "--markdown" in sys.argv
    cases = CASES[:6] if quick else CASES
    head = ["topology", "budget", "VLANs", "load/lb", "stretch", "time s"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
    else:
        print(f"{head[0]:<32} {head[1]:>9} {head[2]:>5} {head[3]:>8} {head[4]:>7} {head[5]:>7}")
    for title, inv, sets in cases:
        for k in BUDGETS:
            extra = ["routing.algorithm=budget", f"routing.max_vlans={k}"] if k else []
            t0 = time.perf_counter()
            try:
                m = plan_from_file(ROOT / inv, [*sets, *extra]).metrics
            except UserError as exc:
                row = [title, str(k or "unlimited"), "-", "-", "-", exc.message[:60]]
            else:
                dt = time.perf_counter() - t0
                ratio = m.max_link_load / m.link_load_lower_bound if m.link_load_lower_bound else 1.0
                row = [title, str(k or "unlimited"), str(m.vlan_count), f"{ratio:.3f}", f"{m.mean_stretch:.3f}",
                       f"{dt:.1f}"]
            if markdown:
                print("| " + " | ".join(row) + " |")
            else:
                print(f"{row[0]:<32} {row[1]:>9} {row[2]:>5} {row[3]:>8} {row[4]:>7} {row[5]:>7}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
