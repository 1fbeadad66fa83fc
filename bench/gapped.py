"""Benchmark: the stored tori's orders on tori with cables gone (routing/acyclic/gapped.py).

Run: python bench/gapped.py [--quick | --default] [NAME ...]

Per fabric (4 hosts per switch; names as in bench/columns.py, plus dt24 dt53 dt64: the
6x6 tori with 4, 5, 6 cables gone, seeds 2, 3, 4), loads over the exact optimum
(routing/optimum.py), deadlock freedom computed from every tree a host sends on:
- engine (the full search, `routing.algorithm: acyclic`; --quick: the default's effort):
  the search alone (the stored orders off), the stored orders alone (the best order LP
  screened, the plan, VLANs, df) and the engine's plan (the lighter), CPU seconds of each
  part;
- --default: bench/columns.py's table of the default plan (routing/choose.py, 802.3x flow
  control on, every engine, as `vlanroute plan` without routing.algorithm): engine ("stored
  order" where the plan is in one), load, VLANs, df, the best deadlock-free candidate, CPU
  seconds of the choice (the optimum's LP included).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import columns  # noqa: E402
import fabrics as F  # noqa: E402

import vlanroute.routing.acyclic.engine as E  # noqa: E402
from vlanroute.routing.acyclic.gapped import gapped_orders  # noqa: E402
from vlanroute.routing.choose import deadlock_free  # noqa: E402
from vlanroute.routing.engine import Options, packing_of  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.trees import max_load  # noqa: E402

CASES = {k: v for k, v in columns.CASES.items() if k.startswith("dt")}
CASES.update({
    "dt24": ("6x6 torus, 4 cables gone (seed 2)", lambda: F.degraded_torus(6, 4, 2)),
    "dt53": ("6x6 torus, 5 cables gone (seed 3)", lambda: F.degraded_torus(6, 5, 3)),
    "dt64": ("6x6 torus, 6 cables gone (seed 4)", lambda: F.degraded_torus(6, 6, 4)),
})


def shown(routes, topo, hosts, opt) -> str:  # type: ignore[no-untyped-def]
    load = max_load(routes.parents, hosts, topo.arc_cables(), routes.splits)
    df = "df" if deadlock_free(routes.parents, hosts, dict(routes.splits)) else "NOT df"
    return f"{load / opt:.3f}, {len(packing_of(routes, topo, hosts))} VLANs, {df}"


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--default" in sys.argv:
        columns.default(args or list(CASES), CASES)
        return 0
    quick = "--quick" in sys.argv
    print("| fabric | search alone | CPU s | best order LP | stored orders alone | CPU s | engine |")
    print("|---|---|---|---|---|---|---|")
    for key in args or list(CASES):
        name, make = CASES[key]
        topo, hosts = make()
        opt = optimum_bound(topo, hosts).value
        effort = replace(E.QUICK, max_vlans=Options().max_vlans) if quick else E.FULL
        t = time.process_time()
        searched = E.ACYCLIC.route(topo, hosts, replace(effort, gapped=0))
        search_cpu = time.process_time() - t
        t = time.process_time()
        got = E.gapped_routes(topo, hosts, effort)
        gapped_cpu = time.process_time() - t
        found = gapped_orders(topo, hosts, 1)
        lp = f"{found[2][0][0].load / opt:.3f}" if found else "-"
        alone = shown(got[1], topo, hosts, opt) if got else "- (not run)"
        loads = [max_load(r.parents, hosts, topo.arc_cables(), r.splits) for r in [searched, *([got[1]] if got else [])]]
        print(f"| {name} | {shown(searched, topo, hosts, opt)} | {search_cpu:.1f} | {lp} | {alone} | "
              f"{gapped_cpu:.1f} | {min(loads) / opt:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
