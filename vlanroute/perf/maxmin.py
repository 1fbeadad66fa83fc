"""Max-min fair rates by progressive filling (water-filling), vectorised over flow groups.

A *group* is a set of identical flows (same resources, same demand): `weight` of them.
Max-min fairness treats identical flows alike (the allocation is unique and symmetric), so
a group has one rate and each resource it crosses carries weight x rate. This is what makes
all-to-all on 4,096 hosts (16 M flows) a problem of 65,536 groups (one per switch pair).

Progressive filling: every unfrozen group rises at the same rate until a resource is full
(its residual capacity divided by the weight of the unfrozen groups through it is the
smallest) or the per-flow cap is reached; the groups through a full resource freeze at
that level; repeat. The result is the max-min fair allocation (Bertsekas and Gallager,
Data Networks, 2nd ed., section 6.5.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

REL_EPS = 1e-9     # a resource counts as full when its residual is below this share of its capacity


@dataclass(frozen=True)
class Problem:
    """`incidence` is resources x groups (1 where a group's flows cross a resource);
    `capacity` per resource; `weight` = flows per group; `cap` = the most one flow can
    carry whatever the resources (one cable of a LAG), `inf` for none."""
    incidence: sparse.csr_matrix
    capacity: FloatArray
    weight: FloatArray
    cap: float = float("inf")


@dataclass(frozen=True)
class Allocation:
    rate: FloatArray           # per flow of each group
    saturated_at: FloatArray   # per resource: the level at which it filled, nan if never


def solve(problem: Problem, active: BoolArray | None = None) -> Allocation:
    """Max-min fair rate of each group (0 for groups not `active`)."""
    a = problem.incidence
    groups = a.shape[1]
    live = np.ones(groups, dtype=bool) if active is None else active.copy()
    rate = np.zeros(groups)
    residual = problem.capacity.astype(float).copy()
    saturated_at = np.full(a.shape[0], np.nan)
    at = a.T.tocsr()
    level = 0.0
    while live.any():
        load = a @ (problem.weight * live)               # weight of unfrozen flows per resource
        used = load > 0
        step = np.min(residual[used] / load[used]) if used.any() else np.inf
        step = max(min(step, problem.cap - level), 0.0)
        if not np.isfinite(step):
            raise ValueError("a flow crosses no resource and has no cap: its rate is unbounded")
        level += step
        rate[live] = level
        residual -= load * step
        full = used & (residual <= REL_EPS * problem.capacity) & np.isnan(saturated_at)
        saturated_at[full] = level
        if level >= problem.cap * (1 - REL_EPS):
            break
        hit = (at @ full.astype(float)) > 0
        frozen = live & hit
        if not frozen.any():             # rounding: freeze what the tightest resource holds
            tight = used & (residual <= residual[used].min() + REL_EPS * problem.capacity)
            frozen = live & ((at @ tight.astype(float)) > 0)
            saturated_at[tight & np.isnan(saturated_at)] = level
        live &= ~frozen
    return Allocation(rate, saturated_at)


def exchange_time(allocation: Allocation, bits: float) -> float:
    """Seconds until every flow has sent `bits` (a fluid model: no slow start, no losses).

    With equal sizes this is bits / the slowest rate even when rates are re-shared as flows
    finish: the slowest flow's full resource carries only flows at its rate (it has the
    largest rate there), they all finish together, and until then that resource stays full.
    """
    slowest = float(allocation.rate.min()) if len(allocation.rate) else 0.0
    return bits / slowest if slowest > 0 else (0.0 if not len(allocation.rate) else float("inf"))
