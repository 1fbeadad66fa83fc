"""Switch graphs a test expects, built from networkx's own generators, never from
vlanroute's (vlanroute.model.generators), so a bug there cannot hide behind the same bug
in the expectation. Shared by the plan-property, routing-quality and budget tests."""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import strategies as st


def grid_graph(kind: str, dims: list[int]) -> nx.Graph:
    """The expected switch graph, named like vlanroute's default sw{index} (first dim fastest)."""
    if kind == "hyper-crossbar":
        g = nx.complete_graph(dims[0])
        for n in dims[1:]:
            g = nx.cartesian_product(g, nx.complete_graph(n))
        # cartesian_product nests tuples: flatten ((a, b), c) -> (a, b, c)
        def flat(x):  # noqa: ANN001
            return tuple(itertools.chain.from_iterable(flat(y) if isinstance(y, tuple) else (y,) for y in x)) \
                if isinstance(x, tuple) else (x,)
        g = nx.relabel_nodes(g, {n: flat(n) for n in g.nodes})
    else:
        # networkx's grid_graph labels nodes with the coordinates in reverse order of dim.
        g = nx.grid_graph(dim=list(dims), periodic=(kind == "torus"))
        g = nx.relabel_nodes(g, {n: tuple(reversed(n)) if isinstance(n, tuple) else (n,) for n in g.nodes})
        # A periodic dimension of size 1 is a self-loop in networkx; no cable exists there.
        g.remove_edges_from(list(nx.selfloop_edges(g)))
    def index(c: tuple[int, ...]) -> int:
        i, mul = 0, 1
        for x, n in zip(c, dims):
            i += x * mul
            mul *= n
        return i
    return nx.relabel_nodes(nx.Graph(g), {c: f"sw{index(c) + 1}" for c in g.nodes})


@st.composite
def connected_graphs(draw: st.DrawFn) -> nx.Graph:
    n = draw(st.integers(min_value=2, max_value=12))
    # A random spanning tree (Pruefer-free: attach each node to an earlier one), plus extra edges.
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for i in range(1, n):
        g.add_edge(i, draw(st.integers(min_value=0, max_value=i - 1)))
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n))
    g.add_edges_from((a, b) for a, b in extra if a != b)
    return nx.relabel_nodes(g, {i: f"s{i}" for i in g.nodes})
