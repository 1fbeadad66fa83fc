"""The failure scenario of `vlanroute emulate` (--fail-pair, --repair): what it predicts and
the linux-bridge delta it applies (fast, no kernel), and the whole scenario on the seed
cluster in the emulation VM (slow).

The prediction is checked against a second computation that shares nothing with it: the
VLAN's tree as a networkx graph without the dead link, asked whether the two switches are
still connected. The repaired bundle is made by hand (tests/failure_support.py), not by
`vlanroute repair`, so the scenario tests the data plane, not the planner."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import networkx as nx
import pytest
from emulate_support import render
from failure_support import hand_repair

from vlanroute.cli import main
from vlanroute.emulate import vm
from vlanroute.emulate.failplan import (
    BridgeStep,
    Failure,
    broken_vlans,
    broken_vlans_switch,
    cut_pairs,
    cut_pairs_switch,
    cut_tx,
    keep_running_hosts,
    repair_delta,
    repair_record,
)
from vlanroute.emulate.spec import load
from vlanroute.emulate.transition import plan_bridges
from vlanroute.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "inventories" / "seed-torus.yaml"
SMALL = ("hosts.count=null", "hosts.per_switch=2", "platform=linux-bridge")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("failure")
    out = render(SEED, tmp / "lb", "platform=linux-bridge")
    hand_repair(out, tmp / "lbnew", ("sw1", "sw2"))
    return out, tmp / "lbnew"


@pytest.fixture(scope="module")
def repaired(bundles: tuple[Path, Path]) -> Path:
    """What `vlanroute repair` writes for the dead pair sw1-sw2 (with repair.json)."""
    new = bundles[0].parent / "repaired"
    assert main(["repair", str(bundles[0]), "--failed-pair", "sw1:sw2", "-o", str(new), "-q"]) == 0
    return new


def _components(spec, dead: tuple[str, str]) -> dict[int, dict[str, int]]:
    """VLAN -> switch -> the number of its part of the VLAN's tree without the dead link."""
    out = {}
    for vlan, adj in spec.tree.items():
        g = nx.Graph()
        g.add_nodes_from(adj)
        g.add_edges_from((s, n) for s, ns in adj.items() for n in ns if {s, n} != set(dead))
        out[vlan] = {s: i for i, part in enumerate(nx.connected_components(g)) for s in part}
    return out


@pytest.mark.parametrize("dead", [("sw1", "sw2"), ("sw2", "sw1"), ("sw5", "sw6"), ("sw3", "sw7")])
def test_cut_pairs_are_those_whose_vlan_tree_falls_apart(bundles, dead) -> None:
    spec = load(bundles[0])
    predicted = cut_pairs(spec, dead)
    part = _components(spec, dead)
    independent = {(a, b) for a, ha in spec.hosts.items() for b, hb in spec.hosts.items()
                   if a != b and part[ha.vlan][ha.switch] != part[ha.vlan][hb.switch]}
    assert predicted == independent
    assert predicted                   # on the torus every used pair cuts something
    # Only the hosts of a broken VLAN lose anything.
    assert {spec.hosts[a].vlan for a, _ in predicted} <= set(broken_vlans(spec, dead))


def test_seed_figures_for_the_dead_pair_sw1_sw2(bundles) -> None:
    spec = load(bundles[0])
    assert broken_vlans(spec, ("sw1", "sw2")) == [101]
    # VLAN 101 carries the 57 hosts of sw1 and sw2 (29 + 28); 6,412 of their ordered pairs
    # cross sw1-sw2 (computed above by two independent means).
    assert sum(1 for h in spec.hosts.values() if h.vlan == 101) == 57
    assert len(cut_pairs(spec, ("sw1", "sw2"))) == 6412


@pytest.fixture(scope="module")
def repaired_sw1(bundles: tuple[Path, Path]) -> Path:
    """What `vlanroute repair` writes for the dead switch sw1 (its 29 hosts lost)."""
    new = bundles[0].parent / "repaired-sw1"
    assert main(["repair", str(bundles[0]), "--failed-switch", "sw1", "-o", str(new), "-q"]) == 0
    return new


