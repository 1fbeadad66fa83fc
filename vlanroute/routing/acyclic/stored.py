"""Deadlock-free plans stored for tori: what an offline search found and the run-time one cannot.

On the 8x8 torus the acyclic engine's search (every attempt, negotiation, branch moves,
shuffled restarts) reaches 1.359x the exact optimum, deadlock-free, in about 20 s of CPU
per restart; an offline search reaches 1.250x with one tree per switch: the order LP's
tabu walk (routing/acyclic/refine.py) from the channel order of a plan searched with one
cable held out, each improving order's LP rounded into trees, negotiated and polished
(docs/routing-bounds.md, "A stored plan for the 8x8 torus"). That search takes minutes, so
its result ships here, in plans/torus-<dims>.json, written by
`python bench/torus_order_walk.py --save` and checked by tests/test_acyclic_stored.py.
The 6x6 torus's plan is stored the same way (1.222x; the search reaches 1.296x there).

A stored plan is one tree per switch in grid coordinates: per source coordinate, each
switch's parent as a step along one dimension (letter a for the first dimension, b for the
second, ...; lower case one step up, upper case one step down, modulo the ring; '.' for the
source). It is used only on a torus of exactly that shape whose switches all have the same
number of hosts: then every load is the stored one times (hosts per switch)^2, and so is
the optimum, so the ratio measured offline holds. Loading checks every tree (spanning, one
parent per switch, a neighbour) and the whole plan's channel dependencies (acyclic,
routing/depgraph.py); a file that fails is not used.

A torus described as a custom topology (`topology.kind: custom`, its cables listed) is
recognised: where its graph is isomorphic to a stored shape's grid (networkx's VF2++,
after cheap invariants: every switch's count of switches at each distance, and the
number of 4-cycles), the isomorphism gives each switch its coordinates. Any isomorphism
serves: it maps the plan's trees, loads and channel dependencies onto the same ones.
"""

from __future__ import annotations

import json
from importlib.resources import files

import networkx as nx

from vlanroute.model.topology import Topology
from vlanroute.routing.depgraph import DependencyGraph
from vlanroute.routing.trees import ParentMap

Coord = tuple[int, ...]


def plan_name(dims: tuple[int, ...]) -> str:
    return "torus-" + "x".join(str(d) for d in dims) + ".json"


def _step(coord: Coord, dims: tuple[int, ...], letter: str) -> Coord | None:
    dim = ord(letter.lower()) - ord("a")
    if not 0 <= dim < len(dims):
        return None
    sign = 1 if letter.islower() else -1
    out = list(coord)
    out[dim] = (out[dim] + sign) % dims[dim]
    return tuple(out)


def encode(topo: Topology, parents: dict[str, ParentMap]) -> list[list[object]]:
    """[source coordinate, parent steps of every switch in coordinate order] per source."""
    assert topo.kind == "torus" and topo.dims is not None
    dims = topo.dims
    coord: dict[str, Coord] = {}
    for s in topo.switches:
        c = topo.coords[s]
        assert c is not None
        coord[s] = tuple(c)
    ordered = sorted(topo.switches, key=lambda s: coord[s])
    rows: list[list[object]] = []
    for src in ordered:
        tree = parents[src]
        steps = []
        for v in ordered:
            if v == src:
                steps.append(".")
                continue
            here, there = coord[v], coord[tree[v]]
            letters = [ch for d in range(len(dims)) for ch in (chr(97 + d), chr(65 + d))]
            steps.append(next(ch for ch in letters if _step(here, dims, ch) == there))
        rows.append([list(coord[src]), "".join(steps)])
    return rows


def decode(topo: Topology, rows: list[list[object]],
           grid: tuple[tuple[int, ...], dict[str, Coord]] | None = None) -> dict[str, ParentMap] | None:
    """The trees of `rows` in `topo`'s names, the switches placed by `grid` (dims, each
    switch's coordinates; default: the torus's own, torus_grid); None unless every switch
    is a source of exactly one spanning tree whose parents are neighbours and whose channel
    dependencies, over all trees, are acyclic."""
    grid = grid or torus_grid(topo)
    if grid is None:
        return None
    dims, coord_of = grid
    by_coord: dict[Coord, str] = {}
    for s in topo.switches:
        c = coord_of.get(s)
        if c is None:
            return None
        by_coord[tuple(c)] = s
    if len(by_coord) != len(topo.switches):
        return None
    ordered = sorted(by_coord)
    cables = topo.arc_cables()
    parents: dict[str, ParentMap] = {}
    for row in rows:
        first, steps = row[0], row[1]
        if not isinstance(first, list) or not isinstance(steps, str) or len(steps) != len(ordered):
            return None
        src = by_coord.get(tuple(int(x) for x in first))
        if src is None or src in parents:
            return None
        tree: ParentMap = {}
        for c, letter in zip(ordered, steps):
            v = by_coord[c]
            if letter == ".":
                if v != src:
                    return None
                continue
            up = _step(c, dims, letter)
            if up is None or (v, by_coord[up]) not in cables:
                return None
            tree[v] = by_coord[up]
        if len(tree) != len(ordered) - 1:
            return None
        parents[src] = tree
    if len(parents) != len(topo.switches) or not all(_reaches(t, s) for s, t in parents.items()):
        return None
    return parents if acyclic_dependencies(topo, parents) else None


