"""Switch management addresses may be DNS names (RFC 1123 host names, strictly patterned),
resolved when push and audit connect; anything else is refused with a fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from push_support import run

from vlanroute.device.credentials import Credentials
from vlanroute.device.session import ConnectFailed, HostKeyPolicy, SwitchSession
from vlanroute.drivers import FAMILIES
from vlanroute.names import management_address

REPO = Path(__file__).resolve().parent.parent
TORUS = str(REPO / "inventories" / "seed-torus.yaml")


@pytest.mark.parametrize("given, kept", [
    ("sw1.mgmt.example.org", "sw1.mgmt.example.org"), ("rack3-top", "rack3-top"),
    ("2001:DB8::1", "2001:db8::1"), ("192.0.2.11", "192.0.2.11"), ("a1.b-2.C3", "a1.b-2.C3"),
])
def test_addresses_and_host_names_are_accepted(given, kept):
    assert management_address(given) == kept


@pytest.mark.parametrize("bad", ["192.0.2.999", "sw1;reboot", "-sw1", "sw1-", "sw1..org", "sw1.org.",
                                 "a" * 64, "sw 1", "$(id)", "sw1.123", ""])
def test_anything_else_is_refused(bad):
    with pytest.raises(ValueError, match="neither an IP address nor a host name"):
        management_address(bad)


def test_the_inventory_takes_a_dns_name_into_plan_json(tmp_path, capsys):
    assert run(capsys, "render", TORUS, "-o", str(tmp_path / "o"), "--set", "switches.sw1.mgmt=sw1.mgmt.example.org")[0] == 0
    plan = json.loads((tmp_path / "o" / "plan.json").read_text())
    assert plan["switches"]["sw1"]["mgmt"] == "sw1.mgmt.example.org"
    rc, _out, err = run(capsys, "plan", TORUS, "--set", "switches.sw1.mgmt=sw1;reboot")
    assert rc == 2 and "switches.sw1.mgmt" in err and "fix: give the switch's management IPv4 or IPv6 address, or its DNS name" in err


def test_two_switches_may_not_share_a_name_in_any_case(capsys):
    rc, _out, err = run(capsys, "plan", TORUS, "--set", "switches.sw1.mgmt=sw1.example.org",
                        "--set", "switches.sw2.mgmt=SW1.example.org")
    assert rc == 2 and "is also given to 'sw1'" in err


def test_a_name_is_resolved_when_connecting(farm, tmp_path):
    """`localhost` is resolved by this machine's resolver (/etc/hosts): the session reaches the
    emulated switch on 127.0.0.1, and checks the host key under the name it connected to."""
    sw = farm.add("sw1", host="127.0.0.1", password="pw")
    line = sw.known_hosts_line()
    known = tmp_path / "known_hosts"
    known.write_text(line.replace("[127.0.0.1]", "[localhost]", 1) + "\n")
    session = SwitchSession(FAMILIES["powerconnect-62xx"].cli, "localhost", sw.port, Credentials("admin", "pw"),
                            HostKeyPolicy(known_hosts=known))
    try:
        assert session.running_config().splitlines() == sw.running_config().splitlines()
    finally:
        session.close()


def test_an_unresolvable_name_is_a_clear_error(monkeypatch):
    """netmiko reports a resolver failure as 'DNS failure--...'; the message names the host
    and what to check. (The resolver is stubbed: tests send nothing to a DNS server.)"""
    import socket

    def no_such_name(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    with pytest.raises(ConnectFailed, match="cannot resolve the host name sw9.mgmt.example.org"):
        SwitchSession(FAMILIES["powerconnect-62xx"].cli, "sw9.mgmt.example.org", 22, Credentials("admin", "pw"),
                      HostKeyPolicy())
