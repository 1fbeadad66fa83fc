"""The HiGHS that scipy bundles, called directly: the model's arrays handed over as they are,
without linprog's checks and conversions of its inputs (which cost about as much as HiGHS'
own solve on the order LPs of 24-switch fabrics) and with options linprog does not expose.

scipy's module is private (scipy/optimize/_highspy, since scipy 1.15), so every caller
keeps a path through linprog for when `solve` raises ImportError, AttributeError or
TypeError (`DIRECT_UNAVAILABLE`): an older scipy, or a later one that changed it.
Importing this module imports no scipy (which costs about 0.6 s): `solve` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy.sparse import csc_matrix

# what `solve` raises where scipy's private module is missing or not as expected
DIRECT_UNAVAILABLE = (ImportError, AttributeError, TypeError)

# linprog(method="highs-ds")'s options (scipy/optimize/_linprog_highs.py): the same options
# and the same arrays give the same bits as linprog
DUAL_SIMPLEX: tuple[tuple[str, object], ...] = (
    ("presolve", "on"), ("solver", "simplex"), ("highs_debug_level", 0),
    ("log_to_console", False), ("output_flag", False), ("simplex_strategy", 1))


@dataclass(frozen=True)
class Solved:
    """An LP's solution: its status ("optimal", "infeasible", else HiGHS' words), objective,
    column values, row duals and simplex iterations (0 where no simplex ran)."""

    status: str
    objective: float
    x: np.ndarray
    row_dual: np.ndarray
    iterations: int


def solve(a: csc_matrix, c: np.ndarray, col_upper: np.ndarray, capacity_rows: int, b_eq: np.ndarray,
          options: tuple[tuple[str, object], ...]) -> Solved:
    """min c x subject to A x with its first `capacity_rows` rows <= 0 and the others = b_eq,
    0 <= x <= col_upper (numpy's inf for none), under HiGHS `options`: the shape of every LP
    here (capacities, then conservation), rows stacked as linprog stacks A_ub (b_ub = 0) over
    A_eq. A column-wise."""
    from scipy.optimize._highspy import _core
    if not a.has_sorted_indices:
        a = a.sorted_indices()
    inf = _core.kHighsInf
    cols = a.shape[1]
    row_lower = np.concatenate([np.full(capacity_rows, -inf), b_eq])
    row_upper = np.concatenate([np.zeros(capacity_rows), b_eq])
    highs = _core._Highs()
    for name, value in options:
        highs.setOptionValue(name, value)
    # the arrays as they are (HighsLp's fields would be copied element by element)
    highs.passModel(cols, a.shape[0], a.nnz, int(_core.MatrixFormat.kColwise), int(_core.ObjSense.kMinimize),
                    0.0, c, np.zeros(cols), np.where(np.isinf(col_upper), inf, col_upper),
                    row_lower, row_upper,
                    a.indptr.astype(np.int32), a.indices.astype(np.int32), a.data, np.zeros(cols, np.int32))
    highs.run()
    status = highs.getModelStatus()
    if status == _core.HighsModelStatus.kInfeasible:
        return Solved("infeasible", float("nan"), np.zeros(0), np.zeros(0), 0)
    if status != _core.HighsModelStatus.kOptimal:
        return Solved(highs.modelStatusToString(status), float("nan"), np.zeros(0), np.zeros(0), 0)
    solution = highs.getSolution()
    info = highs.getInfo()
    return Solved("optimal", float(info.objective_function_value), np.array(solution.col_value),
                  np.array(solution.row_dual), int(info.simplex_iteration_count))
