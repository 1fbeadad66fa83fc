"""Port link state as the switches report it (drivers/linkstate.py) and `vlanroute repair
--from-link-state`: the inter-switch ports reported down become failed cables."""

from __future__ import annotations

import csv
import json

import pytest
from push_support import build_cluster, run, set_ssh_env

from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.drivers.arista import AristaEos
from vlanroute.drivers.dellos10 import DellOS10
from vlanroute.drivers.powerconnect import DellOS6, PowerConnect62xx
from vlanroute.lab import linkdown
from vlanroute.model.platforms import PLATFORMS

# Layouts of the vendors' CLI guides (drivers/linkstate.py), written here by hand; the
# descriptions hold the state words on purpose: only the state column may count.
PC62XX = """
Port   Type                            Duplex  Speed    Neg  Link  Flow Control
                                                             State Status
-----  ------------------------------  ------  -------  ---- ----- ------------
1/g1   Gigabit - Level                 Full    1000     Auto Up    Inactive
1/g2   Gigabit - Level                 N/A     Unknown  Auto Down  Inactive
1/xg1  10G - Level                     Full    10000    Off  Up    Active

Ch   Type                            Link
                                     State
---  ------------------------------  -----
ch1  Link Aggregate                  Down
"""
OS6 = """
Port      Description     Duplex Speed   Neg  Link   Flow  M  VLAN
                                              State  Ctrl
--------- --------------- ------ ------- ---- ------ ----- -- -------------------
Gi1/0/1   Up link to sw2  Full   1000    Auto Down   Off   T  (1),2-5
Te1/0/1                   Full   10000   Off  Up     Off   T  (1),2-5
"""
EOS = """Port       Name   Status       Vlan     Duplex Speed  Type         Flags Encapsulation
Et1        conn   notconnect   trunk    auto   auto   10GBASE-SR
Et2               connected    trunk    full   10G    10GBASE-SR
Et49/1            disabled     1        auto   auto   100GBASE-CR4
Po1               connected    trunk    full   20G    N/A
"""
OS10 = """--------------------------------------------------------------------------------------------------
Port            Description     Status   Speed    Duplex   Mode Vlan Tagged-Vlans
--------------------------------------------------------------------------------------------------
Eth 1/1/1       uplink up       down     --       --       T    1    2-5
Eth 1/1/2                       up       25G      full     T    1    2-5
Eth 1/1/3:1                     up       10G      full     A    1    -
"""


@pytest.mark.parametrize(("family", "text", "want"), [
    (PowerConnect62xx(), PC62XX, {"1/g1": True, "1/g2": False, "1/xg1": True}),
    (DellOS6(), OS6, {"Gi1/0/1": False, "Te1/0/1": True}),
    (AristaEos(), EOS, {"Ethernet1": False, "Ethernet2": True, "Ethernet49/1": False}),
    (DellOS10(), OS10, {"ethernet1/1/1": False, "ethernet1/1/2": True, "ethernet1/1/3:1": True}),
])
def test_the_state_column_of_each_family(family, text: str, want: dict[str, bool]) -> None:  # type: ignore[no-untyped-def]
    from vlanroute.drivers.linkstate import parse_link_state
    assert parse_link_state(family, text) == want


def test_no_table_no_state() -> None:
    from vlanroute.drivers.linkstate import parse_link_state
    assert parse_link_state(AristaEos(), "% Invalid input\n") == {}


FABRICS = {"powerconnect-6248": "seed-torus.yaml", "arista-7050sx-64": "seed-torus-arista.yaml",
           "dell-s5248f-on": "seed-torus-os10.yaml"}


@pytest.mark.parametrize("platform", sorted(FABRICS))
def test_repair_from_link_state_is_the_repair_of_the_downed_pair(platform, farm, tmp_path, monkeypatch,
                                                                  capsys) -> None:  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, FABRICS[platform], platform=PLATFORMS[platform])
    outdir = cluster.outdir
    with open(outdir / "cabling.csv", newline="") as fh:
        dead = [r for r in csv.DictReader(fh) if r["kind"] == "inter-switch" and {r["a"], r["b"]} == {"sw1", "sw2"}]
    ends = {(r[s], r[f"{s}_port"]) for r in dead for s in ("a", "b")}
    doc = read_plan(outdir)
    # What the lab daemon does on `lab cable-down --pair sw1:sw2` (vlanroute.lab.linkdown).
    cluster.farm.wire(linkdown.plugged(read_all_cables(outdir, doc.switches, hosts=doc.hosts), ends), host_macs(doc))

    rc, text, err = run(capsys, "repair", str(outdir), "--from-link-state", "-o", str(tmp_path / "live"),
                        "--known-hosts", str(cluster.known_hosts), "--no-compare", "--json")
    assert rc == 0, text + err
    live = json.loads((tmp_path / "live" / "repair.json").read_text())
    assert sorted(live["failures"]["cables"]) == sorted(f"{s}:{p}" for s, p in ends)
    rc, text, err = run(capsys, "repair", str(outdir), "--failed-pair", "sw1:sw2", "-o", str(tmp_path / "named"),
                        "--no-compare", "--json")
    assert rc == 0, text + err
    named = json.loads((tmp_path / "named" / "repair.json").read_text())
    for key in ("broken_vlans", "links_added", "switches_touched", "max_link_load"):
        assert live[key] == named[key], key
    assert live["links_added"] >= 1 and {"sw1", "sw2"} <= set(live["switches_touched"])


def test_repair_from_link_state_with_everything_up_names_no_failure(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    rc, text, err = run(capsys, "repair", str(cluster.outdir), "--from-link-state", "-o", str(tmp_path / "new"),
                        "--known-hosts", str(cluster.known_hosts))
    assert rc == 2 and "no failure given" in err and "Traceback" not in err, text + err
    assert not (tmp_path / "new").exists()
