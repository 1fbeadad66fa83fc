"""Proportionally fair rates: maximise sum(weight x log rate) within every resource's capacity.

The allocation long-lived TCP flows approach through FIFO queues (Kelly, Maulloo and Tan,
"Rate control for communication networks", J. Oper. Res. Soc. 49, 1998); why it, not
max-min, is what `emulate --traffic` measures against is in docs/method.md ("Throughput").
Max-min (perf/maxmin.py) stays the model `analyze` reports.

Solved through the dual (Kelly et al., section 2; Low and Lapsley, IEEE/ACM ToN 7(6),
1999): each resource l has a price p_l >= 0; a group whose flows cross resources with
coefficients a_lg pays q_g = sum_l a_lg p_l per unit of rate and its best rate is
1 / q_g (the log's derivative), within [0, the most it can carry alone]. The dual
D(p) = sum_g w_g (log x_g(p) - q_g x_g(p)) + sum_l c_l p_l is convex and smooth, its
gradient c - A (w x) is each resource's spare capacity; L-BFGS-B minimises it over p >= 0.
The log is strictly concave, so the allocation is unique.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from vlanroute.perf.maxmin import FloatArray, Problem


@dataclass(frozen=True)
class Allocation:
    rate: FloatArray       # per flow of each group
    price: FloatArray      # per resource: its dual price (0 where it is not full)


def group_bounds(problem: Problem) -> FloatArray:
    """The most a group's flow can carry alone: the cap, and each resource it crosses."""
    a = problem.incidence.tocsc()
    bound = np.full(a.shape[1], problem.cap, dtype=float)
    for g in range(a.shape[1]):
        rows = a.indices[a.indptr[g]:a.indptr[g + 1]]
        coef = a.data[a.indptr[g]:a.indptr[g + 1]]
        use = coef > 0
        if use.any():
            bound[g] = min(bound[g], float(np.min(problem.capacity[rows[use]] / (coef[use] * problem.weight[g]))))
    if not np.all(np.isfinite(bound)):
        raise ValueError("a flow crosses no resource and has no cap: its rate is unbounded")
    return bound


def solve(problem: Problem, tol: float = 1e-10) -> Allocation:
    a = problem.incidence.tocsr()
    groups = a.shape[1]
    if not groups:
        return Allocation(np.zeros(0), np.zeros(a.shape[0]))
    # Work in units of the largest capacity, so that prices are of the order of flow counts.
    unit = float(problem.capacity.max())
    cap = problem.capacity / unit
    w = problem.weight.astype(float)
    bound = group_bounds(problem) / unit
    at = a.T.tocsr()

    def rates(price: FloatArray) -> FloatArray:
        q = at @ price
        with np.errstate(divide="ignore"):
            return np.minimum(np.where(q > 0, 1 / np.where(q > 0, q, 1), np.inf), bound)

    def dual(price: FloatArray) -> tuple[float, FloatArray]:
        x = rates(price)
        q = at @ price
        value = float(np.sum(w * (np.log(x) - q * x)) + price @ cap)
        return value, cap - a @ (w * x)

    start = np.full(a.shape[0], float(w.sum()) / a.shape[0])
    price = _minimise(dual, start, tol)
    x = rates(price)
    # The dual's optimum is met to its tolerance: scale onto the capacities, so that what we
    # report is feasible and its bottleneck full (the factor is 1 to about 1e-6; scaling up
    # as well as down gains what the tolerance left unused).
    load = a @ (w * x)
    over = float(np.max(load / cap))
    if over > 0:
        x = np.minimum(x / over, bound) if over < 1 else x / over
    return Allocation(x * unit, price / unit)


def _minimise(dual: Callable[[FloatArray], tuple[float, FloatArray]], start: FloatArray, tol: float,
              restarts: int = 20) -> FloatArray:
    """L-BFGS-B over p >= 0, restarted from where it stopped until the projected gradient is
    within tol.

    The dual is not strictly convex when there are more resources than groups (prices along
    A's null space change nothing), and L-BFGS-B's line search can then stop on "relative
    reduction of F" far from the optimum, its curvature pairs stale: on a 5-resource,
    3-group problem it stopped with a projected gradient of 3e-3 and a sum of logs 0.065
    below the optimum. A restart drops the stale pairs; the second run converged there.
    """
    price = start
    bounds = [(0.0, None)] * len(start)
    for _ in range(restarts):
        res = minimize(dual, price, jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 10000, "maxcor": 30, "ftol": tol * 1e-5, "gtol": tol})
        price, grad = res.x, res.jac        # the gradient at res.x, as L-BFGS-B last evaluated it
        # Projected gradient: at a zero price only a negative slope (more spare capacity
        # bought by lowering the price further) is not yet optimal.
        if float(np.max(np.abs(np.where(price > 0, grad, np.minimum(grad, 0))))) <= tol * 10:
            break
    return price
