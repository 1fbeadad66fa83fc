"""Push and audit against switches that already serve a site, as the public evidence shows
real PowerConnect 62xx and OS6 switches behave (docs/platforms/): running configs full of
lines vlanroute does not manage, defaults that print nothing, a save key without echo,
the real reply texts, pre-flight facts and context help.

The fake switches start from the production-like running configs in tests/fixtures/
(written for the project; README.md there lists the line kinds they reproduce).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
import re
import subprocess
import sys

import pytest

from vlanroute.device.credentials import Credentials
from vlanroute.device.session import PROBE_GUARD, CommandRejected, HostKeyPolicy, SaveFailed, SwitchSession
from vlanroute.drivers import FAMILIES
from vlanroute.lab import FakeSwitchFarm, Faults
from vlanroute.model.platforms import POWERCONNECT_6224, POWERCONNECT_6248, POWERCONNECT_8132

from push_support import PASSWORD, REPO, USER, build_cluster, run, set_ssh_env, wire_as_planned

pytestmark = pytest.mark.timeout(300)

FIXTURES = Path(__file__).parent / "fixtures"
PC62XX = (FIXTURES / "pc6248-production.cfg").read_text()
OS6 = (FIXTURES / "dell-os6-production.cfg").read_text()
SWITCH_PORTS = {f"1/g{i}" for i in (*range(1, 30), *range(43, 49))}   # sw1 of seed-torus


def blocks(text: str) -> dict[str, list[str]]:
    """Configuration lines by block: "" for global lines, else the interface or block header
    (independent of vlanroute's parser: a block is what `interface`/`router`/... opens)."""
    out: dict[str, list[str]] = {"": []}
    opener = re.compile(r"(interface |router |template |address-family |line |stack$|logging \d|vlan database$)")
    stack: list[str] = []
    for line in text.splitlines():
        # Lines are kept byte for byte (trailing spaces too): "unchanged" means the same text.
        if not line.strip() or line.startswith("!") or line.strip() == "configure":
            continue
        if line.strip() == "exit":
            if stack:
                stack.pop()
            continue
        key = stack[0] if stack else ""
        if opener.match(line.strip()):
            if not stack:
                stack.append(" ".join(line.split()))
                out.setdefault(stack[0], [])
                continue
            stack.append(line.strip())
        out.setdefault(key, []).append(line)
    return out


def unrelated(before: str, after: str, changed: set[str]) -> list[str]:
    """Lines of `before` (except those in `changed`) missing from the same block of `after`."""
    a, b = blocks(before), blocks(after)
    return [f"{block or 'global'}: {line}" for block, lines in a.items() for line in lines
            if line not in changed and line not in b.get(block, [])]


def push(capsys, cluster, *extra: str):  # type: ignore[no-untyped-def]
    return run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
               "--workers", "1", *extra)


def diff_lines(out: str) -> list[str]:
    return [l for l in out.splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]


# -- 1. manage what vlanroute owns, keep the rest ----------------------------------------------

