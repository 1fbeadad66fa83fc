"""The Ansible hand-off (docs/ansible.md): render writes ansible/<switch>.cfg for Dell OS6
switches, the config as the switch prints it. Modelled on what os6_config sends
(tests/os6_config_model.py, from its source), against an emulated OS6 switch: the first run
reaches the rendered config in loop-safe order, a second run sends nothing; the delta form
in switches/ would be re-sent on every run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import os6_config_model as os6_config
from vlanroute.cli import main
from vlanroute.device.order import PortRoles, check_order
from vlanroute.drivers import FAMILIES
from vlanroute.lab.server import FakeSwitch
from vlanroute.model.platforms import POWERCONNECT_8132

REPO = Path(__file__).resolve().parent.parent
OS6 = FAMILIES["dell-os6"]


@pytest.fixture(scope="module")
def outdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("os6") / "out"
    assert main(["render", str(REPO / "inventories" / "seed-ring.yaml"), "-o", str(out), "-q",
                 "--set", "platform=powerconnect-8132", "--set", "hosts.count=40"]) == 0
    return out


def apply(switch: FakeSwitch, lines: list[str]) -> None:
    """As os6_config's load_config: configure terminal, each command, end."""
    cli = switch.interpreter()
    cli.paging = False
    for line in ["enable", "configure terminal", *lines, "end"]:
        reply = cli.execute(line).output
        assert "% " not in reply and "rror" not in reply, (line, reply)


def canonical(text: str, name: str, running: bool) -> set[str]:
    parse = OS6.parse_running if running else OS6.parse
    cfg = parse(text, switch=name, platform=POWERCONNECT_8132, source=name)
    return {line.text for line in OS6.canonical_lines(cfg)}


def test_render_writes_a_target_config_per_os6_switch(outdir: Path) -> None:
    plan = json.loads((outdir / "plan.json").read_text())
    assert sorted(p.name for p in (outdir / "ansible").iterdir()) == sorted(f"{s}.cfg" for s in plan["switches"])
    text = (outdir / "ansible" / "sw1.cfg").read_text()
    body = [line for line in text.splitlines() if not line.startswith("!")]
    assert not any(line.startswith("no ") and line != "no green-mode eee" for line in body)
    assert not any(line.startswith("!") for line in text.splitlines()[2:])   # no comment inside a block
    assert "configure" not in body and "end" not in body


@pytest.mark.parametrize("name", ["sw1", "sw4"])
def test_a_second_os6_config_run_changes_nothing(outdir: Path, name: str) -> None:
    plan = json.loads((outdir / "plan.json").read_text())
    target = (outdir / "ansible" / f"{name}.cfg").read_text()
    rendered = (outdir / "switches" / f"{name}.cfg").read_text()
    switch = FakeSwitch(name, "127.0.0.1", "admin", "pw", platform=POWERCONNECT_8132)

    first = os6_config.commands(target, switch.running_config())
    assert first, "a factory-default switch needs the whole config"
    # The first run sends its lines in the loop-safe push order (vlanroute.device.order).
    from vlanroute.bundle.document import SwitchDoc
    check_order(first, PortRoles.from_plan(SwitchDoc.model_validate(plan["switches"][name])), OS6)
    apply(switch, first)
    after = switch.running_config()
    # ... and reaches what vlanroute rendered, on every line vlanroute manages.
    assert canonical(rendered, name, running=False) <= canonical(after, name, running=True)

    assert os6_config.commands(target, after) == []          # second run: nothing to send
    # The delta form would be sent again on every run: its `no ...` lines and removals are
    # never printed by the switch.
    again = os6_config.commands(rendered, after)
    assert "no switchport general acceptable-frame-type tagged-only" in again
    assert any(line.startswith("switchport general allowed vlan add") and line.endswith(" untagged") for line in again)


def test_the_model_of_os6_config_matches_its_documented_behaviour() -> None:
    # Line by line, under the same parents, in any position; parents sent before a line.
    running = "configure\nvlan 10\nexit\ninterface Gi1/0/1\nswitchport mode general\nexit\nexit\n"
    assert os6_config.commands("interface Gi1/0/1\nswitchport mode general\nexit\n", running) == []
    assert os6_config.commands("interface Gi1/0/1\nswitchport general pvid 10\nexit\n", running) == \
        ["interface Gi1/0/1", "switchport general pvid 10", "exit"]
    assert os6_config.commands("interface Gi1/0/2\nswitchport mode general\nexit\n", running) == \
        ["interface Gi1/0/2", "switchport mode general", "exit"]
    # the same line under another parent is another line
    assert os6_config.commands("switchport mode general\n", running) == ["switchport mode general"]
    # a comment ends the block: the line after it is a top-level line
    assert os6_config.commands("interface Gi1/0/1\n!\nswitchport mode general\n", running) == \
        ["switchport mode general"]


def test_the_playbook_in_the_docs_names_the_files_render_writes() -> None:
    doc = (REPO / "docs" / "ansible.md").read_text()
    playbook = yaml.safe_load(doc.split("```yaml\n", 1)[1].split("```", 1)[0])
    task = playbook[0]["tasks"][0]
    assert "dellemc.os6.os6_config" in task
    assert "ansible/{{ inventory_hostname }}.cfg" in task["dellemc.os6.os6_config"]["src"]
