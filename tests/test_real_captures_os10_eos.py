"""What real Dell OS10 and Arista EOS switches printed, fed to vlanroute's readers, deltas
and emulated switches (issue 25, item 5). Each fixture is a short excerpt of a public
capture, named in tests/fixtures/README.md; the expected values are read off the capture
by hand, not produced by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

from vlanroute.drivers import FAMILIES
from vlanroute.drivers.dellos10.show import parse_lldp_neighbors_detail
from vlanroute.lab.eos import EosInterpreter, EosState, EosSwitchData
from vlanroute.lab.os10 import Os10Interpreter, Os10State, Os10SwitchData, load
from vlanroute.model.bridge import LagPort
from vlanroute.model.platforms import PLATFORMS

FIXTURES = Path(__file__).parent / "fixtures"
OS10 = FAMILIES["dell-os10"]
EOS = FAMILIES["arista-eos"]
S5248 = PLATFORMS["dell-s5248f-on"]
ARISTA = PLATFORMS["arista-7050sx-64"]


def _typed(name: str) -> list[str]:
    """The commands of a captured session: each line without its `OS10(...)# ` prompt, and an
    `exit` where the prompt shows the session back in configuration mode without one typed
    (the capture leaves out a line there)."""
    out: list[str] = []
    mode = ""
    for line in (FIXTURES / name).read_text().splitlines():
        prompt, command = line.split("# ", 1)
        if prompt.endswith("(config)") and mode.startswith("(conf-if") and out[-1] != "exit":
            out.append("exit")
        mode = prompt.removeprefix("OS10")
        out.append(command)
    return out


def _printed(name: str) -> str:
    """A captured `show running-configuration`, without the command line itself."""
    return "\n".join(line for line in (FIXTURES / name).read_text().splitlines()
                     if not line.endswith("show running-configuration")) + "\n"


def _block(text: str, header: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(header) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "!")
    return [line.strip() for line in lines[start:end]]


def _os10(ports: tuple[str, ...] = tuple(S5248.ports)) -> Os10Interpreter:
    return Os10Interpreter("OS10", Os10SwitchData(Os10State.factory_default(ports), []))


# -- OS10: a static LAG and its hash, typed on a real S4112F-ON (OS10 10.5.0.2) --------------

def test_os10_lag_read_back_is_what_push_expects_after_typing_it():
    """Push types the members' `channel-group 1 mode on` and the IP + L4 hash, then compares
    the switch's show running-configuration with what it typed (canonical lines). The real
    switch printed `channel-group 1` and `no switchport` on each member and no load-balancing
    line at all: that must compare equal, or push rolls back a correct change."""
    typed = OS10.parse("\n".join(["configure terminal", *_typed("os10-s4112f-lag-typed.txt")]) + "\n",
                       switch="sw1", platform=S5248)
    printed = OS10.parse_running(_printed("os10-s4112f-lag-readback.txt"), switch="sw1", platform=S5248)
    assert printed.lags[1].members == ["ethernet1/1/5", "ethernet1/1/9", "ethernet1/1/12"]
    assert typed.lags[1].members == printed.lags[1].members
    mine = {"ethernet1/1/5", "ethernet1/1/9", "ethernet1/1/12", LagPort(1), None}
    want = [line.text for line in OS10.canonical_lines(typed) if line.port in mine]
    seen = [line.text for line in OS10.canonical_lines(printed) if line.port in mine]
    assert seen == want
    # Written from the capture: each member is a static member, nothing else differs from the
    # defaults, and the hash the switch printed no line for is no difference.
    assert "interface ethernet1/1/5: channel-group 1 mode on" in seen
    assert not [x for x in seen if "switchport" in x.split(": ", 1)[-1] and "ethernet" in x]
    assert not [x for x in seen if "load-balancing" in x]


def test_emulated_os10_prints_the_lag_as_the_s4112f_did():
    cli = _os10()
    cli.execute("configure terminal")
    for command in _typed("os10-s4112f-lag-typed.txt"):
        assert cli.execute(command).output == "", command
    shown = cli.running_config()
    capture = _printed("os10-s4112f-lag-readback.txt")
    for port in ("ethernet1/1/5", "ethernet1/1/9"):
        assert _block(shown, f"interface {port}") == _block(capture, f"interface {port}")
    assert _block(capture, "interface ethernet1/1/5") == ["no shutdown", "channel-group 1", "no switchport",
                                                          "flowcontrol receive on"]
    assert "load-balancing" not in shown and "load-balancing" not in capture


# -- OS10: a VLAN cannot be a trunk's access VLAN and in its allowed list (ipspace/netlab #1838)

def _refusal() -> str:
    return (FIXTURES / "os10-access-and-trunk-error.txt").read_text().splitlines()[1]


def test_emulated_os10_refuses_a_vlan_both_access_and_trunk_as_the_real_one():
    cli = _os10()
    for command in ("configure terminal", "interface vlan2", "exit", "interface ethernet1/1/1",
                    "switchport mode trunk"):
        assert cli.execute(command).output == ""
    reply = cli.execute("switchport trunk allowed vlan 1,2")      # access VLAN 1, as in the capture
    assert reply.output.strip() == _refusal()
    assert cli.execute("switchport trunk allowed vlan 2").output == ""
    assert cli.execute("switchport access vlan 2").output.startswith("% Error: Interface cannot be an access")


SEED = """! Version 10.5.2.0
!
interface vlan101
 no shutdown
