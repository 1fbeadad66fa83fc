"""Push as an operation on the whole fabric (issue 13 parts 4-6), on fake switches on loopback:
all-or-nothing start, fail-fast, Ctrl-C, the journal, `save` and `rollback`.

"Nothing changed" is checked on the switches themselves: the running config text each fake
switch prints, before and after, and the commands it accepted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time

import jsonschema
import pytest

from vlanroute.natural import natural_key

from vlanroute import schemas
from vlanroute.lab import Faults
from vlanroute.lab.state import PortState

from push_support import PASSWORD, REPO, USER, Cluster, build_cluster, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)
LAB = ["core1", "core2", "leaf1", "leaf2", "leaf3"]


def running(cluster: Cluster) -> dict[str, str]:
    return {name: sw.running_config() for name, sw in cluster.farm.switches.items()}


def table(out: str) -> dict[str, str]:
    """switch -> result column of the last table printed."""
    found = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 3 and cells[1] and not cells[1].startswith("switch"):
            found[cells[1]] = cells[2]
    return found


def journal(cluster: Cluster) -> list[dict]:
    files = sorted((cluster.state / "pushes").glob("*.jsonl"))
    assert files, "no push journal"
    return [json.loads(line) for line in files[-1].read_text().splitlines()]


def seed_old_config(sw) -> None:  # type: ignore[no-untyped-def]
    """A non-default starting point, so "restored" means "back to this", not "factory"."""
    st = sw.state
    st.vlans.add(200)
    st.ports["1/g20"] = PortState(mode="general", pvid=200, untagged={1, 200})
    st.ports["1/g48"] = PortState(mode="general", untagged={1}, tagged={200})


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_one_unreachable_switch_among_eight_changes_nothing_anywhere(farm, tmp_path, monkeypatch,
                                                                     capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    assert len(farm.switches) == 8
    # A target map sends sw5 to a loopback port nobody listens on; the others to their fakes.
    targets = {name: {"host": sw.host, "port": sw.port} for name, sw in farm.switches.items()}
    targets["sw5"] = {"host": "127.0.0.1", "port": closed_port()}
    tmap = tmp_path / "targets.json"
    tmap.write_text(json.dumps({"format": "vlanroute-targets/1", "plan": cluster.plan["name"],
                                "switches": targets}))
    before = running(cluster)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--targets", str(tmap), "--yes", "--workers", "4")
    assert rc == 1, out + err
    res = table(out)
    assert res["sw5"] == "not-started"
    assert f"cannot reach 127.0.0.1:{targets['sw5']['port']}" in out
    assert all(res[n] == "dry-run" for n in before if n != "sw5")
    assert "nothing was changed" in out
    assert running(cluster) == before
    for sw in farm.switches.values():
        assert sw.config_commands == 0 and sw.saved == []
    assert not list((cluster.state / "pushes").glob("*.jsonl"))


def test_failure_mid_push_stops_new_switches_and_rollback_restores_every_touched_switch(
        farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    # leaf1 refuses the last phase: the steps before it end applied and saved, those after
    # it never start.
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml",
                            {"leaf1": Faults(reject=r"^spanning-tree disable$")})
    for name in ("core1", "leaf1"):
        seed_old_config(cluster.switch(name))
    before = running(cluster)
    args = ("push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--workers", "1")
    rc, out, err = run(capsys, *args, "--dry-run", "--json")
    assert rc == 0, out + err
    order = [s["switch"] for s in json.loads(out)["transition"]["steps"]]
    assert sorted(order) == sorted(before) and len(set(order)) == len(order)
    at = order.index("leaf1")
    done, left = order[:at], order[at + 1:]
    assert done and left, order                  # a failure in the middle
    rc, out, err = run(capsys, *args, "--yes")
    assert rc == 3, out + err                                   # ExitCode.PARTIAL
    res = table(out)
    assert res == {**{n: "applied" for n in done}, "leaf1": "rolled-back", **{n: "skipped" for n in left}}
    assert f"fabric: new config, saved: {', '.join(sorted(done, key=natural_key))}" in out
    assert "fabric: old config, rolled back to the backup: leaf1" in out
    for name in left:                                           # never started
        assert cluster.switch(name).config_commands == 0
        assert cluster.switch(name).running_config() == before[name]
    events = [(r.get("switch"), r["event"]) for r in journal(cluster)]
    assert events[0] == (None, "push") and events[-1] == (None, "end")
    assert (done[0], "applying") in events and (done[0], "saved") in events
    assert ("leaf1", "rolled-back") in events and (left[0], "skipped") in events
    assert (left[0], "applying") not in events

    # Dry run first: shows, changes nothing.
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--dry-run")
    assert rc == 0, out + err
    assert table(out) == {n: "would-restore" for n in [*done, "leaf1"]}
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    # leaf1 was rolled back by the push itself: nothing left to send there.
    assert "already equals its backup: nothing to send" in rows["leaf1"]
    assert "commands would be sent; then saved" in rows["core1"]
    assert cluster.switch("core1").running_config() != before["core1"]

    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes")
    assert rc == 0, out + err
    assert table(out) == {n: "restored" for n in [*done, "leaf1"]}
    assert running(cluster) == before                           # exactly, every switch
    sent = {r["switch"]: r["commands_sent"] for r in journal(cluster) if r["event"] == "restored"}
    assert sent["leaf1"] == 0 and sent["core1"] > 0
    # Saved switches are saved again, so a reboot keeps the old config; leaf1 never was.
    for name in done:
        assert cluster.switch(name).saved[-1] == before[name]
    assert cluster.switch("leaf1").saved == []
    # The rollback is a transition too: each switch it changed was announced first.
    restoring = {r["switch"] for r in journal(cluster) if r["event"] == "restoring"}
    assert restoring == set(done)


def test_no_save_then_save_then_rollback_with_json(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    state = tmp_path / "my-state"
    before = running(cluster)
    common = ["--known-hosts", str(cluster.known_hosts), "--state-dir", str(state)]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--no-save")
    assert rc == 0, out + err
    assert set(table(out).values()) == {"applied-unsaved"}
    assert all(sw.saved == [] and sw.config_commands > 0 for sw in farm.switches.values())
    assert (state / "backups").is_dir() and list((state / "pushes").glob("*.jsonl"))
    assert not (cluster.state).exists()                       # --state-dir, not the default

    rc, out, err = run(capsys, "save", str(cluster.outdir), *common, "--json")
    assert rc == 0, out + err
    doc = json.loads(out)
    assert list(doc)[0] == "schema" and doc["schema"] == "vlanroute-save/1"
    jsonschema.validate(doc, schemas.load("save"), cls=jsonschema.Draft202012Validator)
    assert sorted(s["switch"] for s in doc["switches"]) == LAB
    assert all(s["result"] == "saved" for s in doc["switches"])
    assert all(sw.saved == [sw.running_config()] for sw in farm.switches.values())
    rc, out, err = run(capsys, "save", str(cluster.outdir), *common)
    assert rc == 0 and "nothing to save" in out

    rc, out, err = run(capsys, "rollback", str(cluster.outdir), *common, "--yes", "--json")
    assert rc == 0, out + err
    doc = json.loads(out)
    assert doc["schema"] == "vlanroute-rollback/1" and doc["exit_code"] == 0
    jsonschema.validate(doc, schemas.load("rollback"), cls=jsonschema.Draft202012Validator)
    push_file = sorted((state / "pushes").glob("*.jsonl"))[-1]
    started = [r["switch"] for r in map(json.loads, push_file.read_text().splitlines())
               if r["event"] == "applying"]
    assert sorted(started) == LAB
    assert [s["switch"] for s in doc["switches"]] == list(reversed(started))
    assert running(cluster) == before
    assert all(sw.saved[-1] == before[name] for name, sw in farm.switches.items())


def test_save_refuses_a_switch_changed_since_the_push(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    common = ["--known-hosts", str(cluster.known_hosts)]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--no-save",
                       "--switch", "leaf1", "--switch", "leaf2")
    assert rc == 0, out + err
    cluster.switch("leaf2").state.ports["1/g20"] = PortState(mode="general", pvid=1, untagged={1})
    cluster.switch("leaf2").state.vlans.add(300)
    rc, out, err = run(capsys, "save", str(cluster.outdir), *common)
    assert rc == 3, out + err                                  # PARTIAL: leaf1 saved, leaf2 not
    assert table(out) == {"leaf1": "saved", "leaf2": "not-saved"}
    assert "changed since the push" in out
    assert cluster.switch("leaf2").saved == []


def test_resume_continues_with_the_switches_the_last_push_did_not_finish(farm, tmp_path,
                                                                         monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    faults = Faults(reject=r"^spanning-tree disable$")
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", {"core2": faults})
    common = ["--known-hosts", str(cluster.known_hosts), "--workers", "1"]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes")
    assert rc == 3 and table(out)["core2"] == "rolled-back"
    faults.reject = None                                       # the cause is fixed
    logins = cluster.switch("core1").logins
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--resume")
    assert rc == 0, out + err
    assert "4 switch(es) left: core2, leaf1, leaf2, leaf3" in err
    assert set(table(out)) == {"core2", "leaf1", "leaf2", "leaf3"}
    # finished: only the read-only cabling check (the whole fabric's cables) and the read of
    # every switch the transition is planned with log in again
    assert cluster.switch("core1").logins == logins + 2
    assert all(sw.saved for sw in farm.switches.values())
    # One journal for both runs: rollback would cover every switch of the push.
    assert len(list((cluster.state / "pushes").glob("*.jsonl"))) == 1
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--resume")
    assert rc == 0 and "nothing to do" in err


def test_rollback_without_a_journal_says_which_state_dir(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--yes")
    assert rc == 2 and "no push journal" in err and "--state-dir" in err
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_a_state_dir_inside_outdir_is_refused_before_any_login(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    inside = cluster.outdir / "state"
    for command in (["push", "--yes"], ["push", "--dry-run"], ["save"], ["rollback", "--yes"]):
        rc, out, err = run(capsys, command[0], str(cluster.outdir), *command[1:], "--known-hosts",
                           str(cluster.known_hosts), "--state-dir", str(inside))
        assert rc == 2 and "inside OUTDIR" in err and "--state-dir" in err, command
    assert not inside.exists()
    assert all(sw.logins == 0 for sw in farm.switches.values())


def _push_in_a_process(cluster, tmp_path: Path) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    """`vlanroute push --yes --workers 1` in its own process, so that a test can signal it.
    Output goes to files, not pipes: the diffs fill a pipe's buffer long before anyone reads it."""
    env = dict(os.environ, VLANROUTE_SSH_USER=USER, VLANROUTE_SSH_PASSWORD=PASSWORD,
               VLANROUTE_LOOPBACK_ONLY="1", COLUMNS="400", PYTHONPATH=str(REPO))
    env.pop("VLANROUTE_SSH_KEY", None)
    out_file, err_file = (tmp_path / "out.txt").open("w+"), (tmp_path / "err.txt").open("w+")
    return subprocess.Popen([sys.executable, "-m", "vlanroute.cli", "push", str(cluster.outdir),
                             "--known-hosts", str(cluster.known_hosts), "--yes", "--workers", "1"],
                            env=env, cwd=REPO, stdout=out_file, stderr=err_file, text=True)


