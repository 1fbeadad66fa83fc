"""Restarts of the acyclic engine under shuffled switch names: symmetry breaking on tori.

Every tie in the acyclic engine's search (routing/acyclic/engine.py) is broken by the switches'
names and order: which escape root comes first, which switch the all-sources Dijkstra
settles first, which of two equally loaded links a tree takes. On a torus every switch and
cable looks the same, and with names in grid order every attempt takes the same symmetric
turns: the search ends where dimension order does, at the ring cuts' floor (1.5x the
optimum on the 8x8 torus, bench/ring_cut_floor.py), although orders exist whose splittable
floor is 1.245x (routing/order_lp.py, on the order of a plan found this way).

The same search on the same torus, with the switches renamed and reordered by a seeded
shuffle and routed as a custom fabric (every escape root scanned, the guided orders), gets
out of that trap: on the 8x8 torus, 4 hosts per switch, shuffles 1 to 8 gave 1.359, 1.422,
1.438, 1.500, 1.406, 1.406, 1.375 and 1.391 (docs/routing-bounds.md). So tori of up to
engine.IRREGULAR switches whose plan is above ABOVE times the exact optimum are planned
again under the shuffles 1 to RESTARTS, the routes named back, and the lightest plan is
kept. The seeds are fixed, so the same inventory always gives the same plan.
"""

from __future__ import annotations

import random

from vlanroute.model.topology import Topology
from vlanroute.routing.trees import ParentMap

RESTARTS = 2        # shuffles tried (each costs one search of the fabric as a custom one)
ABOVE = 1.3         # only for plans above this multiple of the exact optimum


def shuffled(topo: Topology, seed: int) -> tuple[Topology, dict[str, str]]:
    """`topo` as a custom topology (same cables, parallel ones kept) whose switches are
    named sw1, sw2, ... in an order shuffled by `seed`, and each new name's real name."""
    perm = list(range(len(topo.switches)))
    random.Random(seed).shuffle(perm)
    new = {s: f"sw{perm[i] + 1}" for i, s in enumerate(topo.switches)}
    links = sorted((min(new[a], new[b]), max(new[a], new[b])) for a, b in topo.graph.edges())
    names = [f"sw{i + 1}" for i in range(len(topo.switches))]
    return Topology.from_links(names, links), {v: s for s, v in new.items()}


def named_back(parents: dict[str, ParentMap], real: dict[str, str]) -> dict[str, ParentMap]:
    """Trees in shuffled names with the real names put back."""
    return {real[src]: {real[v]: real[p] for v, p in tree.items()} for src, tree in parents.items()}
