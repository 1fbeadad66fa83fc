"""`whatif` and `draw` on a rendered bundle (commands/sources.py), as `report` already was:
the plan as render wrote it, checked against its manifest, not planned again. whatif's
answer on the bundle is checked against its answer on the inventory, which plans afresh
(another path through the code: the planner, not the plan.json reader); a repaired bundle,
--set with a bundle, an edited bundle and an output inside the bundle are refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vlanroute import api
from vlanroute.bundle.manifest import check_manifest
from vlanroute.cli import main

REPO = Path(__file__).resolve().parent.parent
TORUS = REPO / "inventories" / "seed-torus.yaml"
RING = REPO / "inventories" / "seed-ring.yaml"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


@pytest.mark.parametrize("which", ["outdir", "plan.json"])
def test_whatif_on_the_bundle_is_whatif_on_its_inventory(torus_bundles: tuple[Path, Path], capsys, which: str) -> None:
    out, _ = torus_bundles
    given = out if which == "outdir" else out / "plan.json"
    rc, planned, err = cli(capsys, "whatif", str(TORUS), "--json", "--doubles", "20")
    assert rc == 0, err
    rc, read, err = cli(capsys, "whatif", str(given), "--json", "--doubles", "20")
    assert rc == 0, err
    a, b = json.loads(planned), json.loads(read)
    assert (a.pop("inventory"), b.pop("inventory")) == (str(TORUS), str(given))
    assert a["failures"] and a["guarantees"]["doubles"]["sampled"] == 20
    assert a == b


def test_whatif_on_the_bundle_of_another_fabric(tmp_path: Path, capsys) -> None:
    """Not only the seed torus: the ring's bundle gives the ring's answer, in text too."""
    out = tmp_path / "ring"
    api.render(RING, out)
    rc, planned, _ = cli(capsys, "whatif", str(RING), "--doubles", "5")
    rc2, read, err = cli(capsys, "whatif", str(out), "--doubles", "5")
    assert rc == rc2 == 0, err
    assert planned == read and "pair" in read


def test_whatif_refuses_a_repaired_bundle(torus_bundles: tuple[Path, Path], capsys) -> None:
    """The watcher heals a further failure from the plan render wrote, around both, not
    from the repair: figures from the repaired plan would not be the fabric's."""
    _, new = torus_bundles
    rc, out, err = cli(capsys, "whatif", str(new))
    assert rc == 2 and out == ""
    assert f"{new / 'repair.json'}" in err and "repaired bundle" in err and "fix: run whatif on the inventory" in err
    assert "--doubles" in err


def test_whatif_refuses_set_an_edited_bundle_and_a_plain_directory(torus_bundles: tuple[Path, Path], tmp_path: Path,
                                                                    capsys) -> None:
    out = tmp_path / "out"
    shutil.copytree(torus_bundles[0], out)
    rc, _, err = cli(capsys, "whatif", str(out), "--set", "hosts.count=3")
    assert rc == 2 and "error: --set:" in err and "run whatif on the inventory with --set" in err
    cfg = out / "switches" / "sw1.cfg"
    cfg.write_text(cfg.read_text() + "! edited\n")
    rc, _, err = cli(capsys, "whatif", str(out))
    assert rc == 2 and "whatif refuses this bundle" in err and "switches/sw1.cfg" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, _, err = cli(capsys, "whatif", str(empty))
    assert rc == 2 and "whatif refuses this bundle" in err


