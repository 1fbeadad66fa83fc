"""Benchmark: plan + verification + metrics, and the plan JSON (`plan --json`), time and peak
memory, one process per case (the targets of issue 15: 32x32 torus under 10 s and 1 GB,
8x8x8 torus and 16x16 hyper-crossbar under 5 s, JSON included).

Run: python bench/plan.py [--quick]
Each case runs in a fresh interpreter so that ru_maxrss is that case's own peak.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIG = ["platform=linux-bridge", "switches={}", "settings.learning.pool=10.0.0.0/8"]
CASES = [
    ("seed 4x2 torus, 225 hosts", "inventories/seed-torus.yaml", []),
    ("32x32 torus, 16 hosts/switch", "inventories/seed-torus.yaml",
     ["topology.dims=[32,32]", "topology.links_per_pair=1", "hosts={per_switch: 16}", *BIG]),
    ("8x8x8 torus, 4 hosts/switch", "inventories/seed-torus.yaml",
     ["topology.dims=[8,8,8]", "topology.links_per_pair=1", "hosts={per_switch: 4}", *BIG]),
    ("16x16 hyper-crossbar, 10 hosts/switch", "inventories/hyper-crossbar-16x16.yaml", []),
]

CHILD = r"""
import json, resource, sys, time
from vlanroute.plan.build import plan_from_file
t0, c0 = time.perf_counter(), time.process_time()
plan = plan_from_file(sys.argv[1], sys.argv[2:])
t1, c1 = time.perf_counter(), time.process_time()
text = plan.to_document().to_json_text()      # what `plan --json` adds
t2, c2 = time.perf_counter(), time.process_time()
m = plan.metrics
print(json.dumps({"seconds": t1 - t0, "json_seconds": t2 - t1, "plan_cpu": c1 - c0, "cpu": c2 - c0, "mb": len(text) / 1e6,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "switches": m.switches, "hosts": m.hosts, "vlans": m.vlan_count,
                  "load_ratio": m.max_link_load / m.link_load_lower_bound if m.link_load_lower_bound else 1.0}))
"""


def main() -> int:
    quick = "--quick" in sys.argv
    rows = []
    for title, inv, sets in CASES[:2] if quick else CASES:
        out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / inv), *sets], capture_output=True, text=True,
                             cwd=ROOT)
        if out.returncode != 0:
            rows.append((title, "FAILED: " + out.stderr.strip().splitlines()[-1]))
            continue
        r = json.loads(out.stdout)
        rows.append((title, f"{r['switches']:>5} {r['hosts']:>6} {r['vlans']:>5} {r['load_ratio']:>7.3f} "
                            f"{r['seconds']:>8.2f} {r['json_seconds']:>7.2f} {r['plan_cpu']:>10.2f} {r['cpu']:>7.2f} "
                            f"{r['mb']:>6.1f} "
                            f"{r['peak_mib']:>9.0f}"))
    # wall time depends on what else runs on the machine; CPU time much less so
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'case':<40} {'sw':>5} {'hosts':>6} {'VLANs':>5} {'load/lb':>7} {'plan s':>8} {'json s':>7} "
          f"{'plan cpu s':>10} {'cpu s':>7} {'MB':>6} {'peak MiB':>9}")
    for title, text in rows:
        print(f"{title:<40} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
