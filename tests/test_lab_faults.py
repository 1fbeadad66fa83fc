"""The lab under faults (issue 41 items 6 and 7): two `lab up` at once leave no daemon that
`lab down` cannot stop, a read-only state directory and a damaged cables-down file are
clear errors, and the daemon survives a damaged request."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from push_support import REPO, build_cluster, set_ssh_env

from vlanroute import api
from vlanroute.cli import main
from vlanroute.errors import UserError
from vlanroute.lab import linkdown
from vlanroute.lab.daemon import follow_cables_down
from vlanroute.lab.statedir import DAEMON_LOCK, UP_LOCK, StateDir, daemon_alive

RING = REPO / "inventories" / "seed-ring.yaml"


@pytest.fixture(scope="module")
def ring(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ring") / "out"
    api.render(RING, out)
    return out


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


def fake_daemon(state: Path, hold_lock: bool) -> subprocess.Popen[bytes]:
    """A process that looks like the lab daemon of `state` (its command line), optionally
    holding the daemon lock as the real one does: what a lab whose lab.json is gone leaves."""
    code = textwrap.dedent(f"""
        import fcntl, os, sys, time
        if {hold_lock!r}:
            fd = os.open({str(state / DAEMON_LOCK)!r}, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, b"%d\\n" % os.getpid())
        print("ready", flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code, "vlanroute.lab.daemon", "--state-dir", str(state)],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


def private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True)
    return path


