"""Traffic patterns: which hosts send to which, as groups of identical flows.

Every pattern depends on the hosts (names and their order) only, never on the cabling, so
two fabrics with the same hosts are compared on the same flows. A flow is one long-lived
transfer from one host to another; the model gives its rate.

- all-to-all: every host to every other host. Identical flows between the same two
  switches form one group, and the hosts of a switch one endpoint (their links' capacity
  summed): max-min gives identical flows identical rates, so nothing is lost, and 4,096
  hosts are 65,536 groups instead of 16 M flows. Routed below the switch, the hosts of a
  switch that send on one tree are one endpoint (a switch may have several).
- permutation: each host sends to one other host and receives from one (a seeded random
  permutation; a host the permutation maps to itself sends nothing).
- neighbour: the hosts in order on a P x Q process grid (P the largest divisor of the host
  count not above its square root; wrap-around), each sending to its four grid neighbours,
  the halo exchange of a stencil code (HPL's process grid is such a grid).
- bisection: the first half of the hosts (in order: by switch) paired with the second
  half, host i <-> host i + N/2, both directions: every flow crosses the middle.
- a flows file: one flow per line, `SOURCE DESTINATION` host names, `#` comments.
"""

from __future__ import annotations

import math
import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vlanroute.errors import UserError
from vlanroute.perf.fabric import Fabric
from vlanroute.perf.maxmin import FloatArray, IntArray
from vlanroute.safeio.reading import read_text_file

PATTERNS = ("all-to-all", "permutation", "neighbour", "bisection")


@dataclass(frozen=True)
class Demand:
    """Endpoints (a host, or all hosts of a switch) and groups of identical flows between them."""
    name: str
    end_switch: list[str]      # endpoint -> its switch
    end_size: IntArray         # hosts per endpoint (their links' capacity adds up)
    src: IntArray              # group -> source endpoint
    dst: IntArray              # group -> destination endpoint
    weight: FloatArray         # group -> number of flows
    # the tree (a key of Fabric.trees) each endpoint's flows take; empty: its switch's
    end_tree: list[str] = field(default_factory=list)

    @property
    def flows(self) -> int:
        return int(self.weight.sum())


def all_to_all(fabric: Fabric) -> Demand:
    if fabric.host_tree:
        # endpoints: the hosts of one switch on one tree (switch order, then first host)
        count = Counter(zip(fabric.host_switch, fabric.host_tree))
        rank = {s: i for i, s in enumerate(fabric.switches)}
        first: dict[str, int] = {}
        for i, t in enumerate(fabric.host_tree):
            first.setdefault(t, i)
        keys = sorted(count, key=lambda k: (rank[k[0]], first[k[1]]))
        ends, trees = [s for s, _ in keys], [t for _, t in keys]
        n = np.array([count[k] for k in keys], dtype=np.int64)
    else:
        count1 = Counter(fabric.host_switch)
        ends, trees = [s for s in fabric.switches if count1[s]], []
        n = np.array([count1[s] for s in ends], dtype=np.int64)
    src = np.repeat(np.arange(len(ends), dtype=np.int64), len(ends))
    dst = np.tile(np.arange(len(ends), dtype=np.int64), len(ends))
    weight = (n[src] * (n[dst] - (src == dst))).astype(float)
    keep = weight > 0
    return Demand("all-to-all", ends, n, src[keep], dst[keep], weight[keep], trees)


def host_pairs(name: str, fabric: Fabric, pairs: Sequence[tuple[int, int]]) -> Demand:
    """Flows between hosts (indices into fabric.hosts); a pair listed twice is two flows."""
    counted = Counter((a, b) for a, b in pairs if a != b)
    keys = sorted(counted)
    src = np.array([a for a, _ in keys], dtype=np.int64)
    dst = np.array([b for _, b in keys], dtype=np.int64)
    weight = np.array([counted[k] for k in keys], dtype=float)
    return Demand(name, list(fabric.host_switch), np.ones(len(fabric.hosts), dtype=np.int64), src, dst, weight,
                  list(fabric.host_tree))


def permutation(fabric: Fabric, seed: int) -> Demand:
    perm = np.random.default_rng(seed).permutation(len(fabric.hosts))
    return host_pairs(f"permutation (seed {seed})", fabric, list(enumerate(perm.tolist())))


def grid_shape(n: int) -> tuple[int, int]:
    p = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return p, n // p


def neighbour(fabric: Fabric) -> Demand:
    p, q = grid_shape(len(fabric.hosts))
    pairs = []
    for i in range(p):
        for j in range(q):
            me = i * q + j
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                other = ((i + di) % p) * q + (j + dj) % q
                pairs.append((me, other))
    # A grid of 1 or 2 along a side lists the same neighbour twice: one flow each.
    return host_pairs(f"neighbour ({p}x{q} grid)", fabric, sorted(set(pairs)))


def bisection(fabric: Fabric) -> Demand:
    half = len(fabric.hosts) // 2
    pairs = [(i, i + half) for i in range(half)] + [(i + half, i) for i in range(half)]
    return host_pairs("bisection", fabric, pairs)


def flows_file(fabric: Fabric, path: str | Path) -> Demand:
    """One flow per `SOURCE DESTINATION` line (`#` comments). The file is read within the
    limits of every file vlanroute reads (a regular UTF-8 file, its size), and a message
    names a line by its number, never by its words (at most a host of the plan it resembles):
    a file given by mistake (/etc/shadow) must not end up quoted on the terminal."""
    index = {h: i for i, h in enumerate(fabric.hosts)}
    fix = "write one 'SOURCE DESTINATION' line of host names of the plan per flow"
    text = read_text_file(path, what="flows file", field="--patterns", fix=fix)
    pairs = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"--patterns, line {number}"
        if len(words) != 2:
            raise UserError(f"{len(words)} words, not two host names (the line is not shown)",
                            file=str(path), field=where, fix=fix)
        for n, w in enumerate(words, 1):
            if w not in index:
                near = difflib.get_close_matches(w, fabric.hosts, n=1, cutoff=0.75)
                raise UserError(f"word {n} of the line is not a host of the plan (the word is not shown)",
                                file=str(path), field=where,
                                fix=(f"did you mean {near[0]}? " if near else "") + fix)
        if words[0] == words[1]:
            raise UserError(f"a flow from {words[0]} to itself never leaves the host", file=str(path),
                            field=where, fix="remove the line: the model counts flows between two hosts")
        pairs.append((index[words[0]], index[words[1]]))
    if not pairs:
        raise UserError("the flows file lists no flow", file=str(path), field="--patterns", fix=fix)
    return host_pairs(f"flows of {Path(path).name}", fabric, pairs)


def demands(fabric: Fabric, pattern: str, seeds: Sequence[int] = (1, 2, 3)) -> list[Demand]:
    """The demand(s) of a pattern name (several for permutation: one per seed)."""
    if pattern == "all-to-all":
        return [all_to_all(fabric)]
    if pattern == "permutation":
        return [permutation(fabric, s) for s in seeds]
    if pattern == "neighbour":
        return [neighbour(fabric)]
    if pattern == "bisection":
        return [bisection(fabric)]
    return [flows_file(fabric, pattern)]
