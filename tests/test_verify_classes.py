"""The equivalence-class unicast check (verify/classes.py) against the per-pair reference
(`BridgeNetwork.send`, one frame per ordered host pair) on random VLAN-routed fabrics with
random configuration mistakes."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from hypothesis import given, settings, strategies as st

from vlanroute.verify.classes import PlanTrees, check_unicast, check_unicast_pairs
from vlanroute.verify.simulate import BROADCAST, BridgePort, MemoisedSimulator, BridgeNetwork

VIDS = [10, 20, 30]


def mac(i: int) -> str:
    return f"02:00:00:00:{i // 256:02x}:{i % 256:02x}"


def tree_path(links: list[tuple[str, str]], a: str, b: str) -> list[str] | None:
    """The path a .. b in a tree given by its links (BFS; independent of verify/classes.py)."""
    adj: dict[str, list[str]] = {}
    for x, y in links:
        adj.setdefault(x, []).append(y)
        adj.setdefault(y, []).append(x)
    prev: dict[str, str | None] = {a: None}
    queue = deque([a])
    while queue:
        x = queue.popleft()
        for y in adj.get(x, []):
            if y not in prev:
                prev[y] = x
                queue.append(y)
    if b not in prev:
        return None
    path = [b]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


MUTATIONS = ["reroute", "drop-member", "add-tagged", "pvid", "tag-host-port", "shut", "tagged-only", "no-filtering",
             "no-vlan", "shared-port", "host-on-cable", "skip-broadcast"]


@st.composite
def routed_fabrics(draw):  # type: ignore[no-untyped-def]
    """A planned fabric as render would configure it, then up to 3 mistakes."""
    n = draw(st.integers(2, 5))
    names = [f"S{i}" for i in range(n)]
    # a connected cable graph: a random spanning tree plus a few extra cables
    cables = [(draw(st.integers(0, i - 1)), i) for i in range(1, n)]
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4)):
        if a != b and (a, b) not in cables and (b, a) not in cables:
            cables.append((a, b))
    k = draw(st.integers(1, 3))
    vids = VIDS[:k]
    # every VLAN: a spanning tree of the cable graph (Kruskal in a random order)
    trees: dict[int, list[int]] = {}
    parent: list[int] = []

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x
    for vid in vids:
        order = draw(st.permutations(range(len(cables))))
        parent[:] = range(n)
        chosen = []
        for i in order:
            a, b = cables[i]
            if find(a) != find(b):
                parent[find(a)] = find(b)
                chosen.append(i)
        trees[vid] = chosen
    host_vlan: dict[str, int] = {}
    hosts: list[tuple[str, int, str]] = []          # (host, bridge index, port)
    for i in range(n):
        for j in range(draw(st.integers(1, 3))):
            name = f"h{i}{j}"
            hosts.append((name, i, f"h{j}"))
            host_vlan[name] = draw(st.sampled_from(vids))
    ports: dict[str, dict[str, BridgePort]] = {name: {} for name in names}
    for host, i, port in hosts:
        ports[names[i]][port] = BridgePort(pvid=host_vlan[host], untagged=frozenset(vids))
    for c, (a, b) in enumerate(cables):
        tagged = frozenset(v for v in vids if c in trees[v])
        ports[names[a]][f"c{c}"] = BridgePort(pvid=1, untagged=frozenset(), tagged=tagged)
        ports[names[b]][f"c{c}"] = BridgePort(pvid=1, untagged=frozenset(), tagged=tagged)
    bridge_vlans = {name: set(vids) for name in names}
    sends = {host: list(vids) for host, _, _ in hosts}
    attach = {host: (names[i], port) for host, i, port in hosts}

    done = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "reroute":
            # configure another spanning tree for one VLAN than the plan's: still a clean
            # tree, so frames are delivered, but not on the planned path
            vid = draw(st.sampled_from(vids))
            order = draw(st.permutations(range(len(cables))))
            parent[:] = range(n)
            other = []
            for i in order:
                a, b = cables[i]
                if find(a) != find(b):
                    parent[find(a)] = find(b)
                    other.append(i)
            for c, (a, b) in enumerate(cables):
                for end in (names[a], names[b]):
                    bp = ports[end][f"c{c}"]
                    ports[end][f"c{c}"] = replace(bp, tagged=bp.tagged - {vid} | ({vid} if c in other else set()))
            done.append(kind)
            continue
        sw = draw(st.sampled_from(names))
        if not ports[sw]:
            continue
        pname = draw(st.sampled_from(sorted(ports[sw])))
        bp = ports[sw][pname]
        vid = draw(st.sampled_from(vids))
        if kind == "drop-member":
            bp = replace(bp, untagged=bp.untagged - {vid}, tagged=bp.tagged - {vid})
        elif kind == "add-tagged":
            bp = replace(bp, tagged=(bp.tagged | {vid}) - bp.untagged)
        elif kind == "pvid":
            bp = replace(bp, pvid=draw(st.sampled_from([1, *vids])))
        elif kind == "tag-host-port":
            bp = replace(bp, untagged=bp.untagged - {vid}, tagged=bp.tagged | ({vid} & bp.untagged))
        elif kind == "shut":
            bp = replace(bp, forwarding=False)
        elif kind == "tagged-only":
            bp = replace(bp, admit_untagged=False)
        elif kind == "no-filtering":
            bp = replace(bp, ingress_filtering=False, pvid=draw(st.sampled_from([1, *vids])))
        elif kind == "no-vlan":
            bridge_vlans[sw].discard(vid)
        elif kind == "shared-port":
            # a second host moved onto another host's port (a hub or a mis-patched cable)
            a, b = draw(st.sampled_from(sorted(attach))), draw(st.sampled_from(sorted(attach)))
            if a != b:
                attach[a] = attach[b]
        elif kind == "host-on-cable":
            # a host plugged into a port that also has a cable to another switch
            host = draw(st.sampled_from(sorted(attach)))
            attach[host] = (sw, pname)
        elif kind == "skip-broadcast":
            host = draw(st.sampled_from(sorted(sends)))
            sends[host] = [v for v in sends[host] if v != vid]
        ports[sw][pname] = bp
        done.append(kind)

    net = BridgeNetwork()
    for name in names:
        net.add_bridge(name, bridge_vlans[name], ports[name])
    for c, (a, b) in enumerate(cables):
        net.connect(names[a], f"c{c}", names[b], f"c{c}")
    for idx, host in enumerate(sorted(attach)):
        net.add_host(host, mac(idx), *attach[host])
    plan = {vid: [(names[cables[i][0]], names[cables[i][1]]) for i in trees[vid]] for vid in vids}
    return net, sends, host_vlan, plan, done


def reference(net: BridgeNetwork, sends: dict[str, list[int]], host_vlan: dict[str, int],
              plan: dict[int, list[tuple[str, str]]]) -> dict[tuple[str, str], bool]:
    """Per ordered pair: one frame followed copy by copy, and its hops against the plan."""
    for host in sorted(sends):
        for tag in sends[host]:
            net.send(host, BROADCAST, tag)
    got = {}
    for a, ha in sorted(net.hosts.items()):
        for b, hb in sorted(net.hosts.items()):
            if a == b:
                continue
            t = net.send(a, hb.mac, learn=False)
            want = tree_path(plan[host_vlan[a]], ha.bridge, hb.bridge) if ha.bridge != hb.bridge else [ha.bridge]
            got[(a, b)] = (not t.floods and not t.loops and not t.drops
                           and [(d.host, d.tag) for d in t.deliveries] == [(b, None)]
                           and [h[0] for h in t.hops] == want)
    return got


@settings(max_examples=300, deadline=None)
@given(routed_fabrics())
def test_classes_agree_with_the_per_pair_reference(case) -> None:  # type: ignore[no-untyped-def]
    net, sends, host_vlan, plan, done = case
    fabric = MemoisedSimulator(net)
    fabric.learn({h: list(v) for h, v in sends.items()})
    got = check_unicast_pairs(net, fabric, host_vlan, PlanTrees(plan))
    want = reference(net, sends, host_vlan, plan)
    assert {pair: not problem for pair, problem in got.items()} == want, done
    if not done:
        assert all(want.values())     # an unmutated planned fabric is clean


def test_a_clean_torus_counts_every_pair_without_failures() -> None:
    # 3x3 torus, one VLAN per switch (shortest-path trees by BFS), 2 hosts per switch
    names = [f"S{x}{y}" for x in range(3) for y in range(3)]
    cables = []
    for x in range(3):
        for y in range(3):
            cables.append((f"S{x}{y}", f"S{(x + 1) % 3}{y}"))
            cables.append((f"S{x}{y}", f"S{x}{(y + 1) % 3}"))
    adj: dict[str, list[str]] = {s: [] for s in names}
    for a, b in cables:
        adj[a].append(b)
        adj[b].append(a)
    plan: dict[int, list[tuple[str, str]]] = {}
    for i, root in enumerate(names):
        seen, links, queue = {root}, [], deque([root])
        while queue:
            x = queue.popleft()
            for y in adj[x]:
                if y not in seen:
                    seen.add(y)
                    links.append((x, y))
                    queue.append(y)
        plan[100 + i] = links
    net = BridgeNetwork()
    vids = set(plan)
    ports: dict[str, dict[str, BridgePort]] = {s: {} for s in names}
    for c, (a, b) in enumerate(cables):
        tagged = frozenset(v for v, links in plan.items() if (a, b) in links or (b, a) in links)
        ports[a][f"c{c}"] = ports[b][f"c{c}"] = BridgePort(pvid=1, untagged=frozenset(), tagged=tagged)
    host_vlan = {}
    for i, s in enumerate(names):
        for j in range(2):
            ports[s][f"h{j}"] = BridgePort(pvid=100 + i, untagged=frozenset(vids))
            host_vlan[f"h{i}{j}"] = 100 + i
    for s in names:
        net.add_bridge(s, vids, ports[s])
    for c, (a, b) in enumerate(cables):
        net.connect(a, f"c{c}", b, f"c{c}")
    for i, s in enumerate(names):
        for j in range(2):
            net.add_host(f"h{i}{j}", mac(2 * i + j), s, f"h{j}")
    fabric = MemoisedSimulator(net)
    fabric.learn({h: sorted(vids) for h in host_vlan})
    rep = check_unicast(net, fabric, host_vlan, PlanTrees(plan))
    assert rep.failures == [] and rep.source_problems == []
    assert rep.ok_pairs == 18 * 17
