"""OUTDIR is replaced only as a whole, after everything rendered and verified: any failure
leaves it exactly as it was, and no temporary directory is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import vlanroute.render.write as R
from vlanroute import atomic_dir
from render_fixtures import document, ring3_plan
from vlanroute.cli import main
from vlanroute.errors import UserError, VerificationError

SEED_TORUS = Path(__file__).parents[1] / "inventories" / "seed-torus.yaml"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _leftovers(parent: Path, name: str) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(f".{name}.")]


@pytest.fixture
def previous(tmp_path: Path) -> Path:
    """An OUTDIR from an earlier render."""
    out = tmp_path / "out"
    R.render_to_dir(document(ring3_plan()), out, R.RenderOptions(verify=False))
    return out


def test_success_replaces_outdir(previous: Path) -> None:
    doc = ring3_plan(flow_control=False)
    (previous / "cabling.csv").write_text("edited by hand\n")     # a rendered file: replaced
    R.render_to_dir(document(doc), previous, R.RenderOptions(verify=False))
    assert "no flowcontrol" in (previous / "switches" / "sw1.cfg").read_text().splitlines()
    assert (previous / "cabling.csv").read_text().startswith("a,a_port,")
    assert (previous / "manifest.json").is_file()
    assert (previous / "hosts" / "vlanroute-host").stat().st_mode & 0o777 == 0o755
    assert (previous / "hosts" / "install.sh").stat().st_mode & 0o777 == 0o755
    assert (previous / "hosts" / "hosts.tsv").stat().st_mode & 0o777 == 0o644
    assert _leftovers(previous.parent, previous.name) == []


def test_files_render_did_not_write_are_named_and_kept_unless_force(previous: Path) -> None:
    (previous / "backups").mkdir()
    (previous / "backups" / "sw1-running.cfg").write_text("old running config\n")
    (previous / "hosts" / "notes.txt").write_text("mine\n")
    before = _snapshot(previous)
    with pytest.raises(UserError) as caught:
        R.render_to_dir(document(ring3_plan(flow_control=False)), previous, R.RenderOptions(verify=False))
    text = caught.value.render()
    assert "backups/sw1-running.cfg" in text and "hosts/notes.txt" in text and "--force" in text
    assert _snapshot(previous) == before and _leftovers(previous.parent, previous.name) == []
    R.render_to_dir(document(ring3_plan(flow_control=False)), previous,
                    R.RenderOptions(verify=False, force=True))
    assert not (previous / "backups").exists() and not (previous / "hosts" / "notes.txt").exists()


def test_verification_failure_leaves_outdir_untouched(previous: Path, monkeypatch) -> None:
    before = _snapshot(previous)

    def reject(tmp: Path, platforms: object, doc: object) -> bool:
        assert (tmp / "switches" / "sw1.cfg").is_file()   # it verifies the new tree
        raise VerificationError(["sw1: VLAN 1 on port-channel 1"])

    monkeypatch.setattr(R, "_run_verifier", reject)
    with pytest.raises(VerificationError):
        R.render_to_dir(document(ring3_plan(flow_control=False)), previous)
    assert _snapshot(previous) == before
    assert _leftovers(previous.parent, previous.name) == []


def test_write_failure_midway_leaves_outdir_untouched(previous: Path, monkeypatch) -> None:
    before = _snapshot(previous)
    real_write = R._write_tree

    def half_then_fail(root: Path, files: dict[str, str]) -> int:
        items = list(files.items())
        real_write(root, dict(items[: len(items) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(R, "_write_tree", half_then_fail)
    with pytest.raises(UserError, match="no space left on the device"):
        R.render_to_dir(document(ring3_plan(flow_control=False)), previous, R.RenderOptions(verify=False))
    assert _snapshot(previous) == before
    assert _leftovers(previous.parent, previous.name) == []


def test_bad_plan_fails_before_anything_is_written(previous: Path) -> None:
    before = _snapshot(previous)
    doc = ring3_plan()
    doc["switches"]["sw2"]["ports"]["1/g24"]["tagged"] = [1, 102, 103]     # VLAN 1 on an uplink
    with pytest.raises(VerificationError, match="1/g24"):
        R.render_to_dir(document(doc), previous)
    assert _snapshot(previous) == before and _leftovers(previous.parent, previous.name) == []


def test_unsafe_name_in_a_hand_edited_plan_is_rejected(tmp_path: Path) -> None:
    doc = ring3_plan()
    doc["hosts"]["node001"]["interface"] = "eth0;reboot"
    # Refused where the plan document is made, before render sees it (bundle.document).
    with pytest.raises(UserError, match="hosts.node001.interface: interface name 'eth0;reboot' is not allowed"):
        R.render_to_dir(document(doc), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_refuses_to_replace_a_directory_that_is_not_an_outdir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("precious\n")
    with pytest.raises(UserError, match="not a vlanroute output directory"):
        R.render_to_dir(document(ring3_plan()), home, R.RenderOptions(verify=False))
    assert (home / "thesis.tex").read_text() == "precious\n" and len(list(home.iterdir())) == 1


def test_fallback_publish_without_renameat2(previous: Path, monkeypatch) -> None:
    monkeypatch.setattr(atomic_dir, "exchange_dirs", lambda a, b: False)
    R.render_to_dir(document(ring3_plan(flow_control=False)), previous, R.RenderOptions(verify=False))
    assert "no flowcontrol" in (previous / "switches" / "sw1.cfg").read_text()
    assert _leftovers(previous.parent, previous.name) == []


def test_cli_user_error_is_a_message_not_a_traceback(tmp_path: Path, capsys) -> None:
    inv = tmp_path / "bad.yaml"
    inv.write_text(SEED_TORUS.read_text().replace("kind: torus", "kind: donut"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.json").write_text("{}\n")
    rc = main(["render", str(inv), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "error:" in err and "Traceback" not in err
    assert [p.name for p in out.iterdir()] == ["plan.json"]


def test_cli_render_seed_torus(tmp_path: Path) -> None:
    result = CliRunner().invoke(R_cli_group(), ["render", str(SEED_TORUS), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "o"
    assert sorted(p.name for p in out.iterdir()) == ["cabling.csv", "cabling.html", "checks.json", "hosts",
                                                     "manifest.json", "plan.json", "refresh", "switches"]
    assert len(list((out / "switches").iterdir())) == 8
    assert sorted(os.listdir(out / "hosts")) == ["ansible-playbook.yml", "hosts.tsv", "install.sh",
                                                 "vlanroute-host", "vlans.tsv"]
    assert sorted(os.listdir(out / "refresh")) == ["vlanroute-refresh.cron", "vlanroute-refresh.service",
                                                   "vlanroute-refresh.timer"]


def R_cli_group():  # noqa: N802 (imported late: the CLI imports every command)
    from vlanroute.cli import group
    return group


def test_real_verifier_runs_before_publishing(previous: Path, monkeypatch) -> None:
    """A config that leaves VLAN 1 on an uplink is caught by verify_outdir; nothing is published."""
    pytest.importorskip("vlanroute.verify.configs")
    before = _snapshot(previous)
    real = R.render_switch

    def keep_vlan1(ctx, env):  # type: ignore[no-untyped-def]
        return real(ctx, env).replace("allowed vlan remove 1,", "allowed vlan remove ")

    monkeypatch.setattr(R, "render_switch", keep_vlan1)
    with pytest.raises(VerificationError):
        R.render_to_dir(document(ring3_plan(flow_control=False)), previous)
    assert _snapshot(previous) == before and _leftovers(previous.parent, previous.name) == []


def test_refuses_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "plan.json").write_text("{}\n")
    monkeypatch.chdir(work)
    for target in (".", str(work), ".."):
        with pytest.raises(UserError, match="current directory"):
            R.render_to_dir(document(ring3_plan()), Path(target), R.RenderOptions(verify=False))
    assert [p.name for p in work.iterdir()] == ["plan.json"]


def test_cli_set_reaches_the_configs(tmp_path: Path) -> None:
    result = CliRunner().invoke(R_cli_group(), ["render", str(SEED_TORUS), "-o", str(tmp_path / "o"),
                                                "--set", "settings.flow_control=false",
                                                "--learning-method", "raw"])
    assert result.exit_code == 0, result.output
    assert "no flowcontrol" in (tmp_path / "o" / "switches" / "sw3.cfg").read_text().splitlines()
    script = (tmp_path / "o" / "hosts" / "vlanroute-host").read_text()
    assert "\nMETHOD=raw\n" in script


@pytest.mark.parametrize("index, message", [
    (254, r"plan.hosts.node003.index: 254 gives no host address in the learning subnet 10.250.0.0/24"),
    (255, r"index: 255 gives no host address"),      # would be the subnet's broadcast address + 1
    (0, r"plan.hosts.node003.index: 0 is also the index of node001"),
])
def test_bad_host_index_in_a_hand_edited_plan(tmp_path: Path, index: int, message: str) -> None:
    # the learning address is the subnet's first address + 1 + index: it must stay a host
    # address of every VLAN's subnet, and be one host's alone
    doc = ring3_plan()
    doc["hosts"]["node003"]["index"] = index
    with pytest.raises(VerificationError, match=message):
        R.render_to_dir(document(doc), tmp_path / "out", R.RenderOptions(verify=False))
