"""emulate/tcpmodel.py (TCP's rates, proportionally fair, and the max-min ones beside them,
with each segment's ACK on the reverse path) and emulate/flowagent.py (every flow in one
process, counted by the kernel)."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.emulate import flowagent, tcpmodel
from vlanroute.perf.evaluate import evaluate
from vlanroute.perf.fabric import from_trees
from vlanroute.perf.patterns import all_to_all, host_pairs, permutation

MBIT = 0.001          # the fabrics' speed in Gb/s: 1 Mbit/s


def line(n: int):  # type: ignore[no-untyped-def]
    """n switches in a line, one host each, every tree the line itself."""
    switches = [f"s{i}" for i in range(n)]
    trees = {}
    for r in range(n):
        parent = {}
        for i in range(n):
            if i != r:
                parent[switches[i]] = switches[i - 1] if i > r else switches[i + 1]
        trees[switches[r]] = parent
    cables = {(switches[i], switches[i + 1]): 1 for i in range(n - 1)}
    cables |= {(b, a): c for (a, b), c in list(cables.items())}
    return from_trees("line", switches, [(f"h{i}", s) for i, s in enumerate(switches)], trees, cables, speed=MBIT)


@given(st.integers(2, 6), st.integers(0, 50))
@settings(max_examples=25, deadline=None)
def test_without_acks_its_max_min_is_the_analyze_model_times_the_payload_share(n: int, seed: int) -> None:
    fabric = line(n)
    for demand in (all_to_all(fabric), permutation(fabric, seed)):
        got = tcpmodel.predict(fabric, demand, ack_bytes=0)
        assert got.maxmin_mbit == pytest.approx(evaluate(fabric, demand).aggregate * 1000 * 1448 / 1514)


def test_two_hosts_exchanging_share_each_link_with_the_other_flows_acks() -> None:
    # h0 -> h1 and h1 -> h0: every direction of every link carries one flow's frames and the
    # other's ACKs, so r * (1514 + 66) / 1514 = 1 Mbit/s and the payload is 1448/1580 of it.
    fabric = line(2)
    got = tcpmodel.predict(fabric, host_pairs("both ways", fabric, [(0, 1), (1, 0)]))
    for aggregate in (got.aggregate_mbit, got.maxmin_mbit, got.max_mbit):
        assert aggregate == pytest.approx(2 * 1448 / (1514 + 66), rel=1e-6)
    assert got.slowest_mbit == pytest.approx(1448 / (1514 + 66), rel=1e-6)


def test_one_way_flow_has_its_acks_on_idle_links() -> None:
    fabric = line(3)
    got = tcpmodel.predict(fabric, host_pairs("one way", fabric, [(0, 2)]))
    assert got.aggregate_mbit == pytest.approx(1448 / 1514, rel=1e-6)
    assert got.maxmin_mbit == pytest.approx(1448 / 1514)


def test_acks_cost_at_most_their_share_of_a_frame() -> None:
    fabric = line(4)
    demand = all_to_all(fabric)
    plain = tcpmodel.predict(fabric, demand, ack_bytes=0).maxmin_mbit
    acked = tcpmodel.predict(fabric, demand).maxmin_mbit
    assert plain * 1514 / (1514 + 66) - 1e-9 <= acked < plain


@pytest.mark.root
def test_flows_run_in_one_process_and_the_kernel_counts_them() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    tag = uuid.uuid4().hex[:6]
    a, b = f"vrtm{tag}a", f"vrtm{tag}b"
    script = [["ip", "netns", "add", a], ["ip", "netns", "add", b],
              ["ip", "link", "add", "x", "netns", a, "type", "veth", "peer", "name", "y", "netns", b],
              ["ip", "-n", a, "addr", "add", "10.99.0.1/24", "dev", "x"],
              ["ip", "-n", b, "addr", "add", "10.99.0.2/24", "dev", "y"],
              ["ip", "-n", a, "link", "set", "x", "up"], ["ip", "-n", b, "link", "set", "y", "up"]]
    try:
        for argv in script:
            subprocess.run(argv, check=True, capture_output=True)
        flows = [flowagent.Flow(a, "10.99.0.1", b, "10.99.0.2"), flowagent.Flow(b, "10.99.0.2", a, "10.99.0.1"),
                 flowagent.Flow(a, "10.99.0.1", b, "10.99.0.2")]
        counts = flowagent.run_flows(flows, 7079, 0.3, 1.0, devices={a: "x", b: "y"})
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    assert counts.window_s == pytest.approx(1.0, abs=0.5)
    assert all(n > 0 for n in counts.received), counts
    # What the receivers got crossed the wire inside the window: the veth counted the
    # payload plus headers in the direction of each flow (the readings are ms apart: 10 %).
    assert counts.host_bytes[a][1] >= 0.9 * (counts.received[0] + counts.received[2])
    assert counts.host_bytes[b][1] >= 0.9 * counts.received[1]


def test_tcp_gives_the_long_flow_less_than_max_min_and_more_than_the_largest_aggregate() -> None:
    # h0 -> h2 crosses both cables of the line, h0 -> h1 and h1 -> h2 one each: max-min gives
    # every flow 1/2 (1.5 in all), proportional fairness the long flow 1/3 and the short
    # ones 2/3 (max log a + 2 log b with a + b = 1: 5/3 in all), the largest aggregate
    # starves the long flow (2).
    fabric = line(3)
    got = tcpmodel.predict(fabric, host_pairs("long and short", fabric, [(0, 2), (0, 1), (1, 2)]), ack_bytes=0)
    assert got.maxmin_mbit == pytest.approx(1.5 * 1448 / 1514)
    assert got.maxmin_slowest_mbit == pytest.approx(0.5 * 1448 / 1514)
    assert got.aggregate_mbit == pytest.approx(5 / 3 * 1448 / 1514, rel=1e-6)
    assert got.slowest_mbit == pytest.approx(1 / 3 * 1448 / 1514, rel=1e-6)
    assert got.max_mbit == pytest.approx(2 * 1448 / 1514)


@given(st.integers(2, 6), st.integers(0, 50))
@settings(max_examples=20, deadline=None)
def test_neither_model_beats_the_largest_aggregate(n: int, seed: int) -> None:
    fabric = line(n)
    for demand in (all_to_all(fabric), permutation(fabric, seed)):
        got = tcpmodel.predict(fabric, demand)
        assert got.maxmin_mbit <= got.max_mbit * (1 + 1e-6)
        assert got.aggregate_mbit <= got.max_mbit * (1 + 1e-6)
