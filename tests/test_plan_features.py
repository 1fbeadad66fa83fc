"""Inventory features end to end: renames, CSV hosts, exact ports, reserved ports, warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from vlanroute.cli import main
from vlanroute.plan.build import plan_from_file

INV = Path(__file__).resolve().parent.parent / "inventories"


def test_custom_lab_exact_and_reserved_ports() -> None:
    plan = plan_from_file(INV / "custom-lab.yaml").to_json()
    core1 = plan["switches"]["core1"]
    # The two listed cables core1-core2 sit on 1/g47 and 1/g48 at both ends, bundled as LAG 1.
    lag = core1["lags"]["1"]
    assert lag["neighbor"] == "core2" and lag["members"] == ["1/g47", "1/g48"]
    assert plan["switches"]["core2"]["lags"]["1"]["members"] == ["1/g47", "1/g48"]
    # 1/g1 is reserved on core1: the host takes the lowest free port, 1/g2, and 1/g1 is never listed.
    assert plan["hosts"]["login1"]["port"] == "1/g2"
    assert "1/g1" not in core1["ports"] and core1["reserved_ports"] == ["1/g1"]
    # The explicitly placed host keeps its port.
    assert plan["hosts"]["gpu03"]["port"] == "1/g10"
    assert plan["hosts"]["gpu01"]["mac"] == "00:1e:c9:00:00:01"
    # Single cables take the highest free ports, counting down: leaf1's cables are 1/g48 and 1/g47.
    leaf1 = plan["switches"]["leaf1"]
    assert {p for p, v in leaf1["ports"].items() if v["role"] == "inter-switch"} == {"1/g48", "1/g47"}


def test_switch_rename_and_mgmt(tmp_path: Path) -> None:
    doc = yaml.safe_load((INV / "seed-torus.yaml").read_text())
    doc["switches"]["sw1"]["name"] = "rack1"
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    plan = plan_from_file(p).to_json()
    assert "rack1" in plan["switches"] and "sw1" not in plan["switches"]
    assert plan["switches"]["rack1"]["mgmt"] == "192.0.2.11"
    assert any(c["a"] == "rack1" for c in plan["cabling"])
    assert plan["hosts"]["node001"]["switch"] == "rack1"


def test_hosts_from_csv(tmp_path: Path) -> None:
    (tmp_path / "hosts.csv").write_text(
        "hostname,mac,switch,port\n"
        "a1,00:00:00:00:00:01,s1,p5\n"
        "a2,000000000002,s2,\n"          # bare hex is normalised
        "a3,,s3,\n")
    doc = {"name": "csvtest", "platform": "linux-bridge",
           "topology": {"kind": "ring", "size": 3, "switch_name": "s{index}"},
           "hosts": {"csv": "hosts.csv"}}
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    plan = plan_from_file(p).to_json()
    assert plan["hosts"]["a1"] == {**plan["hosts"]["a1"], "switch": "s1", "port": "p5", "mac": "00:00:00:00:00:01"}
    assert plan["hosts"]["a2"]["mac"] == "00:00:00:00:00:02"
    assert plan["hosts"]["a3"]["mac"] is None and plan["hosts"]["a3"]["port"] == "p1"


def test_csv_errors_name_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hosts.csv").write_text("hostname,mac,switch,port\nok1,,s1,\nbad name,,s1,\n")
    doc = {"name": "t", "topology": {"kind": "ring", "size": 3, "switch_name": "s{index}"}, "hosts": {"csv": "hosts.csv"}}
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert main(["plan", str(p)]) != 0
    err = capsys.readouterr().err
    assert "hosts.csv" in err and "line 3" in err and "Traceback" not in err


def test_ring_warns_about_deadlock_and_updown_does_not(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(INV / "seed-ring.yaml")]) == 0
    out = capsys.readouterr().out
    assert "deadlock" in out and "warning" in out
    assert main(["plan", str(INV / "seed-ring.yaml"), "--json", "--set", "routing.algorithm=updown"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["metrics"]["deadlock_free"] is True and plan["warnings"] == []


def test_no_deadlock_warning_without_flow_control(capsys: pytest.CaptureFixture[str]) -> None:
    """The deadlock needs 802.3x PAUSE: with flow control off the same cyclic routes plan
    without the warning, so --strict passes."""
    args = ["plan", str(INV / "seed-ring.yaml"), "--json", "--strict", "--set", "settings.flow_control=false"]
    assert main(args) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["metrics"]["deadlock_free"] is False and plan["warnings"] == []
    assert main(args[:-1] + ["settings.flow_control=true"]) == 1     # the same routes, PAUSE on
    capsys.readouterr()


def test_learning_addresses_unique_per_vlan() -> None:
    from vlanroute.plan.learning import learning_address
    plan = plan_from_file(INV / "seed-torus.yaml").to_json()
    for v in plan["vlans"]:
        addrs = [learning_address(v["learning_subnet"], h["index"]) for h in plan["hosts"].values()]
        assert len(set(addrs)) == len(addrs) == 225
        import ipaddress
        net = ipaddress.ip_network(v["learning_subnet"])
        assert all(ipaddress.ip_address(a) in net for a in addrs)
    subnets = [ipaddress.ip_network(v["learning_subnet"]) for v in plan["vlans"]]
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1:])
    assert plan["settings"]["aging_time"] == 1_000_000      # the 6248 maximum by default
    assert plan["settings"]["learning"]["interval_s"] * 4 <= plan["settings"]["aging_time"]


def test_explicit_vlan_ids_and_dimension_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(INV / "seed-mesh.yaml"), "--json", "--set", "routing.vlan_ids=[300,310,320,330]",
                 "--set", "routing.dimension_order=[1,0]"]) == 0
    plan = json.loads(capsys.readouterr().out)
    # y first on the 4x2 mesh: each column's two switches share a tree -> 4 VLANs (x first needs 2).
    assert [v["id"] for v in plan["vlans"]] == [300, 310, 320, 330]
    assert plan["routing"]["dimension_order"] == [1, 0]


def test_derived_platform_is_recorded_and_rebuilt_by_verify(tmp_path: Path) -> None:
    """plan.json carries a derived platform's base and limits; verify rebuilds it exactly."""
    from vlanroute.model.platforms import platform_from_json
    from vlanroute.verify.configs import load_outdir

    doc = yaml.safe_load((INV / "seed-torus.yaml").read_text())
    doc["platforms"] = {"pc6248-16k": {"base": "powerconnect-6248", "mac_capacity": 16384, "max_vlans": 256}}
    doc["platform"] = "pc6248-16k"
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    plan = plan_from_file(p)
    rec = plan.to_json()["platforms"]["pc6248-16k"]
    assert rec["base"] == "powerconnect-6248" and rec["mac_capacity"] == 16384 and rec["ports"] == 48
    assert platform_from_json("pc6248-16k", rec) == plan.switches["sw1"].platform
    assert platform_from_json("powerconnect-6248", plan_from_file(INV / "seed-ring.yaml").to_json()
                              ["platforms"]["powerconnect-6248"]) is None   # built-ins are not derived

    out = tmp_path / "out"
    assert main(["render", str(p), "-o", str(out), "--no-verify"]) == 0
    loaded = load_outdir(out)        # no platform table passed in: only plan.json to go on
    assert loaded.platforms["sw1"].mac_capacity == 16384 and loaded.platforms["sw1"].max_vlans == 256
    assert not any("not built in" in n for n in loaded.notes)
