"""The Ansible hand-off (docs/ansible.md): render writes ansible/<switch>.cfg for Dell OS6
switches, the config as the switch prints it. Modelled on what os6_config sends
(tests/os6_config_model.py, from its source), against an emulated OS6 switch: the first run
reaches the rendered config in loop-safe order, a second run sends nothing; the delta form
in switches/ would be re-sent on every run."""

from __future__ import annotations

import json
import os
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


def ansible_playbook() -> str:
    """ansible-playbook with the dellemc.os6 collection (the `ansible` extra), else skip."""
    import shutil
    import subprocess
    import sys
    found = shutil.which("ansible-playbook", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip("ansible-playbook is not installed (pip install 'vlanroute[ansible]')")
    listed = subprocess.run([str(Path(found).parent / "ansible-galaxy"), "collection", "list", "dellemc.os6"],
                            capture_output=True, text=True, timeout=120)
    if "dellemc.os6" not in listed.stdout:
        pytest.skip("Ansible has no dellemc.os6 collection (Ansible 7 ships it)")
    return found


@pytest.mark.timeout(600)
def test_the_documented_playbook_run_twice_by_ansible_changes_nothing_the_second_time(
        farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import re
    import subprocess
    from push_support import PASSWORD, USER, build_cluster, set_ssh_env
    from vlanroute import api

    playbook_bin = ansible_playbook()
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-ring.yaml", platform=POWERCONNECT_8132,
                            extra_sets=("platform=powerconnect-8132", "hosts.count=40"))
    names = ["sw1", "sw4"]
    hosts = {n: {"ansible_host": cluster.switch(n).host, "ansible_port": cluster.switch(n).port} for n in names}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {
        "children": {"vlanroute_switches": {"hosts": hosts}},
        "vars": {"ansible_user": USER, "ansible_password": PASSWORD}}}))
    doc = (REPO / "docs" / "ansible.md").read_text()
    playbook = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "/srv/vlanroute/out" in playbook
    (tmp_path / "playbook.yml").write_text(playbook.replace("/srv/vlanroute/out", str(cluster.outdir)))
    env = {**os.environ, "HOME": str(tmp_path), "ANSIBLE_HOST_KEY_CHECKING": "False",
           "ANSIBLE_NETWORK_CLI_SSH_TYPE": "paramiko", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
           "ANSIBLE_NOCOLOR": "1"}

    def changed_per_switch() -> dict[str, int]:
        run = subprocess.run([playbook_bin, "-i", "inventory.yml", "playbook.yml"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=0", run.stdout, re.M)
        return {name: int(n) for name, n in recap}

    assert all(cluster.switch(n).config_commands == 0 for n in names)
    assert changed_per_switch() == {"sw1": 2, "sw4": 2}          # the config task and the save handler
    assert all(cluster.switch(n).saved for n in names)
    assert changed_per_switch() == {"sw1": 0, "sw4": 0}          # the second run sends nothing
    # The switches run what vlanroute rendered: push has nothing left to change on them.
    preview = api.push(cluster.outdir, api.Credentials(USER, password=PASSWORD), switches=names,
                       known_hosts=cluster.known_hosts)
    assert {r.switch: r.result for r in preview.results} == {"sw1": "unchanged", "sw4": "unchanged"}
