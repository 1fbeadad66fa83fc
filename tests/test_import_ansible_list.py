"""`vlanroute import ansible` reads what ansible-core's `ansible-inventory --list` gives
(dynamic inventories included) when ansible-core is installed (the test venv has the
`ansible` extra), and falls back to its own static reader, saying so, when it is not."""

from __future__ import annotations

import json

import pytest

from vlanroute.cli import main
from vlanroute.model.ansible_list import ansible_inventory_command

needs_ansible = pytest.mark.skipif(ansible_inventory_command() is None, reason="ansible-core not installed")

# A dynamic inventory script as Ansible documents them (--list prints groups and _meta.hostvars).
SCRIPT = """#!/usr/bin/env python3
import json, sys
if "--host" in sys.argv:
    print("{}")
    sys.exit(0)
print(json.dumps({
    "switches": {"hosts": ["sw1.mgmt.example.org", "sw2"]},
    "cluster": {"hosts": ["node01", "node02"], "vars": {"switch": "sw1.mgmt.example.org"}},
    "_meta": {"hostvars": {"sw2": {"ansible_host": "192.0.2.12"},
                           "node02": {"mac": "00:1e:c9:00:00:02", "switch_port": "1/g2"}}},
}))
"""


@needs_ansible
def test_a_dynamic_inventory_script_is_read_through_ansible_inventory(tmp_path, capsys):
    script = tmp_path / "inventory.py"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    assert main(["import", "ansible", str(script), "--hosts-group", "cluster",
                 "--switches-group", "switches", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # Written from the script: group vars reach the hosts (Ansible merges them into hostvars),
    # and the switch without ansible_host keeps its inventory name as its DNS name.
    assert data["hosts"]["list"] == [
        {"name": "node01", "switch": "sw1.mgmt.example.org"},
        {"name": "node02", "switch": "sw1.mgmt.example.org", "port": "1/g2", "mac": "00:1e:c9:00:00:02"}]
    assert data["switches"] == {"sw1.mgmt.example.org": {"mgmt": "sw1.mgmt.example.org"},
                                "sw2": {"mgmt": "192.0.2.12"}}


@needs_ansible
def test_ansible_inventorys_own_error_is_shown(tmp_path, capsys):
    bad = tmp_path / "hosts.yml"
    bad.write_text("all: [this is not an inventory\n")
    assert main(["import", "ansible", str(bad), "--hosts-group", "cluster"]) == 2
    err = capsys.readouterr().err
    assert "ansible-inventory failed" in err and f"ansible-inventory -i {bad} --list" in err


def test_without_ansible_core_the_static_file_is_read_and_that_is_said(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("vlanroute.commands.importer.ansible_inventory_command", lambda: None)
    p = tmp_path / "hosts.ini"
    p.write_text("[switches]\nsw1\n\n[cluster]\nnode1 switch=sw1\n")
    assert main(["import", "ansible", str(p), "--hosts-group", "cluster", "--switches-group", "switches"]) == 0
    out = capsys.readouterr()
    assert "note: ansible-inventory (ansible-core) not found" in out.err
    assert "mgmt: sw1" in out.out                    # no ansible_host: the name is the DNS name


def test_the_list_json_becomes_groups_and_merged_variables():
    from vlanroute.model.ansible_list import from_list
    inv = from_list("x", {"all": {"children": ["ungrouped", "cluster"]}, "cluster": {"hosts": ["n1"]},
                          "_meta": {"hostvars": {"n1": {"switch": "sw1"}}}})
    assert inv.members("all") == ["n1"] and inv.variables("n1") == {"switch": "sw1"}
