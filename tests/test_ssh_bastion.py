"""ProxyJump through a real OpenSSH bastion (issue 25: "netmiko's ssh-agent, ssh_config and
ProxyJump support"). netmiko turns a one-hop ProxyJump of the ssh_config into
`ssh -F FILE -W host:port JUMP` (netmiko BaseConnection._use_ssh_config), so the jump host
must be a real sshd: the emulated switches forward no ports. The test starts OpenSSH's sshd
on loopback as the bastion, with keys it makes itself, and reaches an emulated switch
through it; sshd's own log proves the connection went through the bastion."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from push_support import build_cluster, read_running, run, set_ssh_env

from vlanroute.device.credentials import Credentials
from vlanroute.device.session import ConnectFailed, HostKeyPolicy, SwitchSession
from vlanroute.drivers import FAMILIES

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not Path(SSHD).exists() or shutil.which("ssh") is None,
                       reason="needs OpenSSH's sshd and ssh (openssh-server, openssh-client: .ci/packages.txt)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Bastion:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.log = root / "sshd.log"
        self.user_key = root / "id_ed25519"
        self.known_hosts = root / "bastion_known_hosts"

    def ssh_config(self, target_pattern: str) -> Path:
        """An OpenSSH config: the bastion by alias, and every host matching the pattern
        reached through it by ProxyJump."""
        path = self.root / "ssh_config"
        path.write_text(
            f"Host bastion\n    HostName 127.0.0.1\n    Port {self.port}\n    User root\n"
            f"    IdentityFile {self.user_key}\n    IdentitiesOnly yes\n"
            f"    UserKnownHostsFile {self.known_hosts}\n    StrictHostKeyChecking yes\n"
            f"    BatchMode yes\n\n"
            f"Host {target_pattern}\n    ProxyJump bastion\n")
        return path

    def forwarded_to(self) -> list[str]:
        """The targets sshd says it opened a direct-tcpip channel to ("host:port")."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if "server_request_direct_tcpip" in line and "target" in line:
                words = line.split()
                i = words.index("target")
                found.append(f"{words[i + 1]}:{words[i + 3]}")
        return found


@pytest.fixture
def bastion(tmp_path: Path) -> Iterator[Bastion]:
    root = tmp_path / "bastion"
    root.mkdir(mode=0o700)
    b = Bastion(root)
    host_key = root / "ssh_host_ed25519_key"
    for key in (host_key, b.user_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    (root / "authorized_keys").write_text(Path(f"{b.user_key}.pub").read_text())
    b.known_hosts.write_text(f"[127.0.0.1]:{b.port} {Path(f'{host_key}.pub').read_text()}")
    config = root / "sshd_config"
    config.write_text(
        f"Port {b.port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile {root}/sshd.pid\n"
        f"AuthorizedKeysFile {root}/authorized_keys\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
        "AllowTcpForwarding yes\nStrictModes no\nUsePAM no\nLogLevel DEBUG1\n")
    Path("/run/sshd").mkdir(exist_ok=True)          # sshd's privilege separation directory
    proc = subprocess.Popen([SSHD, "-D", "-f", str(config), "-E", str(b.log)])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", b.port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"sshd did not start: {b.log.read_text(errors='replace') if b.log.exists() else ''}")
                time.sleep(0.1)
        yield b
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.root
def test_a_switch_is_reached_through_a_proxyjump_bastion(farm, tmp_path, bastion):
    sw = farm.add("sw11", host="127.0.0.11", password="pw")
    known = farm.write_known_hosts(tmp_path / "known_hosts")
    config = bastion.ssh_config("rack3-*")
    config.write_text(config.read_text() + "\nHost rack3-top\n    HostName 127.0.0.11\n")
    policy = HostKeyPolicy(known_hosts=known, ssh_config_file=config)
    text = read_running("rack3-top", sw.port, policy)
    assert text.splitlines() == sw.running_config().splitlines()
    assert bastion.forwarded_to() == [f"127.0.0.11:{sw.port}"]


@pytest.mark.root
def test_audit_through_the_bastion_reads_every_switch_it_names(farm, tmp_path, monkeypatch, capsys, bastion):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    config = bastion.ssh_config("127.0.0.1?")
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--ssh-config", str(config))
    assert rc in (0, 1), out + err                   # 1: MAC entries missing, which is not the point
    assert "not read" not in out, out
    expected = sorted(f"{sw.host}:{sw.port}" for sw in farm.switches.values())
    assert sorted(set(bastion.forwarded_to())) == expected


@pytest.mark.root
@pytest.mark.slow                                   # waits for the SSH banner timeout
def test_a_bastion_that_refuses_the_key_is_a_named_failure(farm, tmp_path, bastion):
    sw = farm.add("sw11", host="127.0.0.11", password="pw")
    known = farm.write_known_hosts(tmp_path / "known_hosts")
    (bastion.root / "authorized_keys").write_text("")
    config = bastion.ssh_config("127.0.0.11")
    policy = HostKeyPolicy(known_hosts=known, ssh_config_file=config)
    with pytest.raises(ConnectFailed) as failure:
        SwitchSession(FAMILIES["powerconnect-62xx"].cli, "127.0.0.11", sw.port,
                      Credentials("admin", "pw"), policy).running_config()
    message = str(failure.value)
    assert f"through ProxyJump bastion ({config})" in message and f"ssh -F {config} -W" in message
    assert "pw" not in message
    assert bastion.forwarded_to() == []
