"""`vlanroute report` for an engineer's first day (issue 41 item 14): a rendered bundle
(a repair's, the one about to be pushed) as well as an inventory, host ports described as
they are configured (trunks on an Arista fabric), and the throughput at the fabric's
link speed. The figures are checked against plan.json and against the flow model's own
scaling (rates proportional to the link speed), not against the page's own output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlanroute.bundle.asplan import plan_of
from vlanroute.bundle.reader import read_plan
from vlanroute.cli import main
from vlanroute.pictures.report import _throughput, host_port_notes, link_speed_of
from vlanroute.plan.build import plan_from_file

REPO = Path(__file__).resolve().parent.parent
TORUS = REPO / "inventories" / "seed-torus.yaml"
ARISTA = REPO / "inventories" / "seed-torus-arista.yaml"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


def test_a_bundle_reads_back_as_the_plan_it_was_rendered_from(torus_bundles: tuple[Path, Path]) -> None:
    """The Plan made from plan.json is the inventory's plan: same document, same loads."""
    out, _ = torus_bundles
    planned = plan_from_file(str(TORUS), ())
    again = plan_of(read_plan(out), out / "plan.json")
    assert again.metrics.link_loads == pytest.approx(planned.metrics.link_loads)
    assert again.metrics.mac_entries == planned.metrics.mac_entries
    assert again.metrics.to_json() == planned.metrics.to_json()
    assert [(v.id, v.sources, v.links) for v in again.vlans] == [(v.id, v.sources, v.links) for v in planned.vlans]
    assert again.routes.parents == planned.routes.parents
    assert {s: (sw.host_attachment, {p: (q.role, q.pvid, q.untagged, q.tagged) for p, q in sw.ports.items()})
            for s, sw in again.switches.items()} == \
        {s: (sw.host_attachment, {p: (q.role, q.pvid, q.untagged, q.tagged) for p, q in sw.ports.items()})
         for s, sw in planned.switches.items()}


@pytest.mark.parametrize("which", ["outdir", "plan.json", "repaired"])
def test_report_takes_a_rendered_bundle(torus_bundles: tuple[Path, Path], tmp_path: Path, capsys, which: str) -> None:
    out, new = torus_bundles
    given = {"outdir": out, "plan.json": out / "plan.json", "repaired": new}[which]
    page = tmp_path / "r.html"
    rc, stdout, err = cli(capsys, "report", str(given), "-o", str(page), "--max-vlans", "1")
    assert rc == 0, err
    html = page.read_text()
    doc = json.loads(((new if which == "repaired" else out) / "plan.json").read_text())
    assert "Rendered bundle, plan" in html and "plan.json" in html
    assert f"{doc['metrics']['max_link_load']:g} per cable" in html
    # Each VLAN's links as plan.json has them (the repair moved VLAN 101).
    for v in doc["vlans"]:
        assert " ".join(f"{a}-{b}" for a, b in v["links"]) in html
    if which == "repaired":
        assert "repaired around failures: pair sw1-sw2" in html


def test_report_refuses_an_edited_bundle_and_set(torus_bundles: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    import shutil
    out = tmp_path / "out"
    shutil.copytree(torus_bundles[0], out)
    rc, _, err = cli(capsys, "report", str(out), "-o", str(tmp_path / "a.html"), "--set", "topology.dims=[2,2]")
    assert rc == 2 and "--set" in err
    cfg = out / "switches" / "sw1.cfg"
    cfg.write_text(cfg.read_text() + "! edited\n")
    rc, _, err = cli(capsys, "report", str(out), "-o", str(tmp_path / "b.html"))
    assert rc == 2 and "switches/sw1.cfg" in err and "fix:" in err
    assert not (tmp_path / "b.html").exists()


def test_trunk_host_ports_are_described_as_trunks() -> None:
    """Arista host ports are trunks (native VLAN = the host's): not 'untagged in every
    routing VLAN'."""
    plan = plan_from_file(str(ARISTA), ())
    assert {sw.host_attachment for sw in plan.switches.values()} == {"trunk"}
    notes = " ".join(host_port_notes(plan))
    assert "untagged in every routing VLAN" not in notes
    assert "(native VLAN) = the host's VLAN" in notes and "tagged in every other routing VLAN" in notes
    dell = " ".join(host_port_notes(plan_from_file(str(TORUS), ())))
    assert "untagged in every routing VLAN" in dell and "native VLAN" not in dell
    # A fabric of both names which switches do what.
    mixed = plan_from_file(str(TORUS), ("switches.sw1.platform=arista-7050sx-64",))
    text = " ".join(host_port_notes(mixed))
    assert "(on sw1)" in text and "(on sw2, sw3" in text


def test_the_throughput_uses_the_fabric_link_speed() -> None:
    """A 10G fabric (Arista 7050SX-64) is charted at 10 Gb/s, ten times the same cabling at
    1 Gb/s (max-min rates scale with every capacity); --link-speed overrides."""
    plan = plan_from_file(str(ARISTA), ())
    assert link_speed_of(plan) == 10.0
    ten, one = _throughput(plan, ()), _throughput(plan, (), 1.0)
    assert ten is not None and one is not None
    for t10, t1 in zip(ten["tables"], one["tables"]):  # type: ignore[call-overload]
        for r10, r1 in zip(t10["rows"], t1["rows"]):
            assert r10["effective_gbps"] == pytest.approx(10 * r1["effective_gbps"], rel=0.01), (t10["pattern"], r10)
    assert ten["speeds"] == "10 Gb/s (the platforms' port speed; --link-speed to change)"
    assert one["speeds"] == "1 Gb/s (--link-speed)"


def test_report_link_speed_option(tmp_path: Path, capsys) -> None:
    for speed in ("nan", "0", "inf"):
        rc, _, err = cli(capsys, "report", str(TORUS), "-o", str(tmp_path / "x.html"), "--link-speed", speed)
        assert rc == 2 and "--link-speed" in err
    rc, _, err = cli(capsys, "report", str(TORUS), "-o", str(tmp_path / "y.html"), "--link-speed", "40",
                     "--max-vlans", "1")
    assert rc == 0, err
    html = (tmp_path / "y.html").read_text()
    assert "40 Gb/s (--link-speed)" in html and "untagged in every routing VLAN" in html
