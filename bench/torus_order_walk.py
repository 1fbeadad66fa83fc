"""Benchmark and generator: a deadlock-free plan of a square torus from the order LP's walk.

Run: python bench/torus_order_walk.py [K | AxB] [--cut-seed S] [--steps N] [--target X] [--save]

(defaults: K 8, S 3, N 150, X 1.25; about 5 to 10 minutes of CPU for the 8x8 torus.)
Writes vlanroute/routing/acyclic/plans/torus-KxK.json with --save, the plan the acyclic
engine then uses on that torus (routing/acyclic/stored.py, tests/test_acyclic_stored.py).

1. The acyclic engine (full search) plans the KxK torus with one cable held out
   (tests/fabrics.py `degraded_torus(K, 1, S)`, 4 hosts per switch): routes that never use
   that cable are routes of the whole torus, and the missing cable breaks the torus's
   symmetry, which is what holds the search at the ring cuts' floor (docs/routing-bounds.md,
   "Shuffled switch names on tori"; seed 3 gave 1.328x the optimum of the whole torus).
2. A topological order of that plan's channel dependencies, over every channel of the whole
   torus, starts the order LP's tabu walk (routing/acyclic/refine.py `order_walk`: the LP's
   duals price the forbidden turns, one channel moves per step).
3. The walk's first order, and every order whose LP floor is at least 0.01 (of the optimum)
   under the last one rounded, is rounded into one tree per switch: the LP's flows rounded
   (refine.py `rounded_trees`) and branch moves (acyclic/polish.py), then negotiated
   congestion in the order (acyclic/negotiate.py, 40 rounds at targets 1.15 and 1.25 of the
   distance bound) and branch moves again; the lightest is kept.
4. It stops at the first plan at or below X times the exact optimum (or after N moves).
   The best plan is checked from its routes: every tree spanning, the channel dependency
   graph acyclic (routing/depgraph.py and networkx), the max load per cable against the
   exact LP (routing/optimum.py). The hosts of each switch on several trees in the same
   order (routing/spread.py) are printed too, as the default plan would add them.

Deterministic: the engine, HiGHS's dual simplex, negotiation and branch moves repeat.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import fabrics as F  # noqa: E402
import networkx as nx  # noqa: E402

from vlanroute.model.topology import Topology  # noqa: E402

from vlanroute.routing.acyclic import engine as A  # noqa: E402
from vlanroute.routing.acyclic.negotiate import negotiate  # noqa: E402
from vlanroute.routing.acyclic.polish import polish  # noqa: E402
from vlanroute.routing.acyclic.refine import order_walk, rank_of, rounded_trees  # noqa: E402
from vlanroute.routing.acyclic.stored import acyclic_dependencies, decode, encode, plan_name  # noqa: E402
from vlanroute.routing.bounds import distance_sum  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.order_lp import OrderLP, plan_order  # noqa: E402
from vlanroute.routing.spread import spread  # noqa: E402

EVERY = 0.01            # an order is rounded when its floor is this much (of the optimum) under the last rounded
TARGETS = (1.15, 1.25)  # negotiation's hot-link targets over the distance bound
WORK = 300_000          # branch moves looked at per polish


def option(args: list[str], name: str, default: str) -> str:
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


def stored_json(data: dict[str, object]) -> str:
    """The stored plan's JSON, one tree a line."""
    head = {k: v for k, v in data.items() if k != "trees"}
    rows = data["trees"]
    assert isinstance(rows, list)
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    trees = ",\n".join(f"    {json.dumps(r)}" for r in rows)
    return "{\n" + "\n".join(lines) + '\n  "trees": [\n' + trees + "\n  ]\n}\n"


def held_out(topo: Topology, seed: int) -> tuple[Topology, dict[str, int]]:
    """The torus with one cable gone (chosen by `seed`), as a custom fabric of the same
    switch names, 4 hosts each: tests/fabrics.py `degraded_torus` for shapes other than squares."""
    edges = sorted(tuple(sorted(e)) for e in topo.simple().edges())
    rnd = random.Random(seed)
    while True:
        gone = rnd.randrange(len(edges))
        kept = [e for i, e in enumerate(edges) if i != gone]
        if nx.is_connected(nx.Graph(kept)):
            break
    held = Topology.from_links(list(topo.switches), kept)
    return held, {s: 4 for s in held.switches}


