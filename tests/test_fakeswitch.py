"""The PowerConnect 62xx emulator: CLI behaviour (no SSH) and an SSH session via netmiko."""

from __future__ import annotations

import re

import pytest
from netmiko import ConnectHandler
from netmiko.exceptions import NetmikoAuthenticationException

from vlanroute.lab import FakeSwitchFarm, Faults
from vlanroute.lab.cli import Interpreter
from vlanroute.lab.server import PC6248_PORTS
from vlanroute.lab.state import SwitchState
from vlanroute.drivers import family_of, parse_config
from vlanroute.model.platforms import POWERCONNECT_6248

pytestmark = pytest.mark.timeout(60)


def cli() -> Interpreter:
    return Interpreter("sw1", SwitchState.factory_default(PC6248_PORTS, 48))


def quiet() -> Interpreter:
    """An interpreter whose output is not paged (the SSH session reads through the pager)."""
    it = cli()
    it.paging = False
    return it


def drive(it: Interpreter, *lines: str) -> list[str]:
    return [it.execute(line).output for line in lines]


def test_prompts_follow_the_modes():
    it = cli()
    seen = []
    for line in ["enable", "configure", "vlan database", "exit", "interface ethernet 1/g1",
                 "exit", "interface port-channel 1", "exit", "interface range ethernet 1/g1-1/g4",
                 "end"]:
        it.execute(line)
        seen.append(it.prompt())
    assert seen == ["sw1#", "sw1(config)#", "sw1(config-vlan)#", "sw1(config)#",
                    "sw1(config-if-1/g1)#", "sw1(config)#", "sw1(config-if-ch1)#",
                    "sw1(config)#", "sw1(config-if)#", "sw1#"]


def test_switch_errors_like_the_real_one():
    """Reply texts of internap/fake-switches' 6224P emulator and netman's mocks (evidence §6)."""
    it = cli()
    drive(it, "enable", "configure")
    assert "% Invalid input detected at '^' marker." in it.execute("frobnicate").output
    drive(it, "interface ethernet 1/g5")
    assert "Port is not general port." in it.execute("switchport general pvid 101").output
    assert "Interface not in General Mode." in it.execute("switchport general allowed vlan add 101").output
    it.execute("switchport mode general")
    assert "Could not configure pvid." in it.execute("switchport general pvid 101").output
    failure = it.execute("switchport general allowed vlan add 101 tagged").output
    assert "VLANs failed to be configured : 1" in failure
    assert "ERROR: This VLAN does not exist." in failure
    assert "Invalid input" in it.execute("switchport general allowed vlan add 1 2").output
    assert "VLAN ID not found." in it.execute("switchport access vlan 300").output
    assert it.state.ports["1/g5"].pvid == 1                  # nothing applied by errors
    drive(it, "exit", "vlan database")
    assert "These VLANs do not exist:  300." in it.execute("no vlan 300").output
    assert "Warning: The use of large numbers of VLANs" in it.execute("vlan 300").output
    assert "Invalid input" in cli().execute("configure").output   # not before `enable`


def test_running_config_round_trips_through_the_parser():
    it = quiet()
    drive(it, "enable", "configure", "vlan database", "vlan 101-104", "exit",
          "interface port-channel 2", "switchport mode general",
          "switchport general allowed vlan add 101,103 tagged",
          "switchport general allowed vlan remove 1", "spanning-tree disable", "hashing-mode 6",
          "exit", "interface range ethernet 1/g45-1/g46", "channel-group 2 mode on", "exit",
          "interface ethernet 1/g5", "switchport mode general",
          "switchport general allowed vlan add 101-104 untagged", "switchport general pvid 102",
          "switchport general allowed vlan remove 1", "exit", "no spanning-tree",
          "bridge aging-time 1000000", "end")
    cfg = parse_config(POWERCONNECT_6248, it.execute("show running-config").output, switch="sw1")
    assert cfg.vlans == {1, 101, 102, 103, 104}
    assert not cfg.stp_global_enabled and cfg.aging_time == 1_000_000
    lag = cfg.lags[2]
    assert (lag.tagged, lag.untagged, lag.stp_enabled, lag.hash_mode) == ({101, 103}, set(),
                                                                          False, "6")
    assert lag.members == ["1/g45", "1/g46"]
    host = cfg.ports["1/g5"]
    assert (host.pvid, host.untagged, host.tagged) == (102, {101, 102, 103, 104}, set())
    assert cfg.ports["1/g6"].is_default()


