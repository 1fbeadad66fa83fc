"""Parsers for the other families (Dell OS6, APRESIA AEOS, Linux bridge), and each family
verified end to end on real `vlanroute render` output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vlanroute.cli import main
from vlanroute.errors import UserError
from vlanroute.drivers import FAMILIES
from vlanroute.model.platforms import PLATFORMS
from vlanroute.verify.configs import verify_outdir

ROOT = Path(__file__).resolve().parent.parent


def parse(family: str, platform: str, text: str):
    return FAMILIES[family].parse(text, switch="s1", platform=PLATFORMS[platform], source="switches/s1.cfg")


def test_every_template_family_has_a_parser() -> None:
    families = {p.stem for p in (ROOT / "templates" / "switch").glob("*.j2")}
    assert families <= set(FAMILIES)


# --- Dell OS6 --------------------------------------------------------------------------------

OS6 = """\
configure
vlan 101
name "route-101"
exit
vlan 102
exit
interface port-channel 4
switchport mode general
switchport general allowed vlan add 101-102 tagged
hashing-mode 6
exit
interface range Te1/0/21-22
channel-group 4 mode on
exit
interface tengigabitethernet 1/0/3
switchport mode general
switchport general allowed vlan add 101-102 untagged
switchport general pvid 102
switchport general allowed vlan remove 1
green-mode eee
exit
interface Te1/0/4
no green-mode eee
exit
mac address-table aging-time 1000000
no flowcontrol
end
"""


def test_os6_subset() -> None:
    cfg = parse("dell-os6", "powerconnect-8132", OS6)
    assert cfg.vlans == {1, 101, 102}
    lag = cfg.lags[4]
    assert (lag.members, lag.tagged, lag.untagged, lag.hash_mode) == (["Te1/0/21", "Te1/0/22"], {101, 102}, {1}, "6")
    p = cfg.ports["Te1/0/3"]                 # the long interface name is the same port
    assert (p.pvid, p.untagged, p.tagged) == (102, {101, 102}, set())
    assert cfg.aging_time == 1_000_000 and cfg.flow_control is False
    assert cfg.eee is None                   # ports disagree (on for Te1/0/3, off for Te1/0/4)
    assert cfg.touched == {"Te1/0/3", "Te1/0/4", "Te1/0/21", "Te1/0/22"}


def test_os6_rejects_the_62xx_vlan_database_and_port_names() -> None:
    with pytest.raises(UserError, match="line 2: unsupported Dell OS6 command"):
        parse("dell-os6", "powerconnect-8132", "configure\nvlan database\n")
    with pytest.raises(UserError, match="line 1: unsupported interface"):
        parse("dell-os6", "powerconnect-8132", "interface ethernet 1/g1\n")


# --- APRESIA AEOS ----------------------------------------------------------------------------

AEOS = """\
configure terminal
vlan 101-103
exit
port-channel load-balance src-dst-ip-port
interface port-channel 2
 switchport mode trunk
 switchport trunk add 101,103
exit
interface port 1/63
 channel-group 2 mode on
exit
interface port 1/64
 channel-group 2 mode on
exit
interface port 1/1
 switchport mode trunk
 switchport trunk add 101-103 untagged
 switchport trunk native 103
 switchport trunk remove 1
 pause enable
exit
interface port-channel 2
 switchport trunk remove 1,102
 spanning-tree disable
exit
mac-address-table aging-time 1000000
!
end
"""

# What AEOS-style configs show (ask.wireshark.org question 21722): a trunk with a native
# VLAN and tagged members; show-run style, sub-lines indented, blocks ended by `!`.
AEOS_SEEN = """\
interface port 1/5
 switchport mode trunk
 switchport trunk add 10,20
 switchport trunk native 10
 pause enable
!
interface port 1/6
 switchport mode trunk
 switchport trunk add 30