def _reaches(tree: ParentMap, src: str) -> bool:
    """Whether every switch's parents lead to src (no cycle among them)."""
    done = {src}
    for v in tree:
        seen: list[str] = []
        x = v
        while x not in done:
            if x in seen or x not in tree:
                return False
            seen.append(x)
            x = tree[x]
        done.update(seen)
    return True


def acyclic_dependencies(topo: Topology, parents: dict[str, ParentMap]) -> bool:
    """Whether the channel dependencies of all trees' routes are acyclic (routing/depgraph.py)."""
    arcs = sorted(topo.arc_cables())
    aid = {a: i for i, a in enumerate(arcs)}
    deps = DependencyGraph(len(arcs))
    for src, tree in parents.items():
        for v, p in tree.items():
            if p != src and not deps.try_add(aid[(tree[p], p)], aid[(p, v)]):
                return False
    return True


def torus_grid(topo: Topology) -> tuple[tuple[int, ...], dict[str, Coord]] | None:
    """A torus's shape and each switch's coordinates: its own where it is generated as one
    (`kind: torus`), else those of a stored shape it is isomorphic to (module docstring)."""
    if topo.kind == "torus" and topo.dims is not None:
        coords = {s: tuple(c) for s in topo.switches if (c := topo.coords.get(s)) is not None}
        return (tuple(topo.dims), coords) if len(coords) == len(topo.switches) else None
    if topo.kind != "custom":
        return None
    for dims in stored_shapes():
        found = grid_isomorphism(topo.simple(), dims)
        if found is not None:
            return dims, found
    return None


def stored_shapes() -> list[tuple[int, ...]]:
    """The torus shapes a plan is stored for (plans/torus-<dims>.json)."""
    shapes = []
    for res in files(__package__).joinpath("plans").iterdir():
        name = res.name
        if name.startswith("torus-") and name.endswith(".json"):
            shapes.append(tuple(int(x) for x in name[len("torus-"):-len(".json")].split("x")))
    return sorted(shapes)


def _invariants(g: nx.Graph) -> tuple[object, ...]:
    """What an isomorphism keeps and a torus's grid has alike at every switch: the sorted
    counts of switches at each distance, and the number of 4-cycles (squares)."""
    spheres = sorted(tuple(sorted(nx.single_source_shortest_path_length(g, v).values())) for v in g)
    squares = sum(1 for c in nx.simple_cycles(g, length_bound=4) if len(c) == 4)
    return tuple(spheres), squares


def grid_isomorphism(g: nx.Graph, dims: tuple[int, ...]) -> dict[str, Coord] | None:
    """Each switch's coordinates in the torus grid of `dims`, where `g` is isomorphic to it."""
    grid = nx.grid_graph(dim=list(reversed(dims)), periodic=True)     # nodes: coordinates in dims' order
    if (g.number_of_nodes() != grid.number_of_nodes() or g.number_of_edges() != grid.number_of_edges()
            or sorted(d for _, d in g.degree) != sorted(d for _, d in grid.degree)):
        return None
    if not nx.is_connected(g) or _invariants(g) != _invariants(grid):
        return None
    mapping = nx.vf2pp_isomorphism(g, grid)
    if mapping is None:
        return None
    return {str(v): tuple(int(x) for x in c) for v, c in mapping.items()}


def stored_plan(topo: Topology, host_count: dict[str, int]) -> tuple[str, dict[str, ParentMap]] | None:
    """(file name, trees) of the plan stored for this torus shape, where one is stored and
    every switch has the same number of hosts (module docstring); else None."""
    counts = {host_count.get(s, 0) for s in topo.switches}
    if len(counts) != 1 or 0 in counts:
        return None
    grid = torus_grid(topo)
    if grid is None:
        return None
    name = plan_name(grid[0])
    res = files(__package__).joinpath("plans", name)
    if not res.is_file():
        return None
    saved = json.loads(res.read_text())
    trees = decode(topo, saved["trees"], grid)
    return (name, trees) if trees is not None else None