def _journal_shows_applying(cluster) -> bool:  # type: ignore[no-untyped-def]
    pushes = cluster.state / "pushes"
    return pushes.is_dir() and any('"applying"' in p.read_text() for p in pushes.glob("*.jsonl"))


def _wait_until(proc: subprocess.Popen[str], condition, deadline: float) -> None:  # type: ignore[no-untyped-def]
    """Poll `condition` while the push runs; fail if it ends first or the deadline passes."""
    while not condition():
        assert proc.poll() is None and time.monotonic() < deadline, "the push ended or stalled first"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigint_mid_push_starts_no_further_switch_and_prints_the_table(farm, tmp_path):
    """A real SIGINT to a `vlanroute push` process while its first switch is being changed."""
    slow = Faults(delay_s=0.02)               # sw1 takes seconds: the signal lands mid-switch
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", {"sw1": slow})
    before = running(cluster)
    proc = _push_in_a_process(cluster, tmp_path)
    try:
        deadline = time.monotonic() + 120
        _wait_until(proc, lambda: _journal_shows_applying(cluster), deadline)
        assert cluster.switch("sw1").config_commands < 50          # still in the middle of sw1
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    out, err = (tmp_path / "out.txt").read_text(), (tmp_path / "err.txt").read_text()
    assert proc.returncode == 130, out + err                       # ExitCode.INTERRUPTED
    assert "interrupted" in err
    res = table(out)
    assert res["sw1"] == "applied"                                  # in flight: finished
    assert all(res[f"sw{i}"] == "skipped" for i in range(2, 9)), res
    for i in range(2, 9):
        sw = cluster.switch(f"sw{i}")
        assert sw.config_commands == 0 and sw.running_config() == before[f"sw{i}"]
    assert "not started: interrupted" in out
    records = journal(cluster)
    assert [r["switch"] for r in records if r["event"] == "applying"] == ["sw1"]
    assert records[-1] == {**records[-1], "event": "end", "interrupted": True}


