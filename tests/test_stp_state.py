"""Issue 41 item 10: after every push step, before the save, push reads the spanning-tree
state of the inter-switch ports it switched spanning tree off on, and a port not
forwarding in a VLAN it carries fails the step (vlanroute/device/stpstate.py).

First the families' readers against public output (tests/fixtures/README.md names every
source), then the check itself on a real plan's switch with made-up replies, then pushes to
the emulated switches of every family: all forwarding (applied), and one port made to show
blocked with the fault knob `Faults.stp_blocking` (the step rolled back, nothing saved, the
message naming the port, the VLAN and the state)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlanroute.device import stpstate
from vlanroute.device.session import CommandRejected
from vlanroute.device.targets import Target
from vlanroute.drivers import FAMILIES
from vlanroute.drivers.family import StpPortState
from vlanroute.lab import Faults
from vlanroute.model.bridge import LagPort
from vlanroute.model.platforms import PLATFORMS, POWERCONNECT_6248
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir

from push_support import REPO, build_cluster, run, set_ssh_env

FIXTURES = Path(__file__).with_name("fixtures")
PC62, OS6, EOS, OS10 = (FAMILIES[n] for n in ("powerconnect-62xx", "dell-os6", "arista-eos", "dell-os10"))
FWD = StpPortState("forwarding", "FWD")


# -- the readers, on public output -----------------------------------------------------------
def test_os6_capture_every_port_forwarding() -> None:
    """A real OS6 switch's table [OS6STP]: four ports `Enabled ... FWD`; the table is the
    common spanning tree's, so each state holds in every VLAN asked for."""
    table = OS6.parse_stp_state([(FIXTURES / "os6-show-spanning-tree.txt").read_text()], [101, 102])
    assert table.readable
    assert dict(table.states) == {(f"Gi1/0/{n}", v): FWD for n in range(1, 5) for v in (101, 102)}
    assert OS6.stp_state_commands([101, 102]) == ["show spanning-tree"]


def test_dell_table_other_states_and_the_62xx_names() -> None:
    """The capture's layout with rows changed (the states FASTPATH manuals name; no capture
    shows them): `BLK` is blocked, a port whose spanning tree is `Disabled` is `off`, a
    62xx LAG `ch1` is LAG 1; under `Spanning tree :Disabled` every row is off."""
    capture = (FIXTURES / "os6-show-spanning-tree.txt").read_text()
    text = (capture.replace("Gi1/0/1  Enabled  128.1     20000     FWD  Desg",
                            "1/g47    Enabled  128.1     20000     BLK  Altn")
            .replace("Gi1/0/2  Enabled  128.2     20000     FWD",
                     "1/g48    Disabled 128.2     20000     DIS")
            .replace("Gi1/0/3 ", "ch1     "))
    states = PC62.parse_stp_state([text], [101]).states
    assert states[("1/g47", 101)] == StpPortState("blocked", "BLK")
    assert states[("1/g48", 101)].verdict == "off"
    assert states[(LagPort(1), 101)] == FWD
    # `DIS` is FASTPATH's Disabled state ("STP is currently disabled on the port. The port
    # forwards traffic") whatever the State column says: off, the link decides.
    dis = PC62.parse_stp_state([text.replace("Gi1/0/4  Enabled  128.4     20000     FWD",
                                             "1/g46    Enabled  128.4     20000     DIS")], [101]).states
    assert dis[("1/g46", 101)].verdict == "off"
    off = PC62.parse_stp_state([text.replace("Spanning tree :Enabled", "Spanning tree :Disabled")], [101]).states
    assert off[("1/g47", 101)].verdict == off[("1/g48", 101)].verdict == "off"
    assert off[("Gi1/0/4", 101)] == FWD                  # a row that says FWD is read as printed


def test_dell_reply_without_the_table_is_not_readable() -> None:
    table = PC62.parse_stp_state(["% Invalid input detected at '^' marker."], [101])
    assert not table.readable and "Invalid input" in table.why and not table.states
    only_global = PC62.parse_stp_state(["Spanning tree :Disabled - BPDU Flooding :Disabled - mode :rstp"], [101])
    assert only_global.readable and not only_global.states


def anta(case: str) -> str:
    return json.dumps(json.loads((FIXTURES / "eos-stp-topology-anta.json").read_text())[case], indent=4)


