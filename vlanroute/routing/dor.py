"""Dimension-order routing (routing.algorithm: dor) on grids: mesh, torus, ring, hyper-crossbar.

A route fixes the dimensions one after the other in a fixed order, each the minimal way
(on a torus or ring the shorter way round). The routes of one source form a tree, and on
a mesh the sources of a line in the first dimension share it, which is why a mesh needs
few VLANs. Routes are minimal. On a mesh (and a hyper-crossbar, one hop per dimension) a
route only ever turns from a dimension to a later one, so the channel dependencies are
acyclic and the routing is deadlock-free; the wrap-around links of a torus close cycles.

Where the order or the tie rule is left to the engine, every order worth trying and every
tie rule are routed and the best is kept (routing/select.py), then single tie decisions
are searched (`search_dor_ties`). Trees and complete graphs have one minimal routing
(select.forced_routes); a custom topology has no dimensions and is refused.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

from vlanroute.model.links import Arc
from vlanroute.errors import UserError
from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Engine, Options, Refusal, Routes
from vlanroute.routing.select import Candidates, forced_routes
from vlanroute.routing.trees import ParentMap, add_loads, max_load, source_arc_loads


@dataclass(frozen=True)
class DorParams:
    dimension_order: tuple[int, ...] | None = None   # every dimension index once; None: try several
    tie_break: str | None = None                      # one of TIE_RULES; None: try them


@dataclass(frozen=True)
class DorChoices:
    dimension_order: tuple[int, ...]          # the order used (dimensions with links only)
    tie_break: str                            # the tie rule used
    setting: tuple[int, ...] | None = None    # routing.dimension_order as given; None: auto
    searched: bool = False                    # single tie decisions changed by search_dor_ties

    def record(self) -> dict[str, object]:
        return {"dimension_order": list(self.dimension_order),
                "tie_break": self.tie_break + ("+searched" if self.searched else ""),
                "dimension_order_setting": "auto" if self.setting is None else list(self.setting)}


def dor_orders(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Dimension orders worth trying among the dimensions that have links.

    Two dimensions: both orders. More: the natural order, largest first and largest last
    (on a mesh the first dimension's lines share trees, so largest first needs fewest
    VLANs; on a torus the order matters only for uneven sizes); every permutation would
    be 6 or more full routings to compare on a big 3-D grid.
    """
    active = [d for d, n in enumerate(dims) if n > 1]
    if len(active) <= 2:
        return [tuple(p) for p in itertools.permutations(active)] or [()]
    out: list[tuple[int, ...]] = []
    for cand in (tuple(active), tuple(sorted(active, key=lambda d: -dims[d])),
                 tuple(sorted(active, key=lambda d: dims[d]))):
        if cand not in out:
            out.append(cand)
    return out


def line_parents(n: int, start: int, kind: str, tie_plus: bool) -> dict[int, int]:
    """One dimension: for every coordinate b != start, the coordinate before b on the way.

    mesh: walk towards b; torus/ring: the shorter way round, and at exactly n/2 (a tie)
    go '+' when `tie_plus`; hyper-crossbar: one hop, every row is fully connected.
    """
    prev: dict[int, int] = {}
    if kind == "hyper-crossbar":
        return {b: start for b in range(n) if b != start}
    for b in range(n):
        if b == start:
            continue
        if kind == "mesh":
            prev[b] = b - 1 if b > start else b + 1
            continue
        fwd = (b - start) % n          # hops going '+'
        bwd = (start - b) % n          # hops going '-'
        plus = fwd < bwd or (fwd == bwd and tie_plus)
        prev[b] = (b - 1) % n if plus else (b + 1) % n
    return prev


TIE_RULES = ("source-parity", "branch-parity", "checkerboard", "plus")


