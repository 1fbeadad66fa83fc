"""What `emulate --traffic` predicts: the max-min model (vlanroute.perf) in the bytes a
shaped link really carries for TCP.

tbf counts whole frames, and a TCP flow's frames are not only its data: its receiver's
ACKs travel the reverse path and take their share of every link they cross. In all-to-all
and in a permutation every host both sends and receives, so the reverse direction of a
bottleneck is itself loaded and the ACKs come out of its capacity (measured on the emulated
host links: the sending side 0.96-0.99 busy while the payload was 0.92 of the data-only
prediction). So each flow here crosses its path's resources with one full frame per
segment and the reverse path's with one pure ACK per segment (Linux ACKs every segment
when a flow's segments are further apart than its delayed-ACK timer, as they are at these
rates), and the rates are max-min fair over that (progressive filling works the same with
these weights). The payload is then 1448 bytes of every 1514-byte frame.

TCP through FIFO queues is not max-min fair: a flow that crosses several loaded links gets
less than its max-min share, and the flows it leaves room for get more, so the aggregate
lies between the max-min one and the largest any allocation gives (`max_mbit`, a linear
program on the same links). Where the two are equal (every bottleneck saturated whatever
the shares: all-to-all here, most permutations on the plan) the aggregate is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from vlanroute.emulate.flowagent import ACK, FRAME, GOODPUT
from vlanroute.perf import maxmin
from vlanroute.perf.evaluate import problem_of
from vlanroute.perf.fabric import Fabric
from vlanroute.perf.patterns import Demand



@dataclass(frozen=True)
class Prediction:
    aggregate_mbit: float     # TCP payload, every flow summed, max-min fair
    slowest_mbit: float
    max_mbit: float           # the largest aggregate any allocation of these links gives


def reverse_rows(fabric: Fabric, ends: int) -> np.ndarray:
    """For each resource of problem_of's layout, the one its ACKs cross: an endpoint's
    uplink <-> its downlink, arc (u, v) <-> arc (v, u); -1 where there is none."""
    arcs = fabric.arcs()
    index = {a: i for i, a in enumerate(arcs)}
    rev = np.full(2 * ends + len(arcs), -1, dtype=np.int64)
    rev[:ends] = np.arange(ends, 2 * ends)
    rev[ends:2 * ends] = np.arange(ends)
    for i, (u, v) in enumerate(arcs):
        j = index.get((v, u))
        if j is not None:
            rev[2 * ends + i] = 2 * ends + j
    return rev


def predict(fabric: Fabric, demand: Demand, ack_bytes: float = ACK) -> Prediction:
    """Max-min fair TCP payload rates (Mbit/s at the fabric's speed) with each segment's
    ACK on the reverse path."""
    problem = problem_of(fabric, demand)
    ends = len(demand.end_switch)
    data = problem.incidence.tocoo()
    rev = reverse_rows(fabric, ends)
    keep = rev[data.row] >= 0
    acks = sparse.csr_matrix((np.full(int(keep.sum()), ack_bytes / FRAME), (rev[data.row[keep]], data.col[keep])),
                             shape=data.shape)
    both = maxmin.Problem((problem.incidence + acks).tocsr(), problem.capacity, problem.weight, problem.cap)
    alloc = maxmin.solve(both)
    scale = 1000 * GOODPUT            # Gb/s of frames -> Mbit/s of payload
    slowest = float(alloc.rate.min()) if len(alloc.rate) else 0.0
    return Prediction(float(alloc.rate @ demand.weight) * scale, slowest * scale, max_aggregate(both) * scale)


def max_aggregate(problem: maxmin.Problem) -> float:
    """max sum(weight x rate) with every resource within its capacity and every flow within
    the cap: the throughput no allocation can beat."""
    from scipy.optimize import linprog
    w = problem.weight.astype(float)
    if not len(w):
        return 0.0
    cap = None if not np.isfinite(problem.cap) else problem.cap
    res = linprog(-w, A_ub=sparse.csr_matrix(problem.incidence.multiply(w[np.newaxis, :])), b_ub=problem.capacity,
                  bounds=[(0, cap)] * len(w), method="highs")
    if not res.success:
        raise ValueError(f"the maximum throughput has no solution: {res.message}")
    return float(-res.fun)