def test_catalogue_orphan_lab_down_stops_a_daemon_whose_lab_json_is_gone(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Two `lab up` at once: the second removed the first's lab.json, so `lab down` found no
    lab and left the first daemon serving SSH. The daemon's lock names it."""
    state = private_dir(tmp_path / "state")
    proc = fake_daemon(state, hold_lock=True)
    try:
        assert StateDir(state).running_pid() == proc.pid
        rc, _, err = cli(capsys, "lab", "down", "--state-dir", str(state))
        assert rc == 0, err
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.wait()


def test_a_lock_file_naming_another_process_is_no_lab(tmp_path: Path) -> None:
    state = private_dir(tmp_path / "state")
    other = fake_daemon(private_dir(tmp_path / "other"), hold_lock=False)   # a daemon of another directory
    try:
        (state / DAEMON_LOCK).write_text(f"{other.pid}\n")
        assert StateDir(state).running_pid() is None
        assert daemon_alive(other.pid) and not daemon_alive(other.pid, state)
    finally:
        other.kill()
        other.wait()


def test_catalogue_orphan_lab_up_while_another_is_starting(ring: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    state = StateDir(private_dir(tmp_path / "state"))
    held = state.lock(UP_LOCK)
    assert held is not None
    try:
        rc, out, err = cli(capsys, "lab", "up", str(ring), "--state-dir", str(state.path))
    finally:
        os.close(held)
    assert rc == 2 and "another `vlanroute lab up`" in err and f"process {os.getpid()}" in err
    assert "fix:" in err and out == ""


def test_a_second_daemon_in_the_same_directory_stops_at_once(ring: Path, tmp_path: Path) -> None:
    from vlanroute.lab import daemon
    state = StateDir(private_dir(tmp_path / "state"))
    held = state.lock(DAEMON_LOCK)
    assert held is not None
    old = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        rc = daemon.main(["--state-dir", str(state.path), "--outdir", str(ring), "--user", "admin"])
    finally:
        os.close(held)
        signal.signal(signal.SIGTERM, old[0])
        signal.signal(signal.SIGINT, old[1])
    assert rc == 2
    assert "another lab daemon" in (state.read("error") or "")
    assert state.read("lab.json") is None and state.read("ready") is None


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
@pytest.mark.parametrize("action", [["lab", "up", "{out}"], ["lab", "down"], ["lab", "cable-down", "--pair", "sw1:sw2"]])
def test_catalogue_traceback_lab_on_a_read_only_state_dir(ring: Path, tmp_path: Path, action: list[str]) -> None:
    state = private_dir(tmp_path / "state")
    (state / "lab.log").write_text("")
    args = " ".join(a.replace("{out}", str(ring)) for a in action)
    script = (f"mount --bind -o ro {state} {state} && exec {sys.executable} -m vlanroute.cli {args} "
              f"--state-dir {state}")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    if "mount" in done.stderr and "permission denied" in done.stderr.lower():
        pytest.skip("no mount namespace here: " + done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    if action[1] == "up":
        assert done.returncode == 2 and "Read-only file system" in done.stderr and "fix:" in done.stderr
        assert done.stdout == ""
    else:
        assert done.returncode in (0, 2), done.stderr     # no lab runs: said so, or the removal refused
    assert not [p for p in state.iterdir() if p.name != "lab.log"]


@pytest.mark.parametrize("text", ["{", "[]", '{"down": 5}', '{"down": [["sw1"]]}', '{"down": [[1, 2]]}',
                                  '{"down": [["sw1", ""]]}', "[" * 10_000 + "]" * 10_000, "\u00ff not json"])
def test_a_damaged_cables_down_file_is_named_with_the_way_back(text: str) -> None:
    with pytest.raises(UserError) as caught:
        linkdown.load(text, "/state/cables-down.json")
    assert caught.value.file == "/state/cables-down.json"
    assert "remove /state/cables-down.json" in (caught.value.fix or "")
    assert linkdown.load(linkdown.dump({("sw1", "1/g47")})) == {("sw1", "1/g47")}


def test_catalogue_traceback_lab_cable_down_with_a_damaged_file(ring: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    state = private_dir(tmp_path / "state")
    proc = fake_daemon(state, hold_lock=False)
    try:
        (state / "lab.json").write_text(json.dumps({"pid": proc.pid, "outdir": str(ring), "switches": {}}))
        (state / linkdown.DOWN_FILE).write_text('{"down": [["sw1", "1/g47"], ')
        rc, _, err = cli(capsys, "lab", "cable-down", "--pair", "sw1:sw2", "--state-dir", str(state))
        assert rc == 2 and "cables-down.json" in err and "damaged" in err and "fix: remove" in err
        os.unlink(state / linkdown.DOWN_FILE)
        os.mkfifo(state / linkdown.DOWN_FILE)              # a FIFO must not block the command
        rc, _, err = cli(capsys, "lab", "cable-up", "--pair", "sw1:sw2", "--state-dir", str(state))
        assert rc == 2 and "not a regular file" in err
    finally:
        proc.kill()
        proc.wait()


def test_the_daemon_keeps_running_through_a_damaged_request(farm, tmp_path: Path, monkeypatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-ring.yaml")
    state = StateDir(private_dir(tmp_path / "state"))
    stop = threading.Event()
    worker = threading.Thread(target=follow_cables_down, args=(cluster.farm, state, cluster.outdir, None, stop),
                              kwargs={"poll_s": 0.02})
    worker.start()
    try:
        state.write(linkdown.DOWN_FILE, "{ damaged")
        time.sleep(0.3)
        assert worker.is_alive()
        assert state.read(linkdown.APPLIED_FILE) is None
        plan = json.loads((cluster.outdir / "plan.json").read_text())
        cable = next(c for c in plan["cabling"] if {c["a"], c["b"]} == {"sw1", "sw2"})
        wanted = linkdown.dump({(cable["a"], cable["a_port"]), (cable["b"], cable["b_port"])})
        state.write(linkdown.DOWN_FILE, wanted)
        for _ in range(200):
            if state.read(linkdown.APPLIED_FILE) == wanted:
                break
            time.sleep(0.02)
        assert state.read(linkdown.APPLIED_FILE) == wanted
        assert not [e for e in cluster.switch(cable["a"]).state.lldp if e.port == cable["a_port"]]
    finally:
        stop.set()
        worker.join()
    assert capsys.readouterr().err.count("cable request not applied") == 1


def _vr_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "XDG_", "PYTEST_"))}
    env.update(HOME=str(tmp_path), VLANROUTE_LOOPBACK_ONLY="1", PYTHONPATH=str(REPO),
               VLANROUTE_SSH_PASSWORD="Pw-lab-faults-test", VLANROUTE_SSH_USER="netops")
    return env


def _daemons_of(state: Path) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and daemon_alive(int(p.name), state)]


@pytest.mark.slow
def test_catalogue_orphan_two_lab_up_at_once_leave_no_daemon_after_down(ring: Path, tmp_path: Path) -> None:
    env = _vr_env(tmp_path)
    state = tmp_path / "state"
    cmd = [sys.executable, "-m", "vlanroute.cli", "lab", "up", str(ring), "--state-dir", str(state), "-q"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=180) for p in procs]
    try:
        codes = sorted(p.returncode for p in procs)
        assert codes == [0, 2], results
        loser = results[[p.returncode for p in procs].index(2)][1]
        assert "Traceback" not in loser and ("another" in loser or "already running" in loser), loser
        assert len(_daemons_of(state)) == 1
    finally:
        down = subprocess.run([sys.executable, "-m", "vlanroute.cli", "lab", "down", "--state-dir", str(state)],
                              env=env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stderr
    assert _daemons_of(state) == []