def tie_goes_plus(rule: str, src_coord: tuple[int, ...], d: int, u: tuple[int, ...], fixed: tuple[int, ...]) -> bool:
    """At a tie (destination exactly half way round a ring of even size), go '+'?

    `src_coord` is the source's coordinate, `u` the switch where the route enters dimension `d`, `fixed` the
    dimensions already fixed before `d`. Balancing the two directions is what brings the
    all-to-all load down to the lower bound (docs/method.md, "Load balance on tori"):
    - source-parity: parity of the source's own coordinate in `d`. Sources 2k and 2k+1 of
      a line then share one tree; exactly balanced on rings of size 4k.
    - branch-parity: parity of the coordinate sum of `u`: alternates between the parallel
      lines a source fans out into, still one decision per line for a whole row of sources.
    - checkerboard: parity of the source's coordinate sum plus the branch's fixed
      coordinates: every line gets half its sources each way, also on rings of size
      4k+2, at the price of fewer shared trees.
    - plus: always '+' (the textbook rule, unbalanced).
    """
    if rule == "plus":
        return True
    if rule == "source-parity":
        return src_coord[d] % 2 == 0
    if rule == "branch-parity":
        return sum(u) % 2 == 0
    return (sum(src_coord) + sum(u[e] for e in fixed)) % 2 == 0


def dor_routes(topo: Topology, order: tuple[int, ...], tie_break: str = "source-parity",
               setting: tuple[int, ...] | None = None, algorithm: str = "dor") -> Routes:
    """Dimension-order routing: fix the dimensions in `order`, each the minimal way.

    Ties on rings of even size (two minimal directions) are broken by `tie_break` (see
    `tie_goes_plus`); the default, source parity, balances the two directions and lets
    neighbouring sources share one tree (on the 4x2 torus of the seed paper, 4 VLANs
    instead of 8). `setting` (routing.dimension_order as given) and `algorithm` (the
    engine that routes) are only recorded.
    """
    lines = dor_lines(topo)
    parents = {src: dor_tree(topo, src, order, tie_break, None, lines) for src in topo.switches}
    return Routes(algorithm, parents, DorChoices(order, tie_break, setting))


Lines = list[dict[str, tuple[str, ...]]]


def dor_lines(topo: Topology) -> Lines:
    """For each dimension d, every switch's line along d: the switches whose coordinates
    differ from its own in d only, indexed by their coordinate in d (one tuple per line,
    shared by its switches). A route moves along one such line per dimension, so the trees
    look switches up here instead of building and hashing coordinate tuples."""
    assert topo.dims is not None
    out: Lines = []
    for d, n in enumerate(topo.dims):
        groups: dict[tuple[int, ...], list[str]] = {}
        for name, c in topo.coords.items():
            assert c is not None
            groups.setdefault(c[:d] + c[d + 1:], [""] * n)[c[d]] = name
        frozen = {key: tuple(names) for key, names in groups.items()}
        out.append({name: frozen[c[:d] + c[d + 1:]] for name, c in topo.coords.items() if c is not None})
    return out


def dor_tree(topo: Topology, src: str, order: tuple[int, ...], tie_break: str,
             decisions: dict[tuple[str, int, tuple[int, ...]], bool] | None = None,
             lines: Lines | None = None) -> ParentMap:
    """One source's dimension-order tree; see `dor_routes`."""
    assert topo.dims is not None
    dims = topo.dims
    kind = "torus" if topo.kind == "ring" else topo.kind
    if lines is None:
        lines = dor_lines(topo)
    coords = topo.coords
    src_coord = coords[src]
    assert src_coord is not None
    parent: ParentMap = {}
    reached = [src]
    for k, d in enumerate(order):
        fixed = order[:k]
        line_of = lines[d]
        new = []
        for u in reached:
            uc = coords[u]
            assert uc is not None
            tie_plus = tie_goes_plus(tie_break, src_coord, d, uc, fixed)
            if decisions:
                tie_plus = decisions.get((src, d, uc), tie_plus)
            line = line_of[u]
            for b, a in _line(dims[d], uc[d], kind, tie_plus).items():
                v = line[b]
                parent[v] = line[a]
                new.append(v)
        reached.extend(new)
    return parent


