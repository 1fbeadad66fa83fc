"""A pattern's flows on a fabric: the max-min problem, its rates and the figures we report."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from vlanroute.perf import maxmin
from vlanroute.perf.fabric import Fabric, arc_index, capacities
from vlanroute.perf.patterns import Demand


@dataclass(frozen=True)
class Result:
    fabric: str
    pattern: str
    flows: int
    aggregate: float                    # Gb/s, the sum of every flow's rate
    slowest: float                      # Gb/s, the smallest flow rate
    exchange: float                     # seconds until every flow has moved the bytes asked
    bottlenecks: list[tuple[str, str]]  # the cables that fill first (directed), first level first
    host_bound: bool                    # the slowest flows are limited by host links only


def problem_of(fabric: Fabric, demand: Demand) -> maxmin.Problem:
    """Resources: each endpoint's uplinks, then its downlinks, then the directed arcs."""
    ends = len(demand.end_switch)
    arcs = arc_index(fabric)
    tree = demand.end_tree or demand.end_switch        # the tree each endpoint's flows take
    sources = sorted({tree[e] for e in demand.src.tolist()})
    paths = fabric.paths(sources)
    arc_rows = {k: np.array([2 * ends + arcs[a] for a in v], dtype=np.int64) for k, v in paths.items()}
    src_sw = [tree[e] for e in demand.src.tolist()]
    dst_sw = [demand.end_switch[e] for e in demand.dst.tolist()]
    chunks = [arc_rows[(s, d)] for s, d in zip(src_sw, dst_sw)]
    lengths = np.array([len(c) for c in chunks], dtype=np.int64)
    groups = np.arange(len(chunks), dtype=np.int64)
    rows = np.concatenate([demand.src, ends + demand.dst, *chunks]) if chunks else np.zeros(0, dtype=np.int64)
    cols = np.concatenate([groups, groups, np.repeat(groups, lengths)])
    size = 2 * ends + len(arcs)
    incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(size, len(chunks)))
    host = demand.end_size.astype(float) * fabric.host_speed
    capacity = np.concatenate([host, host, capacities(fabric)])
    return maxmin.Problem(incidence, capacity, demand.weight, fabric.flow_cap)


def evaluate(fabric: Fabric, demand: Demand, exchange_bytes: float = 1e6) -> Result:
    problem = problem_of(fabric, demand)
    alloc = maxmin.solve(problem)
    ends = len(demand.end_switch)
    arcs = fabric.arcs()
    arc_level = alloc.saturated_at[2 * ends:]
    full = [i for i in np.argsort(arc_level, kind="stable").tolist() if not np.isnan(arc_level[i])]
    slowest = float(alloc.rate.min()) if len(alloc.rate) else 0.0
    first = arc_level[full[0]] if full else np.inf
    return Result(fabric.label, demand.name, demand.flows, float(alloc.rate @ demand.weight), slowest,
                  maxmin.exchange_time(alloc, exchange_bytes * 8 / 1e9),
                  [arcs[i] for i in full if arc_level[i] <= first * (1 + 1e-9)],
                  host_bound=not full or first > slowest * (1 + 1e-9))