def test_push_to_a_production_62xx_changes_only_what_vlanroute_owns(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", seeds={"sw1": PC62XX})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()

    rc, out, err = push(capsys, cluster, "--dry-run", "--show-commands", "--switch", "sw1")
    assert rc == 0 and "dry-run" in out, out + err
    changes = diff_lines(out)
    assert changes
    for line in changes:          # only VLAN creation, aging and the plan's own ports
        m = re.match(r"[+-]interface (ethernet (\S+)|port-channel (\d+)): ", line)
        if m:
            assert (m.group(2) in SWITCH_PORTS) or m.group(3) in ("1", "2", "3"), line
        else:
            assert line in ("-vlan database: vlan 10,20,30,99", "+vlan database: vlan 10,20,30,99,101-104",
                            "+bridge aging-time 1000000"), line
    assert sw1.config_commands == 0

    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    assert rc == 0 and "applied" in out, out + err
    after = sw1.running_config()
    assert unrelated(before, after, {"vlan 10,20,30,99"}) == []
    # Byte for byte and in order: every block the plan does not manage, and the global lines
    # but for the aging time push adds.
    a, b = blocks(before), blocks(after)
    managed = {f"interface ethernet {p}" for p in SWITCH_PORTS} | {f"interface port-channel {n}" for n in (1, 2, 3)}
    assert {k: v for k, v in b.items() if k not in managed | {"", "vlan database"}} == \
        {k: v for k, v in a.items() if k not in managed | {"", "vlan database"}}
    assert [l for l in b[""] if l != "bridge aging-time 1000000"] == a[""] and len(b[""]) == len(a[""]) + 1
    for kind in ('hostname "lab-core-7"', "ip igmp snooping", "ip address 198.51.100.7 /24",
                 "switchport trunk allowed vlan add 10,20,30,99", "routing",
                 "switchport general allowed vlan add 10,20,30,99 tagged"):   # the 1/xg3 uplink
        assert kind in after.splitlines(), kind
    assert "vlan 10,20,30,99,101-104" in after.splitlines()
    assert sw1.saved == [after]

    rc, out, err = push(capsys, cluster, "--dry-run", "--show-commands", "--switch", "sw1")
    assert rc == 0 and "unchanged" in out and not diff_lines(out), out + err


def test_a_rejected_command_on_a_production_switch_rolls_back_exactly(farm, tmp_path, monkeypatch, capsys):
    """The rollback restores what vlanroute changed (an access port of the plan included)
    and never touched the rest."""
    set_ssh_env(monkeypatch)
    seed = PC62XX.replace("!\nexit\n", "interface ethernet 1/g10\nswitchport access vlan 10\nexit\nexit\n")
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", seeds={"sw1": seed},
                            faults={"sw1": Faults(reject=r"^spanning-tree disable$",
                                                  reject_reply="Could not configure pvid.")})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    assert rc == 1 and "rolled-back" in out and "startup config untouched" in out, out + err
    assert sw1.config_commands > 100 and sw1.running_config() == before and not sw1.saved
    assert "switchport access vlan 10" in sw1.received      # the access port was restored


def test_the_running_config_reader_keeps_every_line_it_does_not_model():
    family = FAMILIES["powerconnect-62xx"]
    cfg = family.parse_running(PC62XX, switch="sw1", platform=POWERCONNECT_6248)
    kept = {(c.block, c.text): c for c in cfg.context}
    assert kept[(None, 'hostname "lab-core-7"')].effect == "none"
    assert kept[("vlan database", "vlan routing 20 1")].vlans == {20}
    assert kept[("interface vlan 20", "routing")].vlans == {20}
    assert kept[("interface vlan 20", 'name "storage"')].effect == "none"
    assert kept[(None, "ip address vlan 99")].vlans == {99}
    trunk = kept[("interface ethernet 1/g42", "switchport trunk allowed vlan add 10,20,30,99")]
    assert (trunk.port, trunk.effect, trunk.vlans) == ("1/g42", "forwarding", {10, 20, 30, 99})
    assert kept[("interface ethernet 1/g5", "storm-control broadcast")].effect == "none"
    assert kept[("interface ethernet 1/g30", "port-security")].effect == "forwarding"
    # what it models is modelled: global spanning tree off, the LACP LAG, a general port
    assert not cfg.stp_global_enabled and cfg.lags[10].members == ["1/g38", "1/g39"]
    assert cfg.ports["1/g33"].pvid == 20 and cfg.ports["1/g33"].tagged == {30}
    assert cfg.ports["1/g30"].untagged == {10}
    assert cfg.ports["1/xg3"].tagged == {10, 20, 30, 99}          # the 10G module uplink [A]
    assert kept[(None, "ip address 198.51.100.7 /24")].effect == "none"
    # the strict reader (verify, push --strict) still refuses such a config
    with pytest.raises(Exception, match="vlan routing 20 1"):
        family.parse(PC62XX, switch="sw1", platform=POWERCONNECT_6248)


