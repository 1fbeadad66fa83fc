"""Issue 24, item 3: switches that stop answering. A server that accepts TCP but never
speaks SSH fails the connection within the (bounded) connect timeout with a clear message
and no traceback; a switch that freezes mid-push (its process stopped: TCP stays up, no
reply comes) ends in a named state with a clear message, and the journal lets rollback
restore it once it answers again.

Tests named test_catalogue_* are cases of the issue's catalogue (`pytest -k catalogue`)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from push_support import build_cluster, run, set_ssh_env

from vlanroute.device.credentials import Credentials
from vlanroute.device.session import ConnectFailed, HostKeyPolicy, SwitchSession
from vlanroute.drivers import family_of
from vlanroute.model.platforms import POWERCONNECT_6248

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def silent_server() -> Iterator[tuple[str, int]]:
    """Accepts TCP connections on 127.0.0.77 and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.77", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_catalogue_tcp_without_ssh_fails_quickly_and_clearly(silent_server, monkeypatch, capfd) -> None:  # type: ignore[no-untyped-def]
    """catalogue: faults. The timeout bounds the wait (here shortened to 2 s); the message
    says what happened; paramiko's thread prints no traceback."""
    monkeypatch.setattr("vlanroute.device.session.CONNECT_TIMEOUT_S", 2.0)
    host, port = silent_server
    cli = family_of(POWERCONNECT_6248).cli
    assert cli is not None
    start = time.monotonic()
    with pytest.raises(ConnectFailed) as caught:
        SwitchSession(cli, host, port, Credentials("u", "p"), HostKeyPolicy(check=False))
    took = time.monotonic() - start
    time.sleep(0.5)                  # paramiko's transport thread logs as it ends
    captured = capfd.readouterr()
    assert took < 10, took
    assert f"{host}:{port} accepted the TCP connection but did not speak SSH within 2 s" in str(caught.value)
    assert "Traceback" not in captured.err + captured.out


def test_catalogue_switch_frozen_mid_push_ends_in_a_named_state(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: faults. The emulated switches freeze (their event loop blocked, as SIGSTOP
    would: TCP stays up, nothing answers) after core1's third configuration command, and
    thaw 6 s later. Push ends core1 in a named state, says so, no traceback; `rollback`
    then restores every switch the journal names."""
    set_ssh_env(monkeypatch)
    monkeypatch.setattr("vlanroute.device.session.COMMAND_TIMEOUT_S", 2.0)
    monkeypatch.setattr("vlanroute.device.session.CONNECT_TIMEOUT_S", 2.0)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    before = {name: sw.running_config() for name, sw in farm.switches.items()}
    real_run = SwitchSession.run
    frozen = threading.Event()

    def run_then_freeze(self, command: str, *, check: bool = True) -> str:  # type: ignore[no-untyped-def]
        out = real_run(self, command, check=check)
        if not frozen.is_set() and farm.switches["core1"].config_commands >= 3:
            frozen.set()
            farm._loop.call_soon_threadsafe(time.sleep, 6.0)     # the whole farm stops answering
        return out

    monkeypatch.setattr(SwitchSession, "run", run_then_freeze)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--yes", "--workers", "1", "--switch", "core1")
    assert frozen.is_set()
    assert "Traceback" not in out + err
    assert rc in (1, 4), out + err                     # rolled back, or a person must restore it
    row = next(line for line in out.splitlines() if line.startswith("│ core1"))
    assert "rolled-back" in row or "ROLLBACK-FAILED" in row, row
    time.sleep(6.5)                                    # thawed
    monkeypatch.setattr(SwitchSession, "run", real_run)
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes")
    assert rc == 0, out + err
    assert farm.switches["core1"].running_config() == before["core1"]
