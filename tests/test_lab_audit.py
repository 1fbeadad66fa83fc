"""`vlanroute audit` rehearsed in the lab (issue 41 item 16): the lab switches learn the
plan's host MACs where the data plane would (vlanroute.lab.learning), before a push (not
at all), after it (as the plan says), after a cable is taken down (the cut trees lose
them) and after a repair is pushed (as the repaired plan says). The expected tables come
from push_support.correct_tables (networkx over each VLAN's links), not from the lab."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from push_support import build_cluster, correct_tables, run, set_ssh_env

from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.lab import linkdown
from vlanroute.lab.learning import learned_tables

pytestmark = pytest.mark.timeout(300)


def _tables(farm) -> dict[str, set[tuple[int, str, str]]]:  # type: ignore[no-untyped-def]
    farm.refresh_learned()
    out = {}
    for name, sw in farm.switches.items():
        table = sw.eos.state.mac_table if sw.eos is not None else sw.state.mac_table
        out[name] = {(e.vlan, e.mac, e.port) for e in table}
    return out


def _take_down(cluster, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    """What the lab daemon does on `vlanroute lab cable-down --pair A:B`."""
    doc = read_plan(cluster.outdir)
    cables = read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts)
    ends = {e for c in cables if {c.a, c.b} == {a, b} for e in c.ends()}
    cluster.farm.wire(linkdown.plugged(cables, ends), host_macs(doc))


@pytest.mark.slow
def test_the_lab_learns_nothing_before_a_push_and_the_plan_after_it(farm, tmp_path: Path, monkeypatch,
                                                                    capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    farm.learn_hosts(v["id"] for v in cluster.plan["vlans"])
    want = {s: set(e) for s, e in correct_tables(cluster.plan).items()}
    assert all(not entries for entries in _tables(farm).values())     # no switch has a routing VLAN yet
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert rc == 1 and "MAC entries missing" in out, out + err

    rc, out, err = run(capsys, "push", str(cluster.outdir), "--yes", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    assert _tables(farm) == want
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    total = sum(len(e) for e in want.values())
    assert rc == 0 and f"{total} of {total} expected MAC entries present" in out, out + err

    # A dead pair: the trees through it are cut, their entries across it gone.
    _take_down(cluster, "core1", "core2")
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--json")
    report = json.loads(out)
    assert rc == 1 and report["findings"] and not report["errors"], err
    cut = {v["id"] for v in cluster.plan["vlans"] if ["core1", "core2"] in v["links"]}
    assert cut and {f["vlan"] for f in report["findings"]} <= cut
    assert all(f["found_port"] is None for f in report["findings"])

    # Repair, push the repair: the entries follow the repaired trees.
    new = tmp_path / "repaired"
    rc, out, err = run(capsys, "repair", str(cluster.outdir), "--failed-pair", "core1:core2", "-o", str(new), "-q")
    assert rc == 0, err
    rc, out, err = run(capsys, "push", str(new), "--yes", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    repaired = json.loads((new / "plan.json").read_text())
    assert _tables(farm) == {s: set(e) for s, e in correct_tables(repaired).items()}
    rc, out, err = run(capsys, "audit", str(new), "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err


def test_a_lag_member_down_keeps_the_lag(farm, tmp_path: Path, monkeypatch) -> None:
    """One of two cables of a LAG down: the LAG still carries its VLANs, nothing is lost."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    farm.learn_hosts(v["id"] for v in cluster.plan["vlans"])
    from vlanroute import api
    pushed = api.push(cluster.outdir, api.Credentials("netops", password="Pw-7f3c9e1a-do-not-print"),
                      dry_run=False, known_hosts=cluster.known_hosts)
    assert pushed.exit_code == 0, [(r.switch, r.message) for r in pushed.results]
    before = _tables(farm)
    doc = read_plan(cluster.outdir)
    cables = read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts)
    one = next(c for c in cables if {c.a, c.b} == {"core1", "core2"})
    farm.wire(linkdown.plugged(cables, set(one.ends())), host_macs(doc))
    assert _tables(farm) == before


def test_a_factory_default_fabric_learns_nothing_in_the_routing_vlans(farm, tmp_path: Path, monkeypatch) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    doc = read_plan(cluster.outdir)
    cables = read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts)
    tables = learned_tables(farm.switches, cables, host_macs(doc), [v.id for v in doc.vlans])
    assert set(tables) == set(farm.switches) and not any(tables.values())


RING = """
name: audit-ring
platform: {platform}
topology: {{kind: ring, size: 3, links_per_pair: 2}}
hosts:
  list:
    - {{name: n1, switch: sw1, mac: "02:00:00:00:00:01"}}
    - {{name: n2, switch: sw2, mac: "02:00:00:00:00:02"}}
    - {{name: n3, switch: sw3, mac: "02:00:00:00:00:03"}}
routing: {{algorithm: shortest}}
switches: {{sw1: {{}}, sw2: {{}}, sw3: {{}}}}
"""


@pytest.mark.parametrize("platform", ["arista-7050sx-64", "dell-s5248f-on"])    # push: not OS6 yet
def test_audit_in_the_lab_for_every_family(platform: str, farm, tmp_path: Path, monkeypatch, capsys) -> None:
    """Each family's address table as its switch prints it (LAGs Po1, port-channel1), read
    back by audit's own parser: all present after the push, a cut pair's VLANs missing."""
    from vlanroute.model.platforms import PLATFORMS
    set_ssh_env(monkeypatch)
    inventory = tmp_path / "ring.yaml"
    inventory.write_text(RING.format(platform=platform))
    cluster = build_cluster(farm, tmp_path, str(inventory), platform=PLATFORMS[platform])
    farm.learn_hosts(v["id"] for v in cluster.plan["vlans"])
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--yes", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    total = sum(len(e) for e in correct_tables(cluster.plan).values())
    assert rc == 0 and f"{total} of {total} expected MAC entries present" in out, out + err
    _take_down(cluster, "sw1", "sw2")
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--json")
    cut = {v["id"] for v in cluster.plan["vlans"] if ["sw1", "sw2"] in v["links"]}
    found = {f["vlan"] for f in json.loads(out)["findings"]}
    assert rc == 1 and cut and found and found <= cut, out + err
