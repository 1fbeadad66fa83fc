"""`vlanroute -v` / `--log-file` (python logging) and push's per-switch SSH session logs:
written, private (0600), and never holding the SSH password."""

from __future__ import annotations

import logging
import stat

import pytest
from push_support import PASSWORD, build_cluster, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(autouse=True)
def _restore_logging():
    """configure() installs handlers on the root logger: take them off after each test."""
    before = list(logging.getLogger().handlers)
    yield
    for handler in list(logging.getLogger().handlers):
        if handler not in before:
            logging.getLogger().removeHandler(handler)
            handler.close()


def _private(path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o600


def test_push_logs_and_session_logs_never_hold_the_password(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    log = tmp_path / "vlanroute.log"
    rc, out, err = run(capsys, "-vvv", "--log-file", str(log), "push", str(cluster.outdir), "--dry-run",
                       "--known-hosts", str(cluster.known_hosts), "--switch", "leaf1", "--skip-cabling-check")
    assert rc == 0, out + err
    text = log.read_text()
    assert _private(log)
    assert "connecting to 127.0.0." in text and "as netops" in text
    assert "sent 'show running-config'" in text or "sent \"show running-config\"" in text
    assert "leaf1: dry-run" in text or "leaf1: DRY-RUN" in text.upper()
    sessions = sorted((cluster.state / "sessions").glob("leaf1-*.log"))
    assert sessions and all(_private(p) for p in sessions)
    seen = "".join(p.read_text() for p in sessions)
    assert "show running-config" in seen                 # what the switch printed, for the operator
    for where in (text, out, err, seen):
        assert PASSWORD not in where


def test_a_message_holding_the_password_is_masked(tmp_path, monkeypatch):
    from vlanroute.device.credentials import load_credentials
    from vlanroute.device.logsecrets import MASK, configure
    monkeypatch.setenv("VLANROUTE_SSH_USER", "netops")
    monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", PASSWORD)
    load_credentials(interactive=False)                 # registers the password
    log = tmp_path / "x.log"
    configure(0, log)
    logging.getLogger("vlanroute.test").debug("login with %s failed", PASSWORD)
    try:
        raise RuntimeError(f"password {PASSWORD} refused")
    except RuntimeError:
        logging.getLogger("paramiko.transport").exception("oops")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log.read_text()
    assert f"login with {MASK} failed" in text and f"password {MASK} refused" in text
    assert PASSWORD not in text


def test_without_options_nothing_is_logged_to_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "algorithms")[0] == 0
    assert not list(tmp_path.iterdir())


def test_an_unwritable_log_file_is_a_usage_error(tmp_path, capsys):
    rc, _out, err = run(capsys, "--log-file", str(tmp_path / "missing" / "x.log"), "algorithms")
    assert rc == 2 and "--log-file" in err