def test_os6_running_config_reader_keeps_nested_blocks():
    platform = POWERCONNECT_8132
    cfg = FAMILIES["dell-os6"].parse_running(OS6, switch="s", platform=platform)
    texts = [c.text for c in cfg.context]
    for line in ("router bgp 65010", "template peer SITE", "address-family ipv6", "redistribute connected",
                 "no switchport port-security violation protect", "slot 1/0 1    ! PowerConnect 8132",
                 'description "syslog"', "exec-timeout 0", "application install SupportAssist auto-restart start-on-boot",
                 "ip address dhcp", "openflow"):
        assert line in texts, line
    assert cfg.lags[20].members == ["Te1/0/13", "Te1/0/14"]
    assert {c.vlans for c in cfg.context if c.text == "switchport trunk allowed vlan 10,20,99"} == {frozenset({10, 20, 99})}
    assert cfg.vlans == {1, 10, 20, 99}


@pytest.mark.parametrize("extra, needle", [
    ("interface ethernet 1/g7\nswitchport mode trunk\nexit\n", "switchport mode trunk (1/g7, the host port of node007)"),
    ("interface ethernet 1/g8\ndot1x port-control auto\nexit\n", "dot1x port-control auto (1/g8"),
    ("interface vlan 101\nrouting\nexit\n", "routing (routing VLAN 101, in `interface vlan 101`)"),
    ("interface ethernet 1/g44\nchannel-group 12 mode auto\nexit\n", "it is a member of ch12, a LAG the plan does not have"),
    ("interface ethernet 1/g36\nchannel-group 3 mode auto\nexit\n", "1/g36, not managed by the plan): it is a member of ch3"),
])
def test_a_line_touching_what_the_plan_manages_is_refused_naming_it(farm, tmp_path, monkeypatch, capsys,
                                                                     extra, needle):
    set_ssh_env(monkeypatch)
    seed = PC62XX.replace("!\nexit\n", extra + "exit\n")
    assert seed != PC62XX
    if "vlan 101" in extra:
        seed = seed.replace("vlan 10,20,30,99\n", "vlan 10,20,30,99,101\n")
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", seeds={"sw1": seed})
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--yes", "--switch", "sw1")
    flat = " ".join(out.replace("│", " ").split())
    assert rc == 1 and "not-started" in out, out + err
    assert re.search(r"line \d+: " + re.escape(needle), flat) or needle in flat, flat
    assert "fix:" in flat
    assert cluster.switch("sw1").config_commands == 0


