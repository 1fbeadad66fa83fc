"""vlanroute.api alone drives plan -> render -> verify -> push (fake switches on loopback)
-> audit, and returns the objects the CLI prints (the CLI's JSON is made from them)."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from push_support import PASSWORD, USER, correct_tables, wire_as_planned
from vlanroute import api, schemas
from vlanroute.commands.output import document

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(300)


def test_the_whole_pipeline_through_the_api(farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLANROUTE_LOOPBACK_ONLY", "1")
    inventory = REPO / "inventories" / "custom-lab.yaml"
    sets = []
    for i, name in enumerate(yaml.safe_load(inventory.read_text())["switches"], start=1):
        sw = farm.add(name, host=f"127.0.0.{10 + i}", username=USER, password=PASSWORD)
        sets += [f"switches.{name}.mgmt={sw.host}", f"switches.{name}.ssh_port={sw.port}"]
    known_hosts = farm.write_known_hosts(tmp_path / "known_hosts")
    creds = api.Credentials(USER, password=PASSWORD)

    loaded = api.load(inventory, sets)
    plan = api.plan(loaded)
    assert isinstance(plan, api.Plan) and len(plan.vlans) >= 1
    with pytest.raises(api.StrictRefused) as refused:       # 62xx syntax not all confirmed
        api.render(plan, tmp_path / "strict", strict=True)
    assert refused.value.warnings and not (tmp_path / "strict").exists()

    out = tmp_path / "out"
    rendered = api.render(plan, out)
    assert rendered.verified and rendered.files > 5 and rendered.warnings
    report = api.verify(out)
    assert report.ok and report.violations == []

    preview = api.push(out, creds, known_hosts=known_hosts)            # dry run by default
    assert preview.exit_code == api.ExitCode.OK and {r.result for r in preview.results} == {"dry-run"}
    assert all(farm.switches[r.switch].config_commands == 0 for r in preview.results)
    assert all(r.commands and r.diff for r in preview.results)
    jsonschema.validate(document("push", preview.to_json()), schemas.load("push"))

    # Push what was previewed, only if nothing moved since (the confirmation step of the CLI).
    expected = {r.switch: r.running_canonical for r in preview.results}
    # The LLDP tables show no cable yet: the cabling check refuses before any change.
    with pytest.raises(api.CablingRefused) as no_cables:
        api.push(out, creds, dry_run=False, known_hosts=known_hosts, expected=expected)
    assert no_cables.value.report.inter_switch_problems() and not no_cables.value.report.ok
    assert all(sw.config_commands == 0 and sw.saved == [] for sw in farm.switches.values())
    wire_as_planned(farm, out)
    cabling = api.cabling(out, creds, known_hosts=known_hosts)
    assert not cabling.inter_switch_problems() and not cabling.unexpected_inter_switch()
    assert cabling.ok, (cabling.errors, [(c.label, c.status) for c in cabling.cables])
    pushed = api.push(out, creds, dry_run=False, known_hosts=known_hosts, expected=expected)
    assert pushed.exit_code == api.ExitCode.OK, [(r.switch, r.message) for r in pushed.results]
    assert {r.result for r in pushed.results} == {"applied"}
    for r, before in zip(pushed.results, preview.results):
        sw = farm.switches[r.switch]
        assert sw.saved == [sw.running_config()]
        n = len(before.commands)
        assert any(sw.received[i:i + n] == before.commands for i in range(len(sw.received) - n + 1))
    again = api.push(out, creds, known_hosts=known_hosts)
    assert {r.result for r in again.results} == {"unchanged"}

    # Audit: the hosts' MACs learned where the plan says, but one missing.
    tables = correct_tables(api.select(out, "audit").doc.to_json())
    missing = ("leaf3", *tables["leaf3"][0][:2])
    for name, entries in tables.items():
        for vlan, mac, port in entries:
            if (name, vlan, mac) != missing:
                farm.switches[name].seed_mac(vlan, mac, port)
    audit = api.audit(out, creds, known_hosts=known_hosts)
    assert not audit.ok and audit.errors == {}
    assert [(f.expected.switch, f.expected.vlan, f.expected.mac, f.found_port) for f in audit.findings] == \
        [(*missing, None)]
    assert audit.checked == sum(len(e) for e in tables.values())
    jsonschema.validate(document("audit", {"outdir": str(out), **audit.to_json()}), schemas.load("audit"))


def test_api_push_refuses_a_bundle_that_differs_from_its_manifest(tmp_path: Path) -> None:
    # As `vlanroute push` does (and so the Nornir task): before any connection.
    out = tmp_path / "out"
    api.render(api.plan(REPO / "inventories" / "custom-lab.yaml"), out)
    cfg = out / "switches" / "leaf1.cfg"
    cfg.write_text(cfg.read_text() + "interface ethernet 1/g1\nshutdown\nexit\n")
    with pytest.raises(api.UserError, match="differs from what render wrote") as refused:
        api.push(out, api.Credentials("u", password="p"), check_cabling=False)
    assert "switches/leaf1.cfg" in refused.value.render() and "check_manifest=False" in refused.value.render()


def test_api_errors_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(api.UserError, match="no such file"):
        api.plan(tmp_path / "missing.yaml")
    with pytest.raises(api.UserError):
        api.verify(tmp_path)
    with pytest.raises(api.UserError):
        api.push(tmp_path, api.Credentials("u", password="p"))


def test_api_push_refuses_cables_neither_end_could_read(farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the CLI: every switch logs in, but core1 and core2 refuse `show lldp`, so the
    cables between them were never checked; nothing is changed."""
    from push_support import build_cluster, set_ssh_env
    from vlanroute.lab import Faults

    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml",
                            {name: Faults(lacks=r"^show lldp") for name in ("core1", "core2")})
    creds = api.Credentials(USER, password=PASSWORD)
    with pytest.raises(api.UserError, match=r"inter-switch cable\(s\) could not be checked") as refused:
        api.push(cluster.outdir, creds, dry_run=False, known_hosts=cluster.known_hosts)
    assert refused.value.exit_code == api.ExitCode.FAILED_CHECK and "core1" in str(refused.value)
    assert all(sw.config_commands == 0 and not sw.saved for sw in farm.switches.values())
    preview = api.push(cluster.outdir, creds, known_hosts=cluster.known_hosts)   # a dry run goes on
    assert {r.result for r in preview.results} == {"dry-run"}


def test_the_api_example_runs_the_pipeline_against_emulated_switches(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "PYTEST_"))}
    env.update(HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"), VLANROUTE_LOOPBACK_ONLY="1",
               PYTHONPATH=str(REPO))
    run = subprocess.run([sys.executable, str(REPO / "examples" / "api_pipeline.py"),
                          str(REPO / "inventories" / "custom-lab.yaml"), str(tmp_path / "work")],
                         env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("plan: ") and lines[0].endswith("verify: ok")
    assert [line.split(":")[0] for line in lines if line.startswith("push ")] == \
        ["push core1", "push core2", "push leaf1", "push leaf2", "push leaf3", "push again"]
    assert all(": applied:" in line for line in lines if line.startswith("push ") and "again" not in line)
    assert "push again: unchanged" in lines
    # The lab's hosts learn over the pushed configs (vlanroute/lab/learning.py): all in place.
    found = re.fullmatch(r"audit: (\d+) of (\d+) MAC entries in place, 0 switch\(es\) not read", lines[-1])
    assert found and found.group(1) == found.group(2) != "0", lines[-1]
