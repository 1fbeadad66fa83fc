"""Topology generators: switch-level graphs in index space, no names, no ports.

Each returns (coords, edges): `coords[i]` is switch i's grid coordinate (or None), and
`edges` lists unordered neighbour pairs (i, j), i < j, each once; parallel cables are
added later from `links_per_pair`. Switch indices are row-major with the *first*
dimension varying fastest, so in a 4x2 grid switch i has coordinate (i % 4, i // 4).
"""

from __future__ import annotations

import itertools
import math

Coord = tuple[int, ...]
Edges = list[tuple[int, int]]


def grid_coords(dims: list[int]) -> list[Coord]:
    """All coordinates of a grid with the given dimension sizes, first dimension fastest."""
    ranges = [range(n) for n in reversed(dims)]
    return [tuple(reversed(c)) for c in itertools.product(*ranges)]


def grid_index(coord: Coord, dims: list[int]) -> int:
    idx, mul = 0, 1
    for c, n in zip(coord, dims):
        idx += c * mul
        mul *= n
    return idx


def mesh(dims: list[int]) -> tuple[list[Coord], Edges]:
    """A k-dimensional mesh: neighbours differ by 1 in exactly one coordinate, no wrap-around."""
    return _grid(dims, wrap=False)


def torus(dims: list[int]) -> tuple[list[Coord], Edges]:
    """A k-dimensional torus: a mesh with wrap-around links in every dimension of size >= 3.

    A dimension of size 2 has one link per pair (its "+1" and "-1" neighbours coincide),
    so the 4x2 torus is the 3-cube; a dimension of size 1 has no links.
    """
    return _grid(dims, wrap=True)


def _grid(dims: list[int], wrap: bool) -> tuple[list[Coord], Edges]:
    coords = grid_coords(dims)
    edges: set[tuple[int, int]] = set()
    for c in coords:
        i = grid_index(c, dims)
        for d, n in enumerate(dims):
            if n == 1:
                continue
            nxt = c[d] + 1
            if nxt >= n:
                if not wrap or n <= 2:
                    continue
                nxt = 0
            j = grid_index(c[:d] + (nxt,) + c[d + 1:], dims)
            edges.add((min(i, j), max(i, j)))
    return coords, sorted(edges)


def hyper_crossbar(dims: list[int]) -> tuple[list[Coord], Edges]:
    """A hyper-crossbar (HyperX): switches on a grid, every row of every dimension fully connected.

    Two switches are neighbours when their coordinates differ in exactly one dimension.
    This is the VLAN-routing form of the PACS-CS network (seed 004).
    """
    coords = grid_coords(dims)
    edges = []
    for c in coords:
        i = grid_index(c, dims)
        for d, n in enumerate(dims):
            for v in range(c[d] + 1, n):
                j = grid_index(c[:d] + (v,) + c[d + 1:], dims)
                edges.append((i, j))
    return coords, sorted(edges)


def ring(size: int) -> tuple[list[Coord], Edges]:
    """A ring of `size` switches: the one-dimensional torus, with coordinates (i,)."""
    return torus([size])


def complete(size: int) -> tuple[list[None], Edges]:
    """The complete graph: every pair of switches directly connected."""
    return [None] * size, [(i, j) for i in range(size) for j in range(i + 1, size)]


def tree(size: int, fanout: int) -> tuple[list[None], Edges]:
    """A complete `fanout`-ary tree in breadth-first order: switch i's parent is (i-1)//fanout."""
    return [None] * size, [((i - 1) // fanout, i) for i in range(1, size)]


def product(dims: list[int]) -> int:
    return math.prod(dims)


def neighbour_pairs(kind: str, dims: list[int] | None, size: int | None, fanout: int = 2) -> int:
    """How many neighbour pairs the generator of `kind` would make, computed without making
    them, so a size that cannot be built is refused first (a 4096 x 4096 torus has 33.5
    million; a complete graph of n switches n(n-1)/2)."""
    if kind in ("mesh", "torus", "hyper-crossbar"):
        shape = list(dims or [])
        n = product(shape)
        pairs = 0
        for d in shape:
            rows = n // d                           # lines along this dimension
            if kind == "mesh" or d <= 2:
                pairs += rows * (d - 1)
            elif kind == "torus":
                pairs += rows * d
            else:
                pairs += rows * d * (d - 1) // 2
        return pairs
    n = size if size is not None else product(list(dims or []))
    if kind == "ring":
        return 0 if n == 1 else (1 if n == 2 else n)
    if kind == "complete":
        return n * (n - 1) // 2
    if kind == "tree":
        return max(0, n - 1)
    return 0
