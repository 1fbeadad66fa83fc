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
    it = cli()
    drive(it, "enable", "configure")
    assert "% Invalid input detected at '^' marker." in it.execute("frobnicate").output
    drive(it, "interface ethernet 1/g5")
    assert "Port is not general port." in it.execute("switchport general pvid 101").output
    it.execute("switchport mode general")
    assert "VLAN ID not found." in it.execute("switchport general pvid 101").output
    assert "Invalid input" in it.execute("switchport general allowed vlan add 1 2").output
    assert it.state.ports["1/g5"].pvid == 1                  # nothing applied by errors
    assert "Invalid input" in cli().execute("configure").output   # not before `enable`


def test_running_config_round_trips_through_the_parser():
    it = cli()
    drive(it, "enable", "terminal length 0", "configure", "vlan database", "vlan 101-104", "exit",
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
    assert re.search(r"^\s+101\s+00:1E:C9:00:00:01\s+ch1\s+Dynamic$", out, re.M)


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


def test_pager_until_paging_is_turned_off():
    it = cli()
    for n in range(1, 40):
        it.state.ports[f"1/g{n}"].stp_disabled = True
    it.execute("enable")
    first = it.execute("show running-config").output
    assert first.endswith("--More-- or (q)uit") and it.awaiting_key
    rest, pages = "", 1
    while it.awaiting_key and pages < 20:
        rest += it.answer_key(" ").output
        pages += 1
    assert "interface ethernet 1/g39" in rest and pages > 2 and not it.awaiting_key
    it.execute("terminal length 0")
    assert "--More--" not in it.execute("show running-config").output


def test_push_session_pages_through_a_switch_that_ignores_paging_off(tmp_path):
    from vlanroute.device.credentials import Credentials
    from vlanroute.device.session import HostKeyPolicy, SwitchSession
    with FakeSwitchFarm() as farm:
        sw = farm.add("sw11", host="127.0.0.11", password="pw", faults=Faults(pager_stuck=True))
        for n in range(1, 49):
            sw.state.ports[f"1/g{n}"].stp_disabled = True
        known = farm.write_known_hosts(tmp_path / "known_hosts")
        session = SwitchSession(family_of(POWERCONNECT_6248).cli, sw.host, sw.port, Credentials("admin", "pw"),
                                HostKeyPolicy(known_hosts=known))
        text = session.running_config()
        session.close()
    want = sw.state.running_config("PowerConnect 6248, 3.3.7.3, VxWorks 6.5")
    assert [l for l in text.splitlines() if l.strip()] == \
        [l for l in want.splitlines() if l.strip()]
