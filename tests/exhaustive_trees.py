"""Exhaustive optimum of routing within k VLANs on tiny graphs, for tests and bench/bounds.py.

Independent of vlanroute's code: every spanning tree by brute force over edge subsets,
every choice of k trees, every assignment of the sources to them. Spanning trees suffice:
a VLAN's tree needs to reach only the switches with hosts, but any such tree extends to a
spanning tree by links to host-less switches, which carry no traffic.

Load of the link p->v of source s's tree: hosts(s) x hosts in v's subtree (all-to-all, one
unit per ordered pair of hosts), divided by the cables between p and v.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np

from vlanroute.model.topology import Topology


def spanning_trees(g: nx.Graph) -> list[list[tuple[str, str]]]:
    nodes = list(g.nodes)
    edges = list(g.edges)
    out = []
    for subset in itertools.combinations(edges, len(nodes) - 1):
        parent = {v: v for v in nodes}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        ok = True
        for a, b in subset:
            ra, rb = find(a), find(b)
            if ra == rb:
                ok = False
                break
            parent[ra] = rb
        if ok:
            out.append(list(subset))
    return out


def source_loads(tree: list[tuple[str, str]], src: str, hosts: dict[str, int], arcs: dict[tuple[str, str], int],
                 cables: dict[frozenset[str], int]) -> np.ndarray:
    adj: dict[str, list[str]] = {}
    for a, b in tree:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    order, parent = [src], {src: ""}
    for u in order:
        for v in adj.get(u, ()):
            if v not in parent:
                parent[v] = u
                order.append(v)
    below = {v: hosts.get(v, 0) for v in order}
    for v in reversed(order[1:]):
        below[parent[v]] += below[v]
    vec = np.zeros(len(arcs))
    for v in order[1:]:
        p = parent[v]
        vec[arcs[(p, v)]] = hosts[src] * below[v] / cables[frozenset((p, v))]
    return vec


def budget_optimum(g: nx.Graph, hosts: dict[str, int], k: int) -> float:
    """The least all-to-all maximum load per cable with at most k trees. `g` edges may carry
    `cables` (default 1)."""
    cables = {frozenset((a, b)): d.get("cables", 1) for a, b, d in g.edges(data=True)}
    arcs: dict[tuple[str, str], int] = {}
    for a, b in g.edges:
        arcs[(a, b)] = len(arcs)
        arcs[(b, a)] = len(arcs)
    sources = [s for s in g.nodes if hosts.get(s, 0)]
    trees = spanning_trees(g)
    table = np.array([[source_loads(t, s, hosts, arcs, cables) for s in sources] for t in trees])  # (T, S, A)
    k = min(k, len(trees), len(sources))
    choice = np.array(list(itertools.product(range(k), repeat=len(sources))))                       # (k^S, S)
    cols = np.arange(len(sources))
    best = math.inf
    for combo in itertools.combinations(range(len(trees)), k):
        sub = table[list(combo)]                                   # (k, S, A)
        loads = sub[choice, cols].sum(axis=1)                      # (k^S, A)
        best = min(best, float(loads.max(axis=1).min()))
    return best


def work(g: nx.Graph, hosts: dict[str, int], k: int) -> int:
    """Roughly how many tree-set x assignment evaluations `budget_optimum` does."""
    n_trees = nx.number_of_spanning_trees(nx.Graph(g)) if g.number_of_nodes() > 1 else 1
    sources = sum(1 for s in g.nodes if hosts.get(s, 0))
    k = min(k, max(1, round(n_trees)), max(1, sources))
    return math.comb(round(n_trees), k) * k ** sources


def topology_of(g: nx.Graph) -> Topology:
    """A vlanroute Topology with the graph's nodes and `cables` parallel cables per edge."""
    mg = nx.MultiGraph()
    names = [str(v) for v in g.nodes]
    for i, v in enumerate(names):
        mg.add_node(v, index=i)
    for a, b, d in g.edges(data=True):
        for _ in range(d.get("cables", 1)):
            mg.add_edge(str(a), str(b))
    return Topology("custom", None, mg, names, {n: None for n in names}, {})


def named(g: nx.Graph) -> nx.Graph:
    return nx.relabel_nodes(g, {v: f"s{i}" for i, v in enumerate(g.nodes)})


# The tiny graphs of tests/test_bounds.py and bench/bounds.py, and their host patterns.
SMALL = {
    "ring4": named(nx.cycle_graph(4)), "ring5": named(nx.cycle_graph(5)), "ring6": named(nx.cycle_graph(6)),
    "K4": named(nx.complete_graph(4)), "K5": named(nx.complete_graph(5)),
    "mesh2x3": named(nx.grid_2d_graph(2, 3)), "torus2x3": named(nx.grid_2d_graph(2, 3, periodic=True)),
    "mesh3x3": named(nx.grid_2d_graph(3, 3)), "torus3x3": named(nx.grid_2d_graph(3, 3, periodic=True)),
}
PATTERNS = {"one": lambda i: 1, "two": lambda i: 2, "uneven": lambda i: 1 + i % 3}