@pytest.mark.slow
def test_a_second_sigint_ends_the_push_at_once_and_rollback_restores_the_half_applied_switch(
        farm, tmp_path, monkeypatch, capsys):
    """Two SIGINTs mid-switch: the process ends then, not once the switch in progress is done
    (a KeyboardInterrupt reaches only the main thread; the worker would go on and save it).
    The journal left behind, as after a crash, lets rollback restore every switch exactly."""
    slow = Faults(delay_s=0.05)               # sw1 takes over ten seconds
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml", {"sw1": slow})
    seed_old_config(cluster.switch("sw1"))
    before = running(cluster)
    proc = _push_in_a_process(cluster, tmp_path)
    try:
        deadline = time.monotonic() + 120
        # Mid-switch: sw1 has taken config commands (the journal's "applying" comes before
        # the first; on a loaded machine both SIGINTs could land in between).
        _wait_until(proc, lambda: _journal_shows_applying(cluster) and cluster.switch("sw1").config_commands > 0,
                    deadline)
        proc.send_signal(signal.SIGINT)
        _wait_until(proc, lambda: "interrupted" in (tmp_path / "err.txt").read_text(), deadline)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = (tmp_path / "err.txt").read_text()
    assert proc.returncode == 130 and "aborted" in err and "vlanroute rollback" in err, err
    records = journal(cluster)
    assert [(r["switch"], r["event"]) for r in records if r.get("switch")] == [("sw1", "applying")]
    sw1 = cluster.switch("sw1")
    assert sw1.saved == [] and 0 < sw1.config_commands
    assert sw1.running_config() != before["sw1"]                    # stopped half-way
    assert all(cluster.switch(f"sw{i}").config_commands == 0 for i in range(2, 9))

    slow.delay_s = 0.0
    monkeypatch.setenv("VLANROUTE_SSH_USER", USER)
    monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", PASSWORD)
    monkeypatch.setenv("VLANROUTE_LOOPBACK_ONLY", "1")
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes")
    assert rc == 0 and table(out) == {"sw1": "restored"}, out + err
    assert running(cluster) == before