@pytest.mark.parametrize("dead", ["sw1", "sw6", "sw8"])
def test_a_dead_switch_cuts_its_hosts_and_the_pairs_whose_vlan_path_crosses_it(bundles, dead) -> None:
    spec = load(bundles[0])
    predicted = cut_pairs_switch(spec, dead)
    # Independently: each VLAN's tree as a graph without the dead switch; a pair survives when
    # neither host is on it and both switches stay in one part.
    part = {}
    for vlan, adj in spec.tree.items():
        g = nx.Graph()
        g.add_nodes_from(s for s in spec.switches if s != dead)
        g.add_edges_from((s, n) for s, ns in adj.items() for n in ns if dead not in (s, n))
        part[vlan] = {s: i for i, c in enumerate(nx.connected_components(g)) for s in c}
    independent = {(a, b) for a, ha in spec.hosts.items() for b, hb in spec.hosts.items()
                   if a != b and (dead in (ha.switch, hb.switch)
                                  or part[ha.vlan][ha.switch] != part[ha.vlan][hb.switch])}
    assert predicted == independent
    on_it = [h for h, hh in spec.hosts.items() if hh.switch == dead]
    n = len(spec.hosts)
    # Every ordered pair with a host on the dead switch, and more.
    assert len(predicted) > len(on_it) * (n - 1) * 2 - len(on_it) * (len(on_it) - 1)
    assert {spec.hosts[a].vlan for a, b in predicted
            if dead not in (spec.hosts[a].switch, spec.hosts[b].switch)} <= set(broken_vlans_switch(spec, dead))


def test_seed_figures_for_the_dead_switch_sw1(bundles) -> None:
    spec = load(bundles[0])
    assert broken_vlans_switch(spec, "sw1") == [101, 102, 103, 104]
    on_sw1 = sum(1 for h in spec.hosts.values() if h.switch == "sw1")
    assert on_sw1 == 29
    # 29 hosts x 224 others, both directions, minus the 29 x 28 counted twice: 12,180 pairs
    # with a host on sw1; 3,920 more cross it (computed above by two independent means).
    assert len(cut_pairs_switch(spec, "sw1")) == 12180 + 3920


def _bridges_forward(spec, dead_pairs: list[tuple[str, str]], dead_switch: str | None,
                     pairs: list[tuple[str, str]]):
    """Frames per port while the failure lasts, found the other way round from cut_tx: every
    frame is forwarded switch by switch as an 802.1Q bridge does, from the MAC tables the
    learning leaves (spec.expected_fdb, checked against the kernel's in every emulation) minus
    the entries on ports that went down: a known port that is up gets the frame (dropped if
    it came in there), an unknown destination is flooded to every other port of the VLAN
    that is up (inter-switch ports of its tree, and every host port)."""
    down = {(s, n) for a, b in dead_pairs for s, n in ((a, b), (b, a))}
    port_of = {}                                   # (switch, bridge port name) -> port
    for (s, n), up in spec.uplinks.items():
        for name in up.bridge_ports():
            port_of[(s, name)] = ("up", n)
    for h, hh in spec.hosts.items():
        port_of[(hh.switch, hh.port)] = ("host", h)
    mac_of = {h: hh.mac for h, hh in spec.hosts.items()}
    fdb = {}
    for (s, vlan, mac), names in spec.expected_fdb().items():
        port = port_of[(s, sorted(names)[0])]
        if s != dead_switch and not (port[0] == "up" and (s, port[1]) in down):
            fdb[(s, vlan, mac)] = port
    uplink_tx = {key: 0 for key in spec.uplinks}
    host_tx = {h: 0 for h in spec.hosts}
    host_rx = {h: 0 for h in spec.hosts}
    for a, b in pairs:
        ha = spec.hosts[a]
        if ha.switch == dead_switch:
            continue
        host_rx[a] += 1
        todo = [(ha.switch, ("host", a))]
        hops = 0
        while todo:
            s, came = todo.pop()
            hops += 1
            assert hops < 1000, "a loop"
            known = fdb.get((s, ha.vlan, mac_of[b]))
            if known is not None:
                out = [] if known == came else [known]
            else:
                out = [("up", n) for n in spec.tree[ha.vlan].get(s, ()) if (s, n) not in down]
                out += [("host", h) for h, hh in spec.hosts.items() if hh.switch == s]
                out = [p for p in out if p != came]
            for kind, there in out:
                if kind == "host":
                    host_tx[there] += 1
                elif there != dead_switch:
                    uplink_tx[(s, there)] += 1
                    todo.append((there, ("up", s)))
    return uplink_tx, host_tx, host_rx


