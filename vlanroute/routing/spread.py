"""Routing below the switch: the hosts of one switch sent on several trees.

A host port's PVID selects the VLAN its host's frames travel in, and PVID is per port
(seed 001, section 3.2.1), so the hosts of one switch need not share one tree: host 1 of a
leaf may reach the other leaves over spine 1, host 2 over spine 2. With one tree per
switch the traffic of a switch to another switch takes one path, and on a leaf-spine of 8
leaves and 4 spines some spine then carries two of a leaf's seven destinations (1.143x the
optimum); with the four hosts of each leaf on four trees it reaches the optimum, as
OpenSM's engines do by routing per destination host.

`spread` starts from one tree per switch (an engine's plan), splits every switch's hosts
into at most `UNITS` senders of equal size, each starting on its switch's tree, and then
routes the senders again as the acyclic engine routes switches: negotiated congestion
(routing/acyclic/negotiate.py: every sender's tree against the others' loads, with a cost
that rises steeply above a target and a history that grows on the links left hot) and
branch moves (routing/acyclic/polish.py), keyed by sender. The same constraint as the
plan they come from: routes increasing in a channel order (deadlock-free, the acyclic
engine), shortest routes (the shortest engine), or none (the budget engine). The senders of
one switch whose trees end up equal are merged again; the result is kept only if it
lowers the maximum load and its VLANs fit the budget (each distinct tree a switch's hosts
send on is a VLAN of its own, unless the packing lets it share one; routing/packing.py).
MAC entries: every VLAN costs one entry per host on every switch it reaches
(plan/limits.py), so the budget already holds the MAC table's limit.

The load model is the switches': the optimum LP (routing/optimum.py) has one commodity per
source switch, and it is the optimum at host granularity too. A flow per source host is a
flow per source switch once the hosts of a switch are added up (the same demands, the same
loads), and any flow per source switch is one per host when each of its h hosts sends 1/h
of it on every path: the two LPs have the same optimum. Trees are what cannot split: one
tree per host sends a host's traffic to a switch on one path, which is why a switch's
hosts on several trees get closer to the LP than a switch on one.
"""

from __future__ import annotations

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.negotiate import negotiate
from vlanroute.routing.acyclic.polish import polish
from vlanroute.routing.packing import pack
from vlanroute.routing.bounds import arrival_bound, distance_sum
from vlanroute.routing.trees import ParentMap, Share, max_load, pruned_parents

UNITS = 4           # senders a switch's hosts are split into, at most (one per host below that)
ROUNDS = 12         # negotiation rounds over the senders
TARGETS = (1.0, 1.2)   # negotiation's hot-link targets over `scale` (the distance bound)
DEPTH = 1           # branch moves: ejection chains of up to two moves (three: far slower with many senders)
WORK = 200_000      # branch moves looked at, at most, per target (a deterministic bound on the work)


def senders_of(host_count: dict[str, int], order: list[str], units: int = UNITS) -> tuple[dict[str, str], dict[str, int]]:
    """Each switch's hosts as at most `units` senders of (nearly) equal size: key
    'switch#i' -> its switch, and -> its hosts. Switch names never hold '#' (names.py)."""
    roots: dict[str, str] = {}
    weights: dict[str, int] = {}
    for s in order:
        h = host_count.get(s, 0)
        k = min(h, units)
        for i in range(k):
            key = f"{s}#{i}"
            roots[key], weights[key] = s, h // k + (1 if i < h % k else 0)
    return roots, weights


def gathered(trees: dict[str, ParentMap], roots: dict[str, str], weights: dict[str, int], order: list[str],
             parents: dict[str, ParentMap]) -> tuple[dict[str, ParentMap], dict[str, tuple[Share, ...]]]:
    """The senders' trees as Routes' parents and splits: the senders of one switch on equal
    trees merged (their hosts added up); a switch left with one tree is not split, and its
    tree becomes its parents entry."""
    out = dict(parents)
    splits: dict[str, tuple[Share, ...]] = {}
    by_switch: dict[str, list[str]] = {}
    for key in trees:
        by_switch.setdefault(roots[key], []).append(key)
    for s in order:
        keys = by_switch.get(s)
        if not keys:
            continue
        merged: dict[frozenset[tuple[str, str]], list[object]] = {}
        for key in sorted(keys, key=lambda k: int(k.rsplit("#", 1)[1])):
            tree = trees[key]
            sig = frozenset(tree.items())
            got = merged.get(sig)
            if got is None:
                merged[sig] = [tree, weights[key]]
            else:
                got[1] = int(got[1]) + weights[key]     # type: ignore[call-overload]
        shares = tuple((dict(t), int(n)) for t, n in merged.values())     # type: ignore[call-overload]
        out[s] = shares[0][0]
        if len(shares) > 1:
            splits[s] = shares
    return out, splits


