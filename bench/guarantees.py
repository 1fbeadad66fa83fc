"""Benchmark: what heals by itself (bundle/guarantees.py). Per fabric, CPU seconds of:
`plan` itself; the line `plan` adds (every single failure classed, 200 double failures
sampled and classed: connectivity, the failover's choice, the policy); and what `whatif`
adds to its rows (the 200 double failures repaired, the failover priced, deadlock freedom
checked). Prints a table.

Run: python bench/guarantees.py [--quick]   (--quick: the seed inventories only)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from vlanroute import api
from vlanroute.bundle.guarantees import Doubles, Fabric
from vlanroute.commands.plan import healing_line

ROOT = Path(__file__).resolve().parent.parent
INV = ROOT / "inventories"
BIG = ["topology.links_per_pair=1", "hosts={per_switch: 4}", "platform=linux-bridge", "switches={}",
       "settings.learning.pool=10.0.0.0/8"]
# (title, inventory, --set, whether to time whatif's doubles: a repair from scratch each,
# too long on the largest: their single failures alone take minutes in whatif)
CASES = [("seed torus", INV / "seed-torus.yaml", [], True),
         ("seed torus, backups", INV / "seed-torus.yaml", ["routing.protection=links"], True),
         ("seed ring", INV / "seed-ring.yaml", [], True),
         ("seed tree", INV / "seed-tree.yaml", [], True),
         ("seed complete", INV / "seed-complete.yaml", [], True),
         ("seed mesh", INV / "seed-mesh.yaml", [], True),
         ("8x8 torus", INV / "seed-torus.yaml", ["topology.dims=[8,8]", *BIG], True),
         ("32x32 torus", INV / "seed-torus.yaml", ["topology.dims=[32,32]", *BIG], False),
         ("hyper-crossbar 16x16", INV / "hyper-crossbar-16x16.yaml", [], False)]


def _cpu(f):  # type: ignore[no-untyped-def]
    start = time.process_time()
    out = f()
    return out, time.process_time() - start


def main() -> None:
    cases = CASES[:6] if "--quick" in sys.argv else CASES
    api.plan(INV / "custom-lab.yaml")        # the imports, outside every figure
    print(f"{'fabric':24} {'failures':>9} {'plan CPU s':>11} {'plan line CPU s':>16} {'doubles':>8} "
          f"{'whatif doubles CPU s':>21}")
    for title, path, sets, price in cases:
        plan, t_plan = _cpu(lambda: api.plan(path, tuple(sets)))    # noqa: B023
        _, t_line = _cpu(lambda: healing_line(plan))                 # noqa: B023
        fab = Fabric.of_plan(plan)
        sample = fab.doubles(200, 0)
        doubles = "not timed"
        if price:
            _, t_doubles = _cpu(lambda: Doubles(fab.double_counts(), 0,  # noqa: B023
                                                [fab.price(fab.classify(f)) for f in sample]))  # noqa: B023
            doubles = f"{t_doubles:.2f}"
        print(f"{title:24} {len(fab.singles()):>9} {t_plan:>11.3f} {t_line:>16.3f} {len(sample):>8} {doubles:>21}",
              flush=True)


if __name__ == "__main__":
    main()
