"""Issue 41 item 8: cases still open from the earlier catalogue. VLAN 4094 on a
PowerConnect 62xx through a plan.json's derived-platform record; a newline in a plan's
description; a missing --known-hosts file; one Ansible Vault value in an inventory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vlanroute import api
from vlanroute.bundle.document import plan_document
from vlanroute.cli import main
from vlanroute.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
RING = ROOT / "inventories" / "seed-ring.yaml"


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


def _with_vlan_4094(plan: dict, vid_max: int = 4094) -> dict:
    """plan.json whose switches use a platform derived from the 6248 whose record claims
    `vid_max`, and whose last VLAN is renumbered 4094 everywhere."""
    d = json.loads(json.dumps(plan))
    rec = dict(d["platforms"]["powerconnect-6248"], base="powerconnect-6248", vid_max=vid_max)
    d["platforms"] = {"pc-big": rec}
    for s in d["switches"].values():
        s["platform"] = "pc-big"
    old = d["vlans"][-1]["id"]

    def renumber(o: object) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("pvid", "id", "vlan") and v == old:
                    o[k] = 4094
                elif k in ("tagged", "untagged") and isinstance(v, list):
                    o[k] = sorted(4094 if x == old else x for x in v)
                else:
                    renumber(v)
        elif isinstance(o, list):
            for x in o:
                renumber(x)
    renumber(d)
    return d


def test_catalogue_accepted_vlan_4094_on_6248_through_a_plan_json_record(ring: Path, tmp_path: Path) -> None:
    """A derived platform's record in plan.json cannot widen its base's VLAN id range: the
    62xx guides reserve 4094, and the switch would refuse `vlan 4094` mid-push."""
    doc = _with_vlan_4094(json.loads((ring / "plan.json").read_text()))
    with pytest.raises(UserError) as caught:
        api.render(plan_document(doc, "plan.json"), tmp_path / "out4094")
    assert "vid_max" in str(caught.value) and "4093" in str(caught.value)
    assert not (tmp_path / "out4094").exists()


def test_a_record_narrowing_the_range_is_kept(ring: Path, tmp_path: Path) -> None:
    d = json.loads((ring / "plan.json").read_text())
    rec = dict(d["platforms"]["powerconnect-6248"], base="powerconnect-6248", vid_max=2000)
    d["platforms"] = {"pc-small": rec}
    for s in d["switches"].values():
        s["platform"] = "pc-small"
    result = api.render(plan_document(d, "plan.json"), tmp_path / "small")
    assert result.verified


@pytest.mark.parametrize("text", ["x\nreload", "x\r\nwrite memory", "x\x1b[2J", "ok\x00"])
def test_catalogue_security_a_control_character_in_a_plan_description(ring: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     text: str) -> None:
    """plan.json's record of a derived platform: its description reaches the lab switches'
    `show system` (the model name) and messages; one line only, as the inventory's."""
    d = json.loads((ring / "plan.json").read_text())
    d["platforms"] = {"pc-x": dict(d["platforms"]["powerconnect-6248"], base="powerconnect-6248", description=text)}
    for s in d["switches"].values():
        s["platform"] = "pc-x"
    with pytest.raises(UserError) as caught:
        plan_document(d, "plan.json")
    assert "platforms.pc-x.description" in str(caught.value)
    out = tmp_path / "out"
    shutil.copytree(ring, out)
    (out / "plan.json").write_text(json.dumps(d))
    rc, _, err = cli(capsys, "verify", str(out))
    assert rc == 2 and "description" in err and "\nreload" not in err and "\x1b" not in err


@pytest.mark.parametrize("command", ["audit", "push"])
def test_catalogue_accepted_a_missing_known_hosts_file_is_named(farm, tmp_path: Path, monkeypatch,
                                                                capsys: pytest.CaptureFixture[str],
                                                                command: str) -> None:
    """A --known-hosts path that is not there was reported as every switch failing (for push
    "not-started"): it is a usage error naming the option, before any connection."""
    from push_support import build_cluster, set_ssh_env
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    missing = tmp_path / "no-such-known_hosts"
    extra = ["--dry-run"] if command == "push" else []
    rc, out, err = cli(capsys, command, str(cluster.outdir), *extra, "--known-hosts", str(missing))
    assert rc == 2, out + err
    assert "--known-hosts" in err and str(missing) in err and "fix:" in err
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_the_api_names_a_missing_known_hosts_file_too(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="known_hosts"):
        api.audit(tmp_path, api.Credentials("u", password="p"), known_hosts=tmp_path / "missing")


