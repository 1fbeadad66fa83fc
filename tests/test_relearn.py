"""Re-learning after a repair (docs/method.md, "MAC tables after a repair"): the host program
sends the learning frames in the listed VLANs only (`--vlans 101,103`), refuses anything
else before it changes a thing, and the relearn script of a repaired bundle runs it.

The host program runs under the fake `ip` and `ping` of tests/fakebin, as in
tests/test_render_hostscript.py (this kernel has no 8021q)."""

from __future__ import annotations

import pytest
from test_render_hostscript import SHELLS, Host, _arp_frames, _mutations, _pings, bundle


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_frames_only_in_the_listed_vlans(tmp_path, shell: list[str]) -> None:
    host = Host(tmp_path, shell=shell)
    rc, calls, out, err = host.run("--host", "node004", "--vlans", "103,101")
    assert rc == 0, err
    # The set-up still covers every VLAN (idempotent; a host rebooted since has them again)...
    assert len(_mutations(calls)) == 9
    # ...the frames only the listed ones, in the order given.
    assert calls[calls.index("ip link set dev vr103 up") + 1:] == _arp_frames((103, 101), 3)
    assert "node004: 2 learning frames sent (arp) from vr103..vr101" in out
    # Set up already: a second run changes nothing and sends the two frames again.
    rc, calls, out, err = host.run("--host", "node004", "--vlans", "102")
    assert rc == 0, err
    assert _mutations(calls) == []
    assert calls[calls.index("ip -batch", 1) + 1:] == _arp_frames((102,), 3)
    assert "node004: 1 learning frames sent (arp) from vr102..vr102" in out


def test_listed_twice_sends_once(tmp_path) -> None:
    host = Host(tmp_path)
    host.run("--host", "node004")
    rc, calls, _, err = host.run("--host", "node004", "--vlans", "102,102")
    assert rc == 0, err
    assert calls[calls.index("ip -batch", 1) + 1:] == _arp_frames((102,), 3)


def test_ping_frames_in_the_listed_vlans(tmp_path) -> None:
    host = Host(tmp_path)
    rc, calls, _, err = host.run("--host", "node004", "--frame", "ping", "--vlans", "102")
    assert rc == 0, err
    assert _pings(calls) == ["ping -q -n -c 1 -b -W 1 -I vr102 10.250.1.255"]


def test_other_methods_pass_only_the_listed_vlans(tmp_path) -> None:
    host = Host(tmp_path, bundle("ip-link"))
    rc, calls, _, err = host.run("--host", "node004", "--vlans", "101,103")
    assert rc == 0, err
    assert calls[-1] == "vlanroute learn --interface eth0 --prefix vr 101 103"


def test_a_vlan_of_another_plan_is_refused_before_any_change(tmp_path) -> None:
    host = Host(tmp_path)
    rc, calls, _, err = host.run("--host", "node004", "--vlans", "101,104")
    assert rc == 1 and "--vlans: VLAN 104 is not a routing VLAN of plan ring3" in err
    assert _mutations(calls) == [] and _pings(calls) == []


@pytest.mark.parametrize("value", ["", ",101", "101,", "101,,102", "101;reboot", "101 102", "0", "4095",
                                   "1234567890", "-1", "101,$(id)", "10a"])
def test_a_malformed_list_is_bad_usage(tmp_path, value: str) -> None:
    host = Host(tmp_path)
    rc, calls, _, _ = host.run("--host", "node004", "--vlans", value)
    assert rc == 2 and calls == []


@pytest.mark.parametrize("other", [["--no-learn"], ["--remove"], ["--show"]])
def test_vlans_only_with_the_frames(tmp_path, other: list[str]) -> None:
    host = Host(tmp_path)
    rc, calls, _, _ = host.run("--host", "node004", "--vlans", "101", *other)
    assert rc == 2 and calls == []


def test_a_repaired_bundle_says_which_vlans_and_runs_the_program(tmp_path) -> None:
    """`vlanroute repair` writes hosts/relearn.sh: the repaired VLANs (repair.json's
    affected_vlans), and run from a copy of hosts/ it sends the frames in those only."""
    import json

    from emulate_support import render
    from test_render_hostscript import ROOT

    from vlanroute.cli import main

    out = render(ROOT / "inventories" / "seed-torus.yaml", tmp_path / "out", "hosts.count=null",
                 "hosts.per_switch=1")
    new = tmp_path / "new"
    assert main(["repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(new), "-q"]) == 0
    record = json.loads((new / "repair.json").read_text())
    assert record["affected_vlans"] == [101]
    script = (new / "hosts" / "relearn.sh").read_text()
    assert "\nVLANS=101\n" in script and "vlanroute-host --vlans" in script
    manifest = json.loads((new / "manifest.json").read_text())
    assert "hosts/relearn.sh" in json.dumps(manifest)
    files = {f"hosts/{p.name}": p.read_text() for p in (new / "hosts").iterdir() if p.is_file()}
    host = Host(tmp_path / "node", files)
    rc, calls, out_text, err = host.run("--host", "node001", program=host.dir / "relearn.sh")
    assert rc == 0, err
    assert [c for c in calls if "neigh replace" in c] == [
        "ip neigh replace 10.240.0.1 dev vr101 lladdr ff:ff:ff:ff:ff:ff nud probe"]
    assert "node001: 1 learning frames sent (arp) from vr101..vr101" in out_text
    # The host tables are the running bundle's: nothing new to install on the hosts.
    for table in ("hosts.tsv", "vlans.tsv", "vlanroute-host"):
        assert (new / "hosts" / table).read_bytes() == (out / "hosts" / table).read_bytes()
