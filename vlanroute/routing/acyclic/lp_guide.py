"""A channel order that admits the turns of the exact optimum's flow first.

The order walk (acyclic/refine.py) is a local search: where it ends depends on where it
starts, the channel order of the engine's best plan. This gives it another start. The
all-to-all multicommodity LP with every turn allowed (the order LP of routing/order_lp.py
with no order, whose optimum is that of routing/optimum.py: routes never U-turn nor
re-enter their source) is solved once with a small charge on every unit of turn flow, so
that among the (near-)optimal flows it takes one with few detours; its turns, the
most flow first, are admitted into a channel dependency graph that already holds the turns
of an up*/down* escape tree (so every pair keeps a route), each unless it closes a cycle
(routing/depgraph.py); the graph's topological order is the start. This is the guided
orders' construction (acyclic/engine.py `guided_orders`) with the optimum's flow in place
of the budget engine's trees.
"""

from __future__ import annotations

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.order_lp import FlowRows, OrderLP

DETOUR = 1e-4       # charge per unit of turn flow, against 1 per unit of max load: detours are the tie-break
EPS = 1e-9


def optimum_turn_flow(lp: OrderLP) -> np.ndarray:
    """The total flow of every turn of `lp` (its `t_in`, `t_out`) in an optimal all-to-all
    flow with every turn allowed, detours charged DETOUR per unit of turn flow."""
    from scipy.optimize import linprog            # on first use, as in optimum.py
    from scipy.sparse import coo_matrix
    m, nsrc, nt = len(lp.arcs), len(lp.sources), len(lp.t_in)
    block = nt + 2 * m
    nflow = nsrc * block
    nvar = nflow + 1
    rows = FlowRows(nvar)
    ub_rows: list[np.ndarray] = []
    ub_cols: list[np.ndarray] = []
    turn_cols: list[np.ndarray] = []
    for k in range(nsrc):
        turn_vars, origin = rows.add_source(k * block, int(lp.source_node[k]), lp.t_in, lp.t_out, lp.head, lp.tail,
                                            lp.demands[k])
        ub_rows += [lp.t_out, np.arange(m)]
        ub_cols += [turn_vars, origin]
        turn_cols.append(turn_vars)
    ub_rows.append(np.arange(m))
    ub_cols.append(np.full(m, nflow))
    ub_vals = np.concatenate([np.ones(sum(len(c) for c in ub_cols[:-1])), -lp.cap])
    a_ub = coo_matrix((ub_vals, (np.concatenate(ub_rows), np.concatenate(ub_cols))), shape=(m, nvar)).tocsr()
    c = np.zeros(nvar)
    c[np.concatenate(turn_cols)] = DETOUR
    c[nflow] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=rows.a_eq(nvar).tocsr(), b_eq=np.array(rows.b_eq),
                  bounds=np.column_stack([np.zeros(nvar), rows.hi]), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"the optimum's turn LP did not solve: {res.message}")
    flows = res.x[:nflow].reshape(nsrc, block)
    return np.asarray(flows[:, :nt].sum(axis=0))


def lp_guided_turns(topo: Topology, host_count: dict[str, int]) -> list[tuple[Arc, Arc]]:
    """The turns the optimum's flow uses (`optimum_turn_flow`), the most flow first (ties:
    the LP's turn order, which is sorted by channel, so the list is deterministic)."""
    lp = OrderLP(topo, host_count)
    if not lp.sources:
        return []
    flow = optimum_turn_flow(lp)
    order = sorted(range(len(flow)), key=lambda t: (-round(float(flow[t]), 6), t))
    return [(lp.arcs[int(lp.t_in[t])], lp.arcs[int(lp.t_out[t])]) for t in order if flow[t] > EPS]
