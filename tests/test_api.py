"""vlanroute.api alone drives plan -> render -> verify -> push (fake switches on loopback)
-> audit, and returns the objects the CLI prints (the CLI's JSON is made from them)."""

from __future__ import annotations

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
