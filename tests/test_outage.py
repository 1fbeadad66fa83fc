"""The outage arithmetic of the outage bench (vlanroute/emulate/outage.py) on synthetic
probe timestamps, every expected figure worked out by hand in the comments; the spanning
tree's cut pairs against networkx; and the probe processes (emulate/probes.py) on a real
veth between two namespaces (root), a cable down for a known time."""

from __future__ import annotations

import math
import os
import subprocess
import time
from types import SimpleNamespace

import networkx as nx
import pytest

from vlanroute.emulate.outage import NS, ProbeRecord, fmt_s, nearest_rank, pair_outage, pair_outages, summarize
from vlanroute.emulate.outagerun import tree_cut_pairs

MS = 1_000_000
T0 = 1_700_000_000 * NS                      # any CLOCK_REALTIME instant
ROUNDS = [T0 + r * 10 * MS for r in range(12)]   # a round every 10 ms: round r sent at r * 10 ms
GUARD = 200 * MS


def at(r: int, late_ms: float = 1.0) -> tuple[int, int]:
    """Round r's datagram, arriving `late_ms` after it was sent."""
    return (r, ROUNDS[r] + int(late_ms * MS))


def test_a_pair_that_loses_nothing_is_not_interrupted() -> None:
    o = pair_outage(("a", "b"), ROUNDS, [at(r) for r in range(12)], cut_ns=T0 + 45 * MS, guard_ns=GUARD)
    assert not o.interrupted and o.outage_s is None and o.lost == 0 and o.restored and o.delivering_at_end


def test_outage_is_last_delivery_before_to_first_after() -> None:
    # Rounds 5, 6, 7 (sent at 50, 60, 70 ms) lost; the cut at 45 ms. Last before: round 4,
    # arrived 41 ms; first after: round 8, arrived 80 + 2 = 82 ms. Outage 82 - 41 = 41 ms;
    # from the cut 82 - 45 = 37 ms.
    got = [at(r) for r in range(5)] + [at(r, 2.0) for r in range(8, 12)]
    o = pair_outage(("a", "b"), ROUNDS, got, cut_ns=T0 + 45 * MS, guard_ns=GUARD)
    assert o.interrupted and o.restored
    assert o.outage_s == pytest.approx(0.041) and o.restore_s == pytest.approx(0.037)
    assert (o.lost, o.later_lost, o.lost_before, o.duplicates) == (3, 0, 0, 0)


def test_a_pair_never_restored() -> None:
    # Nothing after round 4: rounds 5..11 (7 probes) lost, no first delivery after.
    o = pair_outage(("a", "b"), ROUNDS, [at(r) for r in range(5)], cut_ns=T0 + 45 * MS, guard_ns=GUARD)
    assert o.interrupted and not o.restored and o.outage_s is None and o.lost == 7
    assert not o.delivering_at_end


def test_a_loss_long_before_the_cut_is_not_the_outage() -> None:
    # Round 1 (10 ms) lost, the cut at 110 ms with a 20 ms guard: 10 < 110 - 20, so it is a
    # loss before the cut; nothing lost after: not interrupted.
    got = [at(r) for r in range(12) if r != 1]
    o = pair_outage(("a", "b"), ROUNDS, got, cut_ns=T0 + 110 * MS, guard_ns=20 * MS)
    assert not o.interrupted and o.lost_before == 1 and o.lost == 0


def test_losses_of_the_warm_up_are_not_counted() -> None:
    # Rounds 0 and 1 lost while the switches set up their flows; every pair delivered from
    # 15 ms on (start_ns): not lost before the cut, not the start of the outage.
    got = [at(r) for r in range(2, 5)] + [at(r) for r in range(8, 12)]
    o = pair_outage(("a", "b"), ROUNDS, got, cut_ns=T0 + 45 * MS, guard_ns=GUARD, start_ns=T0 + 15 * MS)
    assert (o.lost, o.lost_before) == (3, 0) and o.outage_s == pytest.approx((81 - 41) / 1000)


def test_the_loss_run_the_cut_falls_in_starts_before_the_guard() -> None:
    # Rounds 3, 4, 5 (30, 40, 50 ms) lost, the cut at 45 ms, guard 10 ms: round 3 was sent
    # before 45 - 10 = 35 ms but is part of the same run of losses, so the outage runs from
    # round 2 (arrived 21 ms) to round 6 (arrived 61 ms): 40 ms; none lost before the cut.
    got = [at(r) for r in range(12) if r not in (3, 4, 5)]
    o = pair_outage(("a", "b"), ROUNDS, got, cut_ns=T0 + 45 * MS, guard_ns=10 * MS)
    assert o.outage_s == pytest.approx(0.040) and (o.lost, o.lost_before) == (3, 0)