!
end
"""


def test_aeos_subset() -> None:
    cfg = parse("apresia-aeos", "apresia-15000-64xl", AEOS)
    assert cfg.vlans == {1, 101, 102, 103}
    lag = cfg.lags[2]
    # tagged 101,103 added, then VLAN 1 (untagged native default) and 102 (never there) removed
    assert (lag.members, lag.tagged, lag.untagged, lag.stp_enabled) == (["1/63", "1/64"], {101, 103}, set(), False)
    assert cfg.lag_hash == "src-dst-ip-port"
    p = cfg.ports["1/1"]
    assert (p.pvid, p.untagged, p.tagged) == (103, {101, 102, 103}, set())
    assert cfg.flow_control is True and cfg.aging_time == 1_000_000


def test_aeos_trunk_as_seen_in_aeos_style_configs() -> None:
    cfg = parse("apresia-aeos", "apresia-15000-64xl", AEOS_SEEN)
    p5, p6 = cfg.ports["1/5"], cfg.ports["1/6"]
    # the native VLAN is the PVID and untagged; `add` makes tagged members; VLAN 1 stays the
    # native VLAN of a trunk that names none (assumed)
    assert (p5.pvid, p5.untagged, p5.tagged) == (10, {1, 10}, {20})
    assert (p6.pvid, p6.untagged, p6.tagged) == (1, {1}, {30})
    assert cfg.flow_control is True          # only 1/5 says it: pause enable


def test_aeos_unknown_command_names_line() -> None:
    with pytest.raises(UserError, match=r"switches/s1.cfg: line 3: unsupported APRESIA AEOS interface command"):
        parse("apresia-aeos", "apresia-15000-64xl", "interface port 1/1\n switchport mode trunk\n"
                                                    " switchport hybrid native vlan 5\n")


# --- Linux bridge ----------------------------------------------------------------------------

LINUX = """\
#!/bin/sh
set -eu
if [ -d /sys/module/bonding ] || modprobe bonding 2>/dev/null; then
    LAG1=bond1
    ip -batch - <<EOF
link add bond1 type bond mode balance-xor xmit_hash_policy layer3+4 miimon 100
link set p7 master bond1
link set p8 master bond1
EOF
else
    LAG1=p7
