"""PowerConnect 62xx parser: rendered subset, running-config form, defaults, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from vlanroute.errors import UserError
from vlanroute.drivers import FAMILIES
from vlanroute.model.bridge import LagPort
from vlanroute.model.platforms import PLATFORMS

PC6248 = PLATFORMS["powerconnect-6248"]


def parse(text: str):
    return FAMILIES["powerconnect-62xx"].parse(text, switch="sw1", platform=PC6248,
                                               source="switches/sw1.cfg")


RENDERED = """\
! vlanroute rendered config
configure
vlan database
vlan 101-104
exit
interface port-channel 1
switchport mode general
switchport general allowed vlan add 101,103 tagged
hashing-mode 6
exit
interface range ethernet 1/g45-1/g46
channel-group 1 mode on
exit
interface range ethernet 1/g1-1/g3,1/g7
switchport mode general
switchport general pvid 102
switchport general allowed vlan add 101-104 untagged
exit
interface ethernet 1/g44
switchport mode general
switchport general allowed vlan add 102,104 tagged
exit
interface port-channel 1
switchport general allowed vlan remove 1
spanning-tree disable
exit
interface ethernet 1/g44
switchport general allowed vlan remove 1
spanning-tree disable
exit
interface range ethernet 1/g1-1/g3,1/g7
switchport general allowed vlan remove 1
exit
no spanning-tree
bridge aging-time 1000000
flowcontrol
end
"""

# What a 62xx prints for the same state in `show running-config` (header and layout
# after a real PC6248 3.3.7.3 dump): one interface per block, device chatter, stack block.
RUNNING = """\
!Current Configuration:
!System Description "PowerConnect 6248, 3.3.7.3, VxWorks 6.5"
!System Software Version 3.3.7.3
!
configure
vlan database
vlan 101-104
exit
hostname "sw1"
stack
member 1 2
exit
ip address 192.0.2.11 255.255.255.0
no spanning-tree
bridge aging-time 1000000
interface ethernet 1/g1
switchport mode general
switchport general pvid 102
switchport general allowed vlan add 101-104
switchport general allowed vlan remove 1
exit
interface ethernet 1/g45
channel-group 1 mode on
exit
interface ethernet 1/g46
channel-group 1 mode on
exit
interface port-channel 1
switchport mode general
switchport general allowed vlan add 101,103 tagged
switchport general allowed vlan remove 1
spanning-tree disable
hashing-mode 6
exit
exit
"""


def test_dispatcher_has_powerconnect() -> None:
    assert "powerconnect-62xx" in FAMILIES


def test_rendered_subset() -> None:
    cfg = parse(RENDERED)
    assert cfg.vlans == {1, 101, 102, 103, 104}
    assert not cfg.stp_global_enabled and cfg.aging_time == 1_000_000 and cfg.flow_control
    for name in ("1/g1", "1/g2", "1/g3", "1/g7"):
        p = cfg.ports[name]
        assert (p.pvid, p.untagged, p.tagged) == (102, {101, 102, 103, 104}, set())
    # 1/g4 is untouched: factory state, VLAN 1 untagged, PVID 1, STP on.
    assert cfg.ports["1/g4"].is_default()
    trunk = cfg.ports["1/g44"]
    assert (trunk.untagged, trunk.tagged, trunk.stp_enabled) == (set(), {102, 104}, False)
    lag = cfg.lags[1]
    assert lag.members == ["1/g45", "1/g46"]
    assert (lag.untagged, lag.tagged, lag.stp_enabled, lag.hash_mode) == (set(), {101, 103}, False, "6")
    assert cfg.effective("1/g46") is lag and cfg.logical_port("1/g46") == LagPort(1)
    # the member's own settings stay the factory ones, the LAG's forward
    assert cfg.ports["1/g46"].untagged == {1}
    # every port of the 6248 (the 10G module ports 1/xg1-1/xg4 too) except the LAG's members
    assert set(cfg.bridge_ports()) == ({f"1/g{i}" for i in range(1, 45)} | {f"1/g{i}" for i in (47, 48)}
                                       | {f"1/xg{i}" for i in range(1, 5)} | {LagPort(1)})


def test_running_config_form_equals_rendered_state() -> None:
    a, b = parse(RENDERED), parse(RUNNING)
    for name in ("1/g1", "1/g45", "1/g46"):
        pa, pb = a.ports[name], b.ports[name]
        assert (pa.pvid, pa.untagged, pa.tagged, pa.lag) == (pb.pvid, pb.untagged, pb.tagged, pb.lag)
    la, lb = a.lags[1], b.lags[1]
    assert (la.untagged, la.tagged, la.members, la.stp_enabled) == (lb.untagged, lb.tagged, lb.members, lb.stp_enabled)
    assert (a.vlans, a.stp_global_enabled, a.aging_time) == (b.vlans, b.stp_global_enabled, b.aging_time)


def test_untagged_is_the_default_keyword_and_add_moves_between_sets() -> None:
    cfg = parse("interface ethernet 1/g9\nswitchport mode general\n"
                "switchport general allowed vlan add 5,7 tagged\n"
                "switchport general allowed vlan add 7\n"
                "switchport general allowed vlan remove 1\n")
    p = cfg.ports["1/g9"]
    assert (p.untagged, p.tagged) == ({7}, {5})


def test_access_mode_and_port_options() -> None:
    cfg = parse("interface ethernet 1/g2\nswitchport access vlan 20\nexit\n"
                "interface ethernet 1/g3\nswitchport mode general\n"
                "switchport general acceptable-frame-type tagged-only\n"
                "switchport general ingress-filtering disable\nshutdown\nexit\n"
                "no bridge aging-time\n")
    p2, p3 = cfg.ports["1/g2"], cfg.ports["1/g3"]
    assert (p2.pvid, p2.untagged, p2.tagged) == (20, {20}, set())
    assert (p3.acceptable, p3.ingress_filtering, p3.enabled) == ("tagged-only", False, False)
    assert cfg.aging_time == 300 and cfg.stp_global_enabled


@pytest.mark.parametrize("text, needle", [
    ("interface ethernet 1/g5\nswitchport general pvid 102\n", "not in general mode"),
    ("ip routing\n", "unsupported PowerConnect 62xx command"),
    ("interface ethernet 1/g49\n", "port 1/g49 does not exist on powerconnect-6248"),
    ("vlan database\nvlan 101, 102\n", "unsupported command in `vlan database`"),
    ("vlan database\nvlan 4094\n", "VLAN 4094 outside"),
    ("interface ethernet 1/g5\nswitchport mode trunk\n", "switchport mode trunk is not modelled"),
    ("bridge aging-time 5\n", "aging time 5 outside"),
    ("interface ethernet 1/g1\nswitchport mode general\nswitchport general allowed vlan add 3-1 tagged\n",
     "VLAN range '3-1' outside"),
])
def test_errors_name_file_and_line(text: str, needle: str) -> None:
    with pytest.raises(UserError) as info:
        parse("configure\n" + text)
    msg = info.value.render()
    assert needle in msg
    last = len(text.splitlines()) + 1          # +1 for the leading `configure`
    assert msg.startswith(f"switches/sw1.cfg: line {last}:")


@settings(deadline=None)     # a parse takes about a millisecond; a loaded CI machine may stall
@given(st.sets(st.integers(min_value=2, max_value=4093), min_size=1, max_size=30))
def test_any_vlan_list_round_trips(ids: set[int]) -> None:
    # Written here independently of the renderer: runs of consecutive ids become N-M.
    parts, run = [], []
    for v in sorted(ids):
        if run and v == run[-1] + 1:
            run.append(v)
        else:
            if run:
                parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = [v]
    parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    cfg = parse(f"vlan database\nvlan {','.join(parts)}\nexit\n")
    assert cfg.vlans == ids | {1}
