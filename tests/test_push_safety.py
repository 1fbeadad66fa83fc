"""Safety rails of push/audit: loopback guard, host keys, credentials, order, secrecy."""

from __future__ import annotations

import json
import logging

import asyncssh
import pytest

from vlanroute.lab import Faults
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir

from push_support import PASSWORD, REPO, USER, build_cluster, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)


def test_push_to_non_loopback_targets_is_refused_before_connecting(tmp_path, monkeypatch, capsys):
    """The seed inventory's own addresses (TEST-NET-1): the suite must never reach them.
    The guard is on because pytest is running, even without VLANROUTE_LOOPBACK_ONLY."""
    set_ssh_env(monkeypatch)
    monkeypatch.delenv("VLANROUTE_LOOPBACK_ONLY")
    doc = plan_from_file(REPO / "inventories" / "seed-torus.yaml").to_document()
    render_to_dir(doc, tmp_path / "out", RenderOptions(verify=False))
    attempts: list[object] = []

    def no_network(*args, **kwargs):  # type: ignore[no-untyped-def]
        attempts.append(args)
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr("vlanroute.device.session.ConnectHandler", no_network)
    monkeypatch.setattr("socket.create_connection", no_network)
    for command in (["push", "--yes"], ["push", "--dry-run"], ["audit"]):
        rc, out, err = run(capsys, command[0], str(tmp_path / "out"), *command[1:])
        assert rc == 2
        assert "loopback guard" in err and "sw1 (192.0.2.11)" in err
        assert attempts == []
    assert not (tmp_path / "out" / "backups").exists()


def test_one_non_loopback_switch_blocks_the_whole_run(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    plan = json.loads((cluster.outdir / "plan.json").read_text())
    plan["switches"]["leaf3"]["mgmt"] = "192.0.2.25"
    (cluster.outdir / "plan.json").write_text(json.dumps(plan))
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes")
    assert rc == 2 and "leaf3 (192.0.2.25)" in err
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_no_password_in_any_output_log_or_file(farm, tmp_path, monkeypatch, capsys, caplog):
    set_ssh_env(monkeypatch)
    caplog.set_level(logging.DEBUG)            # netmiko and paramiko log at DEBUG
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml",
                            {"core2": Faults(refuse_auth=True),
                             "leaf1": Faults(reject="spanning-tree disable"),
                             "leaf2": Faults(drop_after=5)})
    outputs = []
    # core2 (refused login) fails the pre-flight, which would stop the whole push: the
    # push that changes switches leaves it out.
    others = [a for n in ("core1", "leaf1", "leaf2", "leaf3") for a in ("--switch", n)]
    for extra in (["--dry-run"], ["--yes", "--keep-going", *others]):
        outputs += run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--workers", "2", *extra)[1:]
    outputs += run(capsys, "audit", str(cluster.outdir), "--known-hosts",
                   str(cluster.known_hosts))[1:]
    assert "applied" in outputs[2] and "rolled-back" in outputs[2]   # the runs really ran
    outputs.append(caplog.text)
    assert caplog.text                                               # and logged something
    for text in outputs:
        assert PASSWORD not in text
    files = [p for p in [*tmp_path.rglob("*"), *cluster.state.rglob("*")] if p.is_file()]
    assert any("backups" in p.parts for p in files) and any("pushes" in p.parts for p in files)
    for path in files:
        assert PASSWORD.encode() not in path.read_bytes(), path
    for sw in farm.switches.values():                 # never typed into a switch CLI either
        assert all(PASSWORD not in line for line in sw.received)


def test_unknown_host_key_is_refused_and_insecure_flag_is_loud(farm, tmp_path, monkeypatch,
                                                               capsys):
    set_ssh_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))         # no ~/.ssh/known_hosts
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--switch", "leaf1", "--yes")
    assert rc == 1 and "not-started" in out and "known_hosts" in out
    assert farm.switches["leaf1"].logins == 0

    rc, out, err = run(capsys, "push", str(cluster.outdir), "--switch", "leaf1", "--yes",
                       "--insecure-no-host-key-check")
    assert rc == 0, out + err
    assert "WARNING" in err and "NOT checked" in err


def test_changed_host_key_is_refused(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key("openssh").decode()
    leaf1 = farm.switches["leaf1"]
    cluster.known_hosts.write_text(f"[{leaf1.host}]:{leaf1.port} {other}")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--switch", "leaf1", "--yes",
                       "--known-hosts", str(cluster.known_hosts))
    assert rc == 1 and "not-started" in out and "HOST KEY MISMATCH" in out
    assert leaf1.logins == 0 and leaf1.config_commands == 0