def test_save_asks_and_takes_one_key():
    it = cli()
    drive(it, "enable")
    assert it.execute("copy running-config startup-config").output.endswith("(y/n) ")
    assert it.awaiting_key and it.prompt() == ""
    assert "Configuration Saved!" in it.answer_key("y").output
    assert it.on_save and it.prompt() == "sw1#"
    it.execute("copy running-config startup-config")
    assert "Not Saved" in it.answer_key("n").output and len(it.on_save) == 1


def test_address_table_lists_seeded_entries():
    it = cli()
    from vlanroute.lab.state import MacEntry
    it.state.mac_table.append(MacEntry(101, "00:1e:c9:00:00:01", "ch1"))
    out = drive(it, "enable", "show bridge address-table")[1]
    assert "Aging time is 300 Sec" in out
    # netman's mock of a real 62xx: `4063     0013.C601.53A7        1/g22      Dynamic`
    assert re.search(r"^101\s+001E\.C900\.0001\s+ch1\s+Dynamic$", out, re.M)
    assert "Total MAC Addresses in use:1" in out


def test_netmiko_dell_os6_session_and_faults(tmp_path):
    with FakeSwitchFarm() as farm:
        sw = farm.add("sw9", host="127.0.0.9", password="pw")
        bad = farm.add("sw10", host="127.0.0.10", password="pw", faults=Faults(refuse_auth=True))
        known = farm.write_known_hosts(tmp_path / "known_hosts")
        params = dict(device_type="dell_os6", username="admin", password="pw", ssh_strict=True,
                      alt_host_keys=True, alt_key_file=str(known), allow_agent=False,
                      use_keys=False)
        conn = ConnectHandler(host=sw.host, port=sw.port, **params)
        assert conn.find_prompt() == "sw9#"              # netmiko logged in and enabled
        assert "terminal length 0" in sw.received
        sw.state.vlans.add(300)
        assert "vlan 300" in conn.send_command("show running-config")
        conn.remote_conn_pre.close()      # netmiko's disconnect() probes for seconds
        with pytest.raises(NetmikoAuthenticationException):
            ConnectHandler(host=bad.host, port=bad.port, **params)
        assert bad.logins == 0


def test_fake_switch_refuses_non_loopback_addresses():
    with FakeSwitchFarm() as farm:
        with pytest.raises(ValueError):
            farm.add("x", host="192.0.2.1")


def test_pager_and_terminal_length_62xx_refuses():
    """The 62xx emulator of fake-switches has no `terminal` command; long output stops at
    `--More-- or (q)uit` (also on a real 8024F transcript) and any key but q shows more."""
    it = cli()
    for n in range(1, 40):
        it.state.ports[f"1/g{n}"].stp_disabled = True
    it.execute("enable")
    assert "Invalid input" in it.execute("terminal length 0").output
    first = it.execute("show running-config").output
    assert first.endswith("--More-- or (q)uit") and it.awaiting_key
    rest, pages = "", 1
    while it.awaiting_key and pages < 20:
        rest += it.answer_key(" ").output
        pages += 1
    assert "interface ethernet 1/g39" in rest and pages > 2 and not it.awaiting_key


def test_push_session_pages_through_the_62xx_pager(tmp_path):
    from vlanroute.device.credentials import Credentials
    from vlanroute.device.session import HostKeyPolicy, SwitchSession
    with FakeSwitchFarm() as farm:
        sw = farm.add("sw11", host="127.0.0.11", password="pw")
        for n in range(1, 49):
            sw.state.ports[f"1/g{n}"].stp_disabled = True
        known = farm.write_known_hosts(tmp_path / "known_hosts")
        session = SwitchSession(family_of(POWERCONNECT_6248).cli, sw.host, sw.port, Credentials("admin", "pw"),
                                HostKeyPolicy(known_hosts=known))
        text = session.running_config()
        session.close()
    want = sw.running_config()
    assert text.splitlines() == want.splitlines()   # line for line: no blank line per page