@pytest.mark.parametrize("which", ["outdir", "repaired"])
def test_draw_takes_a_rendered_bundle(torus_bundles: tuple[Path, Path], tmp_path: Path, capsys, which: str) -> None:
    """The pictures of the inventory's plan from the bundle render wrote; a repair's are of
    the degraded fabric (its VLANs keep their ids and sources)."""
    out, new = torus_bundles
    given = out if which == "outdir" else new
    rc, _, err = cli(capsys, "draw", str(TORUS), "-o", str(tmp_path / "planned"), "--format", "svg", "-q")
    assert rc == 0, err
    rc, _, err = cli(capsys, "draw", str(given), "-o", str(tmp_path / "read"), "--format", "svg", "-q")
    assert rc == 0, err
    planned = sorted(str(p.relative_to(tmp_path / "planned")) for p in (tmp_path / "planned").rglob("*"))
    read = sorted(str(p.relative_to(tmp_path / "read")) for p in (tmp_path / "read").rglob("*"))
    assert planned == read and "vlans/vlan-101.svg" in read
    # (the pictures' bytes vary from run to run even for one inventory: the drawing order)
    index = (tmp_path / "read" / "index.txt").read_text()
    planned_index = (tmp_path / "planned" / "index.txt").read_text()
    assert "vlans/vlan-101.svg  VLAN 101: sources sw1, sw2" in index
    if which == "outdir":
        assert index == planned_index
    else:                               # the repaired plan: the dead pair's two cables are gone
        assert "24 inter-switch cables" in planned_index and "22 inter-switch cables" in index
        assert index == planned_index.replace("24 inter-switch cables", "22 inter-switch cables")
    assert check_manifest(given).ok


@pytest.mark.parametrize("command", ["draw", "report"])
def test_an_output_inside_the_bundle_is_refused(torus_bundles: tuple[Path, Path], tmp_path: Path, capsys,
                                                command: str) -> None:
    """A file render did not write would make push, audit and verify refuse the bundle."""
    out = tmp_path / "out"
    shutil.copytree(torus_bundles[0], out)
    inside = out / ("pictures" if command == "draw" else "review.html")
    rc, _, err = cli(capsys, command, str(out), "-o", str(inside))
    assert rc == 2 and "inside the bundle" in err and "fix: write it outside" in err
    assert not inside.exists() and check_manifest(out).ok
    # ...also through a path that only resolves into it
    rc, _, err = cli(capsys, command, str(out / "plan.json"), "-o", str(out / "switches" / ".." / inside.name))
    assert rc == 2 and "inside the bundle" in err
    if command == "report":          # ...and into a bundle given to --compare
        rc, _, err = cli(capsys, "report", str(TORUS), "-o", str(inside), "--compare", str(out))
        assert rc == 2 and f"inside the bundle {out}" in err
        assert not inside.exists() and check_manifest(out).ok


def test_analyze_puts_a_repair_beside_its_plan(torus_bundles: tuple[Path, Path], capsys) -> None:
    """analyze takes bundles too: the rendered one reads as its inventory's plan, the
    repaired one as the degraded fabric (two cables fewer, its own max load); the
    throughput table names the two plans of one name by their paths."""
    out, new = torus_bundles
    rc, text, err = cli(capsys, "analyze", str(TORUS), str(out), str(new), "--json", "--patterns", "all-to-all",
                        "--seeds", "1")
    assert rc == 0, err
    planned, read, repaired = json.loads(text)["inventories"]
    assert [r["inventory"] for r in (planned, read, repaired)] == [str(TORUS), str(out), str(new)]
    assert read["metrics"] == planned["metrics"] and read["warnings"] == planned["warnings"]
    assert (planned["metrics"]["inter_switch_links"], repaired["metrics"]["inter_switch_links"]) == (24, 22)
    doc = json.loads((new / "plan.json").read_text())
    assert repaired["metrics"]["max_link_load"] == doc["metrics"]["max_link_load"] != planned["metrics"]["max_link_load"]
    assert "repaired around failures: pair sw1-sw2" in repaired["warnings"]
    fabrics = [row["label"] for row in json.loads(text)["throughput"][0]["rows"]]
    assert str(out) in fabrics and str(new) in fabrics
    rc, _, err = cli(capsys, "analyze", str(out), "--set", "hosts.count=3")
    assert rc == 2 and "--set changes an inventory" in err