@pytest.mark.parametrize("failure", [Failure(pair=("sw1", "sw2")), Failure(pair=("sw6", "sw5")),
                                     Failure(pair=("sw3", "sw7")), Failure(switch="sw1"),
                                     Failure(switch="sw6")])
def test_the_load_while_cut_is_what_bridges_forward_and_flood(bundles, failure) -> None:
    """cut_tx (what the traffic while cut is paced by and its per-cable check compares the
    port counters with) equals a frame-by-frame bridge forwarding, on the seed cluster."""
    spec = load(bundles[0])
    hosts = sorted(spec.hosts)
    n = len(hosts)
    rng = random.Random(7)
    # Two whole steps of the traffic's schedule and a sample of every other pair.
    pairs = [(hosts[i], hosts[(i + k) % n]) for k in (77, 83) for i in range(n)]
    pairs += rng.sample([(a, b) for a in hosts for b in hosts if a != b], 3000)
    got = cut_tx(spec, failure, pairs, 1)
    want = _bridges_forward(spec, failure.pairs(spec), failure.switch, pairs)
    assert got == want
    # Not the healthy routes: the near end floods, so some port carries more than they say.
    healthy = spec.expected_tx(pairs, 1)
    assert any(got[0][k] > healthy[0][k] for k in healthy[0])
    assert any(got[1][h] > healthy[1][h] for h in healthy[1])


def test_the_delta_for_a_dead_switch_never_touches_it_and_every_state_is_loop_free(
        bundles, repaired_sw1) -> None:
    dead = "sw1"
    old, new = load(bundles[0]), load(repaired_sw1)
    record = repair_record(repaired_sw1)
    assert record is not None and record["affected_vlans"] == [101, 102, 103, 104]
    steps = repair_delta(old, new, record["push_order"], frozenset({dead}))
    assert steps and all(st.switch != dead for st in steps)
    # What the scenario sends: the transition's order (as push plans it), the dead switch the
    # worst case and never sent anything; the same commands.
    planned = plan_bridges(old, new, old, dead=frozenset({dead}))
    sent = [(cmd.verb, step.switch, cmd.port, cmd.vlan) for step in planned.transition.steps
            for cmd in planned.commands[(step.switch, step.kind)]]
    assert sorted(sent) == sorted((st.verb, st.switch, st.port, st.vlan) for st in steps)
    steps = [BridgeStep(sw, verb, port, vlan) for verb, sw, port, vlan in sent]   # type: ignore[arg-type]
    with pytest.raises(UserError, match="other switches"):
        repair_delta(old, new, record["push_order"])      # the dead switch must be named
    members: dict[tuple[str, str], set[int]] = {}
    for (s, n), up in old.uplinks.items():
        members[(s, up.lag_name or up.members[0])] = {v for v, adj in old.tree.items() if n in adj.get(s, ())}

    def alive(vlan: int) -> set[tuple[str, str]]:
        return {(s, n) for s, n in _active_links(old, members, vlan, ("", "")) if dead not in (s, n)}

    for i in range(len(steps) + 1):
        for vlan in old.vlan_ids:
            assert nx.is_forest(nx.Graph(list(alive(vlan)))), (i, vlan)
        if i < len(steps):
            st = steps[i]
            (members[(st.switch, st.port)].discard if st.verb == "del" else members[(st.switch, st.port)].add)(st.vlan)
    for vlan in new.vlan_ids:
        want = {tuple(sorted((s, n))) for s, ns in new.tree[vlan].items() for n in ns}
        assert alive(vlan) == want
        assert nx.is_tree(nx.Graph(list(want)))
    # The survivors keep the MACs and addresses they ran with (the emulation numbers MACs the
    # plan leaves open by rank, and the rank shifts when sw1's hosts are dropped).
    kept = keep_running_hosts(old, new)
    assert set(kept.hosts) == {h for h, hh in old.hosts.items() if hh.switch != dead}
    assert all(kept.hosts[h] == old.hosts[h] for h in kept.hosts)
    assert any(new.hosts[h].mac != old.hosts[h].mac for h in new.hosts)


