"""perf/propfair.py: proportionally fair rates (max sum of weight x log rate), checked against
hand-solved cases and against a general constrained optimiser on random problems."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import minimize

from vlanroute.perf import maxmin, propfair


def problem(rows: list[list[int]], capacity: list[float], weight: list[float] | None = None,
            cap: float = float("inf")) -> maxmin.Problem:
    """rows[g] = the resources group g crosses (coefficient 1)."""
    m = np.zeros((len(capacity), len(rows)))
    for g, links in enumerate(rows):
        m[links, g] = 1.0
    return maxmin.Problem(sparse.csr_matrix(m), np.array(capacity), np.array(weight or [1.0] * len(rows)), cap)


def test_a_flow_across_two_full_links_gets_a_third() -> None:
    # max log a + 2 log b with a + b <= 1 (each link): a = 1/3, b = 2/3 (max-min: 1/2 each).
    rate = propfair.solve(problem([[0, 1], [0], [1]], [1.0, 1.0])).rate
    assert rate.tolist() == pytest.approx([1 / 3, 2 / 3, 2 / 3], rel=1e-6)


def test_one_bottleneck_is_shared_equally_and_a_group_weighs_its_count() -> None:
    assert propfair.solve(problem([[0]] * 4, [1.0])).rate.tolist() == pytest.approx([0.25] * 4, rel=1e-6)
    # 3 identical flows as one group and 1 other on a link of 2: 0.5 each, as 4 flows.
    assert propfair.solve(problem([[0], [0]], [2.0], [3.0, 1.0])).rate.tolist() == pytest.approx([0.5, 0.5], rel=1e-6)


def test_the_cap_and_a_lone_flow() -> None:
    assert propfair.solve(problem([[0]], [6.0], cap=1.0)).rate.tolist() == pytest.approx([1.0], rel=1e-6)
    # A link of 10 with one flow and a link of 1 with three: each link fills on its own.
    got = propfair.solve(problem([[0], [1], [1], [1]], [10.0, 1.0])).rate
    assert got.tolist() == pytest.approx([10.0, 1 / 3, 1 / 3, 1 / 3], rel=1e-6)


def test_fractional_coefficients_count_their_share() -> None:
    # Flow a crosses link 0 with its frames; flow b crosses it with 0.25 (its ACKs) and
    # link 1 (capacity 1) fully. With b = 1 and a = 0.75 both links are full and the prices
    # are non-negative (1/a = p0 = 4/3, 1/b = 0.25 p0 + p1, p1 = 2/3): the optimum.
    m = sparse.csr_matrix(np.array([[1.0, 0.25], [0.0, 1.0]]))
    got = propfair.solve(maxmin.Problem(m, np.array([1.0, 1.0]), np.array([1.0, 1.0]))).rate
    assert got.tolist() == pytest.approx([0.75, 1.0], rel=1e-6)


def test_an_unbounded_flow_is_refused() -> None:
    empty = maxmin.Problem(sparse.csr_matrix((1, 1)), np.array([1.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="unbounded"):
        propfair.solve(empty)


@st.composite
def random_problems(draw: st.DrawFn) -> maxmin.Problem:
    links = draw(st.integers(1, 6))
    groups = draw(st.integers(1, 8))
    m = np.zeros((links, groups))
    for g in range(groups):
        crossed = draw(st.lists(st.integers(0, links - 1), min_size=1, max_size=links, unique=True))
        for link in crossed:
            m[link, g] = draw(st.sampled_from([1.0, 1.0, 0.05, 2.0]))
    capacity = np.array([draw(st.floats(0.5, 4.0)) for _ in range(links)])
    weight = np.array([float(draw(st.integers(1, 4))) for _ in range(groups)])
    cap = draw(st.sampled_from([float("inf"), 1.5]))
    return maxmin.Problem(sparse.csr_matrix(m), capacity, weight, cap)


# L-BFGS-B once stopped on its line search here, 0.065 below the optimum's sum of logs, and
# the second flow crossed no full resource (propfair._minimise's restarts fix it).
@example(maxmin.Problem(sparse.csr_matrix(np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 2.0], [0.0, 0.05, 2.0],
                                                     [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])),
                        np.array([0.5, 0.5, 0.5, 0.5625, 3.0]), np.array([1.0, 1.0, 3.0])))
# Here the dual's precision ends with 1e-7 of a capacity unused: 1.1e-6 of a sum of logs of
# -42.5, within the relative tolerance below, not an absolute 1e-6.
@example(maxmin.Problem(sparse.csr_matrix(np.array([[0.0, 1.0, 1.0, 0.05, 0.0, 0.0, 0.05, 0.0],
                                                     [1.0, 0.0, 1.0, 1.0, 1.0, 0.05, 2.0, 0.05]])),
                        np.array([1.6015625, 1.9]), np.array([4.0, 2.0, 3.0, 4.0, 2.0, 1.0, 4.0, 4.0])))
@given(random_problems())
@settings(max_examples=60, deadline=None)
def test_it_is_the_optimum_a_general_solver_finds(p: maxmin.Problem) -> None:
    m, c, w = p.incidence.toarray(), p.capacity, p.weight
    got = propfair.solve(p).rate
    # Feasible: every resource within its capacity, every flow within the cap.
    assert np.all(m @ (w * got) <= c * (1 + 1e-9))
    assert np.all(got <= p.cap * (1 + 1e-9)) and np.all(got > 0)
    # Optimal: SLSQP on the primal (an independent method) finds no better sum of logs.
    upper = min(p.cap, float(c.max()))
    res = minimize(lambda x: -np.sum(w * np.log(x)), np.full(len(w), 1e-3), jac=lambda x: -w / x, method="SLSQP",
                   bounds=[(1e-9, upper)] * len(w), options={"ftol": 1e-12, "maxiter": 2000},
                   constraints=[{"type": "ineq", "fun": lambda x: c - m @ (w * x), "jac": lambda x: -m * w}])
    # (SLSQP may stop a hair outside the capacities, or report a line-search stop at the
    # optimum: its point is scaled into them before the comparison.)
    other = res.x / max(1.0, float(np.max(m @ (w * res.x) / c)))
    # Both solvers stop at double precision's reach, about 1e-8 of the objective's size.
    ours, theirs = np.sum(w * np.log(got)), np.sum(w * np.log(other))
    assert ours >= theirs - 1e-6 * max(1.0, abs(theirs) / 10)
    # Pareto efficient: each flow crosses a full resource or is at its cap.
    load = m @ (w * got)
    full = load >= c * (1 - 1e-5)
    assert all(got[g] >= p.cap * (1 - 1e-5) or (full & (m[:, g] > 0)).any() for g in range(len(w)))