def spread(topo: Topology, host_count: dict[str, int], parents: dict[str, ParentMap], max_vlans: int, *,
           rank: dict[Arc, int] | None = None, minimal: bool = False,
           units: int = UNITS, depth: int = DEPTH) -> tuple[float, dict[str, ParentMap], dict[str, tuple[Share, ...]]] | None:
    """(max load per cable, parents, splits) of the hosts of each switch spread over several
    trees (the module docstring), or None when that carries no less than `parents` or needs
    more than `max_vlans` VLANs. `parents`' routes must increase in `rank` (if any), and
    be shortest with `minimal`; the spread routes keep that. `depth`: the branch moves'
    ejection chains (acyclic/polish.py)."""
    order = list(topo.switches)
    cables = topo.arc_cables()
    base = max_load(parents, host_count, cables)
    if base <= 0 or all(host_count.get(s, 0) <= 1 for s in order):
        return None
    roots, weights = senders_of(host_count, order, units)
    scale = distance_sum(topo, host_count) / (2 * topo.graph.number_of_edges())
    start = {k: dict(parents[s]) for k, s in roots.items()}
    best: tuple[float, dict[str, ParentMap]] | None = None
    floor = floor_of(topo, host_count, scale)
    for factor in TARGETS:
        load, trees = negotiate(topo, host_count, rank, start, scale, rounds=ROUNDS, target_factor=factor,
                                roots=roots, weights=weights, minimal=minimal)
        load, trees = polish(topo, host_count, rank, trees, roots, weights, minimal, depth=depth, max_work=WORK)
        if best is None or round(load, 6) < round(best[0], 6):
            best = (load, trees)
        if best[0] <= floor:
            # at a floor no routing goes below: the next target's plan would have to carry
            # strictly less to replace it (the leaf-spine of 48 leaves and 16 spines, at the
            # arrival bound after the first target: 1.2 s of CPU saved)
            break
    assert best is not None
    if round(best[0], 6) >= round(base, 6):
        return None
    new_parents, splits = gathered(best[1], roots, weights, order, parents)
    index = {s: i for i, s in enumerate(order)}
    vlans = len(pack(new_parents, {s for s, n in host_count.items() if n}, index, splits))
    if vlans > max_vlans:
        return None
    return best[0], new_parents, splits


def floor_of(topo: Topology, host_count: dict[str, int], distance: float) -> float:
    """A load no routing of the hosts on trees carries less than: the distance bound
    (`distance`, already computed) or the arrival bound (routing/bounds.py, 1 and 6)."""
    return max(distance, arrival_bound(topo, host_count))


SHARED_UP_TO = 16    # shared trees tried, at most (one more each time, from the most central switch out)
SHARED_UNITS = 64    # senders per switch on shared trees, at most (one per host below that: the
                     # hosts of a leaf spread over as many spines as it has hosts)


