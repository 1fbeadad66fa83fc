"""What `emulate --traffic` predicts: TCP's long-run rates on the plan's routes, in the
bytes a shaped link really carries for TCP.

tbf counts whole frames, and a TCP flow's frames are not only its data: its receiver's
ACKs travel the reverse path and take their share of every link they cross. In all-to-all
and in a permutation every host both sends and receives, so the reverse direction of a
bottleneck is itself loaded and the ACKs come out of its capacity (measured on the emulated
host links: the sending side 0.96-0.99 busy while the payload was 0.92 of the data-only
prediction). So each flow here crosses its path's resources with one full frame per
segment and the reverse path's with one pure ACK per segment (Linux ACKs every segment
when a flow's segments are further apart than its delayed-ACK timer, as they are at these
rates). The payload is then 1448 bytes of every 1514-byte frame.

The rates are proportionally fair over those resources (perf/propfair.py), not max-min:
TCP through FIFO queues does not give a flow that crosses several full links the share of
the flows that cross one (docs/method.md, "Throughput", says why proportional fairness is
what these queues give). Beside it, the max-min aggregate (the model `analyze` reports)
and the largest aggregate any allocation gives (`max_mbit`, a linear program on the same
links): proportional fairness lies between the two, and where they are equal (every
bottleneck saturated whatever the shares) all three are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from vlanroute.emulate.flowagent import ACK, FRAME, GOODPUT
from vlanroute.perf import maxmin, propfair
from vlanroute.perf.evaluate import problem_of
from vlanroute.perf.fabric import Fabric
from vlanroute.perf.patterns import Demand



@dataclass(frozen=True)
class Prediction:
    aggregate_mbit: float     # TCP payload, every flow summed, proportionally fair (the TCP model)
    slowest_mbit: float
    max_mbit: float           # the largest aggregate any allocation of these links gives
    maxmin_mbit: float        # the same links max-min fair (the throughput model of `analyze`)
    maxmin_slowest_mbit: float


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


def tcp_problem(fabric: Fabric, demand: Demand, ack_bytes: float = ACK) -> maxmin.Problem:
    """problem_of's resources and groups, each group also crossing its reverse path with
    one ACK per data frame (ack_bytes / FRAME of its rate)."""
    problem = problem_of(fabric, demand)
    ends = len(demand.end_switch)
    data = problem.incidence.tocoo()
    rev = reverse_rows(fabric, ends)
    keep = rev[data.row] >= 0
    acks = sparse.csr_matrix((np.full(int(keep.sum()), ack_bytes / FRAME), (rev[data.row[keep]], data.col[keep])),
                             shape=data.shape)
    return maxmin.Problem((problem.incidence + acks).tocsr(), problem.capacity, problem.weight, problem.cap)


def predict(fabric: Fabric, demand: Demand, ack_bytes: float = ACK) -> Prediction:
    """TCP payload rates (Mbit/s at the fabric's speed) with each segment's ACK on the
    reverse path: proportionally fair, and beside it max-min and the largest aggregate."""
    both = tcp_problem(fabric, demand, ack_bytes)
    fair, even = propfair.solve(both).rate, maxmin.solve(both).rate
    scale = 1000 * GOODPUT            # Gb/s of frames -> Mbit/s of payload

    def slowest(rate: np.ndarray) -> float:
        return float(rate.min()) * scale if len(rate) else 0.0
    return Prediction(float(fair @ demand.weight) * scale, slowest(fair), max_aggregate(both) * scale,
                      float(even @ demand.weight) * scale, slowest(even))


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
