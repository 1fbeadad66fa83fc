"""Branch moves (routing/acyclic/polish.py) judge a move without building its load changes
first: a neighbour u below the hot link is skipped at once (its path crosses that link, so
the move cannot take load off it), and only the links the move loads are looked at, in
order, stopping at the first that breaks the rule; a tree's child lists, branch loads and
depth-first times come from one pass over its child lists. The plain path, kept here as it was
before (every move's changes built, then judged), must give the same trees, the same load
and the same count of moves looked at (which the max_work bound reads), on random fabrics,
with a channel order or none, shortest routes only or not, and with the work bounded."""

from __future__ import annotations

from unittest import mock

import fabrics
import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acyclic_negotiate import hosted, start_and_order
from topologies import connected_graphs

from vlanroute.model.links import Arc
from vlanroute.routing.acyclic import polish as polish_module
from vlanroute.routing.acyclic.negotiate import negotiate
from vlanroute.routing.acyclic.polish import EPS, _Trees, polish
from vlanroute.routing.bounds import distance_sum
from vlanroute.routing.shortest import shortest_routes
from vlanroute.routing.trees import max_load, source_arc_loads


class _PlainTrees(_Trees):
    """try_move and _shape as they were: every candidate move's load changes built, then
    judged; a tree's shape from source_arc_loads and a walk with exit marks."""

    def try_move(self, key: str, hot: Arc, level: float, depth: int, sources: list[str]) -> bool:
        tree, rank, src = self.trees[key], self.rank, self.root[key]
        dist = self.dist[src] if self.dist is not None else None
        children, carried, tin, tout = self._shape(key)
        load, cap = self.load, self.cap
        stack, under = [hot[1]], []
        while stack:
            v = stack.pop()
            under.append(v)
            stack.extend(children[v])
        inside = set(under)
        for v in under:
            demand = carried.get(v, 0.0)
            if not demand:
                continue
            old = self.path(key, v)
            old_parent = tree[v]
            top = min((rank[(v, c)] for c in children[v]), default=None) if rank is not None else None
            for u in self.adj[v]:
                if u == tree[v] or u in inside and tin[v] <= tin[u] < tout[v]:
                    continue
                if dist is not None and dist[u] != dist[v] - 1:
                    continue
                self.work += 1
                if self.work > self.max_work:
                    return False
                arc = (u, v)
                if rank is not None and (top is not None and rank[arc] >= top
                                         or u != src and rank[(tree[u], u)] >= rank[arc]):
                    continue
                to_u = self.path(key, u)
                i = 0
                for x, y in zip(old, to_u):
                    if x != y:
                        break
                    i += 1
                delta: dict[Arc, float] = {}
                for a in old[i:]:
                    delta[a] = -demand
                delta[arc] = demand
                for a in to_u[i:]:
                    delta[a] = demand
                if delta.get(hot, 0.0) >= 0:
                    continue
                over = [a for a, d in delta.items() if d > 0 and (load[a] + d) / cap[a] >= level - EPS]
                if len(over) > (1 if depth else 0) or any((load[a] + delta[a]) / cap[a] > level + EPS for a in over):
                    continue
                kept = self._shapes.get(key), self._paths.get(key)
                self._apply(key, v, u, delta, 1.0)
                if not over:
                    return True
                nxt = over[0]
                if any(self.try_move(s, nxt, level, depth - 1, sources) for s in self.holding(nxt)):
                    return True
                self._apply(key, v, old_parent, delta, -1.0)
                if kept[0] is not None:
                    self._shapes[key] = kept[0]
                if kept[1] is not None:
                    self._paths[key] = kept[1]
        return False


    def _shape(self, key: str) -> tuple[dict[str, list[str]], dict[str, float], dict[str, int], dict[str, int]]:
        """_shape as it was: the branch loads from source_arc_loads, the depth-first times
        from a walk that marks each switch's exit."""
        got = self._shapes.get(key)
        if got is None:
            tree, src = self.trees[key], self.root[key]
            children: dict[str, list[str]] = {v: [] for v in [src, *tree]}
            for v, p in tree.items():
                children[p].append(v)
            carried = {v: x for (_, v), x in source_arc_loads(tree, src, self.hosts, weight=self.weight[key])}
            tin: dict[str, int] = {}
            tout: dict[str, int] = {}
            stack: list[tuple[str, bool]] = [(src, False)]
            while stack:
                v, leaving = stack.pop()
                if leaving:
                    tout[v] = len(tin)
                    continue
                tin[v] = len(tin)
                stack.append((v, True))
                stack.extend((c, False) for c in children[v])
            got = self._shapes[key] = (children, carried, tin, tout)
        return got


class _Counted:
    """Records the work count of every _Trees (or _PlainTrees) the polish builds."""

    def __init__(self, cls: type[_Trees]) -> None:
        self.cls = cls
        self.made: list[_Trees] = []

    def __call__(self, *args: object, **kwargs: object) -> _Trees:
        t = self.cls(*args, **kwargs)  # type: ignore[arg-type]
        self.made.append(t)
        return t


def both(*args: object, **kwargs: object) -> tuple[tuple[float, dict[str, dict[str, str]], int],
                                                 tuple[float, dict[str, dict[str, str]], int]]:
    got = []
    for cls in (_Trees, _PlainTrees):
        counted = _Counted(cls)
        with mock.patch.object(polish_module, "_Trees", counted):
            load, trees = polish(*args, **kwargs)  # type: ignore[arg-type]
        got.append((load, trees, counted.made[0].work))
    return got[0], got[1]


@settings(max_examples=60, deadline=None)
@given(connected_graphs(), st.integers(min_value=1, max_value=3), st.sampled_from(["order", "none", "minimal"]),
       st.booleans(), st.sampled_from([float("inf"), 5.0, 40.0]), st.integers(min_value=0, max_value=2))
def test_the_shortcut_moves_exactly_as_the_plain_path(g: nx.Graph, per: int, kind: str, negotiated: bool,
                                                       max_work: float, depth: int) -> None:
    topo, hosts = hosted(g, per)
    if kind == "order":
        start, rank = start_and_order(topo)
        if negotiated:
            scale = distance_sum(topo, hosts) / sum(topo.arc_cables().values())
            start = negotiate(topo, hosts, rank, start, scale, rounds=3)[1]
        new, plain = both(topo, hosts, rank, start, depth=depth, max_work=max_work)
    else:
        start = shortest_routes(topo).parents
        new, plain = both(topo, hosts, None, start, minimal=kind == "minimal", depth=depth, max_work=max_work)
    assert new == plain


def test_the_same_on_a_degraded_torus_where_the_moves_matter() -> None:
    # shortest trees of the 6x6 torus with 3 cables gone carry 1456 on some link; the moves
    # take that to 512 looking at tens of thousands of moves, the same ones on both paths
    topo, hosts = fabrics.degraded_torus(6, 3, seed=0)
    start = shortest_routes(topo).parents
    new, plain = both(topo, hosts, None, start)
    assert new == plain
    assert new[0] < max_load(start, hosts, topo.arc_cables())
