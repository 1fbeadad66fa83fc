"""`vlanroute audit` against fake switches with seeded learned-MAC tables."""

from __future__ import annotations

import pytest

from vlanroute.drivers import FAMILIES
from vlanroute.model.bridge import LagPort

from push_support import build_cluster, correct_tables, run, set_ssh_env

pytestmark = pytest.mark.timeout(120)




def test_audit_reports_exactly_the_missing_and_misplaced_entries(farm, tmp_path, monkeypatch,
                                                                 capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    tables = correct_tables(cluster.plan)
    # Hand-checked against the plan: VLAN 102's tree is core1-leaf1, core1-leaf2, leaf1-leaf3,
    # so leaf3 reaches gpu03 (on leaf2) via leaf1 on 1/g47; core2 reaches gpu01 via LAG 1.
    assert (102, "00:1e:c9:00:00:03", "1/g47") in tables["leaf3"]
    assert (101, "00:1e:c9:00:00:01", "ch1") in tables["core2"]
    for name, entries in tables.items():
        for vlan, mac, port in entries:
            if (name, vlan, mac) == ("leaf3", 102, "00:1e:c9:00:00:03"):
                continue                                   # never learned
            if (name, vlan, mac) == ("core2", 101, "00:1e:c9:00:00:01"):
                port = "1/g45"                             # learned on the wrong port
            farm.switches[name].seed_mac(vlan, mac, port)
    total = sum(len(e) for e in tables.values())

    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts))
    assert rc == 1, out + err
    # By default a summary per switch, no rows (a large fabric has tens of thousands).
    assert not [line for line in out.splitlines() if "00:1e:c9" in line]
    assert "leaf3: 1 MAC entries missing, 0 on the wrong port" in out
    assert "core2: 0 MAC entries missing, 1 on the wrong port" in out
    assert f"{total - 2} of {total} expected MAC entries" in out
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "-v")
    assert rc == 1, out + err
    rows = [line for line in out.splitlines() if "00:1e:c9" in line]
    assert len(rows) == 2
    assert any("leaf3" in r and "102" in r and "gpu03" in r and "missing" in r for r in rows)
    assert any("core2" in r and "101" in r and "ch1" in r and "on 1/g45" in r for r in rows)
    assert f"{total - 2} of {total} expected MAC entries" in out

    # Fix both: the audit is clean.
    farm.switches["leaf3"].seed_mac(102, "00:1e:c9:00:00:03", "1/g47")
    farm.switches["core2"].state.mac_table = [
        e for e in farm.switches["core2"].state.mac_table
        if (e.vlan, e.mac) != (101, "00:1e:c9:00:00:01")]
    farm.switches["core2"].seed_mac(101, "00:1e:c9:00:00:01", "ch1")
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts))
    assert rc == 0, out + err
    assert f"{total} of {total} expected MAC entries" in out


def test_audit_names_unreachable_switches(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    from vlanroute.lab import Faults
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", {"leaf2": Faults(refuse_auth=True)})
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--switch", "leaf2")
    assert rc == 1 and "leaf2: not read: authentication refused" in out


def test_parse_address_table_both_layouts():
    pc62xx = """Aging time is 300 Sec

  Vlan     Mac Address       Port     Type
-------- --------------------- ---------- --------------------
   101     00:1E:C9:00:00:01     1/g1       Dynamic
   102     00:1E:C9:00:00:02     ch3        Dynamic
"""
    os6 = """Aging time is 300 Sec

Vlan     Mac Address           Type        Port
-------- --------------------- ----------- ---------------------
1010     0012.3456.789A        Dynamic     Gi1/0/8
1        0012.3456.789B        Management  Vl1
"""
    pc, dell_os6 = FAMILIES["powerconnect-62xx"], FAMILIES["dell-os6"]
    assert pc.parse_address_table(pc62xx) == {(101, "00:1e:c9:00:00:01"): "1/g1",
                                              (102, "00:1e:c9:00:00:02"): LagPort(3)}
    assert dell_os6.parse_address_table(os6) == {(1010, "00:12:34:56:78:9a"): "Gi1/0/8",
                                                 (1, "00:12:34:56:78:9b"): "Vl1"}


def test_os6_prints_a_lag_as_po_and_it_maps_to_that_lag():
    """OS6 prints LAG N as `PoN` in `show mac address-table` (the 62xx prints `chN`): a MAC
    learned on port-channel 1 must count as learned on LAG 1, and `ch1` means nothing there."""
    os6 = """Aging time is 300 Sec

Vlan     Mac Address           Type        Port
-------- --------------------- ----------- ---------------------
101      001E.C900.0001        Dynamic     Po1
102      001E.C900.0002        Dynamic     Po12
103      001E.C900.0003        Dynamic     Te1/0/7
104      001E.C900.0004        Dynamic     ch1
"""
    table = FAMILIES["dell-os6"].parse_address_table(os6)
    assert table == {(101, "00:1e:c9:00:00:01"): LagPort(1), (102, "00:1e:c9:00:00:02"): LagPort(12),
                     (103, "00:1e:c9:00:00:03"): "Te1/0/7", (104, "00:1e:c9:00:00:04"): "ch1"}
    assert FAMILIES["dell-os6"].port_label(LagPort(12)) == "Po12"
    # The same row read as 62xx output is not a LAG.
    assert FAMILIES["powerconnect-62xx"].parse_address_table(os6)[(101, "00:1e:c9:00:00:01")] == "Po1"


def test_audit_refuses_when_there_is_nothing_to_check(tmp_path, capsys):
    """No host has a MAC: "0 of 0 present" was a success; now a usage error, before any
    switch is contacted (the plan's management addresses are TEST-NET, never reached)."""
    from pathlib import Path
    repo = Path(__file__).resolve().parent.parent
    assert run(capsys, "render", str(repo / "inventories" / "seed-torus.yaml"), "-o", str(tmp_path / "o"))[0] == 0
    import json

    from vlanroute.device.targets import TARGETS_FORMAT
    targets = tmp_path / "targets.json"       # loopback, as the guard wants; never contacted
    targets.write_text(json.dumps({"format": TARGETS_FORMAT, "switches": {
        f"sw{i}": {"host": "127.0.0.1", "port": 9} for i in range(1, 9)}}))
    rc, out, err = run(capsys, "audit", str(tmp_path / "o"), "--targets", str(targets))
    assert rc == 2
    assert "nothing to audit: none of the 225 hosts of the plan has a MAC" in err
    assert "fix: give the hosts' MACs" in err and "of 0 expected" not in out
