"""The search for at most K trees within a VLAN budget of K (routing.algorithm: budget, on any graph).

`budget_routes` picks at most K spanning trees and gives every source switch one of them:
K trees can never need more than K VLANs. Routes may then be longer than minimal; what is minimised is
the all-to-all maximum link load, then (through the sum of squared loads, which grows with
every extra hop) the total path length. It is the same problem as layered routing with a
fixed number of layers (Nue, Domke/Hoefler/Matsuoka HPDC 2016, never exceeds its layer
budget) and as SPAIN's tree packing (NSDI 2010), here with per-source trees:
1. candidate trees: the trees of the best minimal routing (each is shortest for its own
   sources), and balanced breadth-first trees grown from K spread-out roots;
2. K of them, spread out over the topology (farthest-first, so that every source is near
   the root of some tree and its stretch stays small);
3. every source to the tree that keeps the maximum load lowest (greedy, heaviest sources
   first), then rounds of moving single sources while that lowers (max load, sum of
   squared loads).
The best of the candidate sets is kept. The engine (budget.py) lets it compete with the
periodic trees of periodic.py (within_budget.py).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from vlanroute.model.topology import Topology
from vlanroute.routing.balance import balanced_tree
from vlanroute.routing.engine import Routes
from vlanroute.routing.trees import ParentMap, distinct_trees, euler_times, hop_distances, tree_depths, tree_parents

NEAR = 12
SMALL = 40                 # try every k-subset of the minimal trees when there are at most this many
MAX_WORK = 40_000_000      # switch visits per local search: keeps a 32x32 torus within seconds


@dataclass(frozen=True)
class BudgetChoices:
    """Routed within the budget: `trees_used` of at most `max_vlans` trees."""

    max_vlans: int
    trees: str            # the winning candidate set: minimal-trees or balanced-trees
    trees_used: int
    polished: bool = False  # single branches then moved off the most loaded links (budget.py)

    def record(self) -> dict[str, object]:
        return {"max_vlans": self.max_vlans, "trees": self.trees, "trees_used": self.trees_used,
                "polished": self.polished}


# --------------------------------------------------------------------------- trees as index arrays


class IndexTree:
    """A spanning tree rooted at `root`, prepared so that one source's loads take O(switches).

    A source's loads on the tree are array operations over its links (numpy), each the same
    float operation, in the same order, as the loop over the links it replaced, so the
    scores and the plans are the same bits: on a 16x16 torus with a cable gone that loop
    was half of the budget engine's 34 s of CPU."""

    def __init__(self, parent: dict[int, int], root: int, n: int, hosts: list[int], arc: dict[tuple[int, int], int]):
        kids: list[list[int]] = [[] for _ in range(n)]
        for v, p in parent.items():
            kids[p].append(v)
        self.root = root
        self.parent = parent
        order, self.tin, self.tout = euler_times(kids, root)
        below = list(hosts)
        for v in reversed(order[1:]):
            below[parent[v]] += below[v]
        total = below[root]
        # per non-root switch c: (tin, tout, arc down p->c, load per source host down, arc up, load up)
        self.links = [(self.tin[c], self.tout[c], arc[(parent[c], c)], below[c], arc[(c, parent[c])], total - below[c])
                      for c in order[1:]]
        columns = np.array(self.links, dtype=np.int64).reshape(-1, 6).T
        self._tin, self._tout, self._down, self._xd, self._up, self._xu = columns
        self.depth = [0] * n
        for v in order[1:]:
            self.depth[v] = self.depth[parent[v]] + 1
        self._invc: np.ndarray | None = None       # `_increments`, kept for one cable array
        self._kept: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def contribution(self, s: int, weight: int) -> tuple[np.ndarray, np.ndarray]:
        """(arcs, load of each before dividing by its cables) that source s, sending
        `weight` hosts' traffic, puts on the tree's links that carry any, in link order."""
        ts = self.tin[s]
        towards = (self._tin <= ts) & (ts < self._tout)     # the link leads towards s: traffic goes up
        arcs = np.where(towards, self._up, self._down)
        x = np.where(towards, self._xu, self._xd)
        keep = x != 0
        return arcs[keep], weight * x[keep]

    def score(self, s: int, weight: int, load: np.ndarray, invc: np.ndarray, peak: float) -> tuple[float, float]:
        """(max load, change in the sum of squared loads) if source s joined this tree;
        `contribution` priced against `load` without changing it, for ranking many
        candidates. The sum is a running one (cumsum), in link order, as a loop's."""
        arcs, add = self._increments(s, weight, invc)
        if not len(arcs):
            return (round(peak, 6), 0.0)
        l0 = load[arcs]
        l1 = l0 + add
        top = max(peak, float(l1.max()))
        return (round(top, 6), float((l1 * l1 - l0 * l0).cumsum()[-1]))

    def _increments(self, s: int, weight: int, invc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(arcs, load per cable) that source s adds joining this tree, in the order of
        `links`, kept per (s, weight): the assignment rounds score the same sources on the
        same trees again and again."""
        if invc is not self._invc:
            self._invc, self._kept = invc, {}
        got = self._kept.get((s, weight))
        if got is None:
            arcs, x = self.contribution(s, weight)
            got = self._kept[(s, weight)] = (arcs, x * invc[arcs])
        return got

    def parents_from(self, s: int) -> dict[int, int]:
        return tree_parents(self.parent.items(), s)


@dataclass
class Problem:
    names: list[str]
    hosts: list[int]
    adj: list[list[int]]
    arc: dict[tuple[int, int], int]
    inv_cables: list[float]           # 1 / cables of each arc
    invc: np.ndarray                  # the same, as an array (IndexTree's loads)
    dist_from: dict[int, list[int]]    # lazily filled BFS distances


def problem_of(topo: Topology, host_count: dict[str, int]) -> Problem:
    names = list(topo.switches)
    idx = {s: i for i, s in enumerate(names)}
    cables = topo.arc_cables()
    arc: dict[tuple[int, int], int] = {}
    inv: list[float] = []
    for (a, b), c in sorted(cables.items(), key=lambda kv: (idx[kv[0][0]], idx[kv[0][1]])):
        arc[(idx[a], idx[b])] = len(inv)
        inv.append(1.0 / c)
    adj: list[list[int]] = [[] for _ in names]
    for i, j in arc:
        adj[i].append(j)
    return Problem(names, [host_count.get(s, 0) for s in names], adj, arc, inv, np.array(inv), {})


def distances_from(problem: Problem, s: int) -> list[int]:
    """Hops from switch s to every switch, cached (the spreading of roots asks often)."""
    got = problem.dist_from.get(s)
    if got is None:
        got = problem.dist_from[s] = hop_distances(problem.adj, s)
    return got


def spread_roots(problem: Problem, candidates: list[int], k: int) -> list[int]:
    """k of the candidate switches, farthest-first from the most central one (k-center).

    Ties (common on small-diameter graphs such as the hyper-crossbar, where everything is
    within 2 hops) go to the candidate farthest from all chosen ones in sum, so that the
    roots spread over rows and columns instead of filling one row.
    """
    weight = [h or 1 for h in problem.hosts]
    first = min(candidates[:64], key=lambda c: (sum(d * w for d, w in zip(distances_from(problem, c), weight)), c))
    chosen = [first]
    near = list(distances_from(problem, first))
    total = list(near)
    pool = set(candidates) - {first}
    while len(chosen) < k and pool:
        nxt = max(pool, key=lambda c: (near[c], total[c], weight[c], -c))
        chosen.append(nxt)
        pool.discard(nxt)
        dn = distances_from(problem, nxt)
        near = [min(a, b) for a, b in zip(near, dn)]
        total = [a + b for a, b in zip(total, dn)]
        if len(problem.dist_from) > 4096:   # bound the memory of cached distances on huge graphs
            problem.dist_from.clear()
    return chosen


def _assign(problem: Problem, trees: list[IndexTree], rounds: int = 4,
            start: list[int] | None = None) -> tuple[list[int], list[float]]:
    """Give every source one of `trees`: greedy (or `start`), then single-source moves while
    they help, within a bound on the work (switch visits) for very large graphs."""
    n = len(problem.names)
    work = 0
    load = np.zeros(len(problem.inv_cables))
    invc = problem.invc
    sources = sorted((s for s in range(n) if problem.hosts[s]), key=lambda s: (-problem.hosts[s], s))
    tree_of = [-1] * n
    contrib: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def apply(c: tuple[np.ndarray, np.ndarray], sign: float) -> None:
        arcs, x = c                       # each arc once per contribution
        load[arcs] += sign * x * invc[arcs]

    # The trees a source may take: the NEAR ones whose roots are nearest (a far root means
    # long routes anyway, and it bounds the work per source), nearest first, so that among
    # equally good trees the shortest routes win.
    near: dict[int, list[int]] = {}

    def ranked(s: int) -> list[int]:
        got = near.get(s)
        if got is None:
            got = near[s] = sorted(range(len(trees)), key=lambda t: (trees[t].depth[s], t))[:NEAR]
        return got

    for s in sources:
        if start is not None:
            tree_of[s], contrib[s] = start[s], trees[start[s]].contribution(s, problem.hosts[s])
            apply(contrib[s], 1.0)
            continue
        peak = float(load.max())
        best = None
        for t in ranked(s):
            sc = trees[t].score(s, problem.hosts[s], load, invc, peak)
            if best is None or sc < best[0]:
                best = (sc, t)
        assert best is not None
        tree_of[s], contrib[s] = best[1], trees[best[1]].contribution(s, problem.hosts[s])
        apply(contrib[s], 1.0)
    for _ in range(rounds):
        work += len(sources) * min(NEAR, len(trees)) * n
        if work > MAX_WORK:
            break
        changed = False
        for s in sources:
            apply(contrib[s], -1.0)
            peak = float(load.max())
            best = None
            for t in ranked(s):
                sc = trees[t].score(s, problem.hosts[s], load, invc, peak)
                if best is None or sc < best[0] or (sc == best[0] and t == tree_of[s]):
                    best = (sc, t)
            assert best is not None
            if best[1] != tree_of[s]:
                changed = True
                tree_of[s], contrib[s] = best[1], trees[best[1]].contribution(s, problem.hosts[s])
            apply(contrib[s], 1.0)
        if not changed:
            break
    return tree_of, load.tolist()


def _improve_trees(problem: Problem, trees: list[IndexTree], tree_of: list[int], load: list[float],
                   max_work: int = MAX_WORK // 10) -> list[IndexTree]:
    """Re-hang subtrees to take load off the most loaded link (local search on the trees).

    For the most loaded link p-c of a tree (c the child), a subtree Y below c (rooted at
    some y) is cut from its parent and hung from a neighbour z of y outside c's subtree.
    That moves Y's hosts across every link on the tree path between y's old and new
    parent, and nowhere else, so a move is judged on that path alone: it is taken if no
    link there ends at or above the current maximum. Repeats while the maximum falls;
    a star-like tree thus learns to hang destinations off the sources that send to them.
    """
    n = len(problem.names)
    invc = problem.inv_cables
    arc = problem.arc
    hosts = problem.hosts
    work = 0
    src_hosts: list[list[int]] = [[0] * n for _ in trees]
    for s in range(n):
        if hosts[s] and tree_of[s] >= 0:
            src_hosts[tree_of[s]][s] = hosts[s]
    dst_total = sum(hosts)
    parents = [dict(t.parent) for t in trees]
    roots = [t.root for t in trees]

    def structure(t: int) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int],
                                    list[int], list[int]]:
        """Tree t's entry/exit times, depths, hosts below each switch as sources of t (src_below)
        and as destinations (dst_below), breadth-first order, and each switch's arcs from and
        to its parent (down, up; -1 at the root and off the tree), read on every step of the scan."""
        par = parents[t]
        kids: list[list[int]] = [[] for _ in range(n)]
        down, up = [-1] * n, [-1] * n
        for v, p in par.items():
            kids[p].append(v)
            down[v], up[v] = arc[(p, v)], arc[(v, p)]
        order = [roots[t]]
        for v in order:
            order.extend(kids[v])
        depth = [0] * n
        src_below, dst_below = list(src_hosts[t]), list(hosts)
        for v in reversed(order[1:]):
            src_below[par[v]] += src_below[v]
            dst_below[par[v]] += dst_below[v]
        _, tin, tout = euler_times(kids, roots[t])
        for v in order[1:]:
            depth[v] = depth[par[v]] + 1
        return tin, tout, depth, src_below, dst_below, order, down, up

    def arc_values(t: int, p: int, c: int, src_c: int, dst_c: int) -> tuple[tuple[int, float], tuple[int, float]]:
        sources_in_t = src_total[t]
        return ((arc[(p, c)], (sources_in_t - src_c) * dst_c * invc[arc[(p, c)]]),
                (arc[(c, p)], src_c * (dst_total - dst_c) * invc[arc[(c, p)]]))

    def old_tree_value(t: int, ai: int, par: dict[int, int], src_below: list[int], dst_below: list[int]) -> float:
        """What tree t puts on arc ai now."""
        u, v = ends[ai]
        if par.get(v) == u:
            return (src_total[t] - src_below[v]) * dst_below[v] * invc[ai]
        if par.get(u) == v:
            return src_below[u] * (dst_total - dst_below[u]) * invc[ai]
        return 0.0

    def move_changes(t: int, par: dict[int, int], x: int, y: int, z: int, lose: list[int], gain: list[int],
                     src_below: list[int], dst_below: list[int]) -> dict[int, float]:
        """What tree t puts on every arc a move of Y (y's subtree) from x to z changes."""
        changes: dict[int, float] = {}
        src_y, dst_y = src_below[y], dst_below[y]
        for w in lose:
            for ai, val in arc_values(t, par[w], w, src_below[w] - src_y, dst_below[w] - dst_y):
                changes[ai] = val
        for w in gain:
            for ai, val in arc_values(t, par[w], w, src_below[w] + src_y, dst_below[w] + dst_y):
                changes[ai] = val
        # the edge x-y goes, z-y comes
        for ai, _ in arc_values(t, x, y, src_y, dst_y):
            changes.setdefault(ai, 0.0)
        for ai, val in arc_values(t, z, y, src_y, dst_y):
            changes[ai] = changes.get(ai, 0.0) + val
        return changes

    ends: list[tuple[int, int]] = [(0, 0)] * len(arc)
    for (a, b), i in arc.items():
        ends[i] = (a, b)
    src_total = [sum(x) for x in src_hosts]
    info = {t: structure(t) for t in range(len(trees))}
    adj = problem.adj
    while work < max_work:
        peak = max(load)
        if peak <= 0:
            break
        hot = [a for a, x in enumerate(load) if x >= peak - 1e-9]
        limit = peak - 1e-9         # a move that brings any link to it is refused
        moved = False
        for a_hot in hot:
            u, v = ends[a_hot]
            for t in range(len(trees)):
                par = parents[t]
                if par.get(v) == u:
                    c = v               # the hot link is u -> its child v in tree t
                elif par.get(u) == v:
                    c = u
                else:
                    continue
                tin, tout, depth, src_below, dst_below, order, down, up = info[t]
                # contribution of this tree to the hot arc must be what makes it hot
                best = None
                # Y moves across the hot link: out of c's subtree (fewer destinations or
                # sources below c) or into it (more destinations below c, fewer beyond).
                # What this tree puts on each arc of a move is arc_values' and old_tree_value's
                # arithmetic, inlined (the scan below is most of the engine's time): the link
                # from each w to its parent changes on the paths x..lca (Y leaves) and z..lca
                # (Y arrives), x-y goes (0 there now) and z-y comes (the tree had nothing there).
                st = src_total[t]
                c_in, c_out = tin[c], tout[c]       # (the tests below with the times held in locals)
                for y in order[1:]:
                    x = par[y]
                    y_tin, y_out = tin[y], tout[y]
                    y_in = c_in <= y_tin < c_out
                    for z in adj[y]:
                        work += 1
                        z_tin = tin[z]
                        if z == x or (c_in <= z_tin < c_out) == y_in or y_tin <= z_tin < y_out:
                            continue
                        # path x -> lca(x, z) loses Y; z -> lca gains Y
                        a1, a2 = x, z
                        src_y, dst_y = src_below[y], dst_below[y]
                        lose, gain = [], []
                        while a1 != a2:
                            if depth[a1] >= depth[a2]:
                                lose.append(a1)
                                a1 = par[a1]
                            else:
                                gain.append(a2)
                                a2 = par[a2]
                        work += len(lose) + len(gain)
                        worst = 0.0
                        # the maximum only grows: once it reaches the peak the move is out
                        # (the test below would refuse it), so the rest is not summed
                        # Y's sources and destinations leave the x..lca path, arrive on z..lca
                        # (`if value > worst`, not max(): the same value without a call per link;
                        # a small gain, within the noise of a whole budget search)
                        for path, ds, dd in ((lose, -src_y, -dst_y), (gain, src_y, dst_y)):
                            for w in path:
                                sc, dc = src_below[w] + ds, dst_below[w] + dd
                                ad, au = down[w], up[w]
                                value = load[ad] - (st - src_below[w]) * dst_below[w] * invc[ad] \
                                    + (st - sc) * dc * invc[ad]
                                if value > worst:
                                    worst = value
                                value = load[au] - src_below[w] * (dst_total - dst_below[w]) * invc[au] \
                                    + sc * (dst_total - dc) * invc[au]
                                if value > worst:
                                    worst = value
                                if worst >= limit:
                                    break
                            if worst >= limit:
                                break
                        if worst >= limit:
                            continue
                        ad, au = down[y], up[y]            # x is y's parent
                        for value in (load[ad] - (st - src_y) * dst_y * invc[ad] + 0.0,
                                      load[au] - src_y * (dst_total - dst_y) * invc[au] + 0.0):
                            if value > worst:
                                worst = value
                        ad, au = arc[(z, y)], arc[(y, z)]
                        for value in (load[ad] - 0.0 + (st - src_y) * dst_y * invc[ad],
                                      load[au] - 0.0 + src_y * (dst_total - dst_y) * invc[au]):
                            if value > worst:
                                worst = value
                        if worst < peak - 1e-9 and (best is None or worst < best[0]):
                            best = (worst, y, z, move_changes(t, par, x, y, z, lose, gain, src_below, dst_below))
                if best is not None:
                    _, y, z, changes = best
                    for ai, val in changes.items():
                        load[ai] += val - old_tree_value(t, ai, par, src_below, dst_below)
                    par[y] = z
                    info[t] = structure(t)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            break
    return [IndexTree(parents[t], roots[t], n, hosts, arc) for t in range(len(trees))]


def to_index_parents(parent: ParentMap, idx: dict[str, int]) -> dict[int, int]:
    return {idx[v]: idx[p] for v, p in parent.items()}


def budget_routes(topo: Topology, host_count: dict[str, int], k: int, minimal: Routes) -> Routes:
    """At most k spanning trees, every source switch assigned to one (see the module doc)."""
    problem = problem_of(topo, host_count)
    names = problem.names
    idx = {s: i for i, s in enumerate(names)}
    sources = [i for i in range(len(names)) if problem.hosts[i]]

    # Candidate set A: the minimal routing's distinct trees, each named by its first source.
    home: dict[frozenset[tuple[str, str]], int] = {}
    for s in sorted(sources):
        key = frozenset(minimal.parents[names[s]].items())
        home.setdefault(key, s)
    minimal_roots = sorted(home.values())
    sets: list[tuple[str, list[IndexTree]]] = []
    roots_a = spread_roots(problem, minimal_roots, k)
    def minimal_tree(r: int) -> IndexTree:
        return IndexTree(to_index_parents(minimal.parents[names[r]], idx), r, len(names), problem.hosts, problem.arc)

    sets.append(("minimal-trees", [minimal_tree(r) for r in roots_a]))
    if math.comb(len(minimal_roots), k) <= SMALL:
        # Small cases: every choice of k of the minimal trees, not only the spread-out one.
        for combo in itertools.combinations(minimal_roots, k):
            if sorted(combo) != sorted(roots_a):
                sets.append(("minimal-trees", [minimal_tree(r) for r in combo]))

    # Candidate set B: balanced breadth-first trees from k spread-out roots, grown one after
    # the other against the load the earlier ones will carry (each tree is expected to
    # serve about 1/k of the hosts, sitting near its root).
    g = topo.simple()
    order = {s: i for i, s in enumerate(names)}
    adj = {s: sorted(g.neighbors(s), key=order.__getitem__) for s in names}
    cables = topo.arc_cables()
    roots_b = spread_roots(problem, sources or list(range(len(names))), k)
    total = sum(problem.hosts)
    arc_name = {i: (names[a], names[b]) for (a, b), i in problem.arc.items()}
    est: dict[tuple[str, str], float] = {}
    trees_b = []
    for r in roots_b:
        dist = {names[v]: d for v, d in enumerate(distances_from(problem, r))}
        par = balanced_tree(names[r], adj, dist, host_count, total / k, est, cables, order)
        tree = IndexTree(to_index_parents(par, idx), r, len(names), problem.hosts, problem.arc)
        trees_b.append(tree)
        for _tin, _tout, down, xd, _up, _xu in tree.links:   # its sources sit near the root: traffic flows out
            est[arc_name[down]] = est.get(arc_name[down], 0.0) + total / k * xd * problem.inv_cables[down]
    sets.append(("balanced-trees", trees_b))

    best: tuple[tuple[float, int], str, list[IndexTree], list[int]] | None = None
    for label, trees in sets:
        tree_of, load = _assign(problem, trees)
        for _ in range(2):   # better trees for their sources, then sources to the better trees
            trees = _improve_trees(problem, trees, tree_of, load)
            tree_of, load = _assign(problem, trees, rounds=2, start=tree_of)
        peak = round(max(load, default=0.0), 6)
        total_hops = _total_hops(problem, trees, tree_of)
        score = (peak, total_hops)
        if best is None or score < best[0]:
            best = (score, label, trees, tree_of)
    assert best is not None
    _, label, trees, tree_of = best
    parents: dict[str, ParentMap] = {}
    for s in range(len(names)):
        t = tree_of[s] if tree_of[s] >= 0 else 0      # switches without hosts send nothing
        from_s = trees[t].parents_from(s)
        parents[names[s]] = {names[v]: names[p] for v, p in from_s.items()}
    # Distinct spanning trees, by their links: re-hanging subtrees can make two trees equal.
    used = distinct_trees(trees[tree_of[s]].parent for s in sources)
    return Routes("budget", parents, BudgetChoices(k, label, used))


def _total_hops(problem: Problem, trees: list[IndexTree], tree_of: list[int]) -> int:
    """Sum over ordered host pairs of the routed hops (tree distances)."""
    total = 0
    for s in range(len(problem.names)):
        if not problem.hosts[s]:
            continue
        depth = tree_depths(trees[tree_of[s]].parents_from(s), s)
        total += problem.hosts[s] * sum(problem.hosts[v] * d for v, d in depth.items())
    return total
