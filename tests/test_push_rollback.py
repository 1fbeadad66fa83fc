"""Rollback commands (the 62xx family's delta, vlanroute.drivers.powerconnect.delta): safe order, and they really reach the target.

"Really reach" is checked by running the generated commands through the fake switch's
command interpreter and parsing its running config with the 62xx parser.
"""

from __future__ import annotations

from vlanroute.lab.cli import Interpreter
from vlanroute.lab.server import PC6248_PORTS
from vlanroute.lab.state import PortState, SwitchState
from vlanroute.drivers import FAMILIES
from vlanroute.model.platforms import POWERCONNECT_6248

PC62XX = FAMILIES["powerconnect-62xx"]
delta_commands = PC62XX.delta_commands


def canonical_lines(cfg):  # type: ignore[no-untyped-def]
    return [line.text for line in PC62XX.canonical_lines(cfg)]


RENDERED_LIKE = """configure
vlan database
vlan 101-104
exit
interface port-channel 1
switchport mode general
switchport general allowed vlan add 101,103 tagged
hashing-mode 6
exit
interface range ethernet 1/g47-1/g48
channel-group 1 mode on
exit
interface ethernet 1/g5
switchport mode general
switchport general allowed vlan add 101-104 untagged
switchport general pvid 102
switchport general allowed vlan remove 1
exit
interface port-channel 1
switchport general allowed vlan remove 1
spanning-tree disable
exit
no spanning-tree
bridge aging-time 1000000
end
"""


def parse(text: str):  # type: ignore[no-untyped-def]
    return PC62XX.parse(text, switch="sw1", platform=POWERCONNECT_6248)


def fake_with(state: SwitchState) -> Interpreter:
    it = Interpreter("sw1", state)
    it.execute("enable")
    it.paging = False          # these tests read whole outputs; the session reads through the pager
    return it


def apply(it: Interpreter, commands: list[str]) -> None:
    for command in commands:
        out = it.execute(command).output
        assert "Invalid" not in out and "not" not in out, (command, out)


def test_rollback_from_routed_config_to_an_old_one_restores_it_exactly():
    old = SwitchState.factory_default(PC6248_PORTS, 48)
    old.vlans.add(200)
    old.ports["1/g5"] = PortState(mode="general", pvid=200, untagged={1, 200})
    old.ports["1/g48"] = PortState(mode="general", untagged={1}, tagged={200}, stp_disabled=True)
    it = fake_with(old.clone())
    backup_text = it.execute("show running-config").output
    apply(it, RENDERED_LIKE.splitlines())
    current = parse(it.execute("show running-config").output)
    backup = parse(backup_text)
    undo = delta_commands(current, backup)
    # Spanning tree comes back on before any membership changes.
    first_member = next(i for i, c in enumerate(undo)
                        if c.startswith(("switchport general allowed", "no channel-group")))
    assert undo.index("spanning-tree") < first_member
    stp_on = [i for i, c in enumerate(undo) if c == "no spanning-tree disable"]
    assert stp_on and max(stp_on) < first_member
    apply(it, undo)
    assert canonical_lines(parse(it.execute("show running-config").output)) == \
        canonical_lines(backup)
    assert it.state.ports["1/g48"].stp_disabled and it.state.ports["1/g5"].pvid == 200
    assert it.state.vlans == {1, 200}


def test_delta_from_factory_reaches_a_rendered_seed_switch():
    it = fake_with(SwitchState.factory_default(PC6248_PORTS, 48))
    target = parse(RENDERED_LIKE)
    apply(it, delta_commands(parse(it.execute("show running-config").output), target))
    assert canonical_lines(parse(it.execute("show running-config").output)) == \
        canonical_lines(target)