def _active_links(spec, members: dict[tuple[str, str], set[int]], vlan: int,
                  dead: tuple[str, str]) -> list[tuple[str, str]]:
    """Links that carry `vlan`: both ends' bridge ports are members, the link is alive."""
    out = []
    for (s, n), up in spec.uplinks.items():
        port, back = up.lag_name or up.members[0], spec.uplinks[(n, s)]
        other = back.lag_name or back.members[0]
        if s < n and {s, n} != set(dead) and vlan in members[(s, port)] and vlan in members[(n, other)]:
            out.append((s, n))
    return out


@pytest.mark.parametrize("which", ["by hand, per VLAN", "vlanroute repair, its push order"])
def test_every_state_of_the_delta_is_loop_free_and_ends_at_the_repair(bundles, repaired, which) -> None:
    dead = ("sw1", "sw2")
    if which.startswith("by hand"):
        old, new = load(bundles[0]), load(bundles[1])
        steps = repair_delta(old, new)
    else:
        old, new = load(bundles[0]), load(repaired)
        record = repair_record(repaired)
        assert record is not None and record["affected_vlans"] == [101]
        steps = repair_delta(old, new, record["push_order"])
    # Both move VLAN 101 from sw1-sw2 to sw3-sw4 (vlanroute repair chose the same link).
    assert steps == [BridgeStep("sw1", "del", "bond1", 101), BridgeStep("sw2", "del", "bond1", 101),
                     BridgeStep("sw3", "add", "bond2", 101), BridgeStep("sw4", "add", "bond2", 101)]
    # Start from the running bundle's memberships; apply the steps one by one.
    members: dict[tuple[str, str], set[int]] = {}
    for (s, n), up in old.uplinks.items():
        members[(s, up.lag_name or up.members[0])] = {v for v, adj in old.tree.items() if n in adj.get(s, ())}
    for i in range(len(steps) + 1):
        for vlan in old.vlan_ids:
            g = nx.Graph(_active_links(old, members, vlan, dead))
            assert nx.is_forest(g), (i, vlan, list(g.edges))
        if i < len(steps):
            st = steps[i]
            (members[(st.switch, st.port)].discard if st.verb == "del" else members[(st.switch, st.port)].add)(st.vlan)
    for vlan in new.vlan_ids:
        want = {tuple(sorted((s, n))) for s, ns in new.tree[vlan].items() for n in ns}
        assert set(_active_links(old, members, vlan, dead)) == want


def test_a_bundle_with_other_hosts_is_not_a_repair(bundles, tmp_path) -> None:
    other = render(SEED, tmp_path / "other", *SMALL)
    with pytest.raises(UserError, match="changes hosts"):
        repair_delta(load(bundles[0]), load(other))


@pytest.mark.parametrize("args, message", [
    (["--fail-pair", "sw1:sw2"], "--fail-pair and --repair go together"),
    (["--fail-pair", "sw1", "--repair", "{new}"], "'sw1' is not a neighbour pair"),
    (["--fail-pair", "sw1:sw1", "--repair", "{new}"], "is not a neighbour pair"),
    (["--fail-pair", "sw1:sw7", "--repair", "{new}"], "sw1 and sw7 are not neighbours"),
    (["--fail-switch", "sw1"], "--fail-switch and --repair go together"),
    (["--fail-switch", "sw9", "--repair", "{new}"], "sw9 is not a switch of"),
    (["--fail-switch", "sw1;x", "--repair", "{new}"], "'sw1;x' is not a switch name"),
    (["--fail-switch", "sw1", "--fail-pair", "sw1:sw2", "--repair", "{new}"], "two different scenarios"),
    # The pair's repair is no repair for a dead switch: it keeps sw1 and its hosts.
    (["--fail-switch", "sw1", "--repair", "{new}"], "other switches than the running one without sw1"),
])
def test_wrong_failure_arguments_are_user_errors(bundles, capsys, args, message) -> None:
    out, new = bundles
    status = main(["emulate", "--kernel", "vm", *[a.replace("{new}", str(new)) for a in args], str(out)])
    err = capsys.readouterr().err
    assert status == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("fail, which, message", [
    (["--fail-pair", "sw2:sw3"], "repaired", "is the repair of another failure (pair sw1-sw2), not of pair sw2-sw3"),
    (["--fail-pair", "sw1:sw2"], "out", "is the running bundle itself"),
    (["--fail-pair", "sw1:sw2"], "hand", "has no repair.json"),
    (["--fail-switch", "sw1"], "repaired", "other switches than the running one without sw1"),
    (["--fail-pair", "sw1:sw2"], "repaired-sw1", "other switches than the running one"),
])
def test_catalogue_wrongsuccess_emulate_repair_of_another_failure(bundles, repaired, repaired_sw1, capsys,
                                                                  monkeypatch, fail, which, message) -> None:
    """The scenario must not cut one pair and apply the repair of another (or none): it would
    report the repair's routes as broken, or pass without ever testing a repair."""
    from vlanroute.emulate import failure as scenario

    def started(*args: object, **kw: object) -> None:
        raise AssertionError("the emulation started with the wrong repair")
    monkeypatch.setattr(scenario, "run_in_vm", started)
    monkeypatch.setattr(scenario, "run_here", started)
    out, hand = bundles
    given = {"repaired": repaired, "out": out, "hand": hand, "repaired-sw1": repaired_sw1}[which]
    status = main(["emulate", "--kernel", "vm", *fail, "--repair", str(given), str(out)])
    err = capsys.readouterr().err
    assert status == 2 and message in err and "fix:" in err and "Traceback" not in err, err