def _hold_lock_in_another_process(state: Path, command: str) -> subprocess.Popen[str]:
    """A second vlanroute process holding the fabric's lock (as a push at work does)."""
    code = ("import sys, time; from pathlib import Path; "
            "from vlanroute.device.statedir import FabricState, lock_fabric; "
            f"lock = lock_fabric(FabricState(Path({str(state)!r})), {command!r}); "
            "print('held', flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_one_push_save_or_rollback_per_fabric_at_a_time(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    state = tmp_path / "state"
    common = ["--known-hosts", str(cluster.known_hosts), "--state-dir", str(state)]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--no-save")
    assert rc == 0, out + err
    pushed = running(cluster)
    journal_text = sorted((state / "pushes").glob("*.jsonl"))[-1].read_text()
    logins = {name: sw.logins for name, sw in farm.switches.items()}
    other = _hold_lock_in_another_process(state, "push")
    try:
        for argv in (["rollback", "--yes"], ["save"], ["push", "--yes"]):
            rc, out, err = run(capsys, argv[0], str(cluster.outdir), *common, *argv[1:])
            assert rc == 2, (argv, out + err)
            assert f"another vlanroute push (pid {other.pid}, since " in err, err
            assert str(state / "lock") in err
        # Refused before anything else: no login, no change, the journal as the push left it.
        assert {name: sw.logins for name, sw in farm.switches.items()} == logins
        assert running(cluster) == pushed
        assert sorted((state / "pushes").glob("*.jsonl"))[-1].read_text() == journal_text
        # A dry run changes nothing and takes no lock.
        rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--dry-run")
        assert rc == 0, out + err
    finally:
        other.kill()          # the kernel releases the flock of a process that dies
        other.wait()
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), *common, "--yes")
    assert rc == 0, out + err
    assert running(cluster) != pushed


