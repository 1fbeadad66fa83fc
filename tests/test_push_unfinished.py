"""Issue 41 items 2 and 3: a plain push after one that did not finish never calls a switch
done while its running config is unsaved; a rollback restores the switches whatever the state
directory lets it write (full, read-only), naming the records it could not write."""

from __future__ import annotations

import errno
import json

from push_support import build_cluster, run, set_ssh_env
from vlanroute.device.journal import JournalWriteError


def _push(capsys, cluster, *extra: str):  # type: ignore[no-untyped-def]
    return run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes", *extra)


def test_a_plain_push_saves_what_a_no_save_push_left_unsaved(farm, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = _push(capsys, cluster, "--no-save")
    assert rc == 0, out + err
    assert all(sw.saved == [] for sw in farm.switches.values())
    # Before: "unchanged, already as rendered", exit 0, nothing saved (a reboot undoes it).
    rc, out, err = _push(capsys, cluster, "--json")
    assert rc == 0, out + err
    data = json.loads(out)
    assert {r["result"] for r in data["switches"]} == {"applied"}
    assert all("saved now" in r["message"] for r in data["switches"]), data["switches"]
    assert "left" in err and "unfinished" in err and "saves each one" in err
    for sw in farm.switches.values():
        assert sw.saved == [sw.running_config()]
    # Finished: a third push has nothing to do and says so.
    rc, out, err = _push(capsys, cluster)
    assert rc == 0 and out.count("unchanged") == len(farm.switches) and "unfinished" not in err


def test_a_plain_push_after_a_crash_before_the_save_saves_it(farm, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """The journal cut where a crash after the read-back and before the save would cut it."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = _push(capsys, cluster, "--no-save", "--switch", "core1")
    assert rc == 0, out + err
    journal = sorted((cluster.state / "pushes").glob("*.jsonl"))[-1]
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    lines[0]["save"] = True                       # a push that meant to save ...
    keep = [x for x in lines if x["event"] not in ("end",)]     # ... and died before its end
    journal.write_text("".join(json.dumps(x) + "\n" for x in keep))
    rc, out, err = _push(capsys, cluster, "--switch", "core1")
    assert rc == 0, out + err
    assert "core1 (applied)" in err and farm.switches["core1"].saved


def test_rollback_restores_every_switch_when_nothing_can_be_written(farm, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    before = {n: sw.running_config() for n, sw in farm.switches.items()}
    rc, out, err = _push(capsys, cluster)
    assert rc == 0, out + err

    def full(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise JournalWriteError("cannot write the push journal: no space left on the device")

    def no_backup(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("vlanroute.device.journal.Journal._write", full)
    monkeypatch.setattr("vlanroute.device.statedir.FabricState.write_backup", no_backup)
    monkeypatch.setattr("vlanroute.device.history.write_private", no_backup)
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes")
    assert rc == 0, out + err
    assert "Traceback" not in out + err and "ROLLBACK-FAILED" not in out and "RESTORE-FAILED" not in out
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    assert "not recorded" in err and "no space left" in err