fi
ip -batch - <<EOF
link add br0 type bridge vlan_filtering 1 stp_state 0 ageing_time 100000000
link set $LAG1 master br0
link set p1 master br0
link set p2 master br0
EOF
bridge -batch - <<EOF
vlan add dev $LAG1 vid 101-102
vlan add dev p1 vid 101 pvid untagged
vlan add dev p1 vid 102 untagged
vlan add dev p2 vid 101 pvid untagged
vlan add dev p2 vid 101 untagged
vlan del dev $LAG1 vid 1
vlan del dev p1 vid 1
EOF
ip -batch - <<EOF
link set p7 up
link set p8 up
link set $LAG1 up
link set p1 up
link set p2 up
link set p3 up
link set br0 up
EOF
"""


def test_linux_bridge_script() -> None:
    cfg = parse("linux-bridge", "linux-bridge", LINUX)
    assert not cfg.stp_global_enabled and cfg.aging_time == 1_000_000   # centiseconds / 100
    lag = cfg.lags[1]
    # the bonding branch: LAG1=bond1; `vid 101-102` is both VLANs; VLAN 1 (the enslave
    # default) deleted, so no PVID
    assert (lag.members, lag.tagged, lag.untagged, lag.pvid, lag.hash_mode) == (
        ["p7", "p8"], {101, 102}, set(), 0, "layer3+4")
    p1 = cfg.ports["p1"]
    assert (p1.pvid, p1.untagged, p1.tagged) == (101, {101, 102}, set())
    # re-adding the PVID VLAN without `pvid` clears the PVID (kernel behaviour); VLAN 1
    # stays, still untagged, since p2's `vid 1` is never deleted
    p2 = cfg.ports["p2"]
    assert (p2.pvid, p2.untagged) == (0, {1, 101})
    # p3 is up but never enslaved to br0: not a bridge port
    assert not cfg.ports["p3"].enabled and cfg.ports["p1"].enabled
    assert cfg.vlans == {1, 101, 102}


@pytest.mark.parametrize("text, needle", [
    ("ip link add br0 type bridge vlan_filtering 0\n", "line 1: the bridge must be created with vlan_filtering 1"),
    ("ip link add br0 type bridge vlan_filtering 1\nbridge vlan add dev p1 vid 5 pvid untagged master\n"
     "bridge vlan add dev $X vid 5\n", "line 3: shell variable $X is never assigned"),
    ("ip link add br0 type bridge vlan_filtering 1\nbridge vlan add dev p600 vid 5\n",
     "line 2: port p600 does not exist on linux-bridge"),
    # iproute2 takes one VLAN or one rising range per command, and no PVID on a range
    ("ip link add br0 type bridge vlan_filtering 1\nbridge vlan add dev p1 vid 5-5\n",
     "line 2: invalid VLAN range '5-5'"),
    ("ip link add br0 type bridge vlan_filtering 1\nbridge vlan add dev p1 vid 5,7\n",
     "line 2: bad VLAN id '5,7'"),
    ("ip link add br0 type bridge vlan_filtering 1\nbridge vlan add dev p1 vid 5-9 pvid untagged\n",
     "line 2: pvid cannot be configured for a vlan range"),
    ("ip link add br0 type bridge vlan_filtering 1\nbridge vlan add dev p1 vid 4090-4095\n",
     "line 2: VLAN '4090-4095' outside 1-4094"),
    ("set -eu\n", "line 1: the script never creates bridge br0"),
])
def test_linux_bridge_errors(text: str, needle: str) -> None:
    with pytest.raises(UserError) as info:
        parse("linux-bridge", "linux-bridge", text)
    assert needle in info.value.render()


# --- every family end to end ------------------------------------------------------------------

@pytest.fixture(scope="module", params=["powerconnect-8132", "apresia-15000-64xl", "linux-bridge"])
def rendered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fam") / request.param
    platform = ["--set", f"platform={request.param}"]
    if request.param == "apresia-15000-64xl":     # AEOS host ports need the confirmation
        platform = ["--set", "platforms={aeos: {base: apresia-15000-64xl, "
                             "confirm: [host-untagged-in-many-vlans]}}", "--set", "platform=aeos"]
    assert main(["render", str(ROOT / "inventories" / "seed-torus.yaml"), "-o", str(out), "--no-verify",
                 *platform, "--set", "hosts={per_switch: 3}", "--set", "switches={}"]) == 0
    return out


def test_family_verifies_clean(rendered: Path) -> None:
    r = verify_outdir(rendered)
    assert r.ok, r.violations[:5]
    assert "552 of 552 ordered host pairs" in r.summary[2]        # 24 hosts: 24 * 23


def test_family_wrong_pvid_is_caught(rendered: Path, tmp_path: Path) -> None:
    import json
    out = tmp_path / "o"
    shutil.copytree(rendered, out)
    doc = json.loads((out / "plan.json").read_text())
    host = doc["hosts"]["node001"]
    wrong = next(v["id"] for v in doc["vlans"] if v["id"] != host["vlan"])
    cfg = out / "switches" / f"{host['switch']}.cfg"
    text = cfg.read_text()
    family = doc["switches"][host["switch"]]["family"]
    if family == "linux-bridge":
        # move the `pvid` flag from the host's VLAN to another one (the PVID VLAN has its
        # own command, the others come in ranges; re-adding `wrong` with `pvid` makes it the PVID)
        old = f"vlan add dev {host['port']} vid {host['vlan']} pvid untagged\n"
        assert old in text
        text = text.replace(old, f"vlan add dev {host['port']} vid {host['vlan']} untagged\n"
                                 f"vlan add dev {host['port']} vid {wrong} pvid untagged\n")
    else:
        pvid = "switchport trunk native" if family == "apresia-aeos" else "switchport general pvid"
        old = f"{pvid} {host['vlan']}"
        assert old in text
        # only the first occurrence: node001's port comes first among the host ports
        text = text.replace(old, f"{pvid} {wrong}", 1)
    cfg.write_text(text)
    r = verify_outdir(out)
    assert not r.ok
    assert (f"{host['switch']} port {host['port']} (host node001): PVID {wrong}, plan says {host['vlan']}"
            in r.violations)