@functools.lru_cache(maxsize=65536)
def _line(n: int, start: int, kind: str, tie_plus: bool) -> dict[int, int]:
    return line_parents(n, start, kind, tie_plus)


def search_dor_ties(topo: Topology, routes: Routes, hosts: dict[str, int], max_work: int = 3_000_000,
                    rounds: int = 6, pair_limit: int = 64) -> Routes:
    """Local search over the single tie decisions of a dimension-order routing.

    A tie rule decides for all sources alike; with uneven host counts, or rings of size
    4k+2, no rule balances exactly. Here every (source, dimension, branch) tie is flipped
    in turn and kept if the loads improve (leximin, `_score`); when no single flip helps
    and there are at most `pair_limit` ties, pairs of flips are tried (two sources
    trading directions is the typical improving move). Stops early when the maximum load
    reaches the mean over all cables (no minimal routing does better: all carry the same
    total) or when `max_work` (switch visits) is spent, so it stays cheap on big grids.
    """
    assert topo.dims is not None
    dims = topo.dims
    if topo.kind not in ("torus", "ring"):
        return routes
    assert isinstance(routes.choices, DorChoices)
    order = routes.choices.dimension_order
    rule = routes.choices.tie_break
    tied = [k for k, d in enumerate(order) if dims[d] % 2 == 0 and dims[d] > 2]
    sources = [s for s in topo.switches if hosts.get(s, 0)]
    keys: list[tuple[str, int, tuple[int, ...]]] = []
    for s in sources:
        src_coord = topo.coords[s]
        assert src_coord is not None
        for k in tied:
            for prefix in itertools.product(*(range(dims[e]) for e in order[:k])):
                u = list(src_coord)
                for e, x in zip(order[:k], prefix):
                    u[e] = x
                keys.append((s, order[k], tuple(u)))
    if not keys:
        return routes
    cables = topo.arc_cables()
    lines = dor_lines(topo)
    position = {d: k for k, d in enumerate(order)}
    decisions = {key: tie_goes_plus(rule, topo.coords[key[0]], key[1], key[2],  # type: ignore[arg-type]
                                    order[:position[key[1]]]) for key in keys}
    parents = dict(routes.parents)
    contrib = {s: list(source_arc_loads(parents[s], s, hosts)) for s in sources}
    load: dict[Arc, float] = {}
    for s in sources:
        add_loads(load, contrib[s], cables, 1.0)
    if not load:        # one host in all: no pair, nothing to balance
        return routes
    mean = sum(x * cables[a] for a, x in load.items()) / sum(cables.values())
    score = _score(load)
    n = len(topo.switches)
    work = 0

    def attempt(flip: tuple[tuple[str, int, tuple[int, ...]], ...]) -> bool:
        """Flip these ties; keep them if the loads improve."""
        nonlocal score, work
        for key in flip:
            decisions[key] = not decisions[key]
        touched = {key[0] for key in flip}
        new = {}
        for s in touched:
            par = dor_tree(topo, s, order, rule, decisions, lines)
            new[s] = (par, list(source_arc_loads(par, s, hosts)))
            add_loads(load, contrib[s], cables, -1.0)
            add_loads(load, new[s][1], cables, 1.0)
        work += len(touched) * 3 * n + len(load)
        got = _score(load)
        if got < score:
            score = got
            for s, (par, c) in new.items():
                parents[s], contrib[s] = par, c
            return True
        for s, (_par, c) in new.items():
            add_loads(load, c, cables, -1.0)
            add_loads(load, contrib[s], cables, 1.0)
        for key in flip:
            decisions[key] = not decisions[key]
        return False

    def done() -> bool:
        return score[0] <= mean * (1 + 1e-9) or work > max_work

    for _ in range(rounds):
        improved = False
        for key in keys:
            if done():
                break
            improved |= attempt((key,))
        if not improved and len(keys) <= pair_limit:
            for a, b in itertools.combinations(keys, 2):
                if done():
                    break
                if attempt((a, b)):
                    improved = True
                    break
        if not improved or done():
            break
    if parents == routes.parents:
        return routes
    return Routes(routes.algorithm, parents, replace(routes.choices, searched=True))


