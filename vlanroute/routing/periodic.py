"""Routing within a VLAN budget by one tree shifted over the grid (tori, rings, complete graphs).

These topologies look the same from every switch: adding a fixed vector to every
coordinate (modulo the dimension sizes) maps switches to switches and cables to cables.
Cut the grid into equal blocks (block sizes dividing the dimension sizes), one VLAN per
block; the sources of a block share one tree, and every block's tree is the same tree T
shifted by the block's offset. With equal hosts on every switch, the load that the shifted
copies put on one link is then the sum of T's loads over all links of T that are shifts
of it (the same position inside a block and the same direction): a link class. So the
whole routing is judged on one tree: the largest class sum is the routing's maximum load.

T is found by local search: move a subtree to hang from another neighbour when that
lowers (largest class sum, sum of squared class sums); when no move helps, a few random
moves from the best tree so far ("kicks", iterated local search) and search again, within
a bound on the work. Seeded, so the same inventory always gives the same plan.

Why blocks: a group of sources that lie close together gets short routes from one tree
centred on it, and the bound of routing/bounds.py (centroid edge) is met best when each
tree's sources sit around its centre. Measured on a 16x16 torus with 4 hosts per switch
(bench/quality.py): 64 VLANs (2x2 blocks) at 1.13 times the distance bound, 16 VLANs
(4x4 blocks) at 1.62, against 1.40 and 2.43 for budget_search.py's search alone.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from dataclasses import dataclass

from vlanroute.model.topology import Topology
from vlanroute.routing.budget_search import BudgetChoices
from vlanroute.routing.engine import Routes
from vlanroute.routing.memo import Store, fabric_key
from vlanroute.routing.trees import ParentMap

KINDS = ("torus", "ring", "complete")   # hyper-crossbars: measured worse than budget_search.py, and slow (30 neighbours)
MAX_WORK = 3_000_000       # path steps of the local search: a few seconds on a 32x32 torus
STALL = 25                 # kicks in a row that find nothing better: stop a run
RESTARTS = 4               # runs from different random trees while work remains
SEED = 1


@dataclass(frozen=True)
class PeriodicChoices(BudgetChoices):
    """Routed within the budget by periodic trees: blocks of size `blocks` per dimension,
    every block's tree the same tree shifted (trees is "periodic"), `trees_used` distinct."""

    blocks: tuple[int, ...] = ()

    def record(self) -> dict[str, object]:
        # plan.json's routing keys as they were first written: the plan appends max_vlans.
        return {"trees": self.trees, "blocks": list(self.blocks), "trees_used": self.trees_used}


class _Grid:
    """Coordinates, neighbours and link classes of a translation-invariant topology."""

    def __init__(self, names: list[str], coords: list[tuple[int, ...]], dims: tuple[int, ...],
                 adj: list[list[int]], blocks: tuple[int, ...], cables: dict[tuple[int, int], int]) -> None:
        self.names, self.coords, self.dims, self.adj, self.blocks = names, coords, dims, adj, blocks
        self.n = len(names)
        self.index = {c: i for i, c in enumerate(coords)}
        classes: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        self.cls: dict[int, int] = {}
        for u in range(self.n):
            cu = coords[u]
            for v in adj[u]:
                key = (tuple(x % b for x, b in zip(cu, blocks)),
                       tuple((y - x) % d for x, y, d in zip(cu, coords[v], dims)))
                self.cls[u * self.n + v] = classes.setdefault(key, len(classes))
        self.classes = len(classes)
        # 1 / cables of each class's links (shifts of a link have as many cables as it)
        self.per_cable = [0.0] * self.classes
        for u in range(self.n):
            for v in adj[u]:
                self.per_cable[self.cls[u * self.n + v]] = 1.0 / cables[(u, v)]

    def shift(self, v: int, offset: tuple[int, ...]) -> int:
        return self.index[tuple((x + o) % d for x, o, d in zip(self.coords[v], offset, self.dims))]