def test_a_routing_vlan_on_an_unmanaged_port_is_refused(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    seed = PC62XX.replace("vlan 10,20,30,99\n", "vlan 10,20,30,99,102\n").replace(
        "switchport trunk allowed vlan add 10,20,30,99", "switchport trunk allowed vlan add 10,20,30,99,102")
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", seeds={"sw1": seed})
    rc, out, err = push(capsys, cluster, "--dry-run", "--switch", "sw1")
    flat = " ".join(out.replace("│", " ").split())
    assert rc == 1 and "routing VLAN 102" in flat and "1/g42" not in flat.split("routing VLAN 102")[0][-5:]
    assert "switchport trunk allowed vlan add 10,20,30,99,102" in flat


def test_strict_refuses_any_line_it_does_not_know(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", seeds={"sw1": PC62XX})
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1", "--strict")
    flat = " ".join(out.replace("│", " ").split())
    assert rc == 1 and "not-started" in flat and "line 9" in flat and "vlan routing 20 1" in flat, flat
    assert "push without --strict" in flat, flat       # the fix names the way out
    assert cluster.switch("sw1").config_commands == 0


def test_a_seed_may_name_ports_the_platform_does_not_list(farm, tmp_path, monkeypatch, capsys):
    """A stack unit the plan's single-unit platform does not have (unit 2 [FS], [CB]): the
    emulated switch keeps its block as given, and push keeps it as context (no port of the
    plan, no routing VLAN)."""
    set_ssh_env(monkeypatch)
    block = "interface ethernet 2/g5\nswitchport mode general\nswitchport general allowed vlan add 10,99 tagged\nexit\n"
    seed = PC62XX.replace("!\nexit\n", block + "exit\n")
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", seeds={"sw1": seed})
    sw1 = cluster.switch("sw1")
    assert block in sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    assert rc == 0 and "applied" in out, out + err
    assert block in sw1.running_config()
    cfg = FAMILIES["powerconnect-62xx"].parse_running(sw1.running_config(), switch="sw1",
                                                      platform=POWERCONNECT_6248)
    kept = [c for c in cfg.context if c.block == "interface ethernet 2/g5"]
    assert [c.vlans for c in kept if c.vlans] == [{10, 99}] and all(c.port is None for c in kept)
    with FakeSwitchFarm() as other:           # what is no port at all is still refused
        with pytest.raises(ValueError, match="line 2: the emulated powerconnect-6248 refuses 'interface ethernet 1/q5'"):
            other.add("x", host="127.0.0.81", seed="configure\ninterface ethernet 1/q5\nexit\n")


# -- 2. defaults print nothing; 3. the save dialog ----------------------------------------------

def test_flow_control_on_aging_default_and_a_silent_save_give_an_exact_read_back(
        farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-ring.yaml",
                            extra_sets=("settings.flow_control=true", "settings.aging_time=300"))
    rendered = (cluster.outdir / "switches" / "sw1.cfg").read_text()
    assert "\nflowcontrol\n" in rendered and "bridge aging-time 300" in rendered
    rc, out, err = push(capsys, cluster, "--yes")
    assert rc == 0 and len(re.findall(r"│ sw\d+ +│ applied ", out)) == len(cluster.plan["switches"]), out + err
    for name in cluster.plan["switches"]:
        sw = cluster.switch(name)
        text = sw.running_config()
        # The switch printed neither default, and push read back exactly what it predicted.
        assert "flowcontrol" not in text and "aging-time" not in text
        assert "flowcontrol" in sw.received and "bridge aging-time 300" in sw.received
        assert sw.saved == [text]
        # The key was one character, no Enter: the one `y` received is that key, no line.
        assert sw.keys == ["y"] and sw.received.count("y") == 1


def test_canonical_view_omits_firmware_defaults():
    family = FAMILIES["powerconnect-62xx"]
    on = family.parse("configure\nflowcontrol\nbridge aging-time 300\nend\n", switch="s", platform=POWERCONNECT_6248)
    silent = family.parse("configure\nend\n", switch="s", platform=POWERCONNECT_6248)
    off = family.parse("configure\nno flowcontrol\nbridge aging-time 1000\nend\n", switch="s",
                       platform=POWERCONNECT_6248)
    view = lambda c: [line.text for line in family.canonical_lines(c)]  # noqa: E731
    assert view(on) == view(silent) == []
    assert view(off) == ["bridge aging-time 1000", "no flowcontrol"]
    os6 = FAMILIES["dell-os6"]
    lag = os6.parse("interface port-channel 1\nhashing-mode 7\nexit\ninterface port-channel 2\nhashing-mode 6\nexit\n",
                    switch="s", platform=POWERCONNECT_8132)
    assert [l.text for l in os6.canonical_lines(lag)] == ["interface port-channel 2: hashing-mode 6"]


def test_a_save_lost_after_the_key_is_reported_as_maybe_saved_and_not_rolled_back(
        farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", {"leaf1": Faults(save_lost=True)})
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "leaf1")
    flat = " ".join(out.replace("│", " ").split())
    assert rc == 3 and "SAVE-UNCERTAIN" in flat, flat    # ExitCode.PARTIAL: state uncertain
    assert "may have changed" in flat and "untouched" not in flat
    leaf1 = cluster.switch("leaf1")
    assert leaf1.saved == [leaf1.running_config()]      # it was saved, and left as pushed
    assert leaf1.logins == 3            # the cabling check, the pre-flight, the push; no rollback session


REPLIES = [
    "Could not configure pvid.",
    "These VLANs do not exist:  2000.",
    "Interface not in General Mode.",
    "Interface not in Trunk Mode.",
    "Interface not in Access Mode.",
    "Interface is part of a port-channel",          # OS6 [OS6T]
    "Port is not general port.",
    "VLAN ID not found.",
    "\n          Failure Information\n---------------------------------------\n"
    "   VLANs failed to be configured : 1\n---------------------------------------\n"
    "VLAN      2000 ERROR: This VLAN does not exist.",
    "ERROR: Invalid input!",
    "          ^\n% Invalid input detected at '^' marker.",
    "Invalid input. Please specify an integer in the range 1 to 4093.",
    "Value is out of range. The valid range is 1 to 4093.",
    "An invalid interface has been used for this function",
]


@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: r.strip().splitlines()[-1][:40])
def test_each_real_reply_text_is_a_rejection(tmp_path, reply):
    with FakeSwitchFarm() as farm:
        sw = farm.add("sw1", host="127.0.0.61", password="pw",
                      faults=Faults(reject=r"^switchport general pvid", reject_reply=reply))
        known = farm.write_known_hosts(tmp_path / "known_hosts")
        session = SwitchSession(FAMILIES["powerconnect-62xx"].cli, sw.host, sw.port,
                                Credentials("admin", "pw"), HostKeyPolicy(known_hosts=known))
        try:
            for line in ("configure", "vlan database"):
                session.run(line)
            # Not an error: the VLAN warning [NM], [FS].
            assert "Warning: The use of large numbers" in session.run("vlan 300")
            for line in ("exit", "interface ethernet 1/g1", "switchport mode general"):
                session.run(line)
            with pytest.raises(CommandRejected) as info:
                session.run("switchport general pvid 300")
            assert reply.strip().splitlines()[-1] in str(info.value)
        finally:
            session.close()


def test_a_save_the_switch_answers_not_saved_is_maybe_saved(tmp_path):
    """`Configuration Not Saved!` after the key [FS], [NM]: a failure, and as the key was
    sent, the startup config may have changed (never "untouched")."""
    with FakeSwitchFarm() as farm:
        sw = farm.add("sw1", host="127.0.0.62", password="pw")
        known = farm.write_known_hosts(tmp_path / "known_hosts")
        cli = dataclasses.replace(FAMILIES["powerconnect-62xx"].cli, save_answer="n")
        session = SwitchSession(cli, sw.host, sw.port, Credentials("admin", "pw"),
                                HostKeyPolicy(known_hosts=known))
        try:
            with pytest.raises(SaveFailed, match="Configuration Not Saved!") as info:
                session.save()
        finally:
            session.close()
    assert info.value.startup_may_have_changed and not sw.saved


# -- 5. pre-flight: facts and context help -------------------------------------------------------

@pytest.mark.parametrize("platform, faults, needle", [
    (POWERCONNECT_6224, None, "the switch is a PowerConnect 6224 (the running config's !System Description)"),
    (dataclasses.replace(POWERCONNECT_6248, ports=POWERCONNECT_6248.ports[:40]), None,
     "port 1/g43, 1/g44, 1/g45, 1/g46, 1/g47 of the plan is not on the switch"),
    (POWERCONNECT_6248, Faults(lacks=r"hashing-mode"), "hashing-mode N under a port-channel: the switch "
                                                        "does not know `hashing-mode`"),
])
def test_preflight_stops_a_switch_that_is_not_what_the_plan_expects(tmp_path, monkeypatch, capsys,
                                                                    platform, faults, needle):
    set_ssh_env(monkeypatch)
    with FakeSwitchFarm() as farm:
        cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
        sw1 = cluster.switch("sw1")
        farm.switches["sw1"] = sw1 = farm.add("sw1", host="127.0.0.71", username=USER, password=PASSWORD,
                                             platform=platform, faults=faults)
        wire_as_planned(farm, cluster.outdir)
        targets = tmp_path / "targets.json"
        targets.write_text(json.dumps({"format": "vlanroute-targets/1", "switches": {
            "sw1": {"host": sw1.host, "port": sw1.port}}}))
        farm.write_known_hosts(cluster.known_hosts)
        for extra in (["--dry-run"], ["--yes"]):
            rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                               "--targets", str(targets), "--switch", "sw1", *extra)
            flat = " ".join(out.replace("│", " ").split())
            assert rc == 1 and "not-started" in flat and "pre-flight" in flat, flat
            assert needle in flat, flat
        assert sw1.config_commands == 0 and not sw1.saved


