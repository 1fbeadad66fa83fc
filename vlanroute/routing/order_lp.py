"""The splittable optimum of one channel order (an LP), and the prices of the turns it forbids.

A routing whose routes all increase in one channel order has an acyclic channel dependency
graph, so it is deadlock-free (Dally and Seitz 1987). For a fixed order, the best
*splittable* all-to-all routing that keeps to the order is a linear program; VLAN routing
(one tree per source) is a special case, so the LP is a floor for every plan in that order:

    minimise L
    per source switch s (one commodity, demands h(s) h(t)), per channel a:
        origin_s(a) [a leaves s] + turn flows into a = delivered_s(a) + turn flows out of a
    per switch t != s:  sum over the channels a into t of delivered_s(a) = h(s) h(t)
    per channel a with C(a) cables:  sum over s of the flow on a <= L C(a)

Only the turns that go up the order are variables; routes never enter their source again and
never U-turn (a VLAN route is a path in a tree). Solved with scipy's HiGHS (dual simplex, so
the duals are those of a vertex). The duals price every forbidden turn: a negative reduced
cost says that allowing it would lower the objective, which is how routing/acyclic/refine.py
chooses which channel to move in the order (column pricing, as in any simplex method).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.memo import SizedStore, fabric_key

if TYPE_CHECKING:
    from scipy.sparse import coo_matrix, csc_matrix


def plan_order(parents: dict[str, dict[str, str]], arcs: list[Arc]) -> dict[Arc, int]:
    """A topological order of the channel dependencies of the plan's routes, every arc of
    `arcs` ranked (networkx's, lexicographic by channel where the routes leave it free);
    the routes increase in it. The plan's routes must be deadlock-free (acyclic)."""
    cdg = nx.DiGraph()
    cdg.add_nodes_from(arcs)
    for src, tree in parents.items():
        for v, p in tree.items():
            if p != src:
                cdg.add_edge((tree[p], p), (p, v))
    return {a: i for i, a in enumerate(nx.lexicographical_topological_sort(cdg))}


def turns_of(topo: Topology) -> list[tuple[Arc, Arc]]:
    """Every turn of the topology: a into a switch, b out of it, b not straight back."""
    arcs = sorted(topo.arc_cables())
    out: dict[str, list[Arc]] = {s: [] for s in topo.switches}
    for a in arcs:
        out[a[0]].append(a)
    return [(a, b) for a in arcs for b in out[a[1]] if b[1] != a[0]]


class FlowRows:
    """The per-source rows and bounds of the turn LPs, gathered as coordinate lists;
    `add_source` appends one commodity."""

    def __init__(self, nvar: int) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.b_eq: list[float] = []
        self.hi = np.full(nvar, np.inf)
        self.r0 = 0

    def add_source(self, base: int, source: int, t_in: np.ndarray, t_out: np.ndarray, head: np.ndarray,
                   tail: np.ndarray, demand: list[float]) -> tuple[np.ndarray, np.ndarray]:
        """One commodity's variables from `base` (turn flows, deliveries, origins: one per
        turn, channel, channel) and rows: per channel, inflow = outflow; per switch, what is
        delivered there = `demand` (index `source`: the commodity's switch). Nothing enters
        the source and only its own channels have an origin (upper bounds 0). Returns the
        turn-flow and origin variables, whose sums per channel are its load."""
        nt, m = len(t_in), len(head)
        turn_vars = base + np.arange(nt)
        deliver = base + nt + np.arange(m)
        origin = base + nt + m + np.arange(m)
        r0 = self.r0
        # conservation per channel (row r0 + a): inflow - outflow = 0
        self.rows += [r0 + t_out, r0 + t_in, r0 + np.arange(m), r0 + np.arange(m)]
        self.cols += [turn_vars, turn_vars, deliver, origin]
        self.vals += [np.ones(nt), -np.ones(nt), -np.ones(m), np.ones(m)]
        self.b_eq += [0.0] * m
        # demand per switch (row r0 + m + v)
        self.rows.append(r0 + m + head)
        self.cols.append(deliver)
        self.vals.append(np.ones(m))
        self.b_eq += demand
        self.r0 += m + len(demand)
        self.hi[deliver[head == source]] = 0.0
        self.hi[origin[tail != source]] = 0.0
        into = head == source
        self.hi[turn_vars[into[t_out] | into[t_in]]] = 0.0
        return turn_vars, origin

    def a_eq(self, nvar: int) -> coo_matrix:
        from scipy.sparse import coo_matrix      # on first use, as in optimum.py: 0.5 s on every CLI start
        return coo_matrix((np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
                          shape=(self.r0, nvar))


@dataclass(frozen=True)
class OrderSolution:
    """The LP of one order: its least max load per cable, each source's flow into each
    channel (sources x channels, in `OrderLP.sources` and `OrderLP.arcs` order), the total
    flow of every turn, per turn what allowing it is worth (0 for allowed turns), and the
    simplex iterations it took (a measure of work that, unlike time, the same input repeats)."""

    load: float
    inflow: np.ndarray
    turn_flow: np.ndarray
    gain: np.ndarray
    iterations: int = 0


def _solution_bytes(sol: OrderSolution | None) -> int:
    if sol is None:
        return 64
    return 128 + sol.inflow.nbytes + sol.turn_flow.nbytes + sol.gain.nbytes


# The order LPs solved last, by fabric and allowed turns: the default's walks again
# (acyclic/engine.py `Effort.walks_again`) retrace the moves of the walk before them, and the
# column step's walk may pass orders the refinement's walk solved; HiGHS gives the same
# solution for the same LP, so a kept one is the same bits, iteration count included (the
# walks' budgets count it). Measured on the slow machine: the dragonfly 6x3's default plan
# solved 1,140 order LPs, 893 of them distinct (12.7 s of its 58 s of LPs repeated);
# random 3-regular 24 seed 8, 2,015 and 1,857 (6.3 s of 84). The least recently used go
# beyond SOLVED_BYTES (a random 3-regular 24's solution is about 17 KB).
SOLVED_BYTES = 96 * 2**20
_SOLVED: SizedStore[OrderSolution | None] = SizedStore(SOLVED_BYTES, _solution_bytes)


class OrderLP:
    """The order LP of a topology and its traffic, solved for any channel order given as one
    key per channel (a turn a -> b is allowed when key(a) < key(b))."""

    def __init__(self, topo: Topology, host_count: dict[str, int]) -> None:
        cables = topo.arc_cables()
        self.arcs: list[Arc] = sorted(cables)
        self.cap = np.array([float(cables[a]) for a in self.arcs])
        aid = {a: i for i, a in enumerate(self.arcs)}
        node = {s: i for i, s in enumerate(topo.switches)}
        self.head = np.array([node[b] for _, b in self.arcs], dtype=int)
        self.tail = np.array([node[a] for a, _ in self.arcs], dtype=int)
        turns = [(aid[a], aid[b]) for a, b in turns_of(topo)]
        self.t_in = np.array([i for i, _ in turns], dtype=int)
        self.t_out = np.array([j for _, j in turns], dtype=int)
        self.sources = [s for s in topo.switches if host_count.get(s, 0)]
        self.source_node = np.array([node[s] for s in self.sources], dtype=int)
        self.demands = [[0.0 if v == s else float(host_count[s] * host_count.get(v, 0)) for v in topo.switches]
                        for s in self.sources]
        self.n = len(topo.switches)
        self._lps: _Solver | None = None         # built on the first solve
        self._fabric = hashlib.sha1(repr(fabric_key(topo, host_count)).encode()).digest()

    def solve(self, key: np.ndarray) -> OrderSolution | None:
        """The LP for the order `key` (one float per channel of `arcs`); None if some pair
        of switches with hosts has no route that increases in it. Its arrays are read-only:
        the same solution may be handed out again (_SOLVED)."""
        allowed = key[self.t_in] < key[self.t_out]
        return _SOLVED.get((self._fabric, np.packbits(allowed).tobytes()), lambda: self._solve(allowed))

    def _solve(self, allowed: np.ndarray) -> OrderSolution | None:
        al = np.flatnonzero(allowed)
        t_out = self.t_out[al]
        m, nsrc, nt = len(self.arcs), len(self.sources), len(al)
        block = nt + 2 * m                  # per source: turn flows, deliveries, origins
        nflow = nsrc * block
        got = self._solver().solve(al)
        if got is None:
            return None
        x, row_dual, iterations = got
        flows = x[:nflow].reshape(nsrc, block)
        inflow = flows[:, nt + m:].copy()                 # origins...
        for k in range(nsrc):                              # ...and the turns into each channel
            np.add.at(inflow[k], t_out, flows[k, :nt])
        turn_flow = np.zeros(len(self.t_in))
        turn_flow[al] = flows[:, :nt].sum(axis=0)
        # Reduced cost of the forbidden turn i -> j for source k: -(y_k[j] - y_k[i]) + w[j]
        # (y: conservation duals, w >= 0: capacity prices); negative means worth allowing.
        y = row_dual[m:].reshape(nsrc, m + self.n)[:, :m]
        w = -row_dual[:m]
        forbidden = np.flatnonzero(~allowed)
        fi, fo = self.t_in[forbidden], self.t_out[forbidden]
        reduced = -(y[:, fo] - y[:, fi]) + w[fo][None, :]
        src = self.source_node[:, None]
        useless = (self.head[fo][None, :] == src) | (self.head[fi][None, :] == src)   # would enter the source
        reduced = np.where(useless, 0.0, reduced)
        gain = np.zeros(len(self.t_in))
        gain[forbidden] = np.maximum(0.0, -reduced).sum(axis=0)
        for kept in (inflow, turn_flow, gain):
            kept.flags.writeable = False
        return OrderSolution(float(x[nflow]), inflow, turn_flow, gain, iterations)

    def _solver(self) -> _Solver:
        if self._lps is None:
            self._lps = _Solver(self)
        return self._lps


class _Solver:
    """`OrderLP.solve`'s LPs, built from one matrix: every turn of every source is a column
    of it (per source: turn flows, deliveries, origins; then L; rows: the capacity rows
    flows - C(a) L <= 0, then conservation and demand per source), and an order's LP is its
    columns of the turns the order allows. Solved by the HiGHS that scipy bundles, called
    as scipy's linprog(method="highs-ds") calls it, with the same matrix, bounds and
    options, so the solutions are the same bits; without linprog's checks and conversions
    of its inputs and its Python loop over the columns for the bounds' marginals (unused
    here): on random 3-regular graphs of 24 switches that overhead was about as long as
    HiGHS' own solve. Where scipy has no such module (before 1.15), through linprog."""

    def __init__(self, lp: OrderLP) -> None:
        from scipy.sparse import coo_matrix
        m, nsrc, nturn = len(lp.arcs), len(lp.sources), len(lp.t_in)
        self.m = m
        full = nturn + 2 * m
        nvar = nsrc * full + 1
        rows = FlowRows(nvar)
        ub_rows: list[np.ndarray] = []
        ub_cols: list[np.ndarray] = []
        for k in range(nsrc):
            turn_vars, origin = rows.add_source(k * full, int(lp.source_node[k]), lp.t_in, lp.t_out, lp.head,
                                                lp.tail, lp.demands[k])
            ub_rows += [lp.t_out, np.arange(m)]
            ub_cols += [turn_vars, origin]
        ub_rows.append(np.arange(m))
        ub_cols.append(np.full(m, nvar - 1))
        ub_vals = np.concatenate([np.ones(sum(len(c) for c in ub_cols[:-1])), -lp.cap])
        eq = rows.a_eq(nvar)
        # capacity rows first, then the equalities, as linprog stacks A_ub over A_eq
        self.a = coo_matrix((np.concatenate([ub_vals, eq.data]),
                             (np.concatenate([*ub_rows, eq.row + m]), np.concatenate([*ub_cols, eq.col]))),
                            shape=(m + rows.r0, nvar)).tocsc()
        self.a.sort_indices()
        self.hi = rows.hi
        self.b_eq = np.array(rows.b_eq)
        self.full, self.nsrc, self.nturn = full, nsrc, nturn
        self.rest = np.arange(nturn, full)       # deliveries and origins, in each source's block

    def columns(self, al: np.ndarray) -> np.ndarray:
        """The columns of the order that allows the turns `al`, in linprog's order."""
        per = np.concatenate([al, self.rest])
        return np.concatenate([(np.arange(self.nsrc)[:, None] * self.full + per[None, :]).reshape(-1),
                               [self.nsrc * self.full]])

    def solve(self, al: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(x, row duals: capacity rows then equalities, simplex iterations) of the LP whose
        allowed turns are `al`; None if it is infeasible."""
        from vlanroute.routing import highs
        cols = self.columns(al)
        a = self.a[:, cols]
        c = np.zeros(len(cols))
        c[-1] = 1.0
        hi = self.hi[cols]
        try:
            got = highs.solve(a, c, hi, self.m, self.b_eq, highs.DUAL_SIMPLEX)
        except highs.DIRECT_UNAVAILABLE:
            return self._linprog(a, c, hi)
        if got.status == "infeasible":
            return None
        if got.status != "optimal":
            raise RuntimeError(f"the order LP did not solve: {got.status}")
        return got.x, got.row_dual, got.iterations

    def _linprog(self, a: csc_matrix, c: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
        from scipy.optimize import linprog
        m = self.m
        a_csr = a.tocsr()
        res = linprog(c, A_ub=a_csr[:m], b_ub=np.zeros(m), A_eq=a_csr[m:], b_eq=self.b_eq,
                      bounds=np.column_stack([np.zeros(len(c)), hi]), method="highs-ds")
        if res.status == 2:
            return None
        if res.status != 0:
            raise RuntimeError(f"the order LP did not solve: {res.message}")
        return res.x, np.concatenate([res.ineqlin.marginals, res.eqlin.marginals]), int(res.nit)