!
interface vlan102
 no shutdown
!
interface vlan103
 no shutdown
!
interface ethernet1/1/1
 no shutdown
 switchport mode trunk
 switchport access vlan 101
 switchport trunk allowed vlan 102-103
 flowcontrol receive on
!
"""


def test_os10_host_port_whose_untagged_vlan_changes_never_has_it_in_both():
    """A host moves from VLAN 101 to 102: the delta must not add 101 to the allowed list while
    101 is still the access VLAN, nor make 102 the access VLAN while it is in the list."""
    cur = OS10.parse_running(SEED, switch="sw1", platform=S5248)
    tgt_text = SEED.replace("access vlan 101", "access vlan 102").replace("allowed vlan 102-103", "allowed vlan 101,103")
    tgt = OS10.parse_running(tgt_text, switch="sw1", platform=S5248)
    commands = OS10.delta_commands(cur, tgt)
    block = commands[commands.index("interface ethernet1/1/1") + 1:]
    block = block[:block.index("exit")]
    assert block == ["no switchport trunk allowed vlan 102", "switchport access vlan 102",
                     "switchport trunk allowed vlan 101"]
    # The emulated switch, seeded with the current state, takes the delta as a real one would.
    state = load(SEED, tuple(S5248.ports), "OS10", "S5248F-ON")
    cli = Os10Interpreter("OS10", Os10SwitchData(state, []))
    for command in commands:
        assert cli.execute(command).output == "", command
    after = OS10.parse_running(cli.running_config(), switch="sw1", platform=S5248)
    assert [x.text for x in OS10.canonical_lines(after)] == [x.text for x in OS10.canonical_lines(tgt)]
    # The order the delta used to have is refused with the capture's error.
    cli2 = Os10Interpreter("OS10", Os10SwitchData(load(SEED, tuple(S5248.ports), "OS10", "S5248F-ON"), []))
    cli2.execute("configure terminal")
    cli2.execute("interface ethernet1/1/1")
    cli2.execute("no switchport trunk allowed vlan 102")
    assert cli2.execute("switchport trunk allowed vlan 101").output.strip() == _refusal()


def test_emulated_os10_write_memory_answers_with_the_prompt_only():
    """A real OS10 answers `write memory` with the next prompt (Cray-HPE/docs-csm)."""
    capture = (FIXTURES / "os10-write-memory.txt").read_text().splitlines()
    assert capture[0].endswith("# write memory") and capture[1].endswith("# exit")
    assert _os10().execute("write memory").output == ""


# -- S5248F-ON: the second port of each QSFP28-DD cage ----------------------------------------

def test_s5248f_on_has_the_ports_a_real_one_reports_lldp_neighbours_on():
    neighbours = parse_lldp_neighbors_detail((FIXTURES / "os10-s5248f-lldp-ethernet1-1-50.txt").read_text())
    assert [n.local_port for n in neighbours] == ["ethernet1/1/50"]
    record = json.loads((FIXTURES / "os10-s5248f-lldp-syslog-ethernet1-1-52.json").read_text())
    for port in (neighbours[0].local_port, record["local_port_id"], "ethernet1/1/49", "ethernet1/1/51"):
        assert S5248.has_port(port), port
    # Uplinks carry a cable only where the inventory names them: not in the default pool.
    assert "ethernet1/1/50" not in (S5248.auto_ports or ())
    assert S5248.port_index("ethernet1/1/49") < S5248.port_index("ethernet1/1/50") < \
        S5248.port_index("ethernet1/1/51") < S5248.port_index("ethernet1/1/52") < S5248.port_index("ethernet1/1/53")


# -- EOS: port-channel numbers are names up to 2000, not a count -------------------------------

def test_eos_reads_port_channel_251_and_2000_from_real_configs():
    csm = EOS.parse_running((FIXTURES / "eos-port-channel-251.cfg").read_text(), switch="sw1", platform=ARISTA)
    assert sorted(csm.lags) == [64, 251]
    assert (csm.lags[251].mode, csm.lags[251].pvid) == ("access", 5)
    avd = EOS.parse_running((FIXTURES / "eos-port-channel-2000.cfg").read_text(), switch="sw1", platform=ARISTA)
    assert sorted(avd.lags) == [2000] and avd.lags[2000].mode == "trunk"


def test_emulated_eos_takes_port_channel_2000():
    cli = EosInterpreter("sw1", EosSwitchData(EosState.factory_default(tuple(ARISTA.ports)), []),
                         model="DCS-7050SX-64")
    cli.execute("configure")
    for line in (FIXTURES / "eos-port-channel-2000.cfg").read_text().splitlines():
        if line.strip() and line.strip() != "!":
            assert cli.execute(line).output == "", line
    cli.execute("end")
    assert "interface Port-Channel2000" in cli.running_config()
