"""Local search on a fixed channel order: the acyclic engine's last step.

Negotiated congestion (routing/acyclic/negotiate.py) re-routes whole trees; it leaves a few
links one destination too heavy where only an exact assignment is good enough (on a
leaf-spine of 16 leaves and 8 spines every engine's trees put three destinations on some
uplink, 1.6x the optimum, where two on each, 1.067x, exist). This step moves single
branches: switch v of source s's tree gets another parent u, which moves the traffic of
v's subtree from the old path s..v to the path s..u, v. A move is kept when no link it
loads reaches the current maximum, so the links at the maximum get fewer, and with them
the maximum in the end (hill climbing on (maximum, links at it)).

A move is allowed only if the tree's routes still increase in the channel order (the
turn into u -> v and every turn out of v), so the plan stays deadlock-free
(Dally and Seitz 1987), as negotiation's does. The budget engine (budget.py) makes the
same moves with no order, on plans that need not be deadlock-free; with `minimal`, only
to a parent one hop nearer the source (the shortest engine's trees stay shortest).

The trees are keyed by sender: a source switch, or one group of a switch's hosts when the
hosts of a switch send on several trees (routing/spread.py, routing below the switch);
`roots` and `weights` then give each key's switch and hosts.

Where the trees are many and numba works, the same passes run compiled
(acyclic/polish_kernel.py, `_compiled`): the same trees, entry for entry.
"""

from __future__ import annotations

from collections.abc import Mapping

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.jit import compiled_allowed, long_run
from vlanroute.routing.trees import ParentMap, bfs_distances, preorder, source_arc_loads

EPS = 1e-9
# a tree's child lists, carried traffic, preorder entry and exit times, the preorder, the
# lowest child-link rank per switch (see _Trees._shape)
Shape = tuple[dict[str, list[str]], dict[str, float], dict[str, int], dict[str, int], list[str], dict[str, "int | None"]]
# The moves run compiled (acyclic/polish_kernel.py: the same trees) from this many tree
# entries (senders x switches), shortest routes only excepted (their moves are few): loading
# numba and the kernel costs about 0.3 s a process. Interpreted, polish took 0.5 to 2.1 s of
# the default plans of random 4-regular 64 and the degraded 6x6 and 8x8 tori, most of it in
# calls of 4,096 to 5,184 entries; 0.2 s of those of random 3-regular 24 and 48 and the
# dragonfly 9x4, where loading the kernel would cost more than it saves. Once the kernel is
# loaded, or the process has run long (routing/jit.py `long_run`), from KERNEL_WARM_ENTRIES.
KERNEL_ENTRIES = 4_000
KERNEL_WARM_ENTRIES = 500
_kernel_loaded = False
DEPTH = 2           # further moves an ejection chain may take (chains of up to three moves)
PASSES = 200        # passes over the links at the maximum, at most (each pass that moves
                    # something leaves fewer links at it, or a lower maximum)


