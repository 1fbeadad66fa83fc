"""The exact optimum of the all-to-all maximum link load: a multicommodity-flow LP.

No routing of any kind, VLAN trees or not, minimal or not, splits traffic better than a
fractional multicommodity flow, so the least maximum load of that flow is a lower bound on
every plan, and the tightest one that ignores the VLAN trees (the "optimum" a plan is
compared with). The LP (solved with scipy's HiGHS):

    minimise L
    subject to, for every source switch s (aggregated: one commodity per source, its
    destinations' demands are h(s) h(t)) and every switch v != s:
        inflow_s(v) - outflow_s(v) = h(s) h(v)
    and for every directed neighbour pair a with C(a) parallel cables:
        sum over s of flow_s(a) <= L C(a),     flows >= 0.

Aggregating the pairs of one source into one commodity is exact: any flow of the source
to its destinations decomposes into paths to each of them (the flow-decomposition theorem).
Size: sources x directed pairs variables; LP_VARIABLES bounds it (measured in
bench/quality.py: a 64-switch 4-regular graph, 16,384 variables, takes 1.5 s of CPU with
HiGHS's interior-point method, the dual simplex 9 s; 0.8 s since the interior point stops
without its crossover to a vertex, `IPM`).

Symmetry: on a grid whose every unit translation (coordinates shifted by one, modulo the
dimension) maps switches, links and cables onto themselves (tori, rings, hyper-crossbars,
complete graphs) with equal hosts everywhere, averaging an optimal flow over all
translations gives an optimal flow that is the same from every source. Then one commodity
suffices, and an arc's load is the sum of that commodity's flow over the arcs of the same
displacement (the arc's orbit): an LP of one source's size, solved for any grid size.

Beyond the size limit the bound falls back to the best cheap bound of routing/bounds.py
(distance, switch or bridge) and says which.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlanroute.model.topology import Topology
from vlanroute.routing.bounds import load_bounds
from vlanroute.routing.memo import Store, fabric_key

LP_VARIABLES = 50_000      # sources x directed neighbour pairs: the full LP's size limit
# HiGHS' interior-point method without the crossover to a vertex (only the value is used),
# its optimality gap tightened from 1e-8 so that the value is good to about 1e-13 relative:
# on the random 4-regular graph of 64 switches 0.83 s against 1.14 s with the crossover, on
# the 8x8 torus with 6 cables gone 0.53 against 0.73-0.80 s (the same value to 12 digits).
IPM: tuple[tuple[str, object], ...] = (
    ("solver", "ipm"), ("run_crossover", "off"), ("ipm_optimality_tolerance", 1e-12),
    ("log_to_console", False), ("output_flag", False))


@dataclass(frozen=True)
class Optimum:
    """A lower bound on the all-to-all maximum load per cable and direction."""

    value: float
    kind: str           # "optimum" (the LP: exact), or the cheap bound used: "distance", "switch", "bridge"

    @property
    def exact(self) -> bool:
        return self.kind == "optimum"

    @property
    def label(self) -> str:
        """How the plan summary names it: 'the optimum' or 'the distance bound'."""
        return "the optimum" if self.exact else f"the {self.kind} bound"


# The optimum of the fabrics solved last (routing/memo.py): the plan, the default's engines
# (acyclic's order refinement and torus restarts) and the metrics ask for the same LP, which
# costs up to a few seconds on 64 switches.
_SOLVED: Store[Optimum] = Store()


def optimum_bound(topo: Topology, host_count: dict[str, int], limit: int = LP_VARIABLES) -> Optimum:
    """The LP optimum where it fits `limit` (variables), else the best cheap bound (kept for
    the same fabric and hosts)."""
    return _SOLVED.get((limit, fabric_key(topo, host_count)),
                       lambda: _optimum(topo, host_count, limit, topo.arc_cables()))


def _optimum(topo: Topology, host_count: dict[str, int], limit: int, arcs: dict[tuple[str, str], int]) -> Optimum:
    sources = [s for s in topo.switches if host_count.get(s, 0)]
    if len(sources) < 2 or not arcs:
        return Optimum(0.0, "optimum")
    sym = symmetric_lp_bound(topo, host_count)
    if sym is not None:
        return Optimum(sym, "optimum")
    if len(sources) * len(arcs) <= limit:
        proven = sandwiched(topo, host_count)
        return Optimum(proven if proven is not None else lp_bound(topo, host_count), "optimum")
    cheap = load_bounds(topo, host_count, None)
    return Optimum(cheap.best, cheap.binding)


def sandwiched(topo: Topology, host_count: dict[str, int]) -> float | None:
    """The optimum without the LP, where a cheap lower bound (routing/bounds.py: distance,
    switch, bridge) meets the max load per cable of one feasible flow, every pair's traffic
    split evenly over all its shortest paths (`even_split_peak`): the LP lies between the
    two, so it is the bound. That flow is even on every link of a fabric whose links all
    look alike (a hypercube: 1.1 s of LP on 6 dimensions). None where they differ."""
    lower = load_bounds(topo, host_count, None).best
    if lower <= 0:
        return None
    return lower if even_split_peak(topo, host_count) <= lower * (1 + 1e-9) else None


def even_split_peak(topo: Topology, host_count: dict[str, int]) -> float:
    """The max load per cable when every source switch's traffic to each switch is split
    evenly over all the shortest paths (a feasible flow, so at least the optimum): per
    source, a breadth-first search counts the shortest paths sigma into every switch, and
    the traffic through a switch v (its own demand and what it passes on) leaves towards
    the source over the links from each u one hop nearer in proportion sigma(u) / sigma(v)."""
    cables = topo.arc_cables()
    adj: dict[str, list[str]] = {s: [] for s in topo.switches}
    for a, b in sorted(cables):
        adj[a].append(b)
    load: dict[tuple[str, str], float] = dict.fromkeys(cables, 0.0)
    for src in topo.switches:
        hs = host_count.get(src, 0)
        if not hs:
            continue
        dist, sigma, order = {src: 0}, {src: 1}, [src]
        for u in order:                          # grows while read: breadth-first
            for v in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    sigma[v] = 0
                    order.append(v)
                if dist[v] == dist[u] + 1:
                    sigma[v] += sigma[u]
        through = {v: float(hs * host_count.get(v, 0)) for v in order}
        through[src] = 0.0
        for v in reversed(order[1:]):
            for u in adj[v]:
                if dist[u] == dist[v] - 1:
                    part = through[v] * sigma[u] / sigma[v]
                    load[(u, v)] += part
                    through[u] += part
    return max((x / cables[a] for a, x in load.items()), default=0.0)


def lp_bound(topo: Topology, host_count: dict[str, int]) -> float:
    """The least maximum load per cable of a splittable all-to-all flow (the full LP)."""
    sources = [s for s in topo.switches if host_count.get(s, 0)]
    demands = {s: {t: host_count[s] * host_count.get(t, 0) for t in topo.switches if t != s} for s in sources}
    return _solve(topo, sources, demands, None)


def symmetric_lp_bound(topo: Topology, host_count: dict[str, int]) -> float | None:
    """The LP optimum from one source's flow on a translation-symmetric grid with equal
    hosts per switch (module docstring); None where the symmetry does not hold."""
    if topo.dims is None or any(c is None for c in topo.coords.values()):
        return None
    counts = {host_count.get(s, 0) for s in topo.switches}
    if len(counts) != 1 or 0 in counts:
        return None
    dims = topo.dims
    at = {c: s for s, c in topo.coords.items() if c is not None}
    if len(at) != len(topo.switches):
        return None
    arcs = topo.arc_cables()
    def shift(s: str, d: int) -> str:
        c = topo.coords[s]
        assert c is not None
        return at[c[:d] + ((c[d] + 1) % dims[d],) + c[d + 1:]]

    for d in range(len(dims)):
        if any(arcs.get((shift(a, d), shift(b, d))) != n for (a, b), n in arcs.items()):
            return None

    def displacement(arc: tuple[str, str]) -> tuple[int, ...]:
        ca, cb = topo.coords[arc[0]], topo.coords[arc[1]]
        assert ca is not None and cb is not None
        return tuple((y - x) % n for x, y, n in zip(ca, cb, dims))

    src = topo.switches[0]
    h = next(iter(counts))
    demands = {src: {t: h * h for t in topo.switches if t != src}}
    return _solve(topo, [src], demands, displacement)


def _solve(topo: Topology, sources: list[str], demands: dict[str, dict[str, int]],
           orbit: object) -> float:
    """min L over flows of the given commodities; `orbit` (a function arc -> class key, or
    None) groups the arcs whose flows share one capacity row (the symmetric LP)."""
    # scipy on first use: importing it costs about 0.6 s, which `render` and `verify`
    # would pay without solving anything.
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack
    arcs = sorted(topo.arc_cables().items())
    node = {s: i for i, s in enumerate(topo.switches)}
    n, m = len(topo.switches), len(arcs)
    nvar = len(sources) * m + 1
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    tail = np.array([node[a] for (a, _), _ in arcs])
    head = np.array([node[b] for (_, b), _ in arcs])
    arc_ids = np.arange(m)
    b_eq: list[float] = []
    for k, s in enumerate(sources):
        # Row of switch v for commodity k: inflow - outflow = demand (no row for s itself).
        row_of = np.full(n, -1)
        others = [v for v in topo.switches if v != s]
        row_of[[node[v] for v in others]] = np.arange(len(others)) + len(b_eq)
        b_eq.extend(float(demands[s].get(v, 0)) for v in others)
        for ends, sign in ((head, 1.0), (tail, -1.0)):
            r = row_of[ends]
            keep = r >= 0
            rows.append(r[keep])
            cols.append(k * m + arc_ids[keep])
            vals.append(np.full(int(keep.sum()), sign))
    a_eq = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(len(b_eq), nvar)).tocsr()

    # Capacity rows: one per arc, or one per orbit of arcs (symmetric LP).
    cables = np.array([c for _, c in arcs], dtype=float)
    if orbit is None:
        cap_of = arc_ids
        ncap = m
        cap_cables = cables
    else:
        assert callable(orbit)
        keys: dict[object, int] = {}
        cap_of = np.array([keys.setdefault(orbit(a), len(keys)) for a, _ in arcs])
        ncap = len(keys)
        cap_cables = np.zeros(ncap)
        cap_cables[cap_of] = cables
    k_all = len(sources)
    ub_rows = np.concatenate([np.tile(cap_of, k_all), np.arange(ncap)])
    ub_cols = np.concatenate([np.arange(k_all * m), np.full(ncap, nvar - 1)])
    ub_vals = np.concatenate([np.ones(k_all * m), -cap_cables])
    a_ub = coo_matrix((ub_vals, (ub_rows, ub_cols)), shape=(ncap, nvar)).tocsr()
    c = np.zeros(nvar)
    c[-1] = 1.0
    from vlanroute.routing import highs
    try:
        got = highs.solve(vstack([a_ub, a_eq]).tocsc(), c, np.full(nvar, np.inf), ncap, np.array(b_eq), IPM)
        if got.status == "optimal":
            return exact(got.objective)
        # anything else (the interior point stalled short of its gap): linprog's way below
    except highs.DIRECT_UNAVAILABLE:
        pass
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(ncap), A_eq=a_eq, b_eq=np.array(b_eq),
                  bounds=(0, None), method="highs-ipm")
    if res.status != 0:
        raise RuntimeError(f"the load LP did not solve: {res.message}")
    return exact(float(res.x[-1]))


def exact(value: float) -> float:
    """The LP's value to 12 significant digits, the solvers' last bits (1e-13 relative) off,
    so that an optimum that is a whole number is that number exactly, as the vertex gave it:
    a plan carrying 35 on an optimum of 28 is then at 1.25 times it, not just above."""
    return float(f"{value:.12g}")
