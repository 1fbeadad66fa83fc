"""`vlanroute import ansible`: an Ansible inventory (YAML or INI, written here the way the
Ansible documentation describes them) becomes the hosts section of a vlanroute inventory
that plans."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from vlanroute import schemas
from vlanroute.cli import main
from vlanroute.model.ansible_inventory import expand, read_ansible_inventory
from vlanroute.plan.build import plan_from_file

YAML_INV = """\
all:
  vars:
    mac: null
  children:
    switches:
      hosts:
        sw1: {ansible_host: 192.0.2.11}
        sw2: {ansible_host: 192.0.2.12}
        sw3: {ansible_host: 192.0.2.13}
    cluster:
      vars:
        switch_port: null
      children:
        rack1:
          vars: {switch: sw1}
          hosts:
            node[01:03]:
        rack2:
          vars: {switch: sw2}
          hosts:
            node04: {mac: 0013.c601.53a7, switch_port: 1/g4}
            node05: {switch: sw3}
    login:
      hosts:
        login1: {switch: sw1}
"""

INI_INV = """\
# the same cluster, INI form
[switches]
sw[1:3]

[rack1]
node[01:03] switch=sw1

[rack2]
node04 mac=00-13-C6-01-53-A7 switch_port=1/g4
node05 switch=sw3

[rack2:vars]
switch=sw2

[cluster:children]
rack1
rack2

[login]
login1 switch=sw1
"""


def test_ranges() -> None:
    assert expand("node[01:03]") == ["node01", "node02", "node03"]
    assert expand("n[8:10]") == ["n8", "n9", "n10"]
    assert expand("sw[a:c]-[1:2]") == ["swa-1", "swa-2", "swb-1", "swb-2", "swc-1", "swc-2"]
    assert expand("h[0:6:3]") == ["h0", "h3", "h6"]


@pytest.mark.parametrize("form", ["yaml", "ini"])
def test_groups_children_and_variable_precedence(tmp_path: Path, form: str) -> None:
    p = tmp_path / ("hosts.yml" if form == "yaml" else "hosts")
    p.write_text(YAML_INV if form == "yaml" else INI_INV)
    if form == "ini":
        (tmp_path / "host_vars").mkdir()
        (tmp_path / "host_vars" / "sw2.yml").write_text("ansible_host: 192.0.2.12\n")
        (tmp_path / "group_vars").mkdir()
        (tmp_path / "group_vars" / "switches.yml").write_text("ansible_host: 192.0.2.11\n")
        (tmp_path / "host_vars" / "sw3").write_text("ansible_host: 192.0.2.13\n")
    inv = read_ansible_inventory(p)
    assert inv.members("cluster") == ["node01", "node02", "node03", "node04", "node05"]
    assert inv.variables("node02")["switch"] == "sw1"              # group var
    assert inv.variables("node05")["switch"] == "sw3"              # host var beats group var
    assert [inv.variables(s)["ansible_host"] for s in ("sw1", "sw2", "sw3")] == \
        ["192.0.2.11", "192.0.2.12", "192.0.2.13"]


@pytest.mark.parametrize("form", ["yaml", "ini"])
def test_import_gives_an_inventory_that_plans(tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / ("hosts.yml" if form == "yaml" else "hosts.ini")
    p.write_text(YAML_INV if form == "yaml" else INI_INV.replace("sw[1:3]", "sw1 ansible_host=192.0.2.11\n"
                                                                 "sw2 ansible_host=192.0.2.12\n"
                                                                 "sw3 ansible_host=192.0.2.13"))
    assert main(["import", "ansible", str(p), "--hosts-group", "cluster", "--hosts-group", "login",
                 "--switches-group", "switches", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, schemas.load("import"))
    hosts = data["hosts"]["list"]
    assert [h["name"] for h in hosts] == ["node01", "node02", "node03", "node04", "node05", "login1"]
    assert hosts[3] == {"name": "node04", "switch": "sw2", "port": "1/g4", "mac": "00:13:c6:01:53:a7"}
    assert data["switches"]["sw2"] == {"mgmt": "192.0.2.12"}

    out = tmp_path / "section.yaml"
    assert main(["import", "ansible", str(p), "--hosts-group", "cluster", "--hosts-group", "login",
                 "--switches-group", "switches", "-o", str(out)]) == 0
    section = yaml.safe_load(out.read_text())
    inventory = {"name": "imported", "platform": "powerconnect-6248",
                 "topology": {"kind": "ring", "size": 3}, **section}
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inventory))
    plan = plan_from_file(tmp_path / "inv.yaml").to_json()
    assert plan["hosts"]["node04"]["port"] == "1/g4" and plan["hosts"]["login1"]["switch"] == "sw1"
    assert plan["switches"]["sw3"]["mgmt"] == "192.0.2.13"


def test_import_names_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "hosts.ini"
    p.write_text("[cluster]\nnode1 switch=sw1\nnode2\nnode3 switch=sw1 mac=00:11\n")
    assert main(["import", "ansible", str(p), "--hosts-group", "cluster"]) == 2
    err = capsys.readouterr().err
    assert "host node2: no variable 'switch'" in err and "host node3: mac" in err and "node1" not in err
    assert main(["import", "ansible", str(p), "--hosts-group", "compute"]) == 2
    assert "no group 'compute'" in capsys.readouterr().err
