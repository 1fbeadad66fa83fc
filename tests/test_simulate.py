"""802.1Q simulator against hand-worked examples, and the MemoisedSimulator against BridgeNetwork.send()."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from vlanroute.verify.simulate import BROADCAST, BridgeNetwork, BridgePort, MemoisedSimulator

DEFAULT = BridgePort()                                   # VLAN 1 untagged, PVID 1


def host_port(pvid: int, vlans: set[int]) -> BridgePort:
    return BridgePort(pvid=pvid, untagged=frozenset(vlans))


def trunk(vlans: set[int]) -> BridgePort:
    return BridgePort(pvid=1, untagged=frozenset(), tagged=frozenset(vlans))


def mac(i: int) -> str:
    return f"02:00:00:00:00:{i:02x}"


# --- two bridges -------------------------------------------------------------------------

def two_default_bridges() -> BridgeNetwork:
    #   h1 - A:p2   A:p1 ==== B:p1   B:p2 - h2        all ports factory state (VLAN 1)
    net = BridgeNetwork()
    net.add_bridge("A", {1}, {"p1": DEFAULT, "p2": DEFAULT})
    net.add_bridge("B", {1}, {"p1": DEFAULT, "p2": DEFAULT})
    net.connect("A", "p1", "B", "p1")
    net.add_host("h1", mac(1), "A", "p2")
    net.add_host("h2", mac(2), "B", "p2")
    return net


def test_two_bridges_broadcast_learns_and_unicast_follows() -> None:
    net = two_default_bridges()
    # h1's untagged broadcast: A classifies into PVID 1, learns h1 on p2, floods to p1
    # (untagged, VLAN 1 is untagged there); B learns h1 on p1 and floods to p2 -> h2.
    t = net.send("h1", BROADCAST)
    assert [(d.host, d.tag) for d in t.deliveries] == [("h2", None)]
    assert net.tables[("A", 1)] == {mac(1): "p2"}
    assert net.tables[("B", 1)] == {mac(1): "p1"}
    # h2 -> h1: B knows h1 on p1, A knows it on p2: two hops, no flooding.
    t = net.send("h2", mac(1))
    assert [(d.host, d.tag) for d in t.deliveries] == [("h1", None)]
    assert t.floods == [] and [h[0] for h in t.hops] == ["B", "A"]
    # h1 -> an address nobody announced: flooded at A and at B, delivered to h2 only.
    t = net.send("h1", mac(9))
    assert t.floods == [("A", 1), ("B", 1)]
    assert [d.host for d in t.deliveries] == ["h2"]


def test_two_bridges_vlan_tagging_on_the_trunk() -> None:
    # Host ports: PVID 10, untagged members of 10 and 20. Trunk: tagged 10 only.
    # VLAN 30 exists on A but no port is a member of it.
    net = BridgeNetwork()
    net.add_bridge("A", {10, 20, 30}, {"p1": trunk({10}), "p2": host_port(10, {10, 20})})
    net.add_bridge("B", {10, 20}, {"p1": trunk({10}), "p2": host_port(20, {10, 20})})
    net.connect("A", "p1", "B", "p1")
    net.add_host("h1", mac(1), "A", "p2")
    net.add_host("h2", mac(2), "B", "p2")
    # Untagged from h1 -> VLAN 10 (PVID) -> tagged 10 on the trunk -> B untags towards h2.
    t = net.send("h1", BROADCAST)
    assert [(d.host, d.tag) for d in t.deliveries] == [("h2", None)]
    assert t.hops == [("A", "p2", 10), ("B", "p1", 10)]
    # Tagged 20 from h1 is admitted (p2 is an untagged member of 20) but the trunk does
    # not carry 20: A learns h1 in VLAN 20 and nothing leaves A.
    t = net.send("h1", BROADCAST, tag=20)
    assert t.deliveries == [] and net.tables[("A", 20)] == {mac(1): "p2"}
    # Tagged 30: created on A, p2 not a member -> ingress filtering drops it.
    t = net.send("h1", BROADCAST, tag=30)
    assert t.hops == [] and "ingress filtering" in t.drops[0][2]
    # Tagged 40: not created at all.
    t = net.send("h1", BROADCAST, tag=40)
    assert t.drops == [("A", "p2", "VLAN 40 not created")]
    # h2 sends in VLAN 20 (its PVID), which the trunk does not carry: h1 never hears it.
    t = net.send("h2", BROADCAST)
    assert t.deliveries == [] and t.hops == [("B", "p2", 20)]


def test_tagged_only_port_drops_untagged() -> None:
    net = BridgeNetwork()
    net.add_bridge("A", {10}, {"p1": BridgePort(pvid=10, untagged=frozenset({10}), admit_untagged=False)})
    net.add_host("h1", mac(1), "A", "p1")
    t = net.send("h1", BROADCAST)
    assert t.drops == [("A", "p1", "port admits tagged frames only")]


# --- three bridges -----------------------------------------------------------------------

def triangle(ab: BridgePort, bc: BridgePort, ca: BridgePort,
             hosts: dict[str, BridgePort]) -> BridgeNetwork:
    #        A
    #   pb /   \ pc        A:pb-B:pa, B:pc-C:pb, C:pa-A:pc; host port "ph" on each
    #   pa/     \pa
    #    B ----- C
    #      pc  pb
    net = BridgeNetwork()
    net.add_bridge("A", {1, 10, 20}, {"pb": ab, "pc": ca, "ph": hosts["A"]})
    net.add_bridge("B", {1, 10, 20}, {"pa": ab, "pc": bc, "ph": hosts["B"]})
    net.add_bridge("C", {1, 10, 20}, {"pa": ca, "pb": bc, "ph": hosts["C"]})
    net.connect("A", "pb", "B", "pa")
    net.connect("B", "pc", "C", "pb")
    net.connect("C", "pa", "A", "pc")
    for i, b in enumerate("ABC", start=1):
        net.add_host(f"h{b}", mac(i), b, "ph")
    return net


def test_triangle_in_one_vlan_loops() -> None:
    net = triangle(DEFAULT, DEFAULT, DEFAULT, {b: DEFAULT for b in "ABC"})
    # hA's broadcast: A floods to B (via pb) and C (via pc). B (first in the queue)
    # floods to hB and to C; C (copy from A) floods to hC and to B. Then the copy
    # B->C reaches C again and the copy C->B reaches B again: two revisits.
    t = net.send("hA", BROADCAST)
    assert sorted(t.loops) == [("B", 1), ("C", 1)]
    fab = MemoisedSimulator(net)
    res = fab.broadcast("hA", None)
    assert sorted((b, v) for b, v, _ in res.loops) == [("B", 1), ("C", 1)]


def test_triangle_blocked_port_breaks_the_loop() -> None:
    blocked = BridgePort(forwarding=False)
    # STP has blocked the B-C link on both ends: A-B and A-C remain, a tree.
    net = triangle(DEFAULT, blocked, DEFAULT, {b: DEFAULT for b in "ABC"})
    t = net.send("hA", BROADCAST)
    assert t.loops == [] and sorted(d.host for d in t.deliveries) == ["hB", "hC"]
    t = net.send("hB", BROADCAST)      # B -> A -> C, never over B-C
    assert [h[0] for h in t.hops] == ["B", "A", "C"]


def vlan_routed_triangle() -> BridgeNetwork:
    # VLAN 10 tree: A-B, B-C (for sources A and B).  VLAN 20 tree: C-A, A-B... no:
    # VLAN 20 tree: C-A, C-B (for source C). Every link carries only its trees' VLANs:
    #   A-B: {10}    B-C: {10, 20}    C-A: {20}
    # Host ports: untagged members of 10 and 20, PVID = the host's VLAN.
    return triangle(trunk({10}), trunk({10, 20}), trunk({20}),
                    {"A": host_port(10, {10, 20}), "B": host_port(10, {10, 20}),
                     "C": host_port(20, {10, 20})})


def test_triangle_with_vlan_separation_has_no_loop_and_needs_tagged_learning() -> None:
    net = vlan_routed_triangle()
    # hA untagged -> VLAN 10 -> A-B -> B-C -> C: each bridge once, no loop.
    t = net.send("hA", BROADCAST)
    assert t.loops == [] and [h[0] for h in t.hops] == ["A", "B", "C"]
    assert sorted((d.host, d.tag) for d in t.deliveries) == [("hB", None), ("hC", None)]
    # hC -> hA: hC's frames are in VLAN 20, where nobody has learned hA yet (hA's
    # broadcast was in VLAN 10): C floods in 20 over C-A and C-B, A delivers to hA;
    # B floods in 20 towards hB and back towards C? No: B's VLAN 20 members are pc and
    # ph; the copy came in on pc, so it goes to hB only.
    t = net.send("hC", mac(1), learn=False)
    assert ("C", 20) in t.floods
    assert sorted(d.host for d in t.deliveries) == ["hA", "hB"]
    # The paper's fix: hA also broadcasts tagged 20. A admits it (ph is an untagged
    # member of 20), sends it over C-A (tagged 20); C learns hA on pa; C floods on to B.
    net.send("hA", BROADCAST, tag=20)
    assert net.tables[("C", 20)][mac(1)] == "pa"
    assert net.tables[("B", 20)][mac(1)] == "pc"
    # Now hC -> hA goes C -> A directly, untagged at the end, no flooding.
    t = net.send("hC", mac(1), learn=False)
    assert t.floods == [] and [h[0] for h in t.hops] == ["C", "A"]
    assert [(d.host, d.tag) for d in t.deliveries] == [("hA", None)]


def test_extra_vlan_on_a_link_closes_a_loop() -> None:
    # Same as the routed triangle, but A-B also carries 20: VLAN 20 now has A-B, B-C, C-A.
    net = triangle(trunk({10, 20}), trunk({10, 20}), trunk({20}),
                   {"A": host_port(10, {10, 20}), "B": host_port(10, {10, 20}),
                    "C": host_port(20, {10, 20})})
    t = net.send("hC", BROADCAST)
    assert t.loops != [] and {v for _, v in t.loops} == {20}


def test_fabric_unicast_and_sizes_on_the_routed_triangle() -> None:
    net = vlan_routed_triangle()
    fab = MemoisedSimulator(net)
    fab.learn({h: [10, 20] for h in ("hA", "hB", "hC")})
    # Every switch learns 3 hosts x 2 VLANs = 6 entries.
    assert fab.table_sizes() == {"A": 6, "B": 6, "C": 6}
    # hC -> hA: C (VLAN 20) -> A.  hA -> hC: A (VLAN 10) -> B -> C.
    p = fab.path("C", "ph", None, "hA")
    assert p.ok and p.bridges == ("C", "A")
    got, problem = fab.deliver_local(p.arrival, "hA")
    assert problem == "" and [(d.host, d.tag) for d in got] == [("hA", None)]
    p = fab.path("A", "ph", None, "hC")
    assert p.ok and p.bridges == ("A", "B", "C")


# --- MemoisedSimulator == send on random small networks ---------------------------------------------

@st.composite
def small_networks(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(2, 4))
    vids = [1, 10, 20]
    names = [f"S{i}" for i in range(n)]
    net = BridgeNetwork()
    ports: dict[str, dict[str, BridgePort]] = {}
    port_cfg = st.builds(
        lambda pvid, un, tg, fl: BridgePort(pvid=pvid, untagged=frozenset(un),
                                            tagged=frozenset(set(tg) - set(un)),
                                            ingress_filtering=fl),
        st.sampled_from(vids), st.sets(st.sampled_from(vids)), st.sets(st.sampled_from(vids)),
        st.booleans())
    cables = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                           min_size=1, max_size=5))
    cables = [(a, b) for a, b in cables if a != b]
    for name in names:
        ports[name] = {"h": draw(port_cfg)}
    for i, (a, b) in enumerate(cables):
        ports[names[a]][f"c{i}"] = draw(port_cfg)
        ports[names[b]][f"c{i}"] = draw(port_cfg)
    for name in names:
        net.add_bridge(name, set(vids), ports[name])
    for i, (a, b) in enumerate(cables):
        net.connect(names[a], f"c{i}", names[b], f"c{i}")
    for i, name in enumerate(names):
        net.add_host(f"h{i}", mac(i), name, "h")
    sends = {f"h{i}": draw(st.lists(st.sampled_from([None, 10, 20]), max_size=3))
             for i in range(n)}
    return net, sends


@settings(max_examples=150, deadline=None)
@given(small_networks())
def test_fabric_agrees_with_send(case) -> None:  # type: ignore[no-untyped-def]
    net, sends = case
    fab = MemoisedSimulator(net)
    fab.learn(sends)
    for host in sorted(sends):                       # the reference: one frame at a time
        for tag in sends[host]:
            net.send(host, BROADCAST, tag)
    for (bridge, vid), table in net.tables.items():
        for h in net.hosts.values():
            assert fab.lookup(bridge, vid, h.name) == table.get(h.mac)
    sizes = {b: 0 for b in net.bridges}
    for (bridge, _vid), table in net.tables.items():
        sizes[bridge] += len(table)
    assert fab.table_sizes() == sizes
    for a in net.hosts.values():
        for b in net.hosts.values():
            if a is b:
                continue
            t = net.send(a.name, b.mac, learn=False)
            send_clean = (not t.floods and not t.loops and not t.drops
                          and len(t.deliveries) == 1 and t.deliveries[0].host == b.name)
            p = fab.path(a.bridge, a.port, None, b.name)
            fab_ok = False
            if p.ok:
                got, problem = fab.deliver_local(p.arrival, b.name)
                fab_ok = problem == "" and len(got) == 1 and got[0].host == b.name
                if fab_ok:
                    assert got[0].tag == t.deliveries[0].tag
                    assert list(p.bridges) == [h[0] for h in t.hops]
            assert fab_ok == send_clean, (a.name, b.name, p, t)