def shared_trees(topo: Topology, host_count: dict[str, int], max_vlans: int, base: dict[str, ParentMap], *,
                 minimal: bool = True,
                 units: int = SHARED_UNITS) -> tuple[float, dict[str, ParentMap], dict[str, tuple[Share, ...]]] | None:
    """(max load per cable, parents, splits) of the senders (`senders_of`) on k shared trees:
    the breadth-first trees of k switches spread out over the fabric (farthest first from the
    most central, switches without hosts included: the spines of a leaf-spine, whose trees
    reach every leaf in two hops), each sender on the tree that keeps the maximum load lowest
    among those that are shortest for its switch (with `minimal`), then single senders moved
    while that helps; the least loaded k, then the fewest trees. On a leaf-spine whose
    leaves' hosts are a multiple of its spines this is the optimum with a VLAN per spine
    (each leaf's hosts spread evenly over the spines' trees). None if no k gives every
    switch with hosts a tree or fits `max_vlans`. Switches without hosts keep their tree of
    `base`; with `minimal` every tree is completed to a shortest-path tree of every switch
    (the part towards switches with hosts, which the VLAN holds, is the shared tree's)."""
    from vlanroute.routing.budget_search import distances_from, problem_of, spread_roots, IndexTree, to_index_parents
    from vlanroute.routing.trees import bfs_tree, tree_depths

    problem = problem_of(topo, host_count)
    names = problem.names
    n = len(names)
    idx = {s: i for i, s in enumerate(names)}
    g = topo.simple()
    adj = {s: sorted(g.neighbors(s), key=idx.__getitem__) for s in names}
    hosted = [i for i in range(n) if problem.hosts[i]]
    if not hosted:
        return None
    roots_all = spread_roots(problem, list(range(n)), min(SHARED_UP_TO, n, max_vlans))
    roots, weights = senders_of(host_count, names, units)
    keys = sorted(roots, key=lambda k: (int(k.rsplit("#", 1)[1]), -problem.hosts[idx[roots[k]]], idx[roots[k]]))
    dist = {s: distances_from(problem, s) for s in hosted}
    invc = problem.invc
    floor = distance_sum(topo, host_count) / (2 * topo.graph.number_of_edges())
    best: tuple[tuple[float, int], list[IndexTree], dict[str, int]] | None = None
    trees: list[IndexTree] = []
    shortest_for: list[set[int]] = []          # per tree: the switches it is shortest for
    for root in roots_all:
        par = to_index_parents(bfs_tree(adj, names[root], idx), idx)
        tree = IndexTree(par, root, n, problem.hosts, problem.arc)
        trees.append(tree)
        ok = set()
        for s in hosted:
            depth = tree_depths(tree.parents_from(s), s)
            if not minimal or all(depth[t] == dist[s][t] for t in hosted):
                ok.add(s)
        shortest_for.append(ok)
        if any(not any(s in f for f in shortest_for) for s in hosted):
            continue                        # some switch has no tree yet
        load = np.zeros(len(invc))
        tree_of: dict[str, int] = {}
        contrib: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        allowed = {s: [t for t in range(len(trees)) if s in shortest_for[t]] for s in hosted}

        def place(key: str, keep: int | None) -> None:
            s = idx[roots[key]]
            peak = float(load.max())
            pick = min(allowed[s], key=lambda t: (trees[t].score(s, weights[key], load, invc, peak),
                                                  t != keep, t))
            tree_of[key], contrib[key] = pick, trees[pick].contribution(s, weights[key])
            arcs, x = contrib[key]
            load[arcs] += x * invc[arcs]

        for key in keys:
            place(key, None)
        for _ in range(4):                  # single senders moved while that helps
            moved = False
            for key in keys:
                arcs, x = contrib[key]
                load[arcs] -= x * invc[arcs]
                was = tree_of[key]
                place(key, was)
                moved |= tree_of[key] != was
            if not moved:
                break
        used = len(set(tree_of.values()))
        score = (round(float(load.max()), 6), used)
        if best is None or score < best[0]:
            best = (score, list(trees), dict(tree_of))
        if minimal and score[0] <= floor * (1 + 1e-9):
            break                           # minimal routes at the distance bound: none carries less
    if best is None:
        return None
    (peak, _), chosen, tree_of = best
    per_switch: dict[str, dict[int, int]] = {}
    for key, t in tree_of.items():
        got = per_switch.setdefault(roots[key], {})
        got[t] = got.get(t, 0) + weights[key]
    parents: dict[str, ParentMap] = {}
    splits: dict[str, tuple[Share, ...]] = {}
    hosted_names = [names[i] for i in hosted]      # in switch order: the trees' entries keep it (a set's order follows the hash seed)

    def tree_from(t: int, sw: str) -> ParentMap:
        tree = {names[v]: names[p] for v, p in chosen[t].parents_from(idx[sw]).items()}
        if not minimal:
            return tree
        return shortest_completion(pruned_parents(tree, sw, hosted_names), sw, adj, problem.dist_from[idx[sw]], idx)

    for sw in names:
        counts = per_switch.get(sw)
        if not counts:                      # no hosts: its own tree (it carries nothing)
            parents[sw] = base[sw]
            continue
        shares = tuple((tree_from(t, sw), c) for t, c in sorted(counts.items()))
        parents[sw] = shares[0][0]
        if len(shares) > 1:
            splits[sw] = shares
    vlans = len(pack(parents, {s for s, c in host_count.items() if c}, idx, splits))
    if vlans > max_vlans:
        return None
    return peak, parents, splits


def shortest_completion(sub: ParentMap, src: str, adj: dict[str, list[str]], dist: list[int],
                        idx: dict[str, int]) -> ParentMap:
    """`sub` (part of a shortest-path tree from src: every switch in it at its distance)
    completed to a shortest-path tree of every switch: the switches it lacks, nearest
    first, each from its first neighbour one hop nearer src (which is in the tree by then)."""
    out = dict(sub)
    have = set(out) | {src}
    for v in sorted((v for v in adj if v not in have), key=lambda v: (dist[idx[v]], idx[v])):
        out[v] = next(u for u in adj[v] if dist[idx[u]] == dist[idx[v]] - 1)
    return out