def test_eos_reads_the_json_of_arista_s_own_tests() -> None:
    """[ANTA]: the VLAN's topology is the one whose `vlans` holds it; `forwarding` or not;
    interfaces that are no bridge port of a plan (`MplsTrunk1`, `PeerEthernet2`) are passed
    over; a VLAN with no instance lists nothing; a LAG is `Port-ChannelN`."""
    assert EOS.stp_state_commands([10, 20]) == ["show spanning-tree topology vlan 10 status | json",
                                               "show spanning-tree topology vlan 20 status | json"]
    ok = EOS.parse_stp_state([anta("mst10-forwarding"), anta("mst20-forwarding")], [10, 20])
    assert ok.readable and dict(ok.states) == {("Ethernet10", 10): StpPortState("forwarding", "forwarding"),
                                               ("Ethernet10", 20): StpPortState("forwarding", "forwarding")}
    blocked = EOS.parse_stp_state([anta("vl10-discarding")], [10])
    assert dict(blocked.states) == {("Ethernet10", 10): StpPortState("blocked", "discarding")}
    none = EOS.parse_stp_state([anta("no-instance")], [10])
    assert none.readable and not none.states
    pvst = EOS.parse_stp_state([anta("rapid-pvst-detail")] * 2, [1, 1006])
    assert dict(pvst.states) == {(LagPort(5), 1): StpPortState("forwarding", "forwarding")}
    # The VLAN asked for is not in the topology's list: nothing is read as its.
    assert not EOS.parse_stp_state([anta("mst10-forwarding")], [20]).states


def test_eos_reply_that_is_not_json_is_not_readable() -> None:
    table = EOS.parse_stp_state(["% Invalid input"], [10])
    assert not table.readable and "JSON" in table.why


def test_os10_rstp_example_of_the_user_guide() -> None:
    """[UG10.5]: under RSTP one table for every VLAN; `FWD` forwarding, `BLK` blocked (the
    port is in both tables of the example, with the same state)."""
    text = (FIXTURES / "os10-show-spanning-tree-active-rstp.txt").read_text()
    table = OS10.parse_stp_state([text], [101, 102])
    assert table.readable and OS10.stp_state_commands([101]) == ["show spanning-tree active"]
    assert dict(table.states) == {
        **{("ethernet1/1/6:3", v): FWD for v in (101, 102)},
        **{("ethernet1/1/6:4", v): StpPortState("blocked", "BLK") for v in (101, 102)}}


def test_os10_rapid_pvst_example_holds_for_its_vlan_only() -> None:
    text = (FIXTURES / "os10-show-spanning-tree-active-rpvst.txt").read_text()
    states = OS10.parse_stp_state([text], [1, 101]).states
    assert states[("ethernet1/1/7", 1)] == FWD and states[("ethernet1/1/26", 1)] == FWD
    assert states[("ethernet1/1/5", 1)] == StpPortState("blocked", "BLK")
    assert not [k for k in states if k[1] == 101]
    assert len(states) == 10


def test_os10_other_replies() -> None:
    blank = OS10.parse_stp_state([""], [101])
    assert blank.readable and not blank.states            # no active port (assumed)
    junk = OS10.parse_stp_state(["% Error: Unrecognized command."], [101])
    assert not junk.readable
    rstp = (FIXTURES / "os10-show-spanning-tree-active-rstp.txt").read_text()
    mst = OS10.parse_stp_state([rstp.replace("protocol rstp", "protocol mst")], [101])
    assert mst.states[("ethernet1/1/6:3", 101)].verdict == "blocked"   # its VLANs are not shown


# -- the check, on sw1 of the seed torus (62xx: LAGs ch1-ch3 carry 101, 101-102, 101-104) ------
@pytest.fixture(scope="module")
def torus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Target, object]:
    doc = plan_from_file(REPO / "inventories" / "seed-torus.yaml", []).to_document()
    out = tmp_path_factory.mktemp("torus") / "out"
    render_to_dir(doc, out, RenderOptions(verify=False))
    family = PC62
    target = Target("sw1", "127.0.0.1", 22, POWERCONNECT_6248, family, family.cli, doc.switches["sw1"],
                    out / "switches" / "sw1.cfg")
    cfg = family.parse((out / "switches" / "sw1.cfg").read_text(), switch="sw1", platform=POWERCONNECT_6248)
    return target, cfg


HEADER = ("Spanning tree :Enabled - BPDU Flooding :Disabled - Portfast BPDU filtering :Disabled - mode :rstp\n"
          "Interfaces\n\nName     State    Prio.Nbr  Cost      Sts  Role  Restricted\n"
          "------   -------- --------- --------- ---- ----- ----------\n")
LINKS = ("Port   Type                            Duplex  Speed    Neg  Link  Flow Control\n"
         "                                                             State Status\n"
         "-----  ------------------------------  ------  -------  ---- ----- ------------\n")


