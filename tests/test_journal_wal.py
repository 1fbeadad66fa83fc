"""Issue 24, item 3: the push journal is written before the switch acts. A full disk at any
record leaves a journal that knows every switch that may have changed (running or
startup config), with a clear message and no traceback; rollback restores every switch it
can from a damaged journal or backup, prints its table and writes its end record; rollback
with nobody to answer exits 2 like push.

Tests named test_catalogue_* are cases of the issue's catalogue (`pytest -k catalogue`)."""

from __future__ import annotations

import errno
import io
import json
import os
from pathlib import Path

import pytest
from push_support import Cluster, build_cluster, run, set_ssh_env

from vlanroute.device import journal as J
from vlanroute.device.journal import read_journal

pytestmark = pytest.mark.timeout(300)


def _push(cluster: Cluster, capsys, *extra: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    return run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes",
               "--workers", "1", *extra)


def _journal(cluster: Cluster) -> Path:
    found = sorted((cluster.state / "pushes").glob("*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def _fill_disk_at(monkeypatch: pytest.MonkeyPatch, event: str) -> list[bool]:
    """From the first journal record of `event` on, every journal write fails with ENOSPC
    (as on a full file system: once full, it stays full). Set [1] True to free space."""
    real = os.write
    full = [False, False]

    def write(fd: int, data: bytes) -> int:
        if f'"event": "{event}"'.encode() in data and not full[1]:
            full[0] = True
        if full[1]:
            full[0] = False
        if full[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr("vlanroute.device.journal.os.write", write)
    return full


@pytest.mark.parametrize("event", [J.APPLYING, J.APPLIED, J.SAVING, J.SAVED])
def test_catalogue_disk_full_at_any_journal_record(farm, tmp_path, monkeypatch, capsys, event: str) -> None:  # type: ignore[no-untyped-def]
    """catalogue: faults. Whatever record the disk fills at, the journal knows every switch
    whose running config changed (an `applying` record) and every switch whose startup
    config may hold the push (`saving`, `saved`), the message is clear, no traceback."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    before = {name: sw.running_config() for name, sw in farm.switches.items()}
    disk = _fill_disk_at(monkeypatch, event)
    rc, out, err = _push(cluster, capsys)
    assert "Traceback" not in out + err
    assert rc != 0, out + err
    assert "cannot write the push journal: no space left on the device" in out + err
    view = read_journal(_journal(cluster))
    for name, sw in farm.switches.items():
        history = view.switches.get(name)
        if sw.running_config() != before[name]:
            assert history is not None and history.touched, (name, event)
        if sw.saved:
            assert history is not None and history.ever_saved, (name, event)
    if event == J.APPLYING:          # nothing may be done that could not be announced
        assert all(sw.config_commands == 0 for sw in farm.switches.values())
    if event in (J.APPLIED, J.SAVING):   # not saved, and rolled back: the fabric as before
        assert all(not sw.saved for sw in farm.switches.values())
        assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    # Space again: rollback restores whatever the journal says may have changed.
    disk[1] = True
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes")
    assert rc == 0, out + err
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before


def _pushed(farm, tmp_path, monkeypatch, capsys) -> tuple[Cluster, dict[str, str]]:  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    before = {name: sw.running_config() for name, sw in farm.switches.items()}
    rc, out, err = _push(cluster, capsys)
    assert rc == 0, out + err
    assert all(sw.running_config() != before[n] for n, sw in farm.switches.items())
    return cluster, before


def _rollback(cluster: Cluster, capsys, *extra: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    return run(capsys, "rollback", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), *extra)


def _ends_with_end_record(path: Path) -> bool:
    return json.loads(path.read_text().splitlines()[-1])["event"] == "end"


def test_catalogue_binary_backup_file_rollback_restores_the_others(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: tracebacks. One backup is binary garbage: the others are restored, the
    table printed, the end record written, the bad file named."""
    cluster, before = _pushed(farm, tmp_path, monkeypatch, capsys)
    bad = cluster.backups("leaf2")[0]            # the one before the push ([1]: the state it reached)
    bad.write_bytes(b"\xff\xfe\x00garbage\x80" * 100)
    rc, out, err = _rollback(cluster, capsys, "--yes")
    assert rc == 4 and "Traceback" not in out + err, out + err
    assert str(bad) in out.replace("\n", "") or bad.name in out, out
    assert "RESTORE-FAILED" in out and out.count(" restored ") >= 4
    for name, sw in farm.switches.items():
        if name != "leaf2":
            assert sw.running_config() == before[name], name
    assert farm.switches["leaf2"].running_config() != before["leaf2"]
    assert _ends_with_end_record(_journal(cluster))


def test_catalogue_hand_edited_journal_record_rollback_restores_the_others(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: tracebacks. One switch's `applying` record names a backup that is not a
    path (5), another line is binary: the rest is restored; the journal line is named."""
    cluster, before = _pushed(farm, tmp_path, monkeypatch, capsys)
    path = _journal(cluster)
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("event") == J.APPLYING and record.get("switch") == "core2":
            record["backup"] = 5
            lines[i] = json.dumps(record)
    lines.insert(3, "\x00\x01binary\xff")
    path.write_text("\n".join(lines) + "\n")
    rc, out, err = _rollback(cluster, capsys, "--yes")
    assert rc == 4 and "Traceback" not in out + err, out + err
    assert f"{path}: line 4 is not a journal record" in err
    assert "core2" in out and "names no backup for core2" in out
    for name, sw in farm.switches.items():
        if name != "core2":
            assert sw.running_config() == before[name], name
    assert _ends_with_end_record(path)


def test_catalogue_rollback_with_nobody_to_answer_exits_2(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: faults. stdin at EOF, not a terminal: exit 2 like push (not 130), and
    under --json the error object on stdout; nothing restored."""
    cluster, before = _pushed(farm, tmp_path, monkeypatch, capsys)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    rc, out, err = _rollback(cluster, capsys)
    assert rc == 2 and "--yes" in err and "not at a terminal" in err, out + err
    rc, out, err = _rollback(cluster, capsys, "--json")
    assert rc == 2
    obj = json.loads(out)
    assert obj["schema"] == "vlanroute-error/1" and obj["exit_code"] == 2 and "--yes" in obj["error"]
    assert all(sw.running_config() != before[n] for n, sw in farm.switches.items())