def _score(load: dict[Arc, float]) -> tuple[float, ...]:
    """Lower is better: all loads, largest first, compared in that order (leximin).

    Only the first entry is the objective; the rest let the search step off plateaus
    where several links share the maximum."""
    return tuple(sorted((round(x, 6) for x in load.values()), reverse=True))


# --------------------------------------------------------------------------- the engine


def check_order(topo: Topology, order: tuple[int, ...] | None) -> None:
    """routing.dimension_order must name every dimension once (dimensions of size 1,
    which have no links, may be left out)."""
    if order is None or topo.dims is None:
        return
    active = sorted(d for d, n in enumerate(topo.dims) if n > 1)
    if sorted(order) != active and sorted(order) != list(range(len(topo.dims))):
        raise UserError(f"{list(order)} is not an order of the dimensions {list(range(len(topo.dims)))}",
                        field="routing.dimension_order", fix="list every dimension index once, e.g. [1, 0], or use auto")


def add_dor_candidates(candidates: Candidates, topo: Topology, params: DorParams, algorithm: str) -> bool:
    """Route every dimension order and tie rule worth trying; True if one reaches the bound.

    Tie rules only matter on tori and rings with an even ring size above 2 (`tie_goes_plus`).
    Within one order, the first rule that reaches the distance bound ends the rules: no
    minimal routing has a lower maximum, and the earlier rules share trees best.
    """
    assert topo.dims is not None
    dims = topo.dims
    if params.dimension_order is None:
        orders = dor_orders(dims)
    else:
        orders = [tuple(d for d in params.dimension_order if dims[d] > 1)]
    even_rings = topo.kind in ("torus", "ring") and any(n % 2 == 0 and n > 2 for n in dims)
    if params.tie_break is not None:
        rules = [params.tie_break]
    else:
        rules = [r for r in TIE_RULES if r != "plus"] if even_rings else ["source-parity"]
    optimal = False
    for order in orders:
        for rule in rules:
            if candidates.add(dor_routes(topo, order, rule, params.dimension_order, algorithm)):
                optimal = True
                break
    return optimal


def searched_ties(topo: Topology, best: Routes, peak: float, host_count: dict[str, int],
                  cables: dict[Arc, int]) -> Routes:
    """`best` after the search over single tie decisions, if that lowers the maximum load."""
    searched = search_dor_ties(topo, best, host_count)
    if searched is not best and max_load(searched.parents, host_count, cables) < peak - 1e-6:
        return searched
    return best


class DorEngine(Engine[DorParams]):
    name = "dor"
    summary = "dimension-order: each dimension in turn, the short way round"
    minimal = True
    deadlock_free = False      # on meshes and hyper-crossbars yes; a torus's rings close cycles
    reads = frozenset({"dimension_order"})
    refused = {"custom": Refusal("dimension-order routing needs a grid (mesh, torus, hyper-crossbar, ring)",
                                 "use algorithm: shortest or updown for a custom topology")}

    def params(self, topo: Topology, options: Options) -> DorParams:
        check_order(topo, options.dimension_order)
        return DorParams(options.dimension_order)

    def route(self, topo: Topology, host_count: dict[str, int], params: DorParams) -> Routes:
        forced = forced_routes(topo, self.name)
        if forced is not None:
            return forced
        candidates = Candidates(topo, host_count)
        optimal = add_dor_candidates(candidates, topo, params, self.name)
        best, peak = candidates.best()
        if optimal:
            # a candidate reached the distance bound: no minimal routing (a changed tie
            # decision included) has a lower maximum load, so the tie search cannot help
            return best
        return searched_ties(topo, best, peak, host_count, candidates.cables)


DOR = DorEngine()
