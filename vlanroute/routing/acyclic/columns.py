"""Trees as columns: the hosts of each switch assigned to trees of one channel order, exactly.

Inside a fixed channel order every tree whose routes increase in it keeps the plan
deadlock-free, whatever the other trees are (Dally and Seitz 1987; routing/order_lp.py), so
choosing, per switch, which of its hosts send on which tree is a problem of its own. The
acyclic engine solves it with negotiation and branch moves (acyclic/negotiate.py,
acyclic/polish.py, routing/spread.py); on the degraded 6x6 tori these end 7 % to 12 % above
their order's LP, the floor of any routing in that order (docs/routing-bounds.md). This
module solves it as the set-partitioning problem it is (the tree-packing form of
multicommodity flow, Ford and Fulkerson's column generation, "A suggested computation for
maximal multi-commodity network flows", Management Science 5, 1958):

    minimise L
    per source switch s:     sum over its trees T of x(s, T) = h(s)       (its hosts)
    per channel a:           sum over s, T of x(s, T) u_T(a) <= L C(a)
    x(s, T) >= 0, integer in the last step

where u_T(a) is what one host of s sending on T puts on channel a (the hosts below a in T)
and C(a) the cables. The columns start from the trees at hand (the plan's own, and those
rounded from the order LP's flows, acyclic/refine.py) and grow by pricing: the LP's duals
weigh the channels, and per source the lightest tree in the order under those weights
(`priced_tree`: exact shortest increasing paths per destination, then a tree grown in
channel order that takes each switch's cheapest entry where it can; `improved_tree`: single
switches moved to cheaper parents, from that tree and from the source's trees in the LP's
solution, since with one entry per switch a tree's price is no longer a sum of shortest
paths) joins if its reduced cost is negative. After PRICE_ROUNDS rounds (or none improves), the integer program on the
columns found (scipy's HiGHS branch and bound, a fixed node limit: the same plan on every
run) gives each host its tree; branch moves per sender finish (acyclic/polish.py). Every
column increases in the one order, so any mix of them is deadlock-free. `column_step` is
the acyclic engine's use of it (acyclic/engine.py), measured in docs/routing-bounds.md
("Trees as columns") with bench/columns.py.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Mapping

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.jit import compiled_allowed, long_run
from vlanroute.routing.acyclic.polish import polish
from vlanroute.routing.acyclic.refine import complete_by_earliest, earliest_tree, rounded_trees
from vlanroute.routing.order_lp import OrderLP, OrderSolution
from vlanroute.routing.trees import ParentMap, Share, bfs_order, max_load, preorder

PRICE_ROUNDS = 40       # pricing rounds of the LP, at most
# The integer program's size: branch-and-bound nodes at most (a count, not a time: the same
# plan on every run) and the columns kept, those whose reduced cost is within KEEP of their
# source's price (reduced-cost screening; the others rarely enter a good integer solution and
# slow it down). The degraded 6x6 tori with 3 cables gone (seeds 0, 5): 50 nodes and 1 %
# gave 1.222x and 1.214x in about 2 s; 200 and 2 %, 1.222x and 1.205x in about 4 s.
NODES = 200
KEEP = 0.02
GAP = 1e-3              # ...and it stops within this relative gap of its bound
HOP = 1e-4              # weight of a channel per hop, against the duals (which sum to 1 over C(a)):
                        # among trees of equal price, the shorter
EPS = 1e-9
POLISH_WORK = 200_000   # branch moves looked at after the integer program, at most
USED = 2                # trees of a source in the LP's solution improved as pricing columns
_NO_RANK = float("inf")
# The pricing runs compiled (acyclic/pricing_kernel.py: the same trees) from this much work,
# rounds x sources x switches x channels, as its rounds' most: importing numba and loading
# the kernel cost about 0.7 s a process. Measured (CPU s of the whole default plan): the
# degraded 8x8 torus (two calls, 12 and 8 million) 16.9 to 13.6; the degraded 6x6 torus (7
# million) 19.6 to 19.0; the dragonfly 6x4 (three of 2.4 million) no faster. Where numba is
# in the process already (another kernel ran) or the process has run long (routing/jit.py
# `long_run`), from KERNEL_WARM_WORK.
KERNEL_WORK = 5_000_000
KERNEL_WARM_WORK = 1_000_000


class ColumnPool:
    """The trees of each source switch (each increasing in `rank`) and their unit loads."""

    def __init__(self, topo: Topology, host_count: dict[str, int], rank: dict[Arc, int]) -> None:
        cables = topo.arc_cables()
        self.topo, self.hosts, self.rank = topo, host_count, rank
        self.arcs: list[Arc] = sorted(cables)
        self.arc_id = {a: i for i, a in enumerate(self.arcs)}
        self.cap = np.array([float(cables[a]) for a in self.arcs])
        self.sources = [s for s in topo.switches if host_count.get(s, 0)]
        self.trees: dict[str, list[ParentMap]] = {s: [] for s in self.sources}
        self.seen: dict[str, set[frozenset[tuple[str, str]]]] = {s: set() for s in self.sources}
        # per column (in the order added): source, (channel ids, unit loads)
        self.cols: list[tuple[str, int, np.ndarray, np.ndarray]] = []

    def add(self, src: str, tree: ParentMap) -> bool:
        """Add src's tree unless it is in the pool already; it must increase in the rank."""
        sig = frozenset(tree.items())
        if src not in self.seen or sig in self.seen[src]:
            return False
        self.seen[src].add(sig)
        order = bfs_order(tree, src)
        below = {v: self.hosts.get(v, 0) for v in order}
        for v in reversed(order[1:]):
            below[tree[v]] += below[v]
        ids = np.array([self.arc_id[(tree[v], v)] for v in order[1:] if below[v]], dtype=int)
        vals = np.array([float(below[v]) for v in order[1:] if below[v]])
        self.cols.append((src, len(self.trees[src]), ids, vals))
        self.trees[src].append(dict(tree))
        return True

    def keep(self, which: list[bool]) -> None:
        """Only the columns marked True stay (their trees too)."""
        self.cols = [c for c, k in zip(self.cols, which) if k]

    def _matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = np.concatenate([ids for _, _, ids, _ in self.cols])
        cols = np.concatenate([np.full(len(ids), k) for k, (_, _, ids, _) in enumerate(self.cols)])
        vals = np.concatenate([v for _, _, _, v in self.cols])
        return rows, cols, vals

    def solve(self, integer: bool, nodes: int = NODES) -> tuple[float, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(L, x per column, channel duals, source duals) of the master problem; the duals
        only for the LP (`integer` False)."""
        from scipy.optimize import linprog, milp, Bounds, LinearConstraint     # on first use
        from scipy.sparse import coo_matrix, vstack
        m, k = len(self.arcs), len(self.cols)
        rows, cols, vals = self._matrix()
        # capacity rows: sum x u - L C <= 0
        a_ub = coo_matrix((np.concatenate([vals, -self.cap]),
                           (np.concatenate([rows, np.arange(m)]), np.concatenate([cols, np.full(m, k)]))),
                          shape=(m, k + 1)).tocsr()
        src_row = {s: i for i, s in enumerate(self.sources)}
        a_eq = coo_matrix((np.ones(k), ([src_row[s] for s, _, _, _ in self.cols], np.arange(k))),
                          shape=(len(self.sources), k + 1)).tocsr()
        b_eq = np.array([float(self.hosts[s]) for s in self.sources])
        c = np.zeros(k + 1)
        c[k] = 1.0
        if not integer:
            from vlanroute.routing import highs
            got: highs.Solved | None = None
            try:
                # linprog(method="highs-ds")'s call, the same bits without its checks and
                # conversions (routing/highs.py)
                got = highs.solve(vstack([a_ub, a_eq]).tocsc(), c, np.full(k + 1, np.inf), m, b_eq, highs.DUAL_SIMPLEX)
            except highs.DIRECT_UNAVAILABLE:
                pass                    # an older or changed scipy: through linprog
            if got is None:
                res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=b_eq, bounds=(0, None),
                              method="highs-ds")
                if res.status != 0:
                    raise RuntimeError(f"the tree LP did not solve: {res.message}")
                return float(res.x[k]), res.x[:k], -res.ineqlin.marginals, res.eqlin.marginals
            if got.status != "optimal":
                raise RuntimeError(f"the tree LP did not solve: {got.status}")
            return float(got.x[k]), got.x[:k], -got.row_dual[:m], got.row_dual[m:]
        hi = np.concatenate([[float(self.hosts[s]) for s, _, _, _ in self.cols], [np.inf]])
        res = milp(c, constraints=[LinearConstraint(a_ub, -np.inf, 0.0), LinearConstraint(a_eq, b_eq, b_eq)],
                   integrality=np.concatenate([np.ones(k), [0]]), bounds=Bounds(np.zeros(k + 1), hi),
                   options={"node_limit": nodes, "mip_rel_gap": GAP, "presolve": True})
        if res.x is None:
            raise RuntimeError(f"the tree integer program found no plan: {res.message}")
        return float(res.x[k]), np.round(res.x[:k]), None, None


def priced_tree(topo: Topology, src: str, rank: dict[Arc, int], weight: Mapping[Arc, float],
                hosts: dict[str, int]) -> ParentMap | None:
    """A light tree of src whose routes increase in `rank` under channel weights `weight`
    (the module docstring); None if some switch cannot be reached in the order."""
    arcs = sorted(rank, key=rank.__getitem__)
    out: dict[str, list[Arc]] = {s: [] for s in topo.switches}
    for a in arcs:
        out[a[0]].append(a)
    # exact: the cheapest increasing path ending on each channel (Dijkstra over channels)
    dist: dict[Arc, float] = {}
    heap: list[tuple[float, int, Arc]] = [(weight[a], rank[a], a) for a in out[src]]
    heapq.heapify(heap)
    while heap:
        d, _, a = heapq.heappop(heap)
        if a in dist:
            continue
        dist[a] = d
        for b in out[a[1]]:
            if b not in dist and rank[b] > rank[a] and b[1] != src:
                heapq.heappush(heap, (d + weight[b], rank[b], b))
    reached = {a[1] for a in dist}
    if len(reached) < len(topo.switches) - 1:
        return None
    # grown in channel order: a channel into v joins if its tail is in the tree, entered
    # lower, and no later channel into v reaches v cheaper (`dist` bounds every tree's cost)
    into: dict[str, list[float]] = {}
    for a in arcs:
        if a in dist:
            into.setdefault(a[1], []).append(dist[a])
    after: dict[str, list[float]] = {}         # per v: the least dist of its entries from the i-th on
    for v, ds in into.items():
        suffix = [float("inf")] * (len(ds) + 1)
        for i in range(len(ds) - 1, -1, -1):
            suffix[i] = min(ds[i], suffix[i + 1])
        after[v] = suffix
    seen_into: dict[str, int] = {}
    entry = {src: -1}
    cost = {src: 0.0}
    tree: ParentMap = {}
    for a in arcs:
        if a not in dist:
            continue
        u, v = a
        i = seen_into.get(v, 0)
        seen_into[v] = i + 1
        if v in entry or u not in entry or entry[u] >= rank[a]:
            continue
        here = cost[u] + weight[a]
        if here <= after[v][i + 1] * (1 + 1e-12) + EPS:
            entry[v], cost[v], tree[v] = rank[a], here, u
    if len(tree) < len(topo.switches) - 1:
        # the rest on their earliest-arrival paths, every switch on them at its earliest entry
        complete_by_earliest(topo, src, tree, earliest_tree(src, arcs, rank))
    return tree


def column_plan(topo: Topology, host_count: dict[str, int], rank: dict[Arc, int],
                starts: list[tuple[dict[str, ParentMap], Mapping[str, tuple[Share, ...]]]],
                rounds: int = PRICE_ROUNDS, nodes: int = NODES, keep: float = KEEP, more: int = 0,
                above: float = float("inf"),
                below: float = float("inf")) -> tuple[float, dict[str, ParentMap], dict[str, tuple[Share, ...]], float] | None:
    """(max load per cable, parents, splits, the LP's value over the columns) of the hosts
    assigned to trees increasing in `rank` (module docstring), from the trees of `starts`
    (parents and splits, each increasing in `rank`); None without sources. The LP's value is
    a floor of the integer program on the columns found, not of the plan returned: the
    branch moves after it may take trees outside the columns and carry less. Where the plan
    carries more than `above` and at most `below`, `more` pricing rounds more on the same
    columns (what `rounds + more` rounds give from the start) and the lighter plan of the two."""
    pool = ColumnPool(topo, host_count, rank)
    if not pool.sources:
        return None
    for start_parents, start_splits in starts:
        for s in pool.sources:
            start_shares = start_splits.get(s)
            for tree in ([t for t, _ in start_shares] if start_shares else [start_parents[s]]):
                pool.add(s, tree)
    into: dict[str, list[str]] = {v: [] for v in topo.switches}
    for u, v in pool.arcs:
        into[v].append(u)
    priced = _price_rounds(pool, topo, host_count, rank, into, rounds)
    found = list(pool.cols)         # `_rounded` keeps only some of them
    got = _rounded(pool, topo, host_count, rank, starts, nodes, keep)
    if priced and more and above < got[0] <= below:
        pool.cols = found
        _price_rounds(pool, topo, host_count, rank, into, more)
        again = _rounded(pool, topo, host_count, rank, starts, nodes, keep)
        if round(again[0], 6) < round(got[0], 6):
            got = again
    return got


def _price_rounds(pool: ColumnPool, topo: Topology, host_count: dict[str, int], rank: dict[Arc, int],
                  into: dict[str, list[str]], rounds: int) -> bool:
    """Up to `rounds` pricing rounds of the LP over `pool`'s columns, each adding the trees
    priced below their source's dual; whether the last round still added a tree (False: the
    LP over the columns converged, more rounds add nothing)."""
    compiled = _CompiledPricing.wanted(pool, topo, rank, rounds)
    for _ in range(rounds):
        _, x, w, mu = pool.solve(integer=False)
        assert w is not None and mu is not None
        price_of = {a: max(float(w[i]), 0.0) for i, a in enumerate(pool.arcs)}
        weight = {a: p + HOP for a, p in price_of.items()}
        in_use: dict[str, list[ParentMap]] = {}
        for (s, j, _, _), amount in zip(pool.cols, x):
            if amount > EPS:
                in_use.setdefault(s, []).append(pool.trees[s][j])
        added = 0
        weights = compiled.weights(weight) if compiled is not None else np.empty(0)   # the kernel's
        for k, s in enumerate(pool.sources):
            first = (compiled.priced(s, weights) if compiled is not None
                     else priced_tree(topo, s, rank, weight, host_count))
            if first is None:
                continue
            # the priced tree and the LP's trees of s, each improved by single moves
            for tree in [first, *[compiled.improved(s, t, weights) if compiled is not None
                                  else improved_tree(s, t, rank, weight, host_count, into)
                                  for t in [first, *in_use.get(s, [])[:USED]]]]:
                if _price(tree, s, price_of, host_count) < float(mu[k]) - 1e-7 and pool.add(s, tree):
                    added += 1
        if not added:
            return False
    return True


class _CompiledPricing:
    """`priced_tree` and `improved_tree` of one pool's sources in one order, run by
    acyclic/pricing_kernel.py: the same trees, their entries in the same order."""

    def __init__(self, pool: ColumnPool, topo: Topology, rank: dict[Arc, int]) -> None:
        global _kernel_loaded
        from vlanroute.routing.acyclic import pricing_kernel
        self.kernel = pricing_kernel
        _kernel_loaded = True
        self.topo, self.rank, self.names = topo, rank, list(topo.switches)
        self.index = {s: i for i, s in enumerate(self.names)}
        n, m = len(self.names), len(pool.arcs)
        self.arcs = pool.arcs
        self.tail = np.array([self.index[u] for u, _ in pool.arcs], dtype=np.int64)
        self.head = np.array([self.index[v] for _, v in pool.arcs], dtype=np.int64)
        self.ranks = np.array([rank[a] for a in pool.arcs], dtype=np.int64)
        self.by_rank = np.argsort(self.ranks, kind="stable").astype(np.int64)
        self.in_rank_order = [pool.arcs[i] for i in self.by_rank]
        self.out_ptr, self.out_arc = _csr(n, self.tail[self.by_rank], self.by_rank)
        self.into_ptr, self.into_arc = _csr(n, self.head, np.arange(m, dtype=np.int64))
        self.arc_id = np.full((n, n), -1, dtype=np.int64)
        self.arc_id[self.tail, self.head] = np.arange(m)
        self.hosts = np.array([pool.hosts.get(s, 0) for s in self.names], dtype=np.int64)
        self.parent = np.full(n, -1, dtype=np.int64)
        self.inserted = np.zeros(n, dtype=np.int64)

    @staticmethod
    def wanted(pool: ColumnPool, topo: Topology, rank: dict[Arc, int], rounds: int) -> _CompiledPricing | None:
        """The compiled pricing where the work pays for loading it (KERNEL_WORK) and the
        order ranks every channel of the pool once (as the column step's orders do)."""
        work = rounds * len(pool.sources) * len(topo.switches) * len(pool.arcs)
        warm = _kernel_loaded or "vlanroute.routing.numba_jit" in sys.modules or long_run()
        if work < (KERNEL_WARM_WORK if warm else KERNEL_WORK) or not compiled_allowed():
            return None
        if len(rank) != len(pool.arcs) or set(rank) != set(pool.arcs) or len(set(rank.values())) != len(rank):
            return None
        return _CompiledPricing(pool, topo, rank)

    def weights(self, weight: Mapping[Arc, float]) -> np.ndarray:
        return np.array([weight[a] for a in self.arcs])

    def priced(self, src: str, weights: np.ndarray) -> ParentMap | None:
        """priced_tree(topo, src, rank, weight, hosts), compiled."""
        n = len(self.names)
        took = self.kernel.priced(self.index[src], n, self.tail, self.head, self.ranks, weights, self.by_rank,
                                  self.out_ptr, self.out_arc, EPS, self.parent, self.inserted)
        if took < 0:
            return None
        names, parent = self.names, self.parent
        tree = {names[v]: names[parent[v]] for v in self.inserted[:took].tolist()}
        if len(tree) < n - 1:
            complete_by_earliest(self.topo, src, tree, earliest_tree(src, self.in_rank_order, self.rank))
        return tree

    def improved(self, src: str, tree: ParentMap, weights: np.ndarray) -> ParentMap:
        """improved_tree(src, tree, rank, weight, hosts, into), compiled."""
        index = self.index
        keys = np.array([index[v] for v in tree], dtype=np.int64)
        parent = np.full(len(self.names), -1, dtype=np.int64)
        parent[keys] = [index[p] for p in tree.values()]
        self.kernel.improved(index[src], keys, parent, self.arc_id, self.tail, self.ranks, weights, self.hosts,
                             self.into_ptr, self.into_arc, EPS)
        names, got = self.names, parent.tolist()
        return {v: names[got[index[v]]] for v in tree}


_kernel_loaded = False


def _csr(n: int, owner: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per owner 0..n-1, its items in the order given (a stable grouping)."""
    order = np.argsort(owner, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(ptr, owner + 1, 1)
    return np.cumsum(ptr), items[order].astype(np.int64)


def _rounded(pool: ColumnPool, topo: Topology, host_count: dict[str, int], rank: dict[Arc, int],
             starts: list[tuple[dict[str, ParentMap], Mapping[str, tuple[Share, ...]]]], nodes: int,
             keep: float) -> tuple[float, dict[str, ParentMap], dict[str, tuple[Share, ...]], float]:
    """The integer program on `pool`'s columns within `keep` of their source's price (it
    drops the others from the pool), its trees' branches moved, and the lightest of that
    and the starts: (max load, parents, splits, the LP's value over the columns)."""
    # the integer program on the columns within `keep` of their source's price
    lp_bound, x, w, mu = pool.solve(integer=False)
    assert w is not None and mu is not None
    price_of = {a: max(float(w[i]), 0.0) for i, a in enumerate(pool.arcs)}
    k_of = {s: k for k, s in enumerate(pool.sources)}
    pool.keep([amount > EPS or _price(pool.trees[s][j], s, price_of, host_count)
               <= float(mu[k_of[s]]) * (1 + keep) + EPS for (s, j, _, _), amount in zip(pool.cols, x)])
    _, x, _, _ = pool.solve(integer=True, nodes=nodes)
    # the hosts of each switch on their trees, as senders for the branch moves
    roots: dict[str, str] = {}
    weights: dict[str, int] = {}
    trees: dict[str, ParentMap] = {}
    for (s, j, _, _), n in zip(pool.cols, x):
        if n >= 0.5:
            key = f"{s}#{len([k for k in roots if roots[k] == s])}"
            roots[key], weights[key], trees[key] = s, int(n), pool.trees[s][j]
    load, moved = polish(topo, host_count, rank, trees, roots, weights, max_work=POLISH_WORK)
    parents: dict[str, ParentMap] = {}
    splits: dict[str, tuple[Share, ...]] = {}
    by_switch: dict[str, list[tuple[ParentMap, int]]] = {}
    for key in sorted(moved, key=lambda k: (topo.index(roots[k]), int(k.rsplit("#", 1)[1]))):
        mine = by_switch.setdefault(roots[key], [])
        for i, (tree, n) in enumerate(mine):
            if tree == moved[key]:          # two senders of a switch ended on one tree: merged
                mine[i] = (tree, n + weights[key])
                break
        else:
            mine.append((moved[key], weights[key]))
    for s in topo.switches:
        mine = by_switch.get(s, [])
        if mine:
            parents[s] = mine[0][0]
            if len(mine) > 1:
                splits[s] = tuple(mine)
        else:
            parents[s] = _earliest(topo, s, rank)
    # the integer program stops at its node limit: never return more than a start carries
    cables = topo.arc_cables()
    for start_parents, start_splits in starts:
        start_load = max_load(start_parents, host_count, cables, start_splits)
        if start_load < load * (1 - EPS):
            load, parents, splits = start_load, dict(start_parents), {s: start_splits[s] for s in start_splits}
    return load, parents, splits, lp_bound


def _price(tree: ParentMap, src: str, price: Mapping[Arc, float], hosts: dict[str, int]) -> float:
    """What one host of src sending on `tree` costs at the channel prices."""
    order = bfs_order(tree, src)
    below = {v: hosts.get(v, 0) for v in order}
    for v in reversed(order[1:]):
        below[tree[v]] += below[v]
    return sum(price[(tree[v], v)] * below[v] for v in order[1:])


def _earliest(topo: Topology, src: str, rank: dict[Arc, int]) -> ParentMap:
    """src's earliest-arrival tree in the order (a source without hosts needs a tree too)."""
    entry = {src: -1}
    tree: ParentMap = {}
    for a in sorted(rank, key=rank.__getitem__):
        u, v = a
        if v not in entry and u in entry and entry[u] < rank[a]:
            entry[v] = rank[a]
            tree[v] = u
    return tree


def improved_tree(src: str, tree: ParentMap, rank: dict[Arc, int], weight: Mapping[Arc, float],
                  hosts: dict[str, int], into: Mapping[str, list[str]]) -> ParentMap:
    """`tree` after moving single switches to cheaper parents under `weight` while the tree's
    routes still increase in `rank` (a local search for the pricing: the price of a tree is
    not a sum of per-destination shortest paths once each switch has one entry). Each pass
    takes the move that lowers the price most (the first such in breadth-first order)."""
    tree = dict(tree)
    # per switch, its entries as (tail, rank, weight): the same in every pass
    entries = {v: [(u, rank[(u, v)], weight[(u, v)]) for u in us] for v, us in into.items()}
    while True:
        order = bfs_order(tree, src)
        kids: dict[str, list[str]] = {v: [] for v in order}
        below = {v: hosts.get(v, 0) for v in order}
        size = dict.fromkeys(order, 1)
        cost = {src: 0.0}
        entry = {src: -1}
        lowest_out = dict.fromkeys(order, _NO_RANK)     # the lowest rank of a channel out of v in the tree
        for v in order[1:]:
            p = tree[v]
            kids[p].append(v)
            a = (p, v)
            cost[v] = cost[p] + weight[a]
            r = entry[v] = rank[a]
            if r < lowest_out[p]:
                lowest_out[p] = r
        for v in reversed(order[1:]):
            p = tree[v]
            below[p] += below[v]
            size[p] += size[v]
        first = preorder(kids, src)     # u is in v's subtree when first[v] <= first[u] < first[v] + size[v]
        best: tuple[float, str, str] | None = None
        for v in order[1:]:
            bv = below[v]
            if not bv:
                continue
            lo, hi = first[v], first[v] + size[v]
            low, parent, cv = lowest_out[v], tree[v], cost[v]
            for u, r, w in entries[v]:
                # u -> v must come after u's own entry and before every channel out of v
                if u == parent or lo <= first[u] < hi or entry[u] >= r or low <= r:
                    continue
                delta = bv * (cost[u] + w - cv)
                if delta < -EPS and (best is None or delta < best[0]):
                    best = (delta, v, u)
        if best is None:
            return tree
        tree[best[1]] = best[2]


Plan = tuple[float, dict[str, ParentMap], dict[str, tuple[Share, ...]], dict[Arc, int]]


def column_step(topo: Topology, host_count: dict[str, int], plans: list[Plan], max_vlans: int,
                nodes: int = NODES, keep: float = KEEP, orders: list[dict[Arc, int]] | None = None,
                lp: OrderLP | None = None, solved: list[OrderSolution] | None = None) -> Plan | None:
    """The best of `column_plan` on each plan's channel order (max load, parents, splits,
    order), started from that plan's trees and those rounded from the order's LP, and on
    each of `orders` from the rounded trees alone, within `max_vlans` VLANs; None if none
    fits. Each plan's trees (its parents, and its splits' trees) must increase in its order.
    `lp` and `solved`: the order LP of this fabric and the solutions of `orders`' LPs (one
    per order) where the caller has them already (the same bits a new solve gives)."""
    from vlanroute.routing.packing import pack
    hosted = {s for s, n in host_count.items() if n}
    index = {s: i for i, s in enumerate(topo.switches)}
    lp = lp or OrderLP(topo, host_count)
    known = list(zip(orders or [], solved)) if solved is not None else []
    best: Plan | None = None
    work: list[tuple[dict[Arc, int], list[tuple[dict[str, ParentMap], Mapping[str, tuple[Share, ...]]]]]] = [
        (rank, [(parents, splits)]) for _, parents, splits, rank in plans]
    for rank in orders or []:
        if all(rank != other for other, _ in work):
            work.append((rank, []))
    for rank, starts in work:
        # the trees rounded from the order LP's flows (acyclic/refine.py): more columns to start from
        sol = next((got for order, got in known if order is rank), None) or lp.solve(
            np.array([float(rank[a]) for a in lp.arcs]))
        rounded = rounded_trees(topo, lp, rank, sol) if sol is not None else None
        if rounded is not None:
            starts = [*starts, (rounded, {})]
        if not starts:
            continue
        got = column_plan(topo, host_count, rank, starts, nodes=nodes, keep=keep)
        if got is None or (best is not None and got[0] >= best[0] * (1 - EPS)):
            continue
        if len(pack(got[1], hosted, index, got[2])) <= max_vlans:
            best = (got[0], got[1], got[2], rank)
    return best


def walked_orders(topo: Topology, host_count: dict[str, int], rank: dict[Arc, int], steps: int,
                  keep_last: int, early: int = 0, iterations: int = 10**12) -> list[dict[Arc, int]]:
    """The last `keep_last` orders (the best last) of a long order walk from `rank`
    (acyclic/refine.py `order_walk`, `steps` moves or `iterations` simplex iterations): the
    engine's walks stop at refine.STEPS moves, and on random 3-regular graphs of 24
    switches the walk keeps finding lower order LPs for hundreds of moves more (seed 8:
    1.204x the optimum at the start, 1.156x after 600 moves, about 15 s). `early`: also
    the best order of the walk's first `early` moves, first, where it is not among them (a
    lower order LP does not always give lighter trees: the Heawood graph's default plan
    from 1.222x at 50 moves to 1.250x at 200 without it)."""
    from vlanroute.routing.acyclic.refine import order_walk, rank_of
    lp = OrderLP(topo, host_count)
    moved: list[int] = []
    found = [rank_of(lp, key) for key, _ in order_walk(lp, rank, steps, iterations=iterations, moved=moved)]
    last = found[1:][-keep_last:]
    within = [order for order, taken in zip(found[1:], moved[1:]) if taken <= early]
    if early and within and all(within[-1] is not order for order in last):
        return [within[-1], *last]
    return last