def links(up: set[str]) -> str:
    """`show interfaces status` of the 62xx layout [8024F] (drivers/linkstate.py reads the
    word under `Link`), the LAG members 1/g43-1/g48."""
    at = LINKS.index("Link")
    return LINKS + "".join(f"1/g{n:<4} Gigabit - Level".ljust(at) + ("Up" if f"1/g{n}" in up else "Down") + "  Active\n"
                           for n in range(43, 49))


def replies(stp: str, link: str):  # type: ignore[no-untyped-def]
    sent: list[str] = []

    def answer(command: str) -> str:
        sent.append(command)
        if command == "show spanning-tree":
            if stp.startswith("%"):
                raise CommandRejected(command, stp)
            return stp
        assert command == "show interfaces status"
        return link
    return answer, sent


def test_the_ports_checked_are_the_inter_switch_lags_with_spanning_tree_off(torus) -> None:  # type: ignore[no-untyped-def]
    target, cfg = torus
    assert stpstate.checked_ports(target, cfg) == {LagPort(1): [101], LagPort(2): [101, 102],
                                                   LagPort(3): [101, 102, 103, 104]}
    assert stpstate.read_commands(target, cfg) == ["show spanning-tree", "show interfaces status"]
    # A LAG still under spanning tree is left to it (the transition counts it as protected).
    cfg.lags[2].stp_enabled = True
    try:
        assert LagPort(2) not in stpstate.checked_ports(target, cfg)
    finally:
        cfg.lags[2].stp_enabled = False


def test_every_lag_forwarding_or_off_with_a_member_up(torus) -> None:  # type: ignore[no-untyped-def]
    target, cfg = torus
    run_, sent = replies(HEADER + "ch1      Enabled  128.1     20000     FWD  Desg  No\n"
                                  "ch2      Disabled 128.2     20000     DIS  Disb  No\n",
                         links({"1/g44", "1/g45"}))
    # ch3 is not listed: `off` on this family; one member of ch2 and of ch3 is up.
    assert stpstate.not_forwarding(target, run_, cfg) == []
    assert sent == ["show spanning-tree", "show interfaces status"]


def test_a_blocked_lag_and_a_lag_whose_links_are_down_are_named(torus) -> None:  # type: ignore[no-untyped-def]
    target, cfg = torus
    run_, _ = replies(HEADER + "ch3      Enabled  128.3     20000     BLK  Altn  No\n", links({"1/g47"}))
    found = stpstate.not_forwarding(target, run_, cfg)
    assert [str(f) for f in found] == ["ch2 in VLANs 101-102: spanning tree off (not listed), link down",
                                       "ch3 in VLANs 101-104: BLK"]
    # The blocked LAG fails the step; the LAG whose links are down is a note (the cable, not the config).
    assert [f.label for f in stpstate.blocked(found)] == ["ch3"]
    message = stpstate.problem(stpstate.blocked(found))
    assert "ch3 in VLANs 101-104: BLK" in message and "ch2" not in message and "after 50 s" in message
    note = stpstate.down_note(found)
    assert "ch2 in VLANs 101-102" in note and "link down" in note and "ch3" not in note
    assert stpstate.down_note(stpstate.blocked(found)) == ""


def test_a_down_link_is_not_waited_for(torus) -> None:  # type: ignore[no-untyped-def]
    """Only a blocked port is read again until SETTLE_S: no config brings a cable back."""
    target, cfg = torus
    run_, _ = replies(HEADER, links({"1/g47", "1/g43"}))     # both of ch2's members down
    slept: list[float] = []
    found = stpstate.check(target, run_, cfg, sleep=slept.append, clock=lambda: 0.0)
    assert [f.label for f in found] == ["ch2"] and found[0].link_down and slept == []
    assert stpstate.blocked(found) == []


def test_what_cannot_be_read_is_reported_never_forwarding(torus) -> None:  # type: ignore[no-untyped-def]
    target, cfg = torus
    refused, _ = replies("% Invalid input detected at '^' marker.", links({"1/g47", "1/g43", "1/g45"}))
    found = stpstate.not_forwarding(target, refused, cfg)
    assert {f.label for f in found} == {"ch1", "ch2", "ch3"}
    assert all("state not read" in f.state and "Invalid input" in f.state for f in found)
    other_layout, _ = replies("Port  State\n1/g47 Forwarding\n", links({"1/g47", "1/g43", "1/g45"}))
    assert len(stpstate.not_forwarding(target, other_layout, cfg)) == 3
    no_links, _ = replies(HEADER, "")
    assert all("link state not read" in f.state for f in stpstate.not_forwarding(target, no_links, cfg))