def _grid(topo: Topology, host_count: dict[str, int]) -> tuple[tuple[int, ...], list[tuple[int, ...]], int] | None:
    """(dims, coordinate per switch, hosts per switch) if the periodic construction applies."""
    if topo.kind not in KINDS or len(topo.switches) < 2:
        return None
    hosts = {host_count.get(s, 0) for s in topo.switches}
    if len(hosts) != 1 or 0 in hosts:
        return None                       # shifted copies load links alike only with equal hosts
    if topo.kind == "complete":
        dims: tuple[int, ...] = (len(topo.switches),)
        coords: list[tuple[int, ...]] = [(i,) for i in range(len(topo.switches))]
    else:
        assert topo.dims is not None
        dims = topo.dims
        coords = [topo.coords[s] for s in topo.switches]  # type: ignore[misc]
    return dims, coords, hosts.pop()


def _invariant(topo: Topology, dims: tuple[int, ...], coords: list[tuple[int, ...]]) -> bool:
    """Every cable shifted by one step in any dimension is a cable (same count of cables)."""
    g = topo.simple()
    at = {c: s for s, c in zip(topo.switches, coords)}
    here = dict(zip(topo.switches, coords))
    for a, b, d in g.edges(data=True):
        for i, size in enumerate(dims):
            ca, cb = list(here[a]), list(here[b])
            ca[i] = (ca[i] + 1) % size
            cb[i] = (cb[i] + 1) % size
            sa, sb = at[tuple(ca)], at[tuple(cb)]
            if not g.has_edge(sa, sb) or g[sa][sb]["cables"] != d["cables"]:
                return False
    return True


