"""`vlanroute repair` under hostile input (issue 41 items 1 and 7): the bundle it repairs
must be what render wrote (its manifest), NEWDIR must not overlap OUTDIR, and failures that
leave nothing to repair, or a failures file that is not one, are clear errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vlanroute import api
from vlanroute.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEED_RING = ROOT / "inventories" / "seed-ring.yaml"


@pytest.fixture(scope="module")
def ring(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ring") / "out"
    api.render(SEED_RING, out)
    return out


def _copy(src: Path, dst: Path) -> Path:
    import shutil
    shutil.copytree(src, dst)
    return dst


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


def test_catalogue_wrongsuccess_repair_refuses_an_edited_plan(ring: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A switch's management address changed in plan.json: repair must not launder the edit
    into a bundle with a fresh manifest that verify and push accept."""
    out = _copy(ring, tmp_path / "out")
    plan = out / "plan.json"
    data = json.loads(plan.read_text())
    data["switches"]["sw3"]["mgmt"] = "198.51.100.66"
    plan.write_text(json.dumps(data, indent=1))
    new = tmp_path / "repaired"
    rc, _, err = cli(capsys, "repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(new), "--no-compare")
    assert rc == 2
    assert "plan.json" in err and "modified" in err and "fix:" in err
    assert not new.exists()


def test_repair_refuses_a_bundle_with_a_file_added(ring: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = _copy(ring, tmp_path / "out")
    (out / "switches" / "evil.cfg").write_text("no spanning-tree\n")
    rc, _, err = cli(capsys, "repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(tmp_path / "r"))
    assert rc == 2 and "evil.cfg" in err


def test_repair_skip_manifest_check_warns_and_goes_on(ring: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = _copy(ring, tmp_path / "out")
    (out / "switches" / "note.txt").write_text("spare\n")
    rc, _, err = cli(capsys, "repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(tmp_path / "r"),
                     "--no-compare", "--skip-manifest-check", "-q")
    assert rc == 0, err
    assert "--skip-manifest-check" in err and "NOT checked" in err


@pytest.mark.parametrize("where", ["inside", "parent", "same-through-link"])
def test_catalogue_dataloss_repair_outdir_must_not_overlap(ring: Path, tmp_path: Path, where: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """-o inside OUTDIR would add files to the bundle the fabric runs (push then refuses
    it); -o above it would replace it."""
    out = _copy(ring, tmp_path / "pub" / "out")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    if where == "inside":
        new = out / "repaired"
    elif where == "parent":
        new = out.parent
    else:
        os.symlink(out, tmp_path / "link")
        new = tmp_path / "link"
    rc, _, err = cli(capsys, "repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(new), "--force")
    assert rc == 2
    assert "-o" in err and "fix:" in err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert api.verify(out).ok


def test_catalogue_traceback_repair_with_every_switch_failed(ring: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    names = sorted(json.loads((ring / "plan.json").read_text())["switches"])
    args = [a for n in names for a in ("--failed-switch", n)]
    rc, _, err = cli(capsys, "repair", str(ring), *args, "-o", str(tmp_path / "r"))
    assert rc == 2
    assert "every switch" in err and "fix:" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("content", [
    "failures: " + "[" * 100_000,                              # flow nesting
    "failures:\n" + "".join(" " * i + "- \n" for i in range(1, 3000)),   # block nesting
    "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"b{i}: &b{i} [" + ", ".join([f"*{'a' if i == 0 else f'b{i - 1}'}"] * 9) + "]\n" for i in range(8))
    + "failures: {pairs: [sw1:sw2]}\n",                        # an alias bomb
    "/dev/zero", "fifo", "\xff\xfe bytes",
])
def test_catalogue_traceback_repair_failures_file_that_is_not_one(ring: Path, tmp_path: Path, content: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import time
    if content == "/dev/zero":
        path = Path("/dev/zero")
    elif content == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    else:
        path = tmp_path / "failures.yaml"
        path.write_bytes(content.encode("utf-8", "surrogateescape") if "\xff" not in content
                         else b"\xff\xfe bytes\n")
    start = time.monotonic()
    rc, _, err = cli(capsys, "repair", str(ring), "--failures", str(path), "-o", str(tmp_path / "r"))
    assert rc == 2, err
    assert "--failures" in err or str(path) in err
    assert "fix:" in err
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("kind", ["deep", "fifo", "not-json"])
def test_catalogue_traceback_push_with_a_damaged_repair_json(ring: Path, tmp_path: Path, kind: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """repair.json is read for the push order before anything else: a damaged one is a
    message naming it, never a RecursionError or a read that blocks."""
    out = _copy(ring, tmp_path / "out")
    path = out / "repair.json"
    if kind == "deep":
        path.write_text('{"push_order": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text('{"push_order": ["sw1", ')
    rc, _, err = cli(capsys, "push", str(out), "--dry-run", "--skip-manifest-check")
    assert rc == 2, err
    assert "repair.json" in err and "fix:" in err


def test_repair_and_report_refuse_a_vlan_edited_into_parts(ring: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A link deleted from a VLAN and the manifest written again by hand: repair and report
    ended in a KeyError in the metrics. The plan.json reader refuses it, naming the VLAN."""
    from vlanroute.bundle.manifest import write_manifest
    out = _copy(ring, tmp_path / "out")
    data = json.loads((out / "plan.json").read_text())
    vlan = next(v for v in data["vlans"] if v["sources"] and len(v["links"]) > 1)
    vlan["links"].pop()
    (out / "plan.json").write_text(json.dumps(data, indent=1))
    write_manifest(out, json.loads((out / "manifest.json").read_text()).get("render"))
    pairs = sorted({tuple(sorted(lk)) for v in data["vlans"] for lk in v["links"]})
    for pair in pairs[:3]:
        new = tmp_path / f"r-{pair[0]}-{pair[1]}"
        rc, _, err = cli(capsys, "repair", str(out), "--failed-pair", ":".join(pair), "-o", str(new), "--no-compare")
        assert rc == 2 and f"vlans[{vlan['id']}].links: its links do not join" in err, err
        assert not new.exists()
    rc, _, err = cli(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))
    assert rc == 2 and f"vlans[{vlan['id']}].links" in err, err
    assert not (tmp_path / "r.html").exists()