def test_the_repair_of_the_failure_given_is_accepted_in_any_spelling(bundles, repaired, repaired_sw1,
                                                                     tmp_path) -> None:
    from vlanroute.commands.emulate import _failure_args
    out = bundles[0]
    assert _failure_args(out, "sw2:sw1", None, repaired, False).pair == ("sw2", "sw1")
    assert _failure_args(out, None, "sw1", repaired_sw1, False).switch == "sw1"
    # The same pair named as its cables.
    doc = json.loads((out / "plan.json").read_text())
    cables = [f"{c['a']}:{c['a_port']}" for c in doc["cabling"] if {c["a"], c["b"]} == {"sw1", "sw2"}]
    by_cables = tmp_path / "by-cables"
    args = [a for c in cables for a in ("--failed-cable", c)]
    assert main(["repair", str(out), *args, "-o", str(by_cables), "-q", "--no-compare"]) == 0
    assert _failure_args(out, "sw1:sw2", None, by_cables, False).pair == ("sw1", "sw2")


@pytest.mark.vm
@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_the_seed_cluster_loses_sw1_sw2_and_recovers(bundles, repaired, tmp_path, capsys) -> None:
    """Seed 001's cluster in full (225 hosts, 50,400 ordered pairs) in the emulation VM: the
    pair sw1-sw2 dies while it runs, exactly the 6,412 predicted pairs are cut, the repair
    `vlanroute repair` wrote (VLAN 101 moved from sw1-sw2 to sw3-sw4, in repair.json's push
    order) and the re-learning in VLAN 101 bring every pair back, each delivered once over
    exactly the repaired routes. Its healthy first half and its TCP check at the end are the
    healthy run's checks (section 4 of seed 001: every host program, every (switch, VLAN,
    host MAC) entry, every pair, no storm): the suite's one 225-host VM, so that the cluster
    in full is built and learned once per suite, not twice."""
    if vm.missing_tools():
        pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()))
    out, new = bundles[0], repaired
    report = tmp_path / "report.json"
    # The re-learning from one process (--relearn-with frames): the host program's pass took
    # about 4 of this test's 12 minutes under TCG; the healthy learning above runs the
    # program on every host, and the small dead-switch test below runs relearn.sh's way.
    status = main(["emulate", "--kernel", "vm", "--timeout", "2300", "--json-report", str(report),
                   "--fail-pair", "sw1:sw2", "--repair", str(new), "--relearn-with", "frames", str(out)])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    if os.environ.get("VLANROUTE_EMULATE_LOG"):     # the run's log and phase times, to measure it
        Path(os.environ["VLANROUTE_EMULATE_LOG"]).write_text(text)
    assert status == 0, text
    data = json.loads(report.read_text())
    assert data["ok"] is True and data["teardown_clean"] is True, text
    assert "8 switches, 225 hosts, 24 cables (24 in LAGs), 4 VLANs; fail sw1-sw2" in text
    assert "225/225 hosts ran hosts/vlanroute-host under busybox sh (frames arp: 225)" in text  # healthy
    assert "474/474 port directions carried exactly the routed frames" in text      # healthy
    assert "472/472 port directions carried exactly the routed frames" in text      # repaired
    assert "50400/50400 ordered pairs got exactly 1 UDP datagrams" in text          # before and after
    assert "2 cables down (sw1 p511, sw2 p511, sw1 p512, sw2 p512)" in text
    assert "6412/6412 predicted pairs cut, 43988/43988 other pairs got exactly 1 UDP datagrams" in text
    assert "4 `bridge vlan` commands on 4 switches (sw1, sw2, sw3, sw4)" in text
    assert ("re-learning in VLANs 101 (learning frames from one process): 225/225 hosts sent 225 tagged "
            "learning frames") in text
    # Before the cut and after the repair, each in the log and in the report.
    assert text.count("7200/7200 (switch, VLAN, host MAC) entries on the planned port") >= 2
    # The bridges forgot what they had learned on the dead ports (docs/method.md).
    assert re.search(r"learned host MAC entries on them: [1-9][0-9]* before, 0 after", text), text
    assert "in the loop-free transition's order" in text
    assert float(data["phases"]["repair to all pairs delivered"]) > 0
    # The healthy run's last checks, over the repaired routes (host i to i+1, i+75, i+112).
    assert "675/675 sampled ordered pairs connected, exchanged a request and a reply" in text
    names = [c["name"] for c in data["checks"]]
    assert names[-2:] == ["TCP exchange on the plain interface", "no storm after the traffic"], names