class _Trees:
    """Trees and their loads per pair of switches and direction (over `cap` cables)."""

    def __init__(self, topo: Topology, hosts: dict[str, int], rank: dict[Arc, int] | None,
                 trees: dict[str, ParentMap], roots: Mapping[str, str] | None = None,
                 weights: Mapping[str, int] | None = None, minimal: bool = False,
                 max_work: float = float("inf")) -> None:
        cables = topo.arc_cables()
        self.hosts = hosts
        self.rank = rank
        self.cap = {a: float(c) for a, c in cables.items()}
        self.adj: dict[str, list[str]] = {s: [] for s in topo.switches}
        self.load: dict[Arc, float] = {}
        for a, b in sorted(cables):
            self.adj[a].append(b)
            self.load[(a, b)] = 0.0
        self.trees = {s: dict(t) for s, t in trees.items()}
        self.root = {k: roots[k] if roots is not None else k for k in self.trees}
        self.weight = {k: weights[k] if weights is not None else hosts.get(k, 0) for k in self.trees}
        # hops from each root, when every move must keep the routes shortest
        self.dist: dict[str, dict[str, int]] | None = None
        # per root, each switch's neighbours one hop nearer it (in `adj`'s order): with
        # `minimal`, the only parents a move may give
        self.nearer: dict[str, dict[str, list[str]]] = {}
        if minimal:
            self.dist = {r: bfs_distances(self.adj, r) for r in set(self.root.values())}
            for r, d in self.dist.items():
                self.nearer[r] = {v: [u for u in self.adj[v] if d[u] == d[v] - 1] for v in self.adj}
        for s, t in self.trees.items():
            for arc, x in source_arc_loads(t, self.root[s], hosts, weight=self.weight[s]):
                self.load[arc] += x
        self._shapes: dict[str, Shape] = {}
        self._paths: dict[str, dict[str, list[Arc]]] = {}
        # the keys whose tree holds each arc (a move updates it): the trees that can move a
        # branch off a hot link, without asking every tree
        self.users: dict[Arc, set[str]] = {a: set() for a in self.load}
        for k, t in self.trees.items():
            for v, p in t.items():
                self.users[(p, v)].add(k)
        self.place: dict[str, int] = {}     # each key's place in the order its trees are tried (`holding`)
        self.work = 0                       # branch moves looked at so far
        self.max_work = max_work

    def peak(self) -> float:
        return max((x / self.cap[a] for a, x in self.load.items()), default=0.0)

    def path(self, key: str, v: str) -> list[Arc]:
        """The links from the key's root to v in its tree (kept until a move changes the
        tree: the moves of one hot link ask for the same paths again and again)."""
        paths = self._paths.get(key)
        if paths is None:
            paths = self._paths[key] = {self.root[key]: []}
        got = paths.get(v)
        if got is None:
            tree = self.trees[key]
            up = [v]                        # v, its parent, ... up to a switch whose path is known
            while tree[up[-1]] not in paths:
                up.append(tree[up[-1]])
            for x in reversed(up):
                got = paths[x] = [*paths[tree[x]], (tree[x], x)]
            assert got is not None
        return got

    def try_move(self, key: str, hot: Arc, level: float, depth: int, sources: list[str]) -> bool:
        """Move one branch of the key's tree off the hot arc if no link it loads reaches `level`;
        or if one link reaches it (not above) and, `depth` > 0, a further move takes a
        branch of some tree off that link in turn (an ejection chain)."""
        tree, rank, src = self.trees[key], self.rank, self.root[key]
        adj = self.nearer[src] if self.dist is not None else self.adj
        shape = self._shapes.get(key)
        children, carried, tin, tout, seq, tops = shape if shape is not None else self._shape(key)
        load, cap, max_work = self.load, self.cap, self.max_work
        # the switches whose path from src crosses the hot arc: the subtree under its head,
        # in depth-first preorder (numbers lo .. hi - 1)
        lo, hi = tin[hot[1]], tout[hot[1]]
        top: int | None = None
        for v in seq[lo:hi]:
            demand = carried.get(v, 0.0)
            if not demand:
                continue
            old: list[Arc] | None = None     # the path to v, looked up once a move needs it
            old_parent = tree[v]
            if rank is not None:
                top = tops.get(v, -1)
                if top == -1:
                    top = tops[v] = min((rank[(v, c)] for c in children[v]), default=None)
            v_in, v_out = tin[v], tout[v]
            for u in adj[v]:
                # (tree[v] is old_parent here: a move tried below is undone unless it is kept)
                if u == old_parent:
                    continue
                u_in = tin[u]
                below_hot = lo <= u_in < hi
                if below_hot and v_in <= u_in < v_out:     # u in v's subtree
                    continue
                self.work += 1
                if self.work > max_work:
                    return False
                if below_hot:
                    # u hangs below the hot arc too (not in v's subtree: skipped above), so
                    # its path crosses it: no progress. Counted as looked at, as before.
                    continue
                arc = (u, v)
                if rank is not None and (top is not None and rank[arc] >= top
                                         or u != src and rank[(tree[u], u)] >= rank[arc]):
                    continue
                # the paths to v and to u share their first links: there nothing changes;
                # below the fork they are disjoint (tree paths), so the move takes `demand`
                # off old[i:] (the hot arc among them: u is not below it) and puts it on
                # u -> v and to_u[i:]
                to_u = self.path(key, u)
                if old is None:
                    old = self.path(key, v)
                i = 0
                for x, y in zip(old, to_u):
                    if x != y:
                        break
                    i += 1
                # the links the move brings to the maximum (u -> v first, then u's path)
                allowed = 1 if depth else 0
                over: list[Arc] = []
                fits = True
                for a in (arc, *to_u[i:]):
                    ratio = (load[a] + demand) / cap[a]
                    if ratio >= level - EPS:
                        if ratio > level + EPS or len(over) == allowed:
                            fits = False
                            break
                        over.append(a)
                if not fits:
                    continue
                delta: dict[Arc, float] = {}
                for a in old[i:]:
                    delta[a] = -demand
                delta[arc] = demand
                for a in to_u[i:]:
                    delta[a] = demand
                kept = self._shapes.get(key), self._paths.get(key)
                self._apply(key, v, u, delta, 1.0)
                if not over:
                    return True
                # the one link it brought to the maximum: move some tree's branch off it in turn
                nxt = over[0]
                if any(self.try_move(s, nxt, level, depth - 1, sources) for s in self.holding(nxt)):
                    return True
                self._apply(key, v, old_parent, delta, -1.0)
                # the tree is as it was (a failed chain undoes all its moves): so are its shape and paths
                if kept[0] is not None:
                    self._shapes[key] = kept[0]
                if kept[1] is not None:
                    self._paths[key] = kept[1]
        return False

    def holding(self, arc: Arc) -> list[str]:
        """The keys whose tree holds `arc`, in the order they are tried. A failed move
        leaves every tree as it was, so the list stays right while it is walked."""
        return sorted(self.users[arc], key=self.place.__getitem__)

    def _shape(self, key: str) -> Shape:
        """The key's tree as child lists, what each switch's branch carries (the key's
        traffic to the hosts below it), depth-first entry and exit times (u is in v's
        subtree when tin[v] <= tin[u] < tout[v]), the switches in that preorder (v's
        subtree is seq[tin[v]:tout[v]]) and each switch's lowest rank of the links to its
        children, filled in when asked; kept until a move changes the tree."""
        got = self._shapes.get(key)
        if got is None:
            tree, src = self.trees[key], self.root[key]
            children: dict[str, list[str]] = {v: [] for v in [src, *tree]}
            for v, p in tree.items():
                children[p].append(v)
            # One pass over the child lists for all three (source_arc_loads' values, and the
            # depth-first times of a walk that takes the children last first, as before)
            order = [src]                   # breadth-first, as bfs_order
            for v in order:
                order.extend(children[v])
            hosts, hs = self.hosts, self.weight[key]
            below = {v: hosts.get(v, 0) for v in order}
            size = dict.fromkeys(order, 1)
            for v in reversed(order[1:]):
                p = tree[v]
                below[p] += below[v]
                size[p] += size[v]
            carried: dict[str, float] = {v: hs * below[v] for v in order[1:] if below[v]} if hs else {}
            tin = preorder(children, src)
            tout = {v: tin[v] + size[v] for v in order}
            got = self._shapes[key] = (children, carried, tin, tout, list(tin), {})
        return got

    def _apply(self, key: str, v: str, parent: str, delta: dict[Arc, float], sign: float) -> None:
        for a, d in delta.items():
            self.load[a] += sign * d
        tree = self.trees[key]
        self.users[(tree[v], v)].discard(key)
        self.users[(parent, v)].add(key)
        tree[v] = parent
        self._shapes.pop(key, None)
        self._paths.pop(key, None)


