"""Dual-guided search for a channel order (acyclic turn set) with a low LP floor on a torus
(issue 23). Per-channel keys (no symmetry restriction).

Each step: solve the order-restricted all-to-all LP (splittable, order-monotone paths; the
same LP as tests/turn_order_lp.turn_floor, min-max or total excess over a level), read its
duals, price every FORBIDDEN turn (a -> b, key(a) > key(b)) per commodity:
    r_s(a,b) = -(y_s[b] - y_s[a]) + w[b]      (w: channel price, y: conservation duals)
a negative r says enabling the turn would lower the objective. The forbidden turns with the
largest total negative reduced cost give the candidate moves (raise b just above a, or lower
a just below b); each candidate is evaluated by the LP, the best is taken if it does not
worsen the objective (ties walk plateaus; a tabu list stops immediate reversals). When no
candidate is acceptable, a random kick (a random candidate among the priced moves).

Starts from the turns engine's order (X then Y, staggered cuts). Tabu search: takes the best
candidate even if worse (--slack bounds how far above the best objective it may walk), goes
back to the best order after --patience steps without a new best. When the excess reaches 0
the level drops by --drop. Saves the best-floor order (--save) and the best-objective order.

Run (single-threaded LPs; the figures of docs/routing-bounds.md came from these):
  python bench/turn_order_dual.py 5 5 --seconds 270 --level 1.2 --save torus-5x5.json
  python bench/turn_order_dual.py 6 6 --seconds 3600 --level 1.30 --drop 0.03 --slack 1e9 --save torus-6x6.json
The orders it found are in bench/orders/; tests/test_turn_order_lp.py checks them with the
project's own LP (turn_floor) and acyclicity test.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import turn_order_lp as T  # noqa: E402
from fabrics import torus  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402


class OrderLP:
    def __init__(self, dims):
        self.topo, self.hosts = torus(list(dims), per=1)
        self.opt = optimum_bound(self.topo, self.hosts).value
        topo = self.topo
        self.arcs = sorted(topo.arc_cables())
        self.m = len(self.arcs)
        self.aid = {a: i for i, a in enumerate(self.arcs)}
        node = {s: i for i, s in enumerate(topo.switches)}
        self.n = len(topo.switches)
        self.head = np.array([node[b] for _, b in self.arcs])
        self.tail = np.array([node[a] for a, _ in self.arcs])
        tt = [(self.aid[a], self.aid[b]) for a, b in T.turns_of(topo)]
        self.tin = np.array([i for i, _ in tt])
        self.tout = np.array([j for _, j in tt])
        self.nturn = len(tt)
        # channel partners (for moves): turns touching a channel
        self.partners = [set() for _ in range(self.m)]
        for i, j in tt:
            self.partners[i].add(j)
            self.partners[j].add(i)

    def solve(self, key, level=None):
        """key: array of m floats. Returns (objective, floor_ratio_or_None, reduced-cost gain per
        turn index (forbidden turns only, else 0), turn flows summed over commodities)."""
        m, n = self.m, self.n
        allowed = key[self.tin] < key[self.tout]
        al = np.flatnonzero(allowed)
        tin, tout = self.tin[al], self.tout[al]
        nt = len(al)
        S = n
        # per commodity s: variables turn flows (nt), deliver (m), origin (m); masks by bounds
        block = nt + 2 * m
        nflow = S * block
        extra = m if level is not None else 1
        nvar = nflow + extra
        lp = T.FlowRows(nvar)
        ubr, ubc = [], []
        for s in range(S):
            demand = [0.0 if v == s else 1.0 for v in range(n)]
            tv, ov = lp.add_source(s * block, s, tin, tout, self.head, self.tail, demand)
            ubr += [tout, np.arange(m)]
            ubc += [tv, ov]
        ubv = [np.ones(sum(len(c) for c in ubc))]
        if level is None:
            ubr.append(np.arange(m))
            ubc.append(np.full(m, nflow))
            ubv.append(-np.ones(m))
            b_ub = np.zeros(m)
            c = np.zeros(nvar)
            c[nflow] = 1.0
        else:
            ubr.append(np.arange(m))
            ubc.append(nflow + np.arange(m))
            ubv.append(-np.ones(m))
            b_ub = np.full(m, level * self.opt)
            c = np.zeros(nvar)
            c[nflow:] = 1.0
        a_eq = lp.a_eq(nvar).tocsr()
        a_ub = coo_matrix(
            (np.concatenate(ubv), (np.concatenate(ubr), np.concatenate(ubc))), shape=(m, nvar)
        ).tocsr()
        res = linprog(
            c,
            A_ub=a_ub,
            b_ub=b_ub,
            A_eq=a_eq,
            b_eq=np.array(lp.b_eq),
            bounds=np.column_stack([np.zeros(nvar), lp.hi]),
            method="highs-ds",
        )
        if res.status == 2:
            return float("inf"), None, None, None
        if res.status != 0:
            raise RuntimeError(res.message)
        x = res.x
        # loads
        flows = x[:nflow].reshape(S, block)
        load = flows[:, nt + m :].sum(0).copy()
        np.add.at(load, tout, flows[:, :nt].sum(0))
        floor = load.max() / self.opt
        yeq = res.eqlin.marginals.reshape(S, m + n)[:, :m]  # conservation duals per (s, channel)
        w = -res.ineqlin.marginals  # channel prices >= 0
        self.last = (yeq, w)
        forb = np.flatnonzero(~allowed)
        fi, fo = self.tin[forb], self.tout[forb]
        r = -(yeq[:, fo] - yeq[:, fi]) + w[fo][None, :]  # S x |forb|
        # commodities for which the turn is unusable anyway (enters the source)
        srcs = np.arange(S)[:, None]
        bad = (self.head[fo][None, :] == srcs) | (self.head[fi][None, :] == srcs)
        r = np.where(bad, 0.0, r)
        gain = np.zeros(self.nturn)
        gain[forb] = np.maximum(0.0, -r).sum(0)
        tflow = np.zeros(self.nturn)
        tflow[al] = flows[:, :nt].sum(0)
        return float(res.fun), floor, gain, tflow


def save_order(path: str, dims: list[int], floor: float, arcs: list, keys: np.ndarray) -> None:
    """The order as bench/orders/ keeps it: one key per channel (a, b), and its floor."""
    with open(path, "w") as fh:
        json.dump({"dims": dims, "floor": floor,
                   "channel_keys": [[a, b, float(k)] for (a, b), k in zip(arcs, keys)]}, fh, indent=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dims", type=int, nargs=2)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--level", type=float, default=None, help="minimise total excess over level x optimum")
    ap.add_argument("--cands", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tabu", type=int, default=15)
    ap.add_argument(
        "--patience", type=int, default=60, help="steps without a new best before going back to the best"
    )
    ap.add_argument("--save", default=None)
    ap.add_argument(
        "--slack",
        type=float,
        default=0.15,
        help="walk only through orders within this fraction of the best objective",
    )
    ap.add_argument(
        "--drop", type=float, default=0.05, help="lower the level by this when the excess reaches 0"
    )
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    lp = OrderLP(args.dims)
    # turn indices per channel, for the pre-screen
    t_of = [[] for _ in range(lp.m)]
    for ti in range(lp.nturn):
        t_of[lp.tin[ti]].append(ti)
        t_of[lp.tout[ti]].append(ti)
    start = T.dimension_order_key(lp.topo)
    key = np.array([float(start(a)) for a in lp.arcs]) + np.array([rnd.random() * 1e-3 for _ in lp.arcs])
    t0 = time.process_time()
    obj, floor, gain, tflow = lp.solve(key, args.level)
    true_floor = lp.solve(key)[1]
    print(f"start obj {obj:.4f} floor {true_floor:.4f}", flush=True)
    best_obj, best_key, best_floor = obj, key.copy(), true_floor
    floor_key = key.copy()
    tabu: list[int] = []
    steps = evals = 0
    since = 0
    while time.process_time() - t0 < args.seconds and best_floor > 1.0 + 1e-6:
        steps += 1
        since += 1
        if since > args.patience:
            key = best_key.copy()
            obj, floor, gain, tflow = lp.solve(key, args.level)
            evals += 1
            # random perturbation of the best: a few random moves that keep it feasible
            for _ in range(3):
                ch = rnd.randrange(lp.m)
                old = key[ch]
                key[ch] = key[rnd.randrange(lp.m)] + rnd.uniform(-0.5, 0.5)
                out = lp.solve(key, args.level)
                evals += 1
                if out[1] is None:
                    key[ch] = old
                else:
                    obj, floor, gain, tflow = out
            since = 0
            tabu = []
        srt = np.sort(key)
        cand = []
        for ti in np.argsort(-gain)[: args.cands * 4]:
            if gain[ti] <= 1e-9:
                break
            a, b = lp.tin[ti], lp.tout[ti]
            i = np.searchsorted(srt, key[a], side="right")
            up = (key[a] + (srt[i] if i < len(srt) else key[a] + 2.0)) / 2
            j = np.searchsorted(srt, key[b], side="left")
            dn = (key[b] + (srt[j - 1] if j > 0 else key[b] - 2.0)) / 2
            for ch, v in ((b, up), (a, dn)):
                if ch in tabu:
                    continue
                lo_, hi_ = min(key[ch], v), max(key[ch], v)
                lost = 0.0
                won = 0.0
                for tj in t_of[ch]:
                    other = lp.tout[tj] if lp.tin[tj] == ch else lp.tin[tj]
                    if lo_ < key[other] < hi_:
                        if tflow[tj] > 0:
                            lost += tflow[tj]
                        else:
                            won += gain[tj]
                cand.append((won - lost, ch, v))
        cand.sort(key=lambda c: -c[0])
        seen = set()
        cm = []
        for _score, ch, v in cand:
            if ch not in seen:
                seen.add(ch)
                cm.append((ch, v))
            if len(cm) >= args.cands:
                break
        if not cm:
            ch = rnd.randrange(lp.m)
            cm = [(ch, key[rnd.randrange(lp.m)] + rnd.uniform(-0.5, 0.5))]
        results = []
        for ch, v in cm:
            old = key[ch]
            key[ch] = v
            out = lp.solve(key, args.level)
            evals += 1
            key[ch] = old
            if out[1] is not None:
                results.append((out[0], rnd.random(), ch, v, out))
        if not results:
            continue
        results.sort(key=lambda r: (r[0], r[1]))
        o2, _, ch, v, out = results[0]
        if o2 > best_obj * (1 + args.slack) + 1e-9:
            # too far above the best: back to the best order (the tabu list keeps this move out)
            key = best_key.copy()
            obj, floor, gain, tflow = lp.solve(key, args.level)
            evals += 1
            tabu.append(ch)
            tabu = tabu[-args.tabu :]
            continue
        key[ch] = v  # tabu search: take the best move even if worse
        obj, floor, gain, tflow = out
        tabu.append(ch)
        tabu = tabu[-args.tabu :]
        if obj < best_obj - 1e-9:
            best_obj, best_key = obj, key.copy()
            since = 0
            if args.save:
                json.dump(
                    {
                        "dims": args.dims,
                        "level": args.level,
                        "obj": obj,
                        "channel_keys": [[a, b, float(k)] for (a, b), k in zip(lp.arcs, best_key)],
                    },
                    open(args.save + ".bestobj.json", "w"),
                    indent=0,
                )
            tf = lp.solve(key)[1] if args.level is not None else floor
            evals += 1
            msg = ""
            if tf < best_floor - 1e-9:
                best_floor, floor_key = tf, key.copy()
                msg = " NEW BEST FLOOR"
                if args.save:
                    save_order(args.save, args.dims, tf, lp.arcs, floor_key)
            print(
                f"{time.process_time() - t0:7.0f}s step {steps} evals {evals}: best obj {obj:.4f} floor {tf:.4f}{msg}",
                flush=True,
            )
            if args.level is not None and obj < 1e-9:
                args.level = round(min(args.level, best_floor) - args.drop, 4)
                obj, floor, gain, tflow = lp.solve(key, args.level)
                evals += 1
                best_obj, best_key = obj, key.copy()
                print(f"   level lowered to {args.level}: obj {obj:.4f}", flush=True)
        if steps % 100 == 0:
            key = np.argsort(np.argsort(key)).astype(float)
            best_key = np.argsort(np.argsort(best_key)).astype(float)
            print(
                f"{time.process_time() - t0:7.0f}s step {steps} evals {evals}: cur obj {obj:.4f} best obj {best_obj:.4f} best floor {best_floor:.4f}",
                flush=True,
            )
    fl = lp.solve(floor_key)[1]
    print(
        f"end: steps {steps} evals {evals} cpu {time.process_time() - t0:.0f}s best floor (min-max LP re-solve) {fl:.4f}"
    )
    if args.save:
        save_order(args.save, args.dims, fl, lp.arcs, floor_key)


if __name__ == "__main__":
    main()