@pytest.mark.vm
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_small_cluster_loses_switch_sw1_and_recovers(tmp_path, capsys) -> None:
    """The dead-switch scenario on the seed torus with 2 hosts per switch (16 hosts; the full
    225-host failure run is the pair test above, one such run per suite): sw1 stops, exactly
    the predicted pairs are cut (its 2 hosts' and those whose VLAN path crosses it), the
    repair `vlanroute repair --failed-switch sw1` wrote and the re-learning bring every
    surviving pair back, each delivered once over exactly the repaired routes. Its healthy
    phase is the emulate test of the 16-host seed torus too: busybox sh and busybox ping (no
    -b) as on a minimal compute image, KVM or TCG named, the deeper input backlog."""
    if vm.missing_tools():
        pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()))
    out = render(SEED, tmp_path / "lb", *SMALL)
    new = tmp_path / "new"
    assert main(["repair", str(out), "--failed-switch", "sw1", "-o", str(new), "-q"]) == 0
    spec = load(out)
    predicted = cut_pairs_switch(spec, "sw1")
    others = 16 * 15 - len(predicted)
    report = tmp_path / "report.json"
    status = main(["emulate", "--kernel", "vm", "--timeout", "850", "--json-report", str(report),
                   "--host-frame", "ping", "--fail-switch", "sw1", "--repair", str(new), str(out)])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert status == 0, text
    data = json.loads(report.read_text())
    assert data["ok"] is True and data["teardown_clean"] is True, text
    assert "8 switches, 16 hosts, 24 cables (24 in LAGs), 4 VLANs; stop sw1" in text
    assert "6 cables and 2 host links down" in text
    assert "16/16 hosts ran hosts/vlanroute-host under busybox sh (frames ping, busybox: 16)" in text
    # KVM where /dev/kvm boots the guest, else TCG (vm.choose_accel); the report names it.
    assert re.search(r"under QEMU (KVM|TCG)\)$", str(data["kernel"])), data["kernel"]
    assert ("QEMU KVM" in str(data["kernel"])) == (vm.choose_accel() == "kvm")
    # 16 hosts x 4 VLANs x 8 switches, every one on the planned port.
    assert "512/512 (switch, VLAN, host MAC)" in text
    # The VM's kernel runs with the deeper input backlog (vm.VM_NETDEV_MAX_BACKLOG).
    assert "(net.core.netdev_max_backlog 10000)" in text
    assert f"{len(predicted)}/{len(predicted)} predicted pairs cut, {others}/{others} other pairs got" in text
    assert "240/240 ordered pairs got exactly 1 UDP datagrams" in text                # before
    assert "182/182 ordered pairs got exactly 1 UDP datagrams" in text                # 14 survivors after
    assert "182/182 ordered pairs (all) connected" in text and "(ARP tables emptied first)" in text
    assert "re-learning in VLANs 101,102,103,104 (hosts/vlanroute-host --vlans): 14/14 hosts" in text
    assert re.search(r"learned host MAC entries on them: [1-9][0-9]* before, 0 after", text), text
