"""Benchmark: trees as columns (routing/acyclic/columns.py) in the acyclic engine's search.

Run: python bench/columns.py [--quick | --default] [NAME ...]

Per fabric (4 hosts per switch), the acyclic engine at the full search's effort
(`routing.algorithm: acyclic`; --quick: the default's, without `worth_below`) plans once;
the column step is timed inside the run: `before` is the best plan it starts from (the plan
the engine returned before the step existed: the step is its last), `after` the plan
returned, both over the exact optimum (routing/optimum.py), with its VLANs, whether its
channel dependency graph is acyclic (df), the CPU seconds of the whole engine and of the
column steps alone, of the long order walk and of the walks from up*/down* orders (the full
search only; acyclic/starts.py, where the plan is still above 1.2x after the first column step). --default: the default plan instead (routing/choose.py with 802.3x flow
control, every engine, as `vlanroute plan` without routing.algorithm): the engine chosen, its
load over the optimum, VLANs, df and the choice's CPU seconds (the optimum's LP included).
Names: rr6 rr8 rr9 (random 3-regular 24, tests/fabrics.py), rr48s0 rr48s2 rr48s3 (random
3-regular 48, those seeds), r12s0 r16s0 r16s1 r16s3
(random 3-regular 12 and 16, those seeds), df4 df5 df6 df9 (dragonflies of 4, 5, 6 and 9
groups of 4), df63 (6 groups of 3), dt30 dt31 dt35 dt47 (6x6 tori with 3 or 4 cables gone, seeds 0, 1, 5, 7),
dt810 dt824 dt830 dt842 dt853 dt861 dt872 dt885 (8x8 tori with 1 to 8 cables gone; 3 to 6:
bench/degraded_tori.py's seeds).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402

import vlanroute.routing.acyclic.engine as E  # noqa: E402
from vlanroute.routing.choose import deadlock_free  # noqa: E402
from vlanroute.routing.engine import Options, packing_of  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.trees import max_load  # noqa: E402

CASES = {
    "rr6": ("random 3-regular 24, seed 6", lambda: F.random_regular(24, 3, 6)),
    "rr8": ("random 3-regular 24, seed 8", lambda: F.random_regular(24, 3, 8)),
    "rr9": ("random 3-regular 24, seed 9", lambda: F.random_regular(24, 3, 9)),
    "rr48s0": ("random 3-regular 48, seed 0", lambda: F.random_regular(48, 3, 0)),
    "rr48s2": ("random 3-regular 48, seed 2", lambda: F.random_regular(48, 3, 2)),
    "rr48s3": ("random 3-regular 48, seed 3", lambda: F.random_regular(48, 3, 3)),
    "r12s0": ("random 3-regular 12, seed 0", lambda: F.random_regular(12, 3, 0)),
    "r16s0": ("random 3-regular 16, seed 0", lambda: F.random_regular(16, 3, 0)),
    "r16s1": ("random 3-regular 16, seed 1", lambda: F.random_regular(16, 3, 1)),
    "r16s3": ("random 3-regular 16, seed 3", lambda: F.random_regular(16, 3, 3)),
    "df63": ("dragonfly 6 groups x 3", lambda: F.dragonfly(6, 3)),
    "df4": ("dragonfly 4 groups x 4", lambda: F.dragonfly(4, 4)),
    "df5": ("dragonfly 5 groups x 4", lambda: F.dragonfly(5, 4)),
    "df6": ("dragonfly 6 groups x 4", lambda: F.dragonfly(6, 4)),
    "df9": ("dragonfly 9 groups x 4", lambda: F.dragonfly(9, 4)),
    "dt30": ("6x6 torus, 3 cables gone (seed 0)", lambda: F.degraded_torus(6, 3, 0)),
    "dt31": ("6x6 torus, 3 cables gone (seed 1)", lambda: F.degraded_torus(6, 3, 1)),
    "dt35": ("6x6 torus, 3 cables gone (seed 5)", lambda: F.degraded_torus(6, 3, 5)),
    "dt47": ("6x6 torus, 4 cables gone (seed 7)", lambda: F.degraded_torus(6, 4, 7)),
    "dt810": ("8x8 torus, 1 cable gone (seed 0)", lambda: F.degraded_torus(8, 1, 0)),
    "dt824": ("8x8 torus, 2 cables gone (seed 4)", lambda: F.degraded_torus(8, 2, 4)),
    "dt830": ("8x8 torus, 3 cables gone (seed 0)", lambda: F.degraded_torus(8, 3, 0)),
    "dt842": ("8x8 torus, 4 cables gone (seed 2)", lambda: F.degraded_torus(8, 4, 2)),
    "dt853": ("8x8 torus, 5 cables gone (seed 3)", lambda: F.degraded_torus(8, 5, 3)),
    "dt861": ("8x8 torus, 6 cables gone (seed 1)", lambda: F.degraded_torus(8, 6, 1)),
    "dt872": ("8x8 torus, 7 cables gone (seed 2)", lambda: F.degraded_torus(8, 7, 2)),
    "dt885": ("8x8 torus, 8 cables gone (seed 5)", lambda: F.degraded_torus(8, 8, 5)),
}


def default(keys: list[str], cases: dict | None = None) -> None:  # type: ignore[type-arg]
    """The default plan's table for `keys` of `cases` (default: CASES); an engine whose plan
    is in a stored torus plan's order (acyclic/gapped.py) is marked "(stored order)"."""
    from vlanroute.routing.choose import choose_routes
    from vlanroute.routing.registry import ENGINES
    print("| fabric | default: engine, load / optimum, VLANs, df | best deadlock-free candidate | CPU s |")
    print("|---|---|---|---|")
    for key in keys:
        name, make = (cases or CASES)[key]
        topo, hosts = make()
        t = time.process_time()
        opt = optimum_bound(topo, hosts).value
        choice = choose_routes(topo, hosts, list(ENGINES.values()), Options(), True, opt)
        cpu = time.process_time() - t
        routes = choice.routes
        load = max_load(routes.parents, hosts, topo.arc_cables(), routes.splits)
        vlans = len(packing_of(routes, topo, hosts))
        df = "df" if deadlock_free(routes.parents, hosts, dict(routes.splits)) else "not df"
        free = [c for c in choice.tried if c.deadlock_free]
        safe = min(free, key=lambda c: (round(c.peak, 6), c.vlans)) if free else None
        best_free = f"{safe.engine} {safe.peak / opt:.3f}, {safe.vlans} VLANs" if safe else "-"
        record = routes.choices.record() if hasattr(routes.choices, "record") else {}
        stored = " (stored order)" if "stored_order" in record else ""
        print(f"| {name} | {routes.algorithm}{stored} {load / opt:.3f}, {vlans} VLANs, {df} | {best_free} | {cpu:.1f} |",
              flush=True)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    if "--default" in sys.argv:
        default(args or list(CASES))
        return 0
    step: dict[str, float] = {}
    inner = E.column_step

    def timed(topo, host_count, plans, max_vlans, **kw):  # type: ignore[no-untyped-def]
        t = time.process_time()
        if plans:
            step.setdefault("before", min(p[0] for p in plans))
        got = inner(topo, host_count, plans, max_vlans, **kw)
        step["cpu"] = step.get("cpu", 0.0) + time.process_time() - t
        return got

    def clocked(fn, name):  # type: ignore[no-untyped-def]
        def run(*a, **kw):  # type: ignore[no-untyped-def]
            t = time.process_time()
            got = fn(*a, **kw)
            step[name] = time.process_time() - t
            return got
        return run

    E.column_step = timed
    E.walked_orders = clocked(E.walked_orders, "walk")
    E.start_orders = clocked(E.start_orders, "starts")
    print("| fabric | before | after | VLANs | df | engine CPU s | column steps CPU s | long walk CPU s | start walks CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in args or list(CASES):
        name, make = CASES[key]
        topo, hosts = make()
        step.clear()
        opt = optimum_bound(topo, hosts).value
        effort = replace(E.QUICK, max_vlans=Options().max_vlans) if quick else E.FULL
        t = time.process_time()
        routes = E.ACYCLIC.route(topo, hosts, effort)
        cpu = time.process_time() - t
        load = max_load(routes.parents, hosts, topo.arc_cables(), routes.splits)
        before = step.get("before", load)
        vlans = len(packing_of(routes, topo, hosts))
        df = "yes" if deadlock_free(routes.parents, hosts, dict(routes.splits)) else "NO"
        print(f"| {name} | {before / opt:.3f} | {load / opt:.3f} | {vlans} | {df} | {cpu:.1f} | "
              f"{step.get('cpu', 0.0):.1f} | {step.get('walk', 0.0):.1f} | {step.get('starts', 0.0):.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
