"""Benchmark: `vlanroute whatif` (routing/whatif/failures.py) on tori of growing size: every single
pair and switch failure repaired in turn. Prints a table: failures, seconds, per failure.

Run: python bench/whatif.py [--quick]   (--quick: up to 8x8)
Targets: issue 22, a 16x16 torus in under 30 s; issue 40, at most 10 s of CPU (bench/speed.py --whatif
measures the 32x32 torus too). docs/failures.md gives the measured figures.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from vlanroute.bundle.repaired import trees_of
from vlanroute.plan.build import plan_from_file
from vlanroute.model.links import link
from vlanroute.routing.whatif.failures import what_if

ROOT = Path(__file__).resolve().parent.parent
BIG = ["topology.links_per_pair=1", "hosts={per_switch: 4}", "platform=linux-bridge", "switches={}",
       "settings.learning.pool=10.0.0.0/8"]
CASES = [("seed 4x2 torus, 225 hosts", []),
         ("4x4 torus, 4 hosts/switch", ["topology.dims=[4,4]", *BIG]),
         ("8x8 torus, 4 hosts/switch", ["topology.dims=[8,8]", *BIG]),
         ("16x16 torus, 4 hosts/switch", ["topology.dims=[16,16]", *BIG])]


def main() -> None:
    cases = CASES[:3] if "--quick" in sys.argv else CASES
    # CPU seconds beside the wall clock: on a shared machine the wall clock says little.
    print(f"{'case':32} {'VLANs':>6} {'failures':>9} {'seconds':>9} {'CPU s':>8} {'ms/failure':>11}")
    for title, sets in cases:
        doc = plan_from_file(ROOT / "inventories" / "seed-torus.yaml", sets).to_document()
        cables: dict[tuple[str, str], int] = {}
        for c in doc.cabling:
            cables[link(c.a, c.b)] = cables.get(link(c.a, c.b), 0) + 1
        hosts = {s: 0 for s in doc.switches}
        for h in doc.hosts.values():
            hosts[h.switch] += 1
        start, cpu = time.perf_counter(), time.process_time()
        rows = what_if(trees_of(doc), cables, hosts, list(doc.switches), bool(doc.metrics.get("deadlock_free")))
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"{title:32} {len(doc.vlans):>6} {len(rows):>9} {took:>9.2f} {cpu:>8.2f} {1000 * cpu / len(rows):>11.1f}",
              flush=True)


if __name__ == "__main__":
    main()