def test_fabric_lock_is_shared_within_a_process_and_released(tmp_path: Path) -> None:
    from vlanroute.device.statedir import FabricState, lock_fabric
    from vlanroute.errors import UserError

    state = FabricState(tmp_path / "s")
    # One process, several holders (the Nornir task's threads): shared, released by the last.
    first, second = lock_fabric(state, "rollback"), lock_fabric(state, "push")
    first.release()
    first.release()                               # twice is once
    probe = ("import sys; from pathlib import Path; from vlanroute.device.statedir import FabricState, "
             f"lock_fabric; lock_fabric(FabricState(Path({str(tmp_path / 's')!r})), 'push')")
    blocked = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert blocked.returncode != 0
    assert f"another vlanroute rollback (pid {os.getpid()}, since " in blocked.stderr
    second.release()
    free = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert free.returncode == 0, free.stderr
    other = _hold_lock_in_another_process(tmp_path / "s", "save")
    try:
        with pytest.raises(UserError, match=rf"another vlanroute save \(pid {other.pid}, since "):
            lock_fabric(state, "push")
        # A lock file rewritten by someone else: nothing from it is echoed.
        (tmp_path / "s" / "lock").write_text('{"command": "$(reboot)", "pid": 1, "since": "now"}\n')
        with pytest.raises(UserError, match="another vlanroute command is working"):
            lock_fabric(state, "push")
    finally:
        other.kill()
        other.wait()


def test_a_lock_file_that_cannot_be_opened_is_a_clear_error(tmp_path: Path) -> None:
    from vlanroute.device.statedir import FabricState, lock_fabric
    from vlanroute.errors import UserError

    state = FabricState(tmp_path / "s")
    state.ensure()
    (tmp_path / "s" / "lock").mkdir()         # a directory where the lock file goes: EISDIR, also as root
    with pytest.raises(UserError, match="cannot open the fabric's lock file") as exc:
        lock_fabric(state, "push")
    assert exc.value.field == "--state-dir"


def _drop_records(push_file: Path, switch: str, events: set[str]) -> None:
    """The journal as a crash would have left it: the last records of `switch` never written."""
    kept = [line for line in push_file.read_text().splitlines()
            if not (json.loads(line).get("switch") == switch and json.loads(line)["event"] in events)]
    push_file.write_text("\n".join(kept) + "\n")


@pytest.mark.parametrize("cut", ["after-applied", "after-saving"])
def test_resume_saves_a_switch_the_interrupted_push_applied_but_did_not_save(farm, tmp_path, monkeypatch,
                                                                           capsys, cut):
    """A crash between `applied` (or `saving`) and `saved` leaves the switch's running config
    as rendered and its startup config old: --resume must save it, not call it unchanged."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    common = ["--known-hosts", str(cluster.known_hosts), "--workers", "1"]
    old_startup = {name: sw.running_config() for name, sw in farm.switches.items()}
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--switch", "leaf2")
    assert rc == 0, out + err
    leaf2 = cluster.switch("leaf2")
    pushed = leaf2.running_config()
    assert pushed != old_startup["leaf2"] and leaf2.saved == [pushed]
    leaf2.saved = [old_startup["leaf2"]]                       # the save never happened
    push_file = sorted((cluster.state / "pushes").glob("*.jsonl"))[-1]
    _drop_records(push_file, "leaf2", {"saved"} | ({"saving"} if cut == "after-applied" else set()))

    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--dry-run", "--resume")
    assert rc == 0, out + err
    assert "the resumed push saves it" in out and leaf2.saved == [old_startup["leaf2"]]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--resume")
    assert rc == 0, out + err
    assert "1 switch(es) left: leaf2" in err
    assert "saved now" in out
    assert leaf2.running_config() == pushed and leaf2.saved[-1] == pushed
    events = [json.loads(line) for line in push_file.read_text().splitlines()]
    assert [e["event"] for e in events if e.get("switch") == "leaf2"][-1] == "saved"
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--resume")
    assert rc == 0 and "nothing to do" in err


def test_resume_retries_a_save_that_did_not_confirm(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    faults = Faults(save_lost=True)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", {"leaf1": faults})
    common = ["--known-hosts", str(cluster.known_hosts), "--workers", "1"]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--switch", "leaf1")
    assert table(out)["leaf1"] == "SAVE-UNCERTAIN", out + err
    saves = len(cluster.switch("leaf1").saved)
    rc, out, err = run(capsys, "push", str(cluster.outdir), *common, "--yes", "--resume")
    assert rc == 0, out + err
    assert "saved now" in out and len(cluster.switch("leaf1").saved) == saves + 1
    assert cluster.switch("leaf1").saved[-1] == cluster.switch("leaf1").running_config()