def main() -> int:
    args = sys.argv[1:]
    save = "--save" in args
    args = [a for a in args if a != "--save"]
    seed = int(option(args, "--cut-seed", "3"))
    steps = int(option(args, "--steps", "150"))
    target = float(option(args, "--target", "1.25"))
    dims = [int(d) for d in (args[0] if args else "8").split("x")]
    if len(dims) == 1:
        dims = dims * 2                 # K: the KxK torus
    shape = "x".join(map(str, dims))
    topo, hosts = F.torus(dims)
    opt = optimum_bound(topo, hosts).value
    scale = distance_sum(topo, hosts) / (2 * topo.graph.number_of_edges())
    t0 = time.process_time()
    # squares as the stored plans were made (their generated_by lines repeat); other shapes alike
    held, held_hosts = (F.degraded_torus(dims[0], 1, seed) if len(dims) == 2 and dims[0] == dims[1]
                        else held_out(topo, seed))
    assert held.switches == topo.switches
    start = A.acyclic_routes(held, held_hosts, "acyclic", None, A.guide_for(held, held_hosts))
    print(f"{shape} torus, cable held out (seed {seed}): acyclic {F.max_load(topo, hosts, start.parents) / opt:.4f}"
          f" of the whole torus's optimum, {time.process_time() - t0:.0f} s CPU", flush=True)
    lp = OrderLP(topo, hosts)
    rank = plan_order(start.parents, sorted(topo.arc_cables()))
    best: tuple[float, dict[str, dict[str, str]], dict[tuple[str, str], int], float] | None = None
    last: float | None = None
    print("cpu s   order floor   rounded   negotiated (per target)   best", flush=True)
    for key, sol in order_walk(lp, rank, steps, iterations=10**12):
        if last is not None and sol.load > last - EVERY * opt:
            continue
        last = sol.load
        order = rank_of(lp, key)
        trees = rounded_trees(topo, lp, order, sol)
        if trees is None:
            continue
        load, moved = polish(topo, hosts, order, trees, max_work=WORK)
        found = [(load, moved)]
        cells = []
        for factor in TARGETS:
            _, negotiated = negotiate(topo, hosts, order, moved, scale, rounds=40, target_factor=factor)
            found.append(polish(topo, hosts, order, negotiated, max_work=WORK))
            cells.append(f"{found[-1][0] / opt:.4f}")
        load, plan = min(found, key=lambda f: f[0])
        if best is None or load < best[0]:
            best = (load, plan, order, sol.load)
        print(f"{time.process_time() - t0:6.0f}   {sol.load / opt:.4f}        {found[0][0] / opt:.4f}    "
              f"{' '.join(cells)}          {best[0] / opt:.4f}", flush=True)
        if best[0] <= target * opt * (1 + 1e-9):
            break
    assert best is not None
    load, plan, order, floor = best
    free = acyclic_dependencies(topo, plan) and F.channel_dependencies_acyclic(plan, hosts)
    real = F.max_load(topo, hosts, plan) / opt
    print(f"best: {real:.4f} of the exact optimum ({opt:.0f}), order floor {floor / opt:.4f}, "
          f"deadlock-free {'yes' if free else 'NO'}, {time.process_time() - t0:.0f} s CPU in all")
    t1 = time.process_time()
    split = spread(topo, hosts, plan, 4094, rank=plan_order(plan, sorted(topo.arc_cables())))
    if split is not None:
        print(f"hosts of a switch on several trees (routing/spread.py): {split[0] / opt:.4f}, deadlock-free "
              f"{'yes' if F.channel_dependencies_acyclic(split[1], hosts, split[2]) else 'NO'}, "
              f"{time.process_time() - t1:.1f} s CPU")
    if save:
        assert free
        rows = encode(topo, plan)
        assert decode(topo, rows) == plan
        out = ROOT / "vlanroute" / "routing" / "acyclic" / "plans" / plan_name(tuple(dims))
        out.parent.mkdir(exist_ok=True)
        out.write_text(stored_json({
            "generated_by": f"python bench/torus_order_walk.py {shape} --cut-seed {seed} --steps {steps} "
                            f"--target {target} --save",
            "dims": dims, "hosts_per_switch": 4, "load_over_optimum": real, "order_floor": floor / opt,
            "trees": rows}))
        print(f"saved {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