def test_one_changed_host_key_among_five_changes_nothing_anywhere(farm, tmp_path, monkeypatch, capsys):
    """The pre-flight logs in to every switch (also under --yes) before any is changed: one
    switch whose host key changed stops the whole push (issue 13, part 4)."""
    set_ssh_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key("openssh").decode().strip()
    leaf2 = farm.switches["leaf2"]
    cluster.known_hosts.write_text("".join(
        (f"[{sw.host}]:{sw.port} {other}" if sw is leaf2 else sw.known_hosts_line()) + "\n"
        for sw in farm.switches.values()))
    before = {n: sw.running_config() for n, sw in farm.switches.items()}
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--yes", "--workers", "4",
                       "--known-hosts", str(cluster.known_hosts))
    assert rc == 1 and "HOST KEY MISMATCH" in out and "nothing was changed" in out, out + err
    assert leaf2.logins == 0
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    assert all(sw.config_commands == 0 and not sw.saved for sw in farm.switches.values())
    assert not list((cluster.state / "pushes").glob("*.jsonl"))


def test_ssh_key_authentication(farm, tmp_path, monkeypatch, capsys):
    key = asyncssh.generate_private_key("ssh-ed25519")
    key_file = tmp_path / "id_ed25519"
    key_file.write_bytes(key.export_private_key("openssh"))
    key_file.chmod(0o600)
    sw = farm.add("solo", host="127.0.0.40", username=USER, password=None,
                  authorized_keys=[key.export_public_key("openssh").decode()])
    from vlanroute.device.credentials import Credentials
    from vlanroute.drivers import FAMILIES
    from vlanroute.device.session import HostKeyPolicy, SwitchSession
    known = farm.write_known_hosts(tmp_path / "known_hosts")
    session = SwitchSession(FAMILIES["powerconnect-62xx"].cli, sw.host, sw.port,
                            Credentials(USER, key_file=key_file), HostKeyPolicy(known_hosts=known))
    assert "configure" in session.running_config()
    session.close()


def test_missing_credentials_without_terminal_is_a_clear_error(farm, tmp_path, monkeypatch,
                                                               capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    monkeypatch.delenv("VLANROUTE_SSH_PASSWORD")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--yes")
    assert rc == 2 and "VLANROUTE_SSH_PASSWORD" in err and "Traceback" not in err
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_rendered_file_in_unsafe_order_is_not_pushed(farm, tmp_path, monkeypatch, capsys):
    """Spanning tree switched off before VLAN 1 is removed from the inter-switch ports."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    cfg = cluster.outdir / "switches" / "core1.cfg"
    lines = cfg.read_text().splitlines()
    first_if = next(i for i, l in enumerate(lines) if l.startswith("interface port-channel"))
    lines[first_if + 1:first_if + 1] = ["spanning-tree disable"]
    cfg.write_text("\n".join(lines) + "\n")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes", "--switch", "core1")
    # The manifest catches the edit first; behind it, push's own check still holds.
    assert rc == 2 and f"{cfg}: modified since render" in err
    assert farm.switches["core1"].logins == 0
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes", "--switch", "core1",
                       "--skip-manifest-check")
    assert rc == 1 and "not-started" in out and "phase 4" in out
    assert farm.switches["core1"].config_commands == 0


def test_rendered_file_touching_a_reserved_port_is_not_pushed(farm, tmp_path, monkeypatch,
                                                              capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    assert "1/g1" in cluster.plan["switches"]["core1"]["reserved_ports"]
    cfg = cluster.outdir / "switches" / "core1.cfg"
    text = cfg.read_text().replace("end\n", "interface ethernet 1/g1\nshutdown\nexit\nend\n")
    cfg.write_text(text)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes", "--switch", "core1")
    # The manifest catches the edit first; behind it, push's own check still holds.
    assert rc == 2 and f"{cfg}: modified since render" in err
    assert farm.switches["core1"].logins == 0
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes", "--switch", "core1",
                       "--skip-manifest-check")
    assert rc == 1 and "1/g1" in out and "not manage" in out
    assert farm.switches["core1"].config_commands == 0


def test_credentials_repr_hides_the_password_and_prompt_is_used_on_a_terminal(monkeypatch):
    from vlanroute.device.credentials import Credentials, load_credentials
    creds = Credentials(USER, PASSWORD)
    assert PASSWORD not in repr(creds) and PASSWORD not in str(creds)
    monkeypatch.delenv("VLANROUTE_SSH_USER", raising=False)
    monkeypatch.delenv("VLANROUTE_SSH_PASSWORD", raising=False)
    monkeypatch.delenv("VLANROUTE_SSH_KEY", raising=False)
    asked = []

    def prompt(text, hide_input=False, err=False):  # type: ignore[no-untyped-def]
        asked.append((text, hide_input))
        return "typed-secret" if "password" in text else "typed-user"

    monkeypatch.setattr("click.prompt", prompt)
    creds = load_credentials(interactive=True)
    assert (creds.username, creds.password) == ("typed-user", "typed-secret")
    assert asked[1][1] is True                        # the password is not echoed


def test_platform_family_without_rollback_support_is_refused_before_connecting(
        farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    plan = json.loads((cluster.outdir / "plan.json").read_text())
    plan["switches"]["leaf2"]["platform"] = "apresia-15000-64xl"
    (cluster.outdir / "plan.json").write_text(json.dumps(plan))
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes")
    assert rc == 2 and "leaf2 (apresia-aeos)" in err
    assert all(sw.logins == 0 for sw in farm.switches.values())