VAULT = ("!vault |\n{pad}$ANSIBLE_VAULT;1.1;AES256\n"
         "{pad}62313365396662343061393464336163383764373764613633653634306231386433626436623361\n")
ENCRYPTED_FILE = ("$ANSIBLE_VAULT;1.1;AES256\n"
                  "62313365396662343061393464336163383764373764613633653634306231386433626436623361\n"
                  "6134333665353966363534333632666535333761666131620a663537646436643839616531643561\n")


def _ansible_tree(tmp_path: Path, where: str) -> Path:
    """An Ansible inventory with one Vault value vlanroute does not need, in `where`."""
    inv = tmp_path / "hosts.yml"
    become = "ansible_become_password: " + VAULT.format(pad=" " * 6)
    body = ("all:\n  vars:\n    " + become if where == "inline" else "all:\n")
    body += "  children:\n    compute:\n      hosts:\n        n1: {switch: sw1, switch_port: 1/g1}\n" \
            "        n2: {switch: sw2, switch_port: 1/g1}\n"
    inv.write_text(body)
    if where == "encrypted-group-vars":
        (tmp_path / "group_vars").mkdir()
        (tmp_path / "group_vars" / "all.yml").write_text(ENCRYPTED_FILE)
    if where == "host-vars":
        (tmp_path / "host_vars").mkdir()
        (tmp_path / "host_vars" / "n2.yml").write_text("ansible_password: " + VAULT.format(pad="  "))
    return inv


@pytest.mark.parametrize("reader", ["ansible-inventory", "static"])
@pytest.mark.parametrize("where", ["inline", "encrypted-group-vars", "host-vars"])
def test_catalogue_accepted_a_vault_value_vlanroute_does_not_need(tmp_path: Path, monkeypatch,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   reader: str, where: str) -> None:
    """A vaulted become password (inline, a whole encrypted group_vars file, or host_vars)
    is skipped: vlanroute needs only the hosts' switch, port and MAC."""
    from vlanroute.model import ansible_list
    if reader == "static":
        monkeypatch.setattr("vlanroute.commands.importer.ansible_inventory_command", lambda: None)
    elif ansible_list.ansible_inventory_command() is None:
        pytest.skip("ansible-core is not installed")
    inv = _ansible_tree(tmp_path, where)
    rc, out, err = cli(capsys, "import", "ansible", str(inv), "--hosts-group", "compute")
    assert rc == 0, err
    assert "{name: n1, switch: sw1, port: 1/g1}" in out and "{name: n2, switch: sw2, port: 1/g1}" in out
    assert "62313365" not in out + err
    if where == "encrypted-group-vars":
        assert "group_vars/all.yml" in err and "encrypted" in err        # said, not hidden


@pytest.mark.parametrize("reader", ["ansible-inventory", "static"])
def test_a_vault_value_vlanroute_needs_is_named(tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str],
                                                reader: str) -> None:
    from vlanroute.model import ansible_list
    if reader == "static":
        monkeypatch.setattr("vlanroute.commands.importer.ansible_inventory_command", lambda: None)
    elif ansible_list.ansible_inventory_command() is None:
        pytest.skip("ansible-core is not installed")
    inv = tmp_path / "hosts.yml"
    inv.write_text("all:\n  children:\n    compute:\n      hosts:\n        n1:\n          switch: sw1\n"
                   "          mac: " + VAULT.format(pad=" " * 12))
    rc, _, err = cli(capsys, "import", "ansible", str(inv), "--hosts-group", "compute")
    assert rc == 2 and "host n1: variable 'mac' is an Ansible Vault value" in err, err