def block_shape(dims: tuple[int, ...], k: int) -> tuple[int, ...]:
    """Block sizes (each dividing its dimension) giving the most blocks, at most k; among
    those, the most compact block (smallest largest side, then smallest perimeter)."""
    options = [[b for b in range(1, d + 1) if d % b == 0] for d in dims]
    best: tuple[tuple[int, int, int], tuple[int, ...]] | None = None
    for shape in itertools.product(*options):
        count = math.prod(d // b for d, b in zip(dims, shape))
        if count > k:
            continue
        key = (-count, max(shape), sum(shape))
        if best is None or key < best[0]:
            best = (key, shape)
    assert best is not None                # the whole grid as one block always fits
    return best[1]


def periodic_routes(topo: Topology, host_count: dict[str, int], k: int, target: float = 0.0,
                    max_work: int = MAX_WORK) -> Routes | None:
    """At most k trees, one per block, all shifts of one searched tree; None where the
    construction does not apply (other topologies, unequal hosts, or a single switch).
    The search stops early once the maximum load per cable reaches `target` (a lower bound)."""
    found = _grid(topo, host_count)
    if found is None:
        return None
    dims, coords, h = found
    if not _invariant(topo, dims, coords):
        return None
    blocks = block_shape(dims, k)
    g = topo.simple()
    pos = {s: i for i, s in enumerate(topo.switches)}
    adj = [sorted(pos[t] for t in g.neighbors(s)) for s in topo.switches]
    cables = {(pos[a], pos[b]): d["cables"] for a, b, d in g.edges(data=True)}
    cables.update({(b, a): c for (a, b), c in list(cables.items())})
    grid = _Grid(list(topo.switches), coords, dims, adj, blocks, cables)
    key = (fabric_key(topo, host_count), blocks, max_work)
    known = _SEARCHED.peek(key)
    if known is not None and _same_search(known, target):
        return _routes(grid, list(known[2]), k)
    peak, parent = _search(grid, h, max_work, target)
    _SEARCHED.put(key, (target, peak, list(parent)))
    return _routes(grid, parent, k)


# The searches of the fabrics routed last, by block shape (routing/memo.py): the budget engine
# asks again for the same shape under other VLAN budgets (route_within_budget per budget: on a
# 4x16 torus 7 searches of 4 shapes, half of a default plan's CPU).
_SEARCHED: Store[tuple[float, float, list[int]]] = Store()


def _same_search(known: tuple[float, float, list[int]], target: float) -> bool:
    """Whether a search with `target` retraces a kept one (target t0, best peak found): the
    target only stops a search once its best peak, which never rises, is at or below it. So
    with the same target, or when the kept search never stopped for its target and its
    best stayed above this one too, every step is the same."""
    t0, peak, _ = known
    if target == t0:
        return True
    return peak > t0 * (1 + 1e-9) and peak > target * (1 + 1e-9)


def _search(grid: _Grid, h: int, max_work: int, target: float) -> tuple[float, list[int]]:
    """The tree T of block 0 (as parent per switch, the root's parent -1) and its peak: the
    best of up to RESTARTS seeded runs within `max_work`. Loads are per cable, `target` likewise."""
    root = grid.index[tuple(b // 2 for b in grid.blocks)]
    sig = [h if all(x < b for x, b in zip(c, grid.blocks)) else 0 for c in grid.coords]
    best: tuple[float, float, list[int]] | None = None
    work = 0
    for run in range(RESTARTS):
        used, got = _run(grid, root, sig, h, random.Random(SEED + run), max_work - work, target)
        work += used
        if best is None or got[:2] < best[:2]:
            best = got
        if work >= max_work or best[0] <= target * (1 + 1e-9):
            break
    assert best is not None
    return best[0], best[2]


def _run(grid: _Grid, root: int, sig: list[int], h: int, rnd: random.Random, max_work: int,
         target: float) -> tuple[int, tuple[float, float, list[int]]]:
    """One iterated local search from a random shortest-path tree: (work used, best tree)."""
    n, adj = grid.n, grid.adj
    w, total = sum(sig), h * n
    dist = [-1] * n
    dist[root] = 0
    order = [root]
    q = deque([root])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                order.append(v)
                q.append(v)
    par = [-1] * n
    for v in order[1:]:
        par[v] = rnd.choice([p for p in adj[v] if dist[p] == dist[v] - 1])

    state = _State(grid, root, par, sig, h, w, total)
    best = (state.peak, state.sq, list(state.par))
    work = 0
    stall = 0
    while work < max_work and stall < STALL:
        work += state.descend(rnd, max_work - work)
        if (state.peak, state.sq) < best[:2]:
            stall = 0 if state.peak < best[0] else stall + 1
            best = (state.peak, state.sq, list(state.par))
        else:
            stall += 1
        if work >= max_work or best[0] <= target * (1 + 1e-9):
            break
        # Kick: a few random moves away from the best tree, then descend again.
        state = _State(grid, root, list(best[2]), sig, h, w, total)
        for _ in range(max(3, n // 50)):
            y = rnd.randrange(n)
            if y == root:
                continue
            options = [z for z in adj[y] if z != state.par[y] and not state.below(z, y)]
            if options:
                state.move(y, rnd.choice(options))
        work += n
        state.recount()
    return work, best


class _State:
    """A tree with subtree sums (destination hosts `a`, group source hosts `s`) and the
    class loads it puts on the grid; moves are judged on the path they change."""

    def __init__(self, grid: _Grid, root: int, par: list[int], sig: list[int], h: int, w: int, total: int) -> None:
        self.grid, self.root, self.par, self.sig, self.h, self.w, self.total = grid, root, par, sig, h, w, total
        self.recount()

    def recount(self) -> None:
        n, par, root = self.grid.n, self.par, self.root
        self.kids: list[list[int]] = [[] for _ in range(n)]
        for v in range(n):
            if v != root:
                self.kids[par[v]].append(v)
        order = [root]
        for v in order:
            order.extend(self.kids[v])
        self.depth = [0] * n
        for v in order[1:]:
            self.depth[v] = self.depth[par[v]] + 1
        # The classes of each switch's two arcs to its parent (down: parent -> v; up), read
        # on every step of a move's path.
        cls = self.grid.cls
        self.down_cls = [cls[par[v] * n + v] if v != root else -1 for v in range(n)]
        self.up_cls = [cls[v * n + par[v]] if v != root else -1 for v in range(n)]
        self.a = [self.h] * n
        self.s = list(self.sig)
        for v in reversed(order[1:]):
            self.a[par[v]] += self.a[v]
            self.s[par[v]] += self.s[v]
        self.load = [0.0] * self.grid.classes
        cls, n, w, total, inv = self.grid.cls, self.grid.n, self.w, self.total, self.grid.per_cable
        for v in order[1:]:
            p = par[v]
            c = cls[p * n + v]
            self.load[c] += (w - self.s[v]) * self.a[v] * inv[c]
            c = cls[v * n + p]
            self.load[c] += self.s[v] * (total - self.a[v]) * inv[c]
        self._summary()

    def _summary(self) -> None:
        self.peak = round(max(self.load), 6)
        self.sq = sum(x * x for x in self.load)
        self.top = sorted(range(len(self.load)), key=lambda c: -self.load[c])[:4]

    def below(self, z: int, y: int) -> bool:
        """Is z in y's subtree?"""
        depth, par = self.depth, self.par
        while depth[z] > depth[y]:
            z = par[z]
        return z == y

    def move(self, y: int, z: int) -> None:
        """Hang y's subtree from z (sums fixed along both paths, depths below y)."""
        par, a, s, depth = self.par, self.a, self.s, self.depth
        x = par[y]
        for u, sign in ((x, -1), (z, 1)):
            while u != -1:
                a[u] += sign * a[y]
                s[u] += sign * s[y]
                u = par[u]
        self.kids[x].remove(y)
        self.kids[z].append(y)
        par[y] = z
        n = self.grid.n
        self.down_cls[y] = self.grid.cls[z * n + y]
        self.up_cls[y] = self.grid.cls[y * n + z]
        shift = depth[z] + 1 - depth[y]
        stack = [y]
        while stack:
            v = stack.pop()
            depth[v] += shift
            stack.extend(self.kids[v])

    def descend(self, rnd: random.Random, max_work: int) -> int:
        """First-improvement local search until no move helps or the work is spent.

        Moving y's subtree (a_y destination hosts, s_y source hosts) from x to z changes
        only the links between x and z in the tree (through their common ancestor) and the
        link to y: those on x's side lose the subtree, those on z's side gain it. A move is
        judged once its whole path is summed (a class that both sides touch can come back
        below the maximum), and taken when it lowers (largest class sum, sum of squares)."""
        n, adj, load, cls, inv = self.grid.n, self.grid.adj, self.load, self.grid.cls, self.grid.per_cable
        par, depth, a, s = self.par, self.depth, self.a, self.s
        w, total, root = self.w, self.total, self.root
        change = [0.0] * len(load)
        mark = [0] * len(load)           # mark[c] == stamp: class c is in `cells` for this move
        stamp = 0
        work = 0
        nload = len(load)
        down_cls, up_cls = self.down_cls, self.up_cls     # kept up to date by move()
        while work < max_work:
            improved = False
            ys = list(range(n))
            rnd.shuffle(ys)
            for y in ys:
                if y == root:
                    continue
                x = par[y]
                ay, sy = a[y], s[y]
                down, up = (w - sy) * ay, sy * (total - ay)
                yn = y * n
                # The link to y's old parent loses the subtree whatever z is: its two
                # classes and their changes (per cable) once per y.
                c1 = cls[x * n + y]
                d1 = -down * inv[c1]
                c2 = cls[yn + x]
                d2 = -up * inv[c2]
                for z in adj[y]:
                    if z == x:
                        continue
                    stamp += 1
                    mark[c1] = stamp
                    cells = [c1]
                    change[c1] = d1
                    if c2 != c1:
                        mark[c2] = stamp
                        cells.append(c2)
                        change[c2] = d2
                    else:
                        change[c2] += d2
                    for c, raw in ((cls[z * n + y], down), (cls[yn + z], up)):
                        d = raw * inv[c]          # per cable
                        if mark[c] != stamp:
                            mark[c] = stamp
                            cells.append(c)
                            change[c] = d
                        else:
                            change[c] += d
                    ok = True
                    p1, p2 = x, z
                    while p1 != p2:
                        if depth[p1] >= depth[p2]:     # x's side loses the subtree
                            u = p1
                            p1 = par[p1]
                            au, su = a[u], s[u]
                            na, ns = au - ay, su - sy
                        else:                          # z's side gains it
                            u = p2
                            if u == y:          # z lies below y: no tree
                                ok = False
                                break
                            p2 = par[p2]
                            au, su = a[u], s[u]
                            na, ns = au + ay, su + sy
                        c = down_cls[u]
                        d = ((w - ns) * na - (w - su) * au) * inv[c]
                        if mark[c] != stamp:
                            mark[c] = stamp
                            cells.append(c)
                            change[c] = d
                        else:
                            change[c] += d
                        c = up_cls[u]
                        d = (ns * (total - na) - su * (total - au)) * inv[c]
                        if mark[c] != stamp:
                            mark[c] = stamp
                            cells.append(c)
                            change[c] = d
                        else:
                            change[c] += d
                    work += 1 + len(cells)
                    if not ok:
                        continue
                    new_peak = max([load[c] + change[c] for c in cells])
                    for c in self.top:
                        if mark[c] != stamp:
                            if load[c] > new_peak:
                                new_peak = load[c]
                            break
                    else:
                        new_peak = max([new_peak] + [v for c, v in enumerate(load) if mark[c] != stamp])
                    new_peak = round(new_peak, 6)
                    if new_peak > self.peak:
                        continue
                    sq = self.sq + sum([(load[c] + change[c]) ** 2 - load[c] ** 2 for c in cells])
                    if new_peak < self.peak or sq < self.sq * (1 - 1e-12) - 1e-9:
                        for c in cells:
                            load[c] += change[c]
                        self.move(y, z)
                        self._summary()
                        work += nload
                        improved = True
                        break
            if not improved:
                break
        return work


def _routes(grid: _Grid, parent: list[int], k: int) -> Routes:
    """Every block's tree (T shifted), and every source's routes in its block's tree."""
    n, names, blocks, dims = grid.n, grid.names, grid.blocks, grid.dims
    links = [(parent[v], v) for v in range(n) if parent[v] >= 0]
    offsets = list(itertools.product(*(range(0, d, b) for d, b in zip(dims, blocks))))
    parents: dict[str, ParentMap] = {}
    # A tree may be its own shift (an edge flipped onto itself, as on 2 switches or a 2x2
    # torus of single-switch blocks): such blocks share one tree, counted once.
    distinct: set[frozenset[frozenset[int]]] = set()
    for off in offsets:
        shifted: list[list[int]] = [[] for _ in range(n)]
        for p, v in links:
            sp, sv = grid.shift(p, off), grid.shift(v, off)
            shifted[sp].append(sv)
            shifted[sv].append(sp)
        distinct.add(frozenset(frozenset((u, v)) for u in range(n) for v in shifted[u]))
        for c in itertools.product(*(range(o, o + b) for o, b in zip(off, blocks))):
            src = grid.index[c]
            par: ParentMap = {}
            seen = [False] * n
            seen[src] = True
            q = deque([src])
            while q:
                u = q.popleft()
                for v in shifted[u]:
                    if not seen[v]:
                        seen[v] = True
                        par[names[v]] = names[u]
                        q.append(v)
            parents[names[src]] = par
    return Routes("budget", parents, PeriodicChoices(k, "periodic", len(distinct), blocks=tuple(blocks)))
