"""Benchmark: the flow model (vlanroute/perf) on large fabrics, time per pattern.

Issue 26's target: a 16x16 torus with 16 hosts per switch (4,096 hosts; all-to-all is
16.8 M flows, 65,536 switch-pair groups) answers in seconds. The plan is made first (not
timed here: bench/plan.py times it); then each pattern on the VLAN routing, the spanning
tree and the big switch (`compare`), wall and CPU seconds.

Run: python bench/throughput.py [--quick]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from vlanroute.perf.planfabric import compare, fabrics_of
from vlanroute.plan.build import plan_from_file

ROOT = Path(__file__).resolve().parent.parent
BIG = ["platform=linux-bridge", "switches={}", "settings.learning.pool=10.0.0.0/8"]
CASES = [
    ("seed 4x2 torus, 225 hosts", "inventories/seed-torus.yaml", []),
    ("16x16 torus, 16 hosts/switch", "inventories/seed-torus.yaml",
     ["topology.dims=[16,16]", "topology.links_per_pair=1", "hosts={per_switch: 16}", *BIG]),
]
PATTERNS = ["all-to-all", "permutation", "neighbour", "bisection"]


def main() -> int:
    quick = "--quick" in sys.argv
    print(f"{'case':<32} {'pattern':<26} {'flows':>10} {'VLAN Gb/s':>10} {'x STP':>7} {'wall s':>7} {'cpu s':>7}")
    for title, inv, sets in CASES[:1] if quick else CASES:
        plan = plan_from_file(ROOT / inv, sets)
        t0 = time.perf_counter()
        fabrics = fabrics_of(plan)
        print(f"{title:<32} {'(fabrics: trees, STP)':<26} {'':>10} {'':>10} {'':>7} {time.perf_counter() - t0:>7.2f}")
        for pattern in PATTERNS:
            t0, c0 = time.perf_counter(), time.process_time()
            c = compare(fabrics, pattern, seeds=(1, 2, 3))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            eff = c.vlan.flows / c.vlan.exchange * 8e-3 if c.vlan.exchange else 0.0
            stp = c.stp.flows / c.stp.exchange * 8e-3 if c.stp.exchange else 0.0
            print(f"{title:<32} {c.pattern:<26} {c.vlan.flows:>10,} {eff:>10.1f} {eff / stp if stp else 0:>7.2f} "
                  f"{wall:>7.2f} {cpu:>7.2f}")
    # wall time depends on what else runs on the machine; CPU time much less so
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