def test_context_help_probes_erase_what_they_type(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    rc, out, err = push(capsys, cluster, "--dry-run", "--show-commands", "--switch", "sw1")
    assert rc == 0, out + err
    sw1 = cluster.switch("sw1")
    guards = [line for line in sw1.received if PROBE_GUARD in line]
    # One probe per unconfirmed 62xx command this push sends, each erased down to the guard.
    assert guards == [PROBE_GUARD] * len(FAMILIES["powerconnect-62xx"].probes)
    assert not any(line.startswith(("hashing-mode", "flowcontrol", "bridge", "channel-group"))
                   for line in sw1.received)
    assert sw1.config_commands == 0


@pytest.mark.parametrize("patch, needle", [
    # a 62xx whose help offers only LACP, the one mode seen on a 62xx [LACP]
    (("channel_modes", lambda self: ("auto",)),
     "channel-group N mode on: the switch does not offer `channel-group 1 mode on` (its context help lists: auto)"),
    # a firmware whose aging range ends below the plan's value (the range is unknown [FP])
    (("aging_range", "<10-630>"),
     "bridge aging-time: the switch does not offer `bridge aging-time 1000000` (its context help lists: <10-630>)"),
    # a help in a layout vlanroute does not read: going on would be a guess
    (("aging_range", "(10 to 1000000 seconds)"),
     "bridge aging-time: the switch's context help for `bridge aging-time` lists neither keywords nor a "
     "<lo-hi> range (it begins '(10 to 1000000 seconds) Aging time in seconds.'), so "
     "`bridge aging-time 1000000` cannot be confirmed"),
])
def test_preflight_stops_a_switch_whose_help_does_not_offer_the_value(farm, tmp_path, monkeypatch, capsys,
                                                                     patch, needle):
    """The probes read the values the help lists (keywords, `<lo-hi>`), not only whether the
    command exists: a value outside them stops the switch before any change."""
    from vlanroute.lab import cli as lab_cli
    name, value = patch
    if name == "aging_range":
        table = lab_cli.Interpreter.help_table
        def narrowed(self):  # type: ignore[no-untyped-def]
            out = table(self)
            out[("config", ("bridge", "aging-time"))] = [(value, "Aging time in seconds.")]
            return out
        monkeypatch.setattr(lab_cli.Interpreter, "help_table", narrowed)
    else:
        monkeypatch.setattr(lab_cli.Interpreter, name, value)
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    flat = " ".join(out.replace("│", " ").split())
    assert rc == 1 and "not-started" in flat and "pre-flight" in flat, flat
    assert needle in flat, flat
    assert cluster.switch("sw1").config_commands == 0


# -- OS6: push --dry-run and audit ---------------------------------------------------------------

def test_os6_dry_run_on_a_production_switch_and_audit_reads_po(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", platform=POWERCONNECT_8132,
                            extra_sets=("platform=powerconnect-8132", "hosts.count=64"),
                            seeds={"sw1": OS6})
    rc, out, err = push(capsys, cluster, "--dry-run", "--show-commands", "--switch", "sw1")
    assert rc == 0 and "dry-run" in out, out + err
    changes = diff_lines(out)
    assert "+vlan 10,20,99,101-104" in changes and "-vlan 10,20,99" in changes
    assert not any(re.search(r"Te1/0/1[0-4]:|port-channel 20", l) for l in changes)
    assert "+interface Te1/0/1: switchport general pvid 101" in changes
    assert cluster.switch("sw1").config_commands == 0
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--yes", "--switch", "sw1")
    assert rc == 2 and "push cannot roll back" in err and "dell-os6" in err

    lag = next(iter(cluster.plan["switches"]["sw1"]["lags"]))
    host = next(h for h, d in cluster.plan["hosts"].items() if d["switch"] == "sw2")
    assert cluster.plan["hosts"][host].get("mac") is None      # the seed inventory has no MACs
    sw1 = cluster.switch("sw1")
    sw1.seed_mac(101, "00:1e:c9:00:00:01", f"Po{lag}")
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--switch", "sw1")
    # No host has a MAC: audit refuses before connecting (it said "0 of 0" and exited 0).
    assert rc == 2 and "nothing to audit" in err, out + err
    text = sw1.interpreter().execute("enable").output + sw1.interpreter()._show(["mac", "address-table"]).output
    assert re.search(rf"^101\s+001E\.C900\.0001\s+Dynamic\s+Po{lag}$", text, re.M)


# -- the plan: firmware facts --------------------------------------------------------------------

def test_enhanced_lag_hash_on_a_62xx_is_refused_with_the_firmware_fact(capsys):
    rc, out, err = run(capsys, "plan", str(REPO / "inventories" / "seed-torus.yaml"),
                       "--set", "settings.lag_hash=enhanced")
    assert rc == 2
    assert "settings.lag_hash" in err and "firmware 4.0" in err and "3.3.x" in err


# -- 6. the lab, as people use it ----------------------------------------------------------------

def test_lab_up_env_and_down(tmp_path):
    outdir = tmp_path / "out"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VLANROUTE_", "XDG_", "PYTEST_"))}
    env.update(HOME=str(tmp_path), VLANROUTE_LOOPBACK_ONLY="1", COLUMNS="200",
               PYTHONPATH=str(REPO))
    cli = [sys.executable, "-m", "vlanroute.cli"]
    state = tmp_path / "state"

    def vr(*args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], env={**env, **(extra_env or {})}, capture_output=True,
                              text=True, timeout=240, cwd=tmp_path)

    r = vr("render", str(REPO / "inventories" / "seed-ring.yaml"), "-o", str(outdir))
    assert r.returncode == 0, r.stderr
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    seed = PC62XX.replace("1/g42", "1/g40").replace("1/g38", "1/g36").replace("1/g39", "1/g37")
    (seeds / "sw1.cfg").write_text(seed)
    r = vr("lab", "up", str(outdir), "--seed", str(seeds), "--state-dir", str(state))
    try:
        assert r.returncode == 0, r.stderr
        exported = dict(re.findall(r"^export (\w+)=(.*)$", r.stdout, re.M))
        assert set(exported) == {"VLANROUTE_SSH_USER", "VLANROUTE_SSH_PASSWORD", "VLANROUTE_TARGETS",
                                 "VLANROUTE_KNOWN_HOSTS"}
        assert "emulated switches (powerconnect-6248)" in r.stderr and "127.0.0.11" in r.stderr
        lab_env = {k: v.strip("'") for k, v in exported.items()}
        again = vr("lab", "up", str(outdir), "--state-dir", str(state))
        assert again.returncode == 2 and "already running" in again.stderr
        r = vr("push", str(outdir), "--yes", extra_env=lab_env)
        assert r.returncode == 0 and "applied" in r.stdout, r.stdout + r.stderr
        r = vr("push", str(outdir), "--dry-run", extra_env=lab_env)
        assert r.returncode == 0 and r.stdout.count("unchanged") == 8, r.stdout + r.stderr
        r = vr("audit", str(outdir), extra_env=lab_env)
        assert r.returncode == 2 and "nothing to audit" in r.stderr, r.stdout + r.stderr   # no MACs
    finally:
        down = vr("lab", "down", "--state-dir", str(state))
    assert down.returncode == 0 and "stopped 8 emulated switches" in down.stderr
    final = (state / "running" / "sw1.cfg").read_text()
    assert 'hostname "lab-core-7"' in final and "vlan routing 20 1" in final
    # Every line of the seed is still there, in its block, but the VLAN list push extended
    # and `switchport mode access`, the default the switch never prints.
    assert unrelated(seed, final, {"vlan 10,20,30,99", "switchport mode access"}) == []
    assert not (state / "targets.json").exists()
    r = vr("push", str(outdir), "--dry-run", extra_env={"VLANROUTE_TARGETS": str(state / "targets.json"),
                                                          "VLANROUTE_SSH_USER": "x", "VLANROUTE_SSH_PASSWORD": "y"})
    assert r.returncode == 2 and "no such target map" in r.stderr