def test_later_losses_and_duplicates_are_counted_apart() -> None:
    # Lost 5 and 6, round 7 back (arrived 71 ms), round 9 lost again; round 2 arrived twice
    # (21 and 23 ms). Outage: 71 - 41 = 30 ms; 3 lost, of which 1 after the restoration.
    got = [at(r) for r in range(5)] + [at(2, 3.0), at(7), at(8), at(10), at(11)]
    o = pair_outage(("a", "b"), ROUNDS, got, cut_ns=T0 + 45 * MS, guard_ns=GUARD)
    assert o.outage_s == pytest.approx(0.030)
    assert (o.lost, o.later_lost, o.duplicates) == (3, 1, 1)


def test_the_outage_uses_arrival_times() -> None:
    # Round 4 arrives 9 ms late (49 ms); rounds 5 to 7 lost; round 8, held in a queue, arrives
    # at 200 ms, after round 9 (91 ms): the first delivery after is round 9's, 91 - 49 = 42 ms.
    got = [at(r) for r in range(4)] + [at(4, 9.0), at(8, 120.0), at(9), at(10), at(11)]
    o = pair_outage(("a", "b"), ROUNDS, got, cut_ns=T0 + 45 * MS, guard_ns=GUARD)
    assert o.outage_s == pytest.approx(0.042) and o.lost == 3


def test_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert [nearest_rank(values, q) for q in (50, 90, 99, 100)] == [5.0, 9.0, 10.0, 10.0]
    assert nearest_rank([3.0], 50) == 3.0 and math.isnan(nearest_rank([], 50))
    assert nearest_rank([1.0, math.inf], 50) == 1.0 and nearest_rank([1.0, math.inf], 90) == math.inf


def test_summary_counts_never_restored_pairs_as_infinite() -> None:
    # Four pairs: 41 ms, 30 ms, never restored, and one not interrupted. Over the three
    # interrupted: nearest-rank median = the 2nd of (30, 41, inf) = 41 ms; p90 = the 3rd: never.
    outage41 = [at(r) for r in range(5)] + [at(r, 2.0) for r in range(8, 12)]
    outage30 = [at(r) for r in range(5)] + [at(r) for r in range(7, 12)]
    never = [at(r) for r in range(5)]
    fine = [at(r) for r in range(12)]
    rec = ProbeRecord([("a", "b"), ("b", "a"), ("a", "c"), ("c", "a")], 0.01, ROUNDS,
                      [outage41, outage30, never, fine], cut_ns=T0 + 45 * MS)
    outs = pair_outages(rec, guard_s=0.2)
    s = summarize("x", rec, outs, timeout_s=5.0)
    assert (s.pairs, s.interrupted, s.never_restored) == (4, 3, 1)
    assert s.median_s == pytest.approx(0.041) and s.p90_s is None and s.max_s is None
    assert s.lost == 3 + 2 + 7 and s.achieved_interval_s == pytest.approx(0.010)
    assert fmt_s(s.median_s) == "41 ms" and fmt_s(None) == "never" and fmt_s(12.34) == "12.3 s"


def test_tree_cut_pairs_are_the_pairs_the_cut_link_separates() -> None:
    # A 3 x 3 torus' BFS tree from s0; for every tree link, the host pairs on both sides of
    # it, against networkx's components; a link outside the tree cuts nothing.
    g = nx.grid_2d_graph(3, 3, periodic=True)
    name = {v: f"s{i}" for i, v in enumerate(sorted(g))}
    g = nx.relabel_nodes(g, name)
    tree = nx.bfs_tree(g, "s0")
    parent = {v: u for u, v in tree.edges}
    hosts = {f"h{i}{k}": SimpleNamespace(switch=s) for i, s in enumerate(sorted(g)) for k in range(2)}
    spec = SimpleNamespace(switches=sorted(g), hosts=hosts)
    for a, b in g.edges:
        got = tree_cut_pairs(spec, parent, (a, b))  # type: ignore[arg-type]
        if not tree.has_edge(a, b) and not tree.has_edge(b, a):
            assert got == set()
            continue
        cut = tree.to_undirected()
        cut.remove_edge(a, b)
        side = nx.node_connected_component(cut, a)
        want = {(x, y) for x, hx in hosts.items() for y, hy in hosts.items()
                if x != y and (hx.switch in side) != (hy.switch in side)}
        assert got == want and want


