"""A site's SSH conventions: an OpenSSH config (Host aliases, HostName, ProxyJump) and the
ssh-agent, as netmiko offers them (`--ssh-config`, `--ssh-agent`). The alias is tried on an
emulated switch on loopback; here the ProxyJump option is only followed to netmiko's
ConnectHandler: tests/test_ssh_bastion.py goes through a real OpenSSH bastion."""

from __future__ import annotations

import pytest
from netmiko.exceptions import NetmikoAuthenticationException
from push_support import build_cluster, read_running, run, set_ssh_env

from vlanroute.device.session import HostKeyPolicy

pytestmark = pytest.mark.timeout(120)


def test_a_host_alias_of_the_ssh_config_reaches_the_switch(farm, tmp_path):
    sw = farm.add("sw11", host="127.0.0.11", password="pw")
    known = farm.write_known_hosts(tmp_path / "known_hosts")
    config = tmp_path / "ssh_config"
    config.write_text("Host rack3-top\n    HostName 127.0.0.11\n")
    policy = HostKeyPolicy(known_hosts=known, ssh_config_file=config)
    text = read_running("rack3-top", sw.port, policy)
    assert text.splitlines() == sw.running_config().splitlines()


class _Captured(Exception):
    pass


@pytest.fixture
def connect_args(monkeypatch):
    """ConnectHandler replaced: the keyword arguments of each call, then an authentication
    refusal (so the command ends as with a wrong password, without a connection)."""
    calls: list[dict[str, object]] = []

    def fake(**kwargs: object) -> None:
        calls.append(kwargs)
        raise NetmikoAuthenticationException("refused")
    monkeypatch.setattr("vlanroute.device.session.ConnectHandler", fake)
    return calls


def test_ssh_config_and_agent_reach_netmiko_from_the_command_line(farm, tmp_path, monkeypatch, capsys, connect_args):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n    ProxyJump bastion.example.org\n")
    rc, out, _err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--switch", "leaf1", "--ssh-config", str(config), "--ssh-agent")
    assert rc == 1 and "leaf1: not read: authentication refused" in out
    assert [(c["allow_agent"], c["ssh_config_file"]) for c in connect_args] == [(True, str(config))]


def test_without_the_options_netmiko_gets_neither(farm, tmp_path, monkeypatch, capsys, connect_args):
    set_ssh_env(monkeypatch)
    monkeypatch.delenv("VLANROUTE_SSH_CONFIG", raising=False)
    monkeypatch.delenv("VLANROUTE_SSH_AGENT", raising=False)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--switch", "leaf1")
    assert connect_args and connect_args[0]["allow_agent"] is False and "ssh_config_file" not in connect_args[0]


def test_the_ssh_config_may_come_from_the_environment(farm, tmp_path, monkeypatch, capsys, connect_args):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    config = tmp_path / "ssh_config"
    config.write_text("Host leaf1\n    User ops\n")
    monkeypatch.setenv("VLANROUTE_SSH_CONFIG", str(config))
    run(capsys, "cabling", "check", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert connect_args and all(c["ssh_config_file"] == str(config) for c in connect_args)


def test_a_missing_ssh_config_is_a_usage_error(tmp_path, capsys):
    rc, _out, err = run(capsys, "audit", str(tmp_path), "--ssh-config", str(tmp_path / "nope"))
    assert rc == 2 and "--ssh-config" in err