# -- 3. the pager of each family ---------------------------------------------------------------

def test_os6_session_reads_through_the_pager_when_terminal_length_0_is_ignored(tmp_path):
    """OS6 takes `terminal length 0` at login [OS6T], [NM10]; where it does not stop the
    paging, the session still reads the whole running config through `--More--`."""
    with FakeSwitchFarm() as farm:
        sw = farm.add("sw1", host="127.0.0.63", password="pw", platform=POWERCONNECT_8132, seed=OS6,
                      faults=Faults(pager_stuck=True))
        known = farm.write_known_hosts(tmp_path / "known_hosts")
        session = SwitchSession(FAMILIES["dell-os6"].cli, sw.host, sw.port, Credentials("admin", "pw"),
                                HostKeyPolicy(known_hosts=known))
        try:
            text = session.running_config()
        finally:
            session.close()
    want = sw.running_config().splitlines()
    assert len(want) > 2 * 23                       # more than two pages
    assert text.splitlines() == want                # line for line: no blank line per page
    assert "More" not in text


class _ScriptedChannel:
    """The netmiko connection of a SwitchSession, replaying what a switch sends back for
    each write (one reply per write, in order)."""

    RETURN = "\n"
    remote_conn = None              # no SSH channel: a read that never ends fails at once

    def __init__(self, replies: dict[str, list[str]]) -> None:
        self.replies, self.pending, self.written = replies, "", []

    def write_channel(self, data: str) -> None:
        self.written.append(data)
        self.pending += self.replies[data].pop(0)

    def read_channel(self) -> str:
        out, self.pending = self.pending, ""
        return out