@pytest.mark.root
def test_probes_measure_a_cable_down_for_a_known_time() -> None:
    """Two namespaces, one veth: probes both ways every 10 ms, the cable down for 300 ms
    (one end set down: the carrier goes at both), then up. Both pairs are interrupted, the
    outage is 300 ms plus the kernel's carrier work and up to two intervals, and the
    sender kept its pace. Permanent ARP entries, as the emulation's hosts have: without
    them the carrier loss flushes B's entry for A and B's kernel holds its datagrams while
    it resolves A again, so they arrive late instead of being lost."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    from vlanroute.emulate import netns
    from vlanroute.emulate.outagerun import set_down
    from vlanroute.emulate.probes import Probes, make_sockets, record
    a, b = f"vrt{os.getpid()}a", f"vrt{os.getpid()}b"
    netns.batch("ip", [f"netns add {a}", f"netns add {b}"])
    try:
        mac = {a: "02:00:00:09:00:01", b: "02:00:00:09:00:02"}
        addr = {a: "10.9.0.1", b: "10.9.0.2"}
        netns.batch("ip", [f"link add e0 address {mac[a]} netns {a} type veth peer name e0 address {mac[b]} netns {b}"])
        for ns, other in ((a, b), (b, a)):
            with netns.inside(ns):
                netns.configure_ipv4("lo", "", 8)
                netns.configure_ipv4("e0", addr[ns], 24)
                netns.static_arp([netns.arp_request("e0", addr[other], mac[other])])
        time.sleep(1.0)                           # linkwatch: the carrier is acted on
        socks = make_sockets({"A": (a, "10.9.0.1"), "B": (b, "10.9.0.2")})
        probes = Probes([("A", "B"), ("B", "A")], socks, {"A": "10.9.0.1", "B": "10.9.0.2"}, 0.01, 10)
        probes.start()
        time.sleep(1.0)
        cut = time.time_ns()
        with netns.inside(a):
            set_down("e0")
        time.sleep(0.3)
        subprocess.run(["ip", "-n", a, "link", "set", "e0", "up"], check=True)
        time.sleep(1.5)
        assert all(probes.delivering(time.time_ns() - 500 * MS))
        rounds, deliveries = probes.stop()
        outs = pair_outages(record(probes, rounds, deliveries, cut, cut), guard_s=0.05)
        for s in socks.values():
            s.close()
    finally:
        netns.delete_all([a, b])
    assert len(rounds) > 200                      # 2.8 s at 10 ms: at least 200 rounds even when busy
    for o in outs:
        assert o.interrupted and o.restored and o.duplicates == 0
        assert o.outage_s is not None and 0.3 <= o.outage_s < 2.5


def test_the_setup_and_the_probe_record_cross_the_vm_boundary_unchanged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The VM gets the setup as JSON and writes the probe records back as JSON (the host
    computes the outages): both read back equal."""
    import json

    from vlanroute.emulate.failplan import Failure
    from vlanroute.emulate.outagerun import ProbeSettings, Setup, Stage
    from vlanroute.emulate.probes import load, save
    stages = [Stage(Failure(pair=("sw1", "sw2")), [("a", "b"), ("b", "a")], 10, [("sw2", "sw6")],
                    {"steps": [["sw1", "add", "bond1", 101]], "relearn": [101]}),
              Stage(Failure(switch="sw3"), [("c", "d"), ("d", "c")], 4, [], {"delta": None}, ["vlanroute"])]
    setup = Setup(stages, ["vlanroute", "rstp"], ProbeSettings(interval_s=0.02), stp_timers="fastest",
                  model_root="sw1", model_blocked=[("sw3", "sw4")], ovs_datapath="netdev", heal="m:f")
    assert Setup.from_json(json.loads(json.dumps(setup.to_json()))) == setup
    rec = ProbeRecord([("a", "b")], 0.01, ROUNDS, [[at(0), at(1), at(1, 3.0)]], T0 + 45 * MS, T0 + 46 * MS, 2,
                      T0 + 5 * MS)
    save(rec, tmp_path / "r.json")
    assert load(tmp_path / "r.json") == rec
