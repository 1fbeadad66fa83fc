"""Deadlock-free VLAN plans on a k x k torus that repeat along the diagonal (issue 23's 8x8 target).

A plan here is k trees, one per diagonal class of sources (the sources (t, j + t) share the
tree of (0, j), shifted by (t, t)), and a rank for each of the 4k channel classes under the
same shift; every tree takes its channels in increasing rank, so the union of all routes
has an acyclic channel dependency graph. The all-to-all load of a channel class is the sum
over the k trees of their subtree sizes on the class's channels: a whole plan is priced by
64 subtree sums on the 8x8 torus, so a search can try millions of moves where the order LP
(routing/order_lp.py) tries a few thousand orders.

Search: simulated annealing from the X-then-Y order with staggered cuts (the `turns`
engine's family) and its earliest-arrival trees. Moves: re-parent one switch of one tree
through a channel whose turns the ranks allow; swap two classes of adjacent rank that no
tree turns between. The energy is the sum of (load / optimum)^P over the classes, a smooth
maximum. The best plan is expanded to every source and checked with the tests' own load
and Dally-Seitz acyclicity computations against the exact optimum (routing/optimum.py).

Run: python bench/symmetric_search.py 8 --seconds 20 --seed 5 --temperature 0.002 --power 8
Measured 2026-11-28 (docs/routing-bounds.md): 4x4 1.000; 6x6 1.333 (the acyclic engine
1.296); 8x8 from 2.000 to 1.500 at best, seeds 1 to 6 (the acyclic engine 1.500).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from fabrics import channel_dependencies_acyclic, custom, max_load  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402

STEPS = [(1, 0), (-1, 0), (0, 1), (0, -1)]       # channel directions: +x, -x, +y, -y


class Torus:
    """Switch n = x * k + y; channel a = 4 n + direction; class = direction * k + (x - y) mod k."""

    def __init__(self, k: int) -> None:
        self.k, self.n, self.arcs = k, k * k, 4 * k * k
        self.tail = [a // 4 for a in range(self.arcs)]
        self.head = [self.at(*self.xy(a // 4), *STEPS[a % 4]) for a in range(self.arcs)]
        self.cls = [(a % 4) * k + self.diagonal(a // 4) for a in range(self.arcs)]
        self.into: list[list[int]] = [[] for _ in range(self.n)]
        for a in range(self.arcs):
            self.into[self.head[a]].append(a)
        self.sources = [self.at(0, j) for j in range(k)]
        self.optimum = 2 * sum(min(d, k - d) for d in range(k)) * self.n / (4 * k)   # total distance / channels

    def xy(self, n: int) -> tuple[int, int]:
        return divmod(n, self.k)

    def diagonal(self, n: int) -> int:
        x, y = self.xy(n)
        return (x - y) % self.k

    def at(self, x: int, y: int, dx: int = 0, dy: int = 0) -> int:
        return ((x + dx) % self.k) * self.k + (y + dy) % self.k

    def shifted(self, n: int, t: int) -> int:
        x, y = self.xy(n)
        return self.at(x, y, t, t)


def start_ranks(k: int) -> list[int]:
    """X then Y, each ring direction cut where its class offset wraps (staggered by row)."""
    rank = [0] * (4 * k)
    for off in range(k):
        rank[off], rank[k + off] = off, k + (k - 1 - off)
        rank[2 * k + off], rank[3 * k + off] = 2 * k + (k - 1 - off), 3 * k + off
    return rank


def earliest_tree(t: Torus, src: int, rank: list[int]) -> list[int]:
    """Parent channel of every switch (-1 at the source): channels taken in rank order."""
    entry = {src: -1}
    parent = [-1] * t.n
    for a in sorted(range(t.arcs), key=lambda a: rank[t.cls[a]]):
        u, v = t.tail[a], t.head[a]
        if v not in entry and u in entry and entry[u] < rank[t.cls[a]]:
            entry[v], parent[v] = rank[t.cls[a]], a
    assert len(entry) == t.n, "the start order reaches every switch"
    return parent


def subtrees(t: Torus, src: int, parent: list[int]) -> tuple[list[list[int]], list[int]]:
    """Children of every switch, and each class's summed subtree sizes (its load from this tree)."""
    kids: list[list[int]] = [[] for _ in range(t.n)]
    for v in range(t.n):
        if v != src:
            kids[t.tail[parent[v]]].append(v)
    order = [src]
    for v in order:
        order.extend(kids[v])
    size = [1] * t.n
    load = [0] * (4 * t.k)
    for v in reversed(order[1:]):
        size[t.tail[parent[v]]] += size[v]
        load[t.cls[parent[v]]] += size[v]
    return kids, load


