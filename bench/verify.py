"""Benchmark: `vlanroute verify` (parse + loop check + learning + all host pairs).

Run: python bench/verify.py [--quick | --all]   (--all adds the 32x32 torus)
Each case is rendered first (not timed), then verified in a fresh interpreter so that
ru_maxrss is the verification's own peak.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A 62xx-family platform with a MAC table large enough for the plan to be accepted
# (1,024 hosts x 128 VLANs = 131,072 entries per switch; a real 6248 holds about 8K).
BIG_PC = ["platforms={pc-bigmac: {base: powerconnect-6248, mac_capacity: 1000000}}",
          "platform=pc-bigmac", "switches={}", "settings.learning.pool=10.0.0.0/8"]
CASES = [
    ("seed cluster: 4x2 torus, 225 hosts", "inventories/seed-torus.yaml", []),
    ("16x16 torus, 4 hosts/switch", "inventories/seed-torus.yaml",
     ["topology.dims=[16,16]", "topology.links_per_pair=1", "hosts={per_switch: 4}", *BIG_PC]),
    # the largest example inventory (linux-bridge, 256 VLANs, 6.5M host pairs)
    ("16x16 hyper-crossbar, 10 hosts/switch", "inventories/hyper-crossbar-16x16.yaml", []),
    # --all: 1,024 switches, 16,384 hosts, 512 VLANs, 268M host pairs (issue 15's target case)
    ("32x32 torus, 16 hosts/switch", "inventories/seed-torus.yaml",
     ["topology.dims=[32,32]", "topology.links_per_pair=1", "hosts={per_switch: 16}",
      "platforms={pc-bigmac: {base: powerconnect-6248, mac_capacity: 100000000}}", "platform=pc-bigmac",
      "switches={}", "settings.learning.pool=10.0.0.0/8"]),
]

CHILD = r"""
import json, resource, sys, time
from vlanroute.plan.build import plan_from_file
from vlanroute.verify.configs import verify_outdir
plan = plan_from_file(sys.argv[2], sys.argv[3:])
platforms = {sp.platform.name: sp.platform for sp in plan.switches.values()}
t0, c0 = time.perf_counter(), time.process_time()
report = verify_outdir(sys.argv[1], platforms)
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"seconds": t1 - t0, "cpu": c1 - c0, "ok": report.ok, "summary": report.summary,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    quick = "--quick" in sys.argv
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = CASES[:1] if quick else CASES if "--all" in sys.argv else CASES[:3]
        for i, (title, inv, sets) in enumerate(cases):
            outdir = Path(tmp) / f"case{i}"
            args = [sys.executable, "-m", "vlanroute.cli", "render", str(ROOT / inv), "-o", str(outdir),
                    "--no-verify"] + [x for s in sets for x in ("--set", s)]
            r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
            if r.returncode != 0:
                rows.append((title, "render FAILED: " + (r.stderr.strip().splitlines() or ["?"])[-1]))
                continue
            out = subprocess.run([sys.executable, "-c", CHILD, str(outdir), str(ROOT / inv), *sets],
                                 capture_output=True, text=True, cwd=ROOT)
            if out.returncode != 0:
                rows.append((title, "verify FAILED: " + (out.stderr.strip().splitlines() or ["?"])[-1]))
                continue
            res = json.loads(out.stdout)
            sw = res["summary"][0].split()[0]
            pairs = res["summary"][2].split()[2]
            rows.append((title, f"{sw:>5} {pairs:>9} {'yes' if res['ok'] else 'NO':>4} "
                                f"{res['seconds']:>8.2f} {res['cpu']:>7.2f} {res['peak_mib']:>9.0f}"))
    # wall time depends on what else runs on the machine; CPU time much less so
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'case':<40} {'sw':>5} {'pairs':>9} {'ok':>4} {'time s':>8} {'cpu s':>7} {'peak MiB':>9}")
    for title, text in rows:
        print(f"{title:<40} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
