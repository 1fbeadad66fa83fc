"""Topology: the inventory's switches and cables as a networkx multigraph.

Nodes are switch names (attribute `index` = canonical order, `coord` = grid coordinate or
None); one edge per physical cable (parallel edges = parallel cables), with the exact
ports when the inventory gives them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from vlanroute.model import generators
from vlanroute.errors import UserError
from vlanroute.model.inventory import LoadedInventory, NAME_PATTERN

import re


@dataclass
class Topology:
    kind: str
    dims: tuple[int, ...] | None      # grid shape for mesh/torus/hyper-crossbar/ring
    graph: nx.MultiGraph              # switches and cables
    switches: list[str]               # canonical order
    coords: dict[str, tuple[int, ...] | None]
    generated_names: dict[str, str]   # generated name -> final name (after renames)

    @classmethod
    def from_generator(cls, kind: str, dims: Sequence[int] | None = None, *, size: int | None = None,
                       fanout: int = 2, links_per_pair: int = 1) -> Topology:
        """A generated topology without an inventory, switches named sw1, sw2, ... (index order)."""
        dims_used, coords, edges = generate(kind, dims, size, fanout)
        names = [f"sw{i + 1}" for i in range(len(coords))]
        cables: list[tuple[int, int, tuple[str, str] | None]] = [
            (i, j, None) for i, j in edges for _ in range(links_per_pair)]
        return cls(kind=kind, dims=dims_used, graph=_multigraph(names, coords, cables), switches=names,
                   coords=dict(zip(names, coords)), generated_names={n: n for n in names})

    @classmethod
    def from_links(cls, switches: Sequence[str], links: Iterable[tuple[str, str]]) -> Topology:
        """A custom topology without an inventory: one cable per listed pair (list a pair
        twice for two parallel cables)."""
        names = list(switches)
        pos = {n: i for i, n in enumerate(names)}
        cables: list[tuple[int, int, tuple[str, str] | None]] = [(pos[a], pos[b], None) for a, b in links]
        coords: list[tuple[int, ...] | None] = [None] * len(names)
        return cls(kind="custom", dims=None, graph=_multigraph(names, coords, cables), switches=names,
                   coords=dict(zip(names, coords)), generated_names={n: n for n in names})

    @classmethod
    def from_parts(cls, kind: str, dims: Sequence[int] | None, switches: Sequence[str],
                   coords: Mapping[str, tuple[int, ...] | None], links: Iterable[tuple[str, str]]) -> Topology:
        """A topology as a plan records it (plan.json: kind, grid shape, each switch's
        coordinate, one link per cable), for what is drawn or measured from a bundle."""
        names = list(switches)
        pos = {n: i for i, n in enumerate(names)}
        cables: list[tuple[int, int, tuple[str, str] | None]] = [(pos[a], pos[b], None) for a, b in links]
        listed = [coords.get(n) for n in names]
        return cls(kind=kind, dims=tuple(dims) if dims else None, graph=_multigraph(names, listed, cables),
                   switches=names, coords=dict(zip(names, listed)), generated_names={n: n for n in names})

    def index(self, switch: str) -> int:
        return self.indices()[switch]

    def indices(self) -> dict[str, int]:
        """Every switch's canonical index (looked up millions of times for a large plan:
        a dict, made once, instead of networkx's node view)."""
        got = self.__dict__.get("_indices")
        if got is None:
            got = self.__dict__["_indices"] = {n: d["index"] for n, d in self.graph.nodes(data=True)}
        return got

    def simple(self) -> nx.Graph:
        """Neighbour pairs only, with `cables` = number of parallel cables."""
        g = nx.Graph()
        g.add_nodes_from(self.switches)
        for a, b in self.graph.edges():
            if g.has_edge(a, b):
                g[a][b]["cables"] += 1
            else:
                g.add_edge(a, b, cables=1)
        return g

    def arc_cables(self) -> dict[tuple[str, str], int]:
        """Parallel cables per directed neighbour pair, both directions of every pair."""
        out: dict[tuple[str, str], int] = {}
        for a, b, d in self.simple().edges(data=True):
            out[(a, b)] = out[(b, a)] = d["cables"]
        return out


