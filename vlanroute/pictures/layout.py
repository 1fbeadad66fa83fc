"""Where to put each switch and how to draw each neighbour pair, for `vlanroute draw`.

Grid topologies (mesh, torus, hyper-crossbar) use the switches' grid coordinates, so the
picture matches the machine room's own naming; a one-dimensional ring or crossbar goes on
a circle, a tree is drawn in levels, a complete graph on a circle, and a custom topology
gets a seeded spring layout (the same picture every time).

A straight line that would pass through another switch (a torus wrap-around cable, the
row cables of a hyper-crossbar) is bent into an arc instead, so that no cable hides
behind another or seems to end at a switch it does not reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numpy as np

from vlanroute.model.topology import Topology

Pair = tuple[str, str]
ARC_POINTS = 12


@dataclass
class Layout:
    pos: dict[str, tuple[float, float]]
    edges: dict[Pair, np.ndarray]        # neighbour pair (switch order) -> polyline, shape (k, 2)
    cables: dict[Pair, int]              # neighbour pair -> number of parallel cables
    grid: bool                           # positions are grid coordinates (axes show them)
    axis_names: tuple[str, str] | None   # what x and y mean, for a 2-D grid
    note: str                            # how the layout was chosen, for the picture's caption

    @property
    def extent(self) -> tuple[float, float, float, float]:
        pts = np.concatenate([np.array(list(self.pos.values()))] + list(self.edges.values()))
        return float(pts[:, 0].min()), float(pts[:, 0].max()), float(pts[:, 1].min()), float(pts[:, 1].max())


def pair(topo: Topology, a: str, b: str) -> Pair:
    """A neighbour pair in switch order (the plan's own convention for links)."""
    return (a, b) if topo.index(a) < topo.index(b) else (b, a)


def compute_layout(topo: Topology) -> Layout:
    simple = topo.simple()
    cables = {pair(topo, a, b): d["cables"] for a, b, d in simple.edges(data=True)}
    pos, grid, note = _positions(topo, simple)
    edges = _edge_shapes(topo, pos, list(cables))
    axis_names = None
    if grid and topo.dims is not None:
        active = [d for d, n in enumerate(topo.dims) if n > 1]
        if len(active) == 2:
            axis_names = (f"coordinate {active[0]}", f"coordinate {active[1]}")
    return Layout(pos=pos, edges=edges, cables=cables, grid=grid, axis_names=axis_names, note=note)


def _positions(topo: Topology, simple: nx.Graph) -> tuple[dict[str, tuple[float, float]], bool, str]:
    names = topo.switches
    dims = topo.dims
    if dims is not None and all(topo.coords[s] is not None for s in names):
        active = [d for d, n in enumerate(dims) if n > 1]
        if len(active) <= 1 and topo.kind != "mesh":
            # ring, 1-D torus or 1-D crossbar: a circle shows the wrap-around without arcs
            return _circle(names), False, "switches on a circle in index order"
        if len(active) <= 1:
            d = active[0] if active else 0
            return {s: (float(topo.coords[s][d]), 0.0) for s in names}, True, "switches by grid coordinate"  # type: ignore[index]
        return _grid_positions(topo, active), True, _grid_note(dims, active)
    if topo.kind == "tree":
        return _tree_positions(topo, simple), False, "tree drawn in levels from its root"
    if topo.kind == "complete":
        return _circle(names), False, "switches on a circle in index order"
    raw = nx.spring_layout(simple, seed=7, iterations=200)
    return {s: (float(p[0]) * 4, float(p[1]) * 4) for s, p in raw.items()}, False, \
        "custom topology: spring layout (seeded, the same every run)"


def _circle(names: list[str]) -> dict[str, tuple[float, float]]:
    n = len(names)
    r = max(1.5, n / (2 * math.pi) * 1.2)
    # first switch at the top, clockwise, like a clock face
    return {s: (r * math.sin(2 * math.pi * i / n), r * math.cos(2 * math.pi * i / n)) for i, s in enumerate(names)}


def _grid_positions(topo: Topology, active: list[int]) -> dict[str, tuple[float, float]]:
    """Dimensions alternate between x and y; a third and later dimension repeats the
    first two as blocks side by side (x) or stacked (y), with one empty column between."""
    assert topo.dims is not None
    pos = {}
    for s in topo.switches:
        c = topo.coords[s]
        assert c is not None
        xy = [0.0, 0.0]
        stride = [1.0, 1.0]
        for k, d in enumerate(active):
            axis = k % 2
            xy[axis] += c[d] * stride[axis]
            stride[axis] *= topo.dims[d] + 1
        # y grows downwards, so coordinate (0, 0) is top-left as in a rack diagram
        pos[s] = (xy[0], -xy[1])
    return pos


def _grid_note(dims: tuple[int, ...], active: list[int]) -> str:
    if len(active) == 2:
        return f"x = coordinate {active[0]}, y = coordinate {active[1]} (downwards)"
    return (f"{len(active)}-dimensional grid {'x'.join(map(str, dims))}: dimensions "
            f"{active[0::2]} along x and {active[1::2]} along y, later ones as blocks")


def _tree_positions(topo: Topology, simple: nx.Graph) -> dict[str, tuple[float, float]]:
    root = topo.switches[0]
    order = {s: i for i, s in enumerate(topo.switches)}
    bfs = nx.bfs_tree(simple, root)
    depth = nx.shortest_path_length(bfs, root)
    x: dict[str, float] = {}
    next_leaf = [0.0]

    def place(v: str) -> float:
        kids = sorted(bfs.successors(v), key=order.__getitem__)
        if not kids:
            x[v] = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            xs = [place(k) for k in kids]
            x[v] = sum(xs) / len(xs)
        return x[v]

    place(root)
    return {s: (x[s], -1.5 * depth[s]) for s in topo.switches}


def _edge_shapes(topo: Topology, pos: dict[str, tuple[float, float]], pairs: list[Pair]) -> dict[Pair, np.ndarray]:
    xy = np.array([pos[s] for s in topo.switches])
    centre = xy.mean(axis=0)
    out = {}
    for a, b in pairs:
        p, q = np.array(pos[a]), np.array(pos[b])
        if _blocked(p, q, xy):
            out[(a, b)] = _arc(p, q, centre)
        else:
            out[(a, b)] = np.array([p, q])
    return out


def _blocked(p: np.ndarray, q: np.ndarray, xy: np.ndarray) -> bool:
    """Does the segment p-q pass through (close to) a switch other than its ends?"""
    d = q - p
    length2 = float(d @ d)
    if length2 == 0:
        return False
    t = ((xy - p) @ d) / length2
    inner = (t > 1e-6) & (t < 1 - 1e-6)
    if not inner.any():
        return False
    closest = p + np.outer(t[inner], d)
    dist = np.linalg.norm(xy[inner] - closest, axis=1)
    return bool((dist < 0.1).any())    # layouts put switches at least 1 apart


def _arc(p: np.ndarray, q: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """A quadratic Bezier arc from p to q, bowed away from the picture's centre (outer rows
    bow outwards, off the grid); longer cables bow more, so nested arcs of one row stay apart."""
    d = q - p
    length = float(np.hypot(*d))
    normal = np.array([-d[1], d[0]]) / length
    if float(normal @ ((p + q) / 2 - centre)) < 0:
        normal = -normal
    # the curve's peak is half the control point's offset: at most 0.45, so one row's arcs
    # never reach the next row of switches (1 apart)
    bow = min(0.9, 0.2 + 0.06 * length)
    ctrl = (p + q) / 2 + normal * bow
    t = np.linspace(0.0, 1.0, ARC_POINTS)[:, None]
    return (1 - t) ** 2 * p + 2 * (1 - t) * t * ctrl + t ** 2 * q
