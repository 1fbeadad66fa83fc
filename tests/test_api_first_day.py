"""An engineer's first day with the Python API and SSH messages (issue 41 item 15): the API
honours VLANROUTE_TARGETS as the CLI does, `api.audit` refuses to report an audit that
checks nothing (the CLI's exit 2), and a host-key error names a DNS name and its port."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from push_support import PASSWORD, USER, build_cluster, run, set_ssh_env
from vlanroute import api
from vlanroute.device.session import _connect_problem
from vlanroute.device.targets import TARGETS_ENV, TARGETS_FORMAT

REPO = Path(__file__).resolve().parent.parent


def _target_map(tmp_path: Path, cluster) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / "targets.json"
    path.write_text(json.dumps({"format": TARGETS_FORMAT, "plan": cluster.plan["name"],
                                "switches": {n: {"host": sw.host, "port": sw.port}
                                             for n, sw in cluster.farm.switches.items()}}))
    return path


def test_the_api_reads_the_target_map_of_the_environment(farm, tmp_path: Path, monkeypatch) -> None:
    """`eval "$(vlanroute lab up out)"` then Python: the lab's targets, as the CLI uses them."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    # plan.json gets other addresses than the switches': only the map reaches them.
    plan = json.loads((cluster.outdir / "plan.json").read_text())
    elsewhere = tmp_path / "elsewhere"
    api.render(api.plan(REPO / "inventories" / "custom-lab.yaml"), elsewhere)    # mgmt 192.0.2.x
    assert json.loads((elsewhere / "plan.json").read_text())["switches"]["leaf1"]["mgmt"] != \
        plan["switches"]["leaf1"]["mgmt"]
    monkeypatch.setenv(TARGETS_ENV, str(_target_map(tmp_path, cluster)))
    selected = api.select(elsewhere, "audit")
    assert {t.name: (t.host, t.port) for t in selected.targets} == \
        {n: (sw.host, sw.port) for n, sw in farm.switches.items()}
    assert any("target map" in n for n in selected.notes) or selected.notes == []
    # Given explicitly, the argument wins over the environment.
    monkeypatch.setenv(TARGETS_ENV, str(tmp_path / "missing.json"))
    assert api.select(cluster.outdir, "audit", targets=_target_map(tmp_path, cluster)).targets
    with pytest.raises(api.UserError, match="no such target map"):
        api.select(cluster.outdir, "audit")


def test_api_audit_refuses_an_audit_that_checks_nothing(farm, tmp_path: Path, monkeypatch) -> None:
    """The CLI exits 2 (nothing to audit); the API returned ok with 0 entries checked."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-ring.yaml")       # no host has a MAC
    with pytest.raises(api.UserError, match="nothing to audit") as refused:
        api.audit(cluster.outdir, api.Credentials(USER, password=PASSWORD), known_hosts=cluster.known_hosts)
    assert "MAC" in refused.value.render()
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_a_switch_without_hosts_is_audited_for_the_hosts_it_carries(farm, tmp_path: Path, monkeypatch,
                                                                    capsys) -> None:
    """core2 has no host of its own, but learns every host in the VLANs whose tree crosses
    it: `audit --switch core2` checks those entries instead of refusing."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    assert not [h for h in cluster.plan["hosts"].values() if h["switch"] == "core2"]
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--switch", "core2", "--known-hosts",
                       str(cluster.known_hosts))
    assert rc == 1, out + err                     # nothing learned yet: every entry missing
    assert "core2:" in out and "MAC entries missing" in out
    report = api.audit(cluster.outdir, api.Credentials(USER, password=PASSWORD), switches=["core2"],
                       known_hosts=cluster.known_hosts)
    assert report.checked > 0 and not report.ok


@pytest.mark.parametrize("host, port", [("sw1.mgmt.example.org", 22), ("rack3-top", 2222), ("192.0.2.11", 22),
                                        ("2001:db8::1", 830)])
def test_a_host_key_error_names_the_host_and_port(host: str, port: int) -> None:
    """A DNS name in square brackets was taken for console markup: `host key of :22`."""
    text = _connect_problem(f"Server '{host}' not found in known_hosts", host, port)
    assert text is not None
    console = Console(record=True, width=300)
    console.print(f"[red]sw1: not read: {text}[/]")         # how audit printed it
    console.print(text)
    lines = console.export_text().splitlines()
    assert len(lines) == 2 and all(f"host key of {host} (port {port})" in line for line in lines), lines


def test_audit_prints_a_switch_error_as_it_is(farm, tmp_path: Path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    report = api.AuditReport(checked=1, errors={"leaf1": "a problem with [brackets.example.org]:22"})
    monkeypatch.setattr(api, "audit", lambda *a, **kw: report)
    rc, out, _ = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert rc == 1 and "[brackets.example.org]:22" in out