@pytest.mark.parametrize("family, pager", [
    ("powerconnect-62xx", "--More-- or (q)uit"),      # [FS], [8024F]
    ("dell-os6", "--More--"),                         # OS6's own text is in no source; the FASTPATH stem
    ("apresia-aeos", "--- more ---"),                 # netmiko commit bf7c90c4 [NKA]
])
@pytest.mark.parametrize("leave", [
    "\n",                   # a line end after the key [FS]
    "\r\n",
    "\r" + " " * 20 + "\r",  # the prompt overwritten with spaces in place
    "\b" * 8,               # or erased with backspaces, then the next line follows
])
def test_each_family_pages_through_its_own_pager_text(family, pager, leave):
    """The whole output, line for line: what the switch prints to leave the pager prompt
    is not a blank line of the config (a backup must be the config as the switch has it)."""
    cli = FAMILIES[family].cli
    chan = _ScriptedChannel({
        "show running-config\n": ["show running-config\nline 1\nline 2\n" + pager],
        cli.pager_key: [leave + "line 3\n" + pager + " ", leave + "line 4\nsw1#"],
    })
    session = SwitchSession.__new__(SwitchSession)      # no SSH: the scripted channel instead
    session.cli, session._conn, session._errors, session.commands_sent = cli, chan, [], 0
    session._pager = re.compile("(?:" + "|".join(cli.pager_patterns) + r")[ \t]*$")
    session._prompt_re = re.compile(r"sw1(?:\([^)\r\n]*\))?[#>]\s*$")
    out = session.run("show running-config", check=False)
    assert out.splitlines() == ["line 1", "line 2", "line 3", "line 4"]
    assert chan.written == ["show running-config\n", cli.pager_key, cli.pager_key]
