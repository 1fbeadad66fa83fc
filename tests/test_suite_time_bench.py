"""bench/suite_time.py: the suite's work from a --durations log and the worksteal schedule it
simulates (what tells whether reordering can still shorten the suite)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bench_scripts import bench_module

suite_time = bench_module("suite_time.py", "suite_time")


def test_durations_add_set_up_call_and_teardown_and_keep_ids_with_spaces() -> None:
    log = ("============ slowest durations ============\n"
           "12.50s call     tests/test_a.py::test_x[6x6 torus, 3 cables gone]\n"
           "0.50s setup    tests/test_a.py::test_x[6x6 torus, 3 cables gone]\n"
           "3.00s teardown tests/test_b.py::test_y\n"
           "(12 durations < 0.005s hidden.)\n")
    assert suite_time.durations(log) == {"tests/test_a.py::test_x[6x6 torus, 3 cables gone]": 13.0,
                                         "tests/test_b.py::test_y": 3.0}


def test_the_order_is_conftests() -> None:
    # The longest heads the first half, whose other tests are the shortest, in collection
    # order; the second half is the next-longest, longest first.
    ids = ["a", "b", "c", "d", "e", "f"]
    expected = {"a": 1, "b": 50, "c": 2, "d": 30, "e": 0, "f": 40}
    assert suite_time.longest_first(ids, expected) == ["b", "a", "e", "f", "d", "c"]


def test_a_known_schedule() -> None:
    # Worker 1 runs x (10 s); worker 2 runs its three 1-s tests, then takes half of what is
    # left of worker 1's queue beyond the 2 it keeps.
    order = ["x", "p", "q", "r", "s", "t", "u", "v"]
    seconds = {"x": 10.0, **{k: 1.0 for k in "pqrstuv"}}
    ends, ran = suite_time.worksteal(order, seconds)
    assert ran == [["x", "p"], ["s", "t", "u", "v", "q", "r"]]
    assert ends == [11.0, 6.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=100.0, allow_nan=False), min_size=1, max_size=40),
       st.sampled_from([2, 3]))
def test_every_test_runs_once_and_the_wall_time_is_within_its_bounds(times: list[float], workers: int) -> None:
    ids = [f"t{i}" for i in range(len(times))]
    seconds = dict(zip(ids, times, strict=True))
    order = suite_time.longest_first(ids, seconds, workers) if len(ids) >= 2 * workers else ids
    ends, ran = suite_time.worksteal(order, seconds, workers)
    total = sum(times)
    # No test lost or run twice, and the wall time lies between the bound and the total.
    assert len(ends) == workers
    assert sorted(i for r in ran for i in r) == sorted(ids)
    assert max(ends) >= max(total / workers, max(times)) - 1e-6
    assert max(ends) <= total + 1e-6