def polish(topo: Topology, hosts: dict[str, int], rank: dict[Arc, int] | None,
           trees: dict[str, ParentMap], roots: Mapping[str, str] | None = None,
           weights: Mapping[str, int] | None = None, minimal: bool = False, depth: int = DEPTH,
           max_work: float = float("inf")) -> tuple[float, dict[str, ParentMap]]:
    """(max load per cable, trees) after moving branches off the most loaded links while
    that lowers their number; `trees` must increase in `rank`, and the result does. With
    no rank, any branch move is allowed (the budget engine's trees, which need not be
    deadlock-free); with `minimal` only moves that keep every route shortest. `trees` are
    keyed by source switch, or by sender with `roots` (its switch) and `weights` (its hosts).
    `depth`: further moves an ejection chain may take; `max_work`: branch moves looked at,
    at most (a measure of work that is the same on every run, unlike a time limit), after
    which the trees are returned as they are."""
    t = _Trees(topo, hosts, rank, trees, roots, weights, minimal, max_work)
    sources = sorted(t.trees, key=lambda s: (-t.weight[s], topo.index(t.root[s]), s))
    t.place = {s: i for i, s in enumerate(sources)}
    entries = len(t.trees) * len(topo.switches)
    if ((entries >= KERNEL_WARM_ENTRIES if _kernel_loaded or long_run() else entries >= KERNEL_ENTRIES and not minimal)
            and compiled_allowed()
            and all(len(tree) == len(topo.switches) - 1 and t.root[k] not in tree for k, tree in t.trees.items())
            and (rank is None or all(a in rank for a in t.load))):
        return _compiled(t, topo, sources, depth)
    for _ in range(PASSES):
        level = t.peak()
        hot = [a for a, x in t.load.items() if x / t.cap[a] >= level - EPS]
        moved = False
        for arc in hot:
            if t.load[arc] / t.cap[arc] < level - EPS:
                continue            # an earlier move took it off the maximum already
            for s in t.holding(arc):
                if t.try_move(s, arc, level, depth, sources):
                    moved = True
                    break
        if not moved or t.work > t.max_work:
            break
    return t.peak(), t.trees