def search(k: int, seconds: float, seed: int, power: float, temperature: float
           ) -> tuple[float, list[list[int]]]:
    """(best max load per channel, switch units; its trees), annealing as the module says."""
    t, rnd = Torus(k), random.Random(seed)
    rank = start_ranks(k)
    by_rank = sorted(range(4 * k), key=lambda c: rank[c])
    trees = [earliest_tree(t, s, rank) for s in t.sources]
    state = [subtrees(t, s, p) for s, p in zip(t.sources, trees)]
    load = [sum(st[1][c] for st in state) for c in range(4 * k)]
    used: Counter[tuple[int, int]] = Counter()            # class pairs that some tree turns between
    for s, p in zip(t.sources, trees):
        used.update((t.cls[p[t.tail[p[v]]]], t.cls[p[v]]) for v in range(t.n) if v != s and t.tail[p[v]] != s)

    def energy(loads: list[int]) -> float:
        return sum((x / t.optimum) ** power for x in loads)
    e, best, best_trees = energy(load), max(load), [list(p) for p in trees]
    began = time.monotonic()
    while (now := time.monotonic() - began) < seconds:
        if rnd.random() < 0.15:                           # swap two adjacent ranks
            i = rnd.randrange(4 * k - 1)
            c1, c2 = by_rank[i], by_rank[i + 1]
            if (c1, c2) not in used and (c2, c1) not in used:
                rank[c1], rank[c2] = rank[c2], rank[c1]
                by_rank[i], by_rank[i + 1] = c2, c1
            continue
        j = rnd.randrange(k)
        src, parent, (kids, mine) = t.sources[j], trees[j], state[j]
        v = rnd.randrange(t.n)
        new = rnd.choice(t.into[v])
        old, u = parent[v], t.tail[new]
        if v == src or new == old or not _movable(t, src, parent, kids, rank, v, new):
            continue
        parent[v] = new
        kids2, mine2 = subtrees(t, src, parent)
        load2 = [x - a + b for x, a, b in zip(load, mine, mine2)]
        e2 = energy(load2)
        temp = temperature * (1 - now / seconds) ** 2 + 1e-7
        if e2 > e and rnd.random() >= math.exp(-(e2 - e) / e / temp):
            parent[v] = old
            continue
        for w in kids[v]:
            used[(t.cls[old], t.cls[parent[w]])] -= 1
            used[(t.cls[new], t.cls[parent[w]])] += 1
        if t.tail[old] != src:
            used[(t.cls[parent[t.tail[old]]], t.cls[old])] -= 1
        if u != src:
            used[(t.cls[parent[u]], t.cls[new])] += 1
        used = +used
        state[j], load, e = (kids2, mine2), load2, e2
        if max(load) < best:
            best, best_trees = max(load), [list(p) for p in trees]
            print(f"{now:7.1f} s  {best / t.optimum:.4f}", flush=True)
    return best, best_trees


def _movable(t: Torus, src: int, parent: list[int], kids: list[list[int]], rank: list[int], v: int,
             new: int) -> bool:
    """Whether v may hang from channel `new`: its tail outside v's subtree, and the turns into
    and out of it increasing in rank."""
    x = u = t.tail[new]
    while x != src:
        if x == v:
            return False
        x = t.tail[parent[x]]
    r = rank[t.cls[new]]
    if u != src and rank[t.cls[parent[u]]] >= r:
        return False
    return all(r < rank[t.cls[parent[w]]] for w in kids[v])


def check(k: int, trees: list[list[int]]) -> tuple[float, bool]:
    """The plan expanded to every source, measured by the tests' code: (load / optimum, acyclic)."""
    t = Torus(k)
    name = [f"n{x}_{y}" for x, y in map(t.xy, range(t.n))]
    topo, hosts = custom([(name[t.tail[a]], name[t.head[a]]) for a in range(t.arcs) if a % 4 in (0, 2)])
    parents = {}
    for j, parent in enumerate(trees):
        for shift in range(k):
            src = t.shifted(t.sources[j], shift)
            parents[name[src]] = {name[t.shifted(v, shift)]: name[t.shifted(t.tail[parent[v]], shift)]
                                  for v in range(t.n) if v != t.sources[j]}
    return (max_load(topo, hosts, parents) / optimum_bound(topo, hosts).value,
            channel_dependencies_acyclic(parents, hosts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("k", type=int)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--power", type=float, default=6.0)
    ap.add_argument("--temperature", type=float, default=0.02)
    a = ap.parse_args()
    best, trees = search(a.k, a.seconds, a.seed, a.power, a.temperature)
    ratio, acyclic = check(a.k, trees)
    print(f"| {a.k}x{a.k} torus | seed {a.seed}, temperature {a.temperature}, {a.seconds:.0f} s "
          f"| {best / Torus(a.k).optimum:.4f} | checked {ratio:.4f} | acyclic {acyclic} |")


if __name__ == "__main__":
    main()
