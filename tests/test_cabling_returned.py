"""After a repair, a failed cable (or switch) that comes back (issue 41 item 13): `cabling
check` on the repaired bundle recognises the published plan's cable and says to return to
the plan, instead of "remove the cable"; repair and the push of a repair say how the hosts
re-learn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from push_support import build_cluster, run, set_ssh_env, wire_as_planned

from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.lab import linkdown

pytestmark = pytest.mark.timeout(300)


def _wire_without(cluster, dead: set[str] | None = None, pair: tuple[str, str] | None = None) -> None:  # type: ignore[no-untyped-def]
    doc = read_plan(cluster.outdir)
    cables = read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts)
    ends = {e for c in cables for e in c.ends()
            if (pair and {c.a, c.b} == set(pair)) or (dead and {c.a, c.b} & dead)}
    cluster.farm.wire(linkdown.plugged(cables, ends), host_macs(doc))


@pytest.mark.parametrize("failure", [("--failed-pair", "core1:core2"), ("--failed-switch", "leaf3")])
def test_a_returning_cable_of_the_published_plan_is_named_as_such(farm, tmp_path: Path, monkeypatch, capsys,
                                                                 failure: tuple[str, str]) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    if failure[0] == "--failed-pair":
        _wire_without(cluster, pair=tuple(failure[1].split(":")))  # type: ignore[arg-type]
    else:
        _wire_without(cluster, dead={failure[1]})
    new = tmp_path / "repaired"
    rc, out, err = run(capsys, "repair", str(cluster.outdir), *failure, "-o", str(new))
    assert rc == 0, err
    # The repair says the hosts re-learn, and how.
    assert "relearn.sh" in out and "re-learn" in out
    rc, out, err = run(capsys, "cabling", "check", str(new), "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err                          # as the repaired plan says

    wire_as_planned(farm, cluster.outdir)               # lab cable-up: the published cabling again
    rc, out, err = run(capsys, "cabling", "check", str(new), "--known-hosts", str(cluster.known_hosts), "--json")
    report = json.loads(out)
    assert rc == 1 and report["unexpected"], out + err
    for u in report["unexpected"]:
        assert u["returned"] is True, u
        assert "remove the cable" not in u["fix"]
        assert "published plan" in u["fix"] and "back" in u["fix"] and "vlanroute push" in u["fix"]
    rc, out, err = run(capsys, "cabling", "check", str(new), "--known-hosts", str(cluster.known_hosts))
    assert "remove the cable" not in out + err and "returned" in out, out


def test_a_foreign_cable_is_still_to_be_removed(farm, tmp_path: Path, monkeypatch, capsys) -> None:
    """A cable no plan had, on a repaired bundle: still `remove the cable`."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _wire_without(cluster, pair=("core1", "core2"))
    new = tmp_path / "repaired"
    assert run(capsys, "repair", str(cluster.outdir), "--failed-pair", "core1:core2", "-o", str(new), "-q")[0] == 0
    doc = read_plan(cluster.outdir)
    cables = [c for c in read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts) if {c.a, c.b} != {"core1", "core2"}]
    extra = (tmp_path / "extra.csv")
    text = (cluster.outdir / "cabling.csv").read_text().splitlines()
    extra.write_text("\n".join([text[0], "leaf1,1/g40,leaf2,1/g40,,,inter-switch,X1"]) + "\n")
    cables += read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts, path=extra)
    farm.wire(cables, host_macs(doc))
    rc, out, err = run(capsys, "cabling", "check", str(new), "--known-hosts", str(cluster.known_hosts), "--json")
    report = json.loads(out)
    assert rc == 1
    assert [u["returned"] for u in report["unexpected"]] == [False]
    assert "remove the cable between leaf1 1/g40 and leaf2 1/g40" in report["unexpected"][0]["fix"]


@pytest.mark.slow
def test_the_push_of_a_repair_says_how_the_hosts_re_learn(farm, tmp_path: Path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _wire_without(cluster, pair=("core1", "core2"))
    new = tmp_path / "repaired"
    assert run(capsys, "repair", str(cluster.outdir), "--failed-pair", "core1:core2", "-o", str(new), "-q")[0] == 0
    rc, out, err = run(capsys, "push", str(new), "--yes", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    vlans = " ".join(map(str, json.loads((new / "repair.json").read_text())["affected_vlans"]))
    assert f"hosts: re-learn now in VLAN(s) {vlans}: run {new}/hosts/relearn.sh on every host" in out, out
    # A push of an ordinary bundle says nothing of the kind.
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--dry-run", "--known-hosts", str(cluster.known_hosts))
    assert "re-learn" not in out