def test_read_again_while_ports_converge(torus, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A port in learning right after the change: read again every PAUSE_S seconds; the
    answer is what is left at the end (SETTLE_S)."""
    target, cfg = torus
    up = links({"1/g47", "1/g43", "1/g45"})
    states = iter(["LRN", "LRN", "FWD"])
    now = [0.0]

    def run_(command: str) -> str:
        if command == "show interfaces status":
            return up
        return HEADER + f"ch1      Enabled  128.1     20000     {next(states)}  Desg  No\n"

    def sleep(s: float) -> None:
        now[0] += s
    assert stpstate.check(target, run_, cfg, sleep=sleep, clock=lambda: now[0]) == []
    assert now[0] == 2 * stpstate.PAUSE_S
    monkeypatch.setattr(stpstate, "SETTLE_S", 3.0)
    stuck = stpstate.check(target, lambda c: up if "interfaces" in c else HEADER + "ch1 Enabled 128.1 2 LRN Desg No\n",
                           cfg, sleep=sleep, clock=lambda: now[0])
    assert [str(f) for f in stuck] == ["ch1 in VLAN 101: LRN"]


# -- pushes to the emulated switches ---------------------------------------------------------
# family -> (inventory, platform, the name the switch prints for sw1's LAG 1, its STP read)
KINDS = {
    "62xx": ("seed-torus.yaml", POWERCONNECT_6248, "ch1", "show spanning-tree"),
    "arista": ("seed-torus-arista.yaml", PLATFORMS["arista-7050sx-64"], "Port-Channel1",
               "show spanning-tree topology vlan 101 status | json"),
    "os10": ("seed-torus-os10.yaml", PLATFORMS["dell-s5248f-on"], "port-channel1", "show spanning-tree active"),
}
LABEL = {"62xx": "ch1", "arista": "Po1", "os10": "port-channel1"}


def canonical(kind: str, text: str) -> list[str]:
    """The config as push compares it (vlanroute's canonical lines)."""
    platform = KINDS[kind][1]
    family = FAMILIES[platform.family]
    cfg = family.parse_running(text, switch="sw1", platform=platform)
    return [line.text for line in family.canonical_lines(cfg)]


def push(capsys, cluster, *extra: str):  # type: ignore[no-untyped-def]
    return run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes",
               "--json", "--switch", "sw1", *extra)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_push_reads_the_spanning_tree_state_and_every_port_forwards(kind, farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    inventory, platform, _, command = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform)
    rc, out, err = push(capsys, cluster)
    [record] = json.loads(out)["switches"]
    assert rc == 0 and record["result"] == "applied", out + err
    wire = cluster.switch("sw1").received
    read_back = len(wire) - 1 - wire[::-1].index("show running-config")
    # Read after the read-back, before the save; listed by --show-commands as sent.
    assert command in wire[read_back:] and command in record["commands"]
    save = "write memory" if kind != "62xx" else "copy running-config startup-config"
    assert wire.index(command, read_back) < len(wire) - 1 - wire[::-1].index(save)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_blocked_inter_switch_port_rolls_the_step_back(kind, farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    monkeypatch.setattr(stpstate, "SETTLE_S", 0.0)      # the knob blocks for good
    inventory, platform, knob, _ = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform,
                            faults={"sw1": Faults(stp_blocking=knob)})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster)
    [record] = json.loads(out)["switches"]
    assert rc == 1 and record["result"] == "rolled-back", out + err
    assert f"{LABEL[kind]} in VLAN 101: " in record["message"], record["message"]
    assert ("BLK" if kind != "arista" else "discarding") in record["message"]
    assert canonical(kind, before) == canonical(kind, sw1.running_config()) and sw1.saved == []


def test_a_blocked_port_of_a_single_cable(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """A cable without a LAG: the port itself (`1/g47`, sw1's cable of the one-link tree,
    VLAN 101) is what the table names."""
    set_ssh_env(monkeypatch)
    monkeypatch.setattr(stpstate, "SETTLE_S", 0.0)
    cluster = build_cluster(farm, tmp_path, "seed-tree-1link.yaml", faults={"sw1": Faults(stp_blocking="1/g47")})
    assert cluster.plan["switches"]["sw1"]["ports"]["1/g47"]["role"] == "inter-switch"
    rc, out, err = push(capsys, cluster)
    [record] = json.loads(out)["switches"]
    assert rc == 1 and record["result"] == "rolled-back", out + err
    assert "1/g47 in VLAN 101: BLK" in record["message"], record["message"]
    assert "1/g48" not in record["message"] and cluster.switch("sw1").saved == []