def build_topology(inv: LoadedInventory) -> Topology:
    spec = inv.spec.topology
    file = inv.file
    kind = spec.kind
    dims: tuple[int, ...] | None = None

    if kind == "custom":
        assert spec.switches is not None and spec.links is not None
        names = list(spec.switches)
        dup = _first_duplicate(names)
        if dup:
            raise UserError(f"switch '{dup}' is listed twice", file=file, field="topology.switches")
        coords: list[tuple[int, ...] | None] = [None] * len(names)
        pos = {n: i for i, n in enumerate(names)}
        cables: list[tuple[int, int, tuple[str, str] | None]] = []
        seen_pairs: set[tuple[str, str]] = set()
        for k, link in enumerate(spec.links):
            for end in (link.a, link.b):
                if end not in pos:
                    raise UserError(f"link to unknown switch '{end}'", file=file, field=f"topology.links.{k}",
                                    fix=f"add '{end}' to topology.switches or correct the name")
            pair = (min(link.a, link.b), max(link.a, link.b))
            if pair in seen_pairs:
                raise UserError(f"the pair {pair[0]}-{pair[1]} is listed twice", file=file,
                                field=f"topology.links.{k}", fix="list each pair once and set count for parallel cables")
            seen_pairs.add(pair)
            count = link.count or (len(link.ports) if link.ports else spec.links_per_pair)
            for c in range(count):
                ports = link.ports[c] if link.ports else None
                cables.append((pos[link.a], pos[link.b], ports))
        final_names = names
    else:
        dims, coords, edges = generate(kind, spec.dims, spec.size, spec.fanout)
        if len(coords) > 65536:
            raise UserError(f"{len(coords)} switches is more than vlanroute plans (65536)", file=file, field="topology")
        final_names = [_switch_name(spec.switch_name, i, c, file) for i, c in enumerate(coords)]
        dup = _first_duplicate(final_names)
        if dup:
            raise UserError(f"switch_name gives '{dup}' twice", file=file, field="topology.switch_name",
                            fix="include {index} in the pattern")
        cables = [(i, j, None) for i, j in edges for _ in range(spec.links_per_pair)]

    generated = list(final_names)
    renames = _apply_renames(inv, generated)
    final_names = [renames.get(n, n) for n in generated]
    dup = _first_duplicate(final_names)
    if dup:
        raise UserError(f"two switches would be named '{dup}'", file=file, field="switches",
                        fix="give every switch a different name")

    g = _multigraph(final_names, coords, cables)

    if g.number_of_nodes() > 1 and not nx.is_connected(g):
        parts = sorted((sorted(c, key=final_names.index) for c in nx.connected_components(g)), key=len)
        raise UserError(f"the topology is disconnected: {len(parts)} parts, e.g. {{{', '.join(parts[0][:5])}}} "
                        f"reaches no other switch", file=file, field="topology.links" if kind == "custom" else "topology",
                        fix="add links so that every switch can reach every other")
    return Topology(kind=kind, dims=dims, graph=g, switches=final_names,
                    coords={n: coords[i] for i, n in enumerate(final_names)},
                    generated_names=dict(zip(generated, final_names)))


def generate(kind: str, dims: Sequence[int] | None = None, size: int | None = None,
             fanout: int = 2) -> tuple[tuple[int, ...] | None, list[tuple[int, ...] | None], list[tuple[int, int]]]:
    """A generated topology in index space: (grid shape, coordinates, neighbour pairs).

    mesh, torus, hyper-crossbar take `dims`; ring and complete take `size` or the product of
    `dims`; tree takes `size` and `fanout` (model/generators.py).
    """
    if kind in ("mesh", "torus", "hyper-crossbar"):
        assert dims is not None
        gen = {"mesh": generators.mesh, "torus": generators.torus, "hyper-crossbar": generators.hyper_crossbar}[kind]
        coords, edges = gen(list(dims))
        return tuple(dims), list(coords), edges
    if kind in ("ring", "complete"):
        n = size if size is not None else generators.product(list(dims or []))
        if kind == "ring":
            coords, edges = generators.ring(n)
            return (n,), list(coords), edges
        none_coords, edges = generators.complete(n)
        return None, list(none_coords), edges
    if kind == "tree":
        assert size is not None
        none_coords, edges = generators.tree(size, fanout)
        return None, list(none_coords), edges
    raise ValueError(f"no generator for topology kind '{kind}'")


def _multigraph(names: list[str], coords: Sequence[tuple[int, ...] | None],
                cables: list[tuple[int, int, tuple[str, str] | None]]) -> nx.MultiGraph:
    """Switches (attributes index and coord) and one edge per cable (with its ports if pinned)."""
    g = nx.MultiGraph()
    for i, name in enumerate(names):
        g.add_node(name, index=i, coord=coords[i])
    for i, j, ports in cables:
        a, b = names[i], names[j]
        if ports is not None:
            g.add_edge(a, b, ports={a: ports[0], b: ports[1]})
        else:
            g.add_edge(a, b)
    return g


def _switch_name(pattern: str, index: int, coord: tuple[int, ...] | None, file: str) -> str:
    coord_text = "-".join(str(c) for c in coord) if coord else str(index)
    try:
        name = pattern.format(index=index + 1, index0=index, coord=coord_text)
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(f"bad pattern '{pattern}': {exc}", file=file, field="topology.switch_name",
                        fix="use the placeholders {index}, {index0} and {coord}") from None
    if not re.match(NAME_PATTERN, name):
        raise UserError(f"pattern gives the name '{name}', which is not allowed", file=file,
                        field="topology.switch_name", fix="names: letters, digits, '_', '.', '-', starting with a letter")
    return name


def _apply_renames(inv: LoadedInventory, generated: list[str]) -> dict[str, str]:
    known = set(generated)
    renames = {}
    for key, ov in inv.spec.switches.items():
        if key not in known:
            close = ", ".join(sorted(known)[:6])
            raise UserError(f"unknown switch '{key}'", file=inv.file, field=f"switches.{key}",
                            fix=f"use a generated switch name (e.g. {close})")
        if ov.name:
            renames[key] = ov.name
    return renames


def _first_duplicate(items: list[str]) -> str | None:
    seen: set[str] = set()
    for x in items:
        if x in seen:
            return x
        seen.add(x)
    return None