def _compiled(t: _Trees, topo: Topology, sources: list[str], depth: int) -> tuple[float, dict[str, ParentMap]]:
    """polish's passes by polish_kernel.polish_trees on `t` (every tree spanning, every
    channel ranked where there is an order): the same (max load, trees), each tree's entries
    in the same order. `sources`: the senders in the order they are tried (`t.place` numbers
    them so)."""
    global _kernel_loaded
    import numpy as np

    from vlanroute.routing.acyclic.polish_kernel import polish_trees
    names = list(topo.switches)
    index = {s: i for i, s in enumerate(names)}
    n = len(names)
    arcs = list(t.load)
    tail = np.array([index[a] for a, _ in arcs], dtype=np.int64)
    head = np.array([index[b] for _, b in arcs], dtype=np.int64)
    arc_id = np.full((n, n), -1, dtype=np.int64)
    arc_id[tail, head] = np.arange(len(arcs))
    adj_ptr = np.zeros(n + 1, dtype=np.int64)
    for i, s in enumerate(names):
        adj_ptr[i + 1] = adj_ptr[i] + len(t.adj[s])
    adj = np.array([index[u] for s in names for u in t.adj[s]], dtype=np.int64)
    parent = np.full((len(sources), n), -1, dtype=np.int64)
    keys = np.zeros((len(sources), max(n - 1, 0)), dtype=np.int64)
    for k, key in enumerate(sources):
        tree = t.trees[key]
        keys[k] = [index[v] for v in tree]
        parent[k, keys[k]] = [index[p] for p in tree.values()]
    root = np.array([index[t.root[key]] for key in sources], dtype=np.int64)
    rank = np.array([t.rank[a] for a in arcs] if t.rank is not None else [0] * len(arcs), dtype=np.int64)
    if t.dist is not None:
        rows = sorted(t.dist, key=index.__getitem__)
        dist = np.array([[t.dist[r][s] for s in names] for r in rows], dtype=np.int64).reshape(len(rows), n)
        row_of = {r: i for i, r in enumerate(rows)}
        key_row = np.array([row_of[t.root[key]] for key in sources], dtype=np.int64)
    else:
        dist = np.zeros((0, n), dtype=np.int64)
        key_row = np.full(len(sources), -1, dtype=np.int64)
    load = np.array([t.load[a] for a in arcs])
    peak = polish_trees(parent, keys, root, np.array([t.weight[key] for key in sources], dtype=np.int64),
                        np.array([t.hosts.get(s, 0) for s in names], dtype=np.int64), adj_ptr, adj, arc_id, tail,
                        head, rank, t.rank is not None, dist, key_row, load,
                        np.array([t.cap[a] for a in arcs]), EPS, depth, PASSES, float(t.max_work))
    _kernel_loaded = True
    got = parent.tolist()
    return float(peak), {key: {v: names[got[t.place[key]][index[v]]] for v in tree} for key, tree in t.trees.items()}
