"""Benchmark: search for a channel order (an acyclic set of turns) with a low LP floor on a
torus, starting from the turns engine's order (tests/turn_order_lp.py; issue 23's 1.4
target on the 8x8 torus, docs/routing-bounds.md).

A random local search: move one channel's key (or, with --diagonal, one class of channels
under the diagonal shift, which keeps the order the same from every switch of a diagonal
and lets the LP solve one commodity per diagonal) next to another's; keep the move if the
floor (the min max load of a splittable all-to-all flow that goes up the order, over the
exact optimum) does not rise. With --excess X the search minimises instead the total load
above X times the optimum (0: an order whose floor is at most X; it walks plateaus of the
max better). Prints every improvement; seeded, so a run can be repeated (its figures are
CPU-bound, not its path).

Run: python bench/turn_order_search.py A B [--seconds S] [--seed N] [--diagonal] [--excess X] [--save FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import turn_order_lp as T  # noqa: E402
from fabrics import channel_dependencies_acyclic, max_load, torus  # noqa: E402

from vlanroute.routing.optimum import optimum_bound  # noqa: E402

PER = 1       # hosts per switch: the ratio to the optimum does not depend on it


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dims", type=int, nargs=2)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--diagonal", action="store_true")
    ap.add_argument("--excess", type=float, default=None)
    ap.add_argument("--save", type=Path, default=None, help="write the order found as JSON (to round it later)")
    args = ap.parse_args()
    if args.excess is not None and not args.diagonal:
        ap.error("--excess needs --diagonal (the diagonal LP has the excess objective)")
    rnd = random.Random(args.seed)
    topo, hosts = torus(list(args.dims), per=PER)
    opt = optimum_bound(topo, hosts).value
    start = T.dimension_order_key(topo)
    arcs = sorted(topo.arc_cables())
    if args.diagonal:
        keys = [0.0] * (4 * args.dims[0])
        for a in arcs:
            keys[T.diagonal_orbit(topo, a)] = start(a)
        items: list[object] = list(range(len(keys)))
    else:
        key_of = {a: float(start(a)) for a in arcs}
        items = list(arcs)

    def floor() -> float | None:
        if args.diagonal:
            return T.diagonal_floor(topo, PER, keys)
        return T.turn_floor(topo, hosts, lambda a, b: key_of[a] < key_of[b])

    def score() -> float:
        if args.excess is not None:
            got = T.diagonal_floor(topo, PER, keys, excess_over=args.excess * opt)
        else:
            got = floor()
        return float("inf") if got is None else round(got / (1.0 if args.excess is not None else opt), 6)

    for i in range(len(items)):          # distinct keys: no ties between channels that meet
        if args.diagonal:
            keys[i] += rnd.random() * 1e-3
        else:
            key_of[items[i]] += rnd.random() * 1e-3     # type: ignore[index]
    best = score()
    print(f"start: {best:.4f} ({'excess' if args.excess is not None else 'floor / optimum'})", flush=True)
    t0 = time.process_time()
    steps = 0
    while time.process_time() - t0 < args.seconds and best > 1e-9:
        steps += 1
        b, a = rnd.choice(items), rnd.choice(items)
        if args.diagonal:
            assert isinstance(a, int) and isinstance(b, int)
            old = keys[b]
            keys[b] = keys[a] + rnd.uniform(-0.5, 0.5)
        else:
            old = key_of[b]                               # type: ignore[index]
            key_of[b] = key_of[a] + rnd.uniform(-0.5, 0.5)  # type: ignore[index]
        got = score()
        if got <= best:
            if got < best:
                print(f"{time.process_time() - t0:7.0f} s CPU, step {steps}: {got:.4f}", flush=True)
            best = got
        elif args.diagonal:
            keys[b] = old                                  # type: ignore[index]
        else:
            key_of[b] = old                                # type: ignore[index]
    final = floor()
    print(f"end after {steps} steps: floor / optimum {final / opt if final else float('nan'):.4f}")
    if args.diagonal:
        print("class keys (direction +X, -X, +Y, -Y; x - y):", [round(k, 3) for k in keys])
    if args.save is not None:
        order = ({"diagonal_class_keys": keys} if args.diagonal
                 else {"channel_keys": [[a, b, k] for (a, b), k in sorted(key_of.items())]})
        args.save.write_text(json.dumps({"dims": args.dims, **order}, indent=1))
    # Round the order into one VLAN tree per source (4 hosts per switch, as bench/quality.py).
    topo4, hosts4 = torus(list(args.dims), per=4)
    key = (lambda a: keys[T.diagonal_orbit(topo4, a)]) if args.diagonal else (lambda a: key_of[a])
    trees = T.order_trees(topo4, hosts4, key)
    if trees is None:
        print("rounded into VLAN trees: stuck (a source's greedy tree cannot reach every switch)")
    else:
        load = max_load(topo4, hosts4, trees) / optimum_bound(topo4, hosts4).value
        print(f"rounded into VLAN trees: {load:.3f} of the optimum, channel dependencies "
              f"{'acyclic' if channel_dependencies_acyclic(trees, hosts4) else 'CYCLIC'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
