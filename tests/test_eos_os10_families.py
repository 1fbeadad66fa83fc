"""Arista EOS and Dell OS10: parsers, show-output readers, templates, delta and push order.

Expected values are written by hand from the public evidence on docs/platforms/arista-eos.md
and dell-os10.md (which line means what on the switch), not produced by the code under
test. The running-config fixtures (tests/fixtures/*-production.cfg) are written for the
project and reproduce the line kinds of real captures.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vlanroute.device.order import PortRoles, UnsafeOrder, check_order
from vlanroute.drivers import FAMILIES
from vlanroute.drivers.common import ConfigParseError
from vlanroute.model.bridge import LagPort
from vlanroute.model.platforms import PLATFORMS
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_files, render_to_dir

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
EOS = FAMILIES["arista-eos"]
OS10 = FAMILIES["dell-os10"]
ARISTA = PLATFORMS["arista-7050sx-64"]
S5248 = PLATFORMS["dell-s5248f-on"]
ROUTING = {101, 102, 103, 104}


# -- running configs -------------------------------------------------------------------------

def test_eos_running_config_line_kinds():
    text = (FIXTURES / "arista-eos-production.cfg").read_text()
    cfg = EOS.parse_running(text, switch="sw1", platform=ARISTA)
    # `vlan 10,20` is two VLANs printed on one line; `vlan 30` has a name, 4094 a trunk group.
    assert cfg.vlans == {1, 10, 20, 30, 4094}
    assert cfg.stp_global_enabled                       # spanning-tree mode mstp
    # A trunk without a native line has native VLAN 1, which its allowed list leaves out.
    po10 = cfg.lags[10]
    assert (po10.mode, po10.pvid, po10.untagged, po10.tagged) == ("trunk", 1, set(), {10, 20, 30})
    assert po10.members == ["Ethernet30", "Ethernet31"]
    et32 = cfg.ports["Ethernet32"]
    assert (et32.mode, et32.pvid, et32.untagged, et32.tagged) == ("access", 20, {20}, set())
    assert cfg.ports["Ethernet33"].mode == "routed" and not cfg.ports["Ethernet33"].untagged
    assert not cfg.ports["Ethernet34"].enabled
    # An empty `interface EthernetN` block is the factory state: access, VLAN 1.
    assert cfg.ports["Ethernet1"].is_default()
    kept = {c.text.strip(): c for c in cfg.context}
    assert kept["trunk group peer"].effect == "forwarding" and kept["trunk group peer"].vlans == {4094}
    assert kept["ip address 10.30.0.1/24"].vlans == {30}        # in interface Vlan30
    assert kept["channel-group 10 mode active"].effect == "forwarding"   # LACP is not modelled
    assert kept["description site core a"].effect == "none"
    # The banner's text is one heredoc, not commands; BGP's 6-space lines stay in their block.
    assert kept["Authorised use only. This switch belongs to the cluster example site."].block == "heredoc"
    assert kept["rd 192.0.2.11:1"].block == "router bgp 65001"


def test_os10_running_config_line_kinds():
    text = (FIXTURES / "dell-os10-production.cfg").read_text()
    cfg = OS10.parse_running(text, switch="sw1", platform=S5248)
    assert cfg.vlans == {1, 10, 20}                      # interface vlanN creates VLAN N
    # Printed trunk without `switchport access vlan`: no untagged VLAN (OS10 prints it when set).
    po10 = cfg.lags[10]
    assert (po10.mode, po10.pvid, po10.untagged, po10.tagged) == ("trunk", 0, set(), {10, 20})
    assert po10.members == ["ethernet1/1/30", "ethernet1/1/31"]
    p32 = cfg.ports["ethernet1/1/32"]
    assert (p32.mode, p32.pvid, p32.untagged) == ("access", 10, {10})
    # `flowcontrol receive on` alone is the S4112F-ON's printed default: nothing set.
    assert cfg.ports["ethernet1/1/1"].flow_control is None
    assert cfg.ports["ethernet1/1/1"].is_default()
    assert cfg.ports["ethernet1/1/33"].mode == "routed"
    kept = {c.text.strip(): c for c in cfg.context}
    assert kept["ip address 10.20.0.1/24"].vlans == {20}
    assert kept["spanning-tree port type edge"].effect == "none"


@pytest.mark.parametrize("family, platform, text, message", [
    (EOS, ARISTA, "interface Ethernet60\n   switchport mode trunk\n", "does not exist"),
    (EOS, ARISTA, "vlan 5000\n", "outside"),
    (EOS, ARISTA, "interface Ethernet1\n   switchport trunk allowed vlan 10 20\n", "unsupported"),
    (EOS, ARISTA, "router bgp 1\n", "unsupported"),
    (OS10, S5248, "interface ethernet1/1/57\n", "does not exist"),   # 1/1/50 exists [ARC]
    (OS10, S5248, "interface ethernet1/1/1\n switchport trunk allowed vlan 4-2\n", "VLAN range"),
])
def test_strict_parse_refuses_with_file_and_line(family, platform, text, message):
    with pytest.raises(ConfigParseError) as exc:
        family.parse(text, switch="sw1", platform=platform, source="x.cfg")
    assert message in str(exc.value) and "x.cfg" in exc.value.render()


def test_trunk_allowed_list_semantics_differ():
    """EOS replaces the list (`add`/`remove` edit it); OS10 adds to it."""
    eos = EOS.parse("interface Ethernet1\nswitchport mode trunk\nswitchport trunk allowed vlan 10-12\n"
                    "switchport trunk allowed vlan 20\nswitchport trunk allowed vlan add 21\n"
                    "switchport trunk allowed vlan remove 20\nexit\n", switch="s", platform=ARISTA)
    assert eos.ports["Ethernet1"].tagged == {21}
    os10 = OS10.parse("interface ethernet1/1/1\nswitchport mode trunk\nswitchport trunk allowed vlan 10-12\n"
                      "switchport trunk allowed vlan 20\nno switchport trunk allowed vlan 11\nexit\n",
                      switch="s", platform=S5248)
    p = os10.ports["ethernet1/1/1"]
    assert p.tagged == {10, 12, 20} and p.untagged == {1} and p.pvid == 1


# -- show output ---------------------------------------------------------------------------

EOS_MAC = """          Mac Address Table
------------------------------------------------------------------

Vlan    Mac Address       Type        Ports      Moves   Last Move
----    -----------       ----        -----      -----   ---------
 101    0200.0a00.0001    DYNAMIC     Et5        1       0:01:02 ago
 102    0200.0a00.0002    DYNAMIC     Po3        2       1 day, 2:03:04 ago
 103    0200.0a00.0003    DYNAMIC     Et49/1     1       0:00:10 ago
   1    0200.0a00.0004    STATIC      Cpu
Total Mac Addresses for this criterion: 4

          Multicast Mac Address Table
------------------------------------------------------------------

Vlan    Mac Address       Type        Ports
----    -----------       ----        -----
 101    0100.5e00.0001    STATIC      Et5
Total Mac Addresses for this criterion: 1
"""

OS10_MAC = """Codes: pv <vlan-id> - private vlan where the mac is originally learnt
VlanId        Mac Address         Type        Interface
101           02:00:0a:00:00:01   dynamic     ethernet1/1/5
102           02:00:0a:00:00:02   dynamic     port-channel3
103           02:00:0a:00:00:03   dynamic     ethernet1/1/12:1
"""


def test_address_tables():
    assert EOS.parse_address_table(EOS_MAC) == {
        (101, "02:00:0a:00:00:01"): "Ethernet5", (102, "02:00:0a:00:00:02"): LagPort(3),
        (103, "02:00:0a:00:00:03"): "Ethernet49/1"}
    assert OS10.parse_address_table(OS10_MAC) == {
        (101, "02:00:0a:00:00:01"): "ethernet1/1/5", (102, "02:00:0a:00:00:02"): LagPort(3),
        (103, "02:00:0a:00:00:03"): "ethernet1/1/12:1"}


# Written by us in the layouts of the captures on docs/platforms/*.md. EOS [NTC]: counter
# lines, a blank line, the header, a dashed line; short local names (`Et3/1`), a name with
# a domain suffix, a port with two neighbours, a management port.
EOS_LLDP = """Last table change time   : 2 days, 3:04:05 ago
Number of table inserts  : 5
Number of table deletes  : 1
Number of table drops    : 0
Number of table age-outs : 1

Port          Neighbor Device ID       Neighbor Port ID    TTL
---------- ------------------------ ---------------------- ---
Et47          sw2                      Ethernet47          120
Et49/1        core7.rack2.example.net  Ethernet3/2         120
Et50/1        sw3                      Ethernet50/1        120
Et50/1        sw4                      Ethernet12          120
Ma1           oob-switch.example.net   Gi1/0/7             120
"""
# The older EOS layout [NTC]: no dashed line under the header.
EOS_LLDP_OLD = """Last table change time   : 0:00:09 ago
Number of table inserts  : 1
Number of table deletes  : 0
Number of table drops    : 0
Number of table age-outs : 0

Port       Neighbor Device ID             Neighbor Port ID           TTL
Et5        sw9                            Ethernet6                  120
"""
# OS10 `show lldp neighbors detail` (tests/fixtures/os10-lldp-neighbors-detail.txt), written
# by us in the layout of the real S5248F-ON capture [ARC]: a NIC without a name (MAC Port ID,
# `Not Advertised`), two OS10 switches whose names share their first 17 characters, an NX-OS
# switch with a domain name and a management address line, multi-line system descriptions,
# indented MAC/PHY and Dell lines, a breakout lane as the local port, blank lines between
# blocks and no dashed line after the last one.
OS10_LLDP = (FIXTURES / "os10-lldp-neighbors-detail.txt").read_text()


def test_eos_lldp_neighbors():
    assert EOS.lldp_command == "show lldp neighbors"
    rows = EOS.parse_lldp(EOS_LLDP)
    assert [(n.local_port, n.system_name, n.port_id, n.chassis_id) for n in rows] == [
        ("Ethernet47", "sw2", "Ethernet47", ""),
        ("Ethernet49/1", "core7.rack2.example.net", "Ethernet3/2", ""),
        ("Ethernet50/1", "sw3", "Ethernet50/1", ""),
        ("Ethernet50/1", "sw4", "Ethernet12", ""),
        ("Ma1", "oob-switch.example.net", "Gi1/0/7", "")]
    assert not any(n.truncated for n in rows)
    assert [(n.local_port, n.system_name, n.port_id) for n in EOS.parse_lldp(EOS_LLDP_OLD)] == [
        ("Ethernet5", "sw9", "Ethernet6")]
    assert EOS.parse_lldp(EOS_LLDP.split("Port   ")[0]) == []     # counters only: no row


def test_os10_lldp_neighbors_detail():
    assert OS10.lldp_command == "show lldp neighbors detail"
    rows = OS10.parse_lldp(OS10_LLDP)
    assert [(n.local_port, n.system_name, n.port_id, n.chassis_id) for n in rows] == [
        ("ethernet1/1/3:1", "", "02:00:0a:00:10:0c", "02:00:0a:00:10:0e"),
        ("ethernet1/1/31", "spine-row4-rack12-a", "ethernet1/1/49", "24:8a:07:bb:cc:aa"),
        ("ethernet1/1/32", "spine-row4-rack12-b", "ethernet1/1/50", "24:8a:07:bb:cc:bb"),
        ("ethernet1/1/47:1", "core7-nexus-9336c-1b.rack2.example.net", "Ethernet1/16/1", "6c:41:0e:aa:91:78"),
        ("ethernet1/1/48", "sw2", "ethernet1/1/47", "02:00:00:00:00:02")]
    # Names longer than the summary's 17 characters come through whole.
    assert not any(n.truncated for n in rows)
    assert len({n.system_name[:17] for n in rows[1:3]}) == 1
    # The last block has no dashed line after it; without the blank lines, or with Windows
    # line ends, the same neighbours are read.
    assert not OS10_LLDP.rstrip().endswith("-")
    assert OS10.parse_lldp(OS10_LLDP.replace("\n\n", "\n").replace("\n", "\r\n")) == rows
    # A block whose dashed line is missing: the repeated field starts the next neighbour.
    blocks = OS10_LLDP.split("-" * 75 + "\n")
    assert OS10.parse_lldp(blocks[1] + blocks[2]) == rows[1:3]
    assert OS10.parse_lldp("") == [] and OS10.parse_lldp("% Error: LLDP is disabled.\n") == []


def test_eos_os10_rows_resolve_against_the_plan():
    """The rows above, through the cabling check's comparison: a short local name, a domain
    suffix, two names alike in their first 17 characters and a nameless NIC all land on the
    plan's cable ends."""
    from vlanroute.bundle.reader import Cable
    from vlanroute.device.cabling import NO_LLDP, OK, check_cabling
    from vlanroute.device.lldp import LldpTable

    cables = [Cable(0, "sw1", "Ethernet47", "sw2", "Ethernet47", None, None, "inter-switch", "C1"),
              Cable(0, "os1", "ethernet1/1/31", "spine-row4-rack12-a", "ethernet1/1/49", None, None,
                    "inter-switch", "C2"),
              Cable(0, "os1", "ethernet1/1/3:1", "h1", "eth0", None, None, "host", "C3"),
              Cable(0, "os1", "ethernet1/1/48", "sw2", "ethernet1/1/47", None, None, "inter-switch", "C4"),
              Cable(0, "os1", "ethernet1/1/32", "spine-row4-rack12-b", "ethernet1/1/50", None, None,
                    "inter-switch", "C5"),
              Cable(0, "os1", "ethernet1/1/47:1", "core7-nexus-9336c-1b", "Ethernet1/16/1", None, None,
                    "inter-switch", "C6")]
    eos = [n for n in EOS.parse_lldp(EOS_LLDP) if n.system_name == "sw2"]
    tables = {"sw1": LldpTable("sw1", tuple(eos)), "os1": LldpTable("os1", tuple(OS10.parse_lldp(OS10_LLDP)))}
    report = check_cabling(cables, tables, ["sw1", "sw2", "os1", "spine-row4-rack12-a", "spine-row4-rack12-b",
                                            "core7-nexus-9336c-1b"],
                           {"h1": "02:00:0A:00:10:0C"})
    assert {c.label: c.status for c in report.cables} == {"C1": OK, "C2": OK, "C3": OK, "C4": OK, "C5": OK,
                                                          "C6": OK}
    assert NO_LLDP not in {c.status for c in report.cables}



def test_far_port_ids_are_read_as_the_plans_port_names():
    """A Port ID printed short or spaced is the far switch's plan name (Family.lldp_port_name),
    so the cable is ok rather than swapped to a port the plan does not know."""
    from vlanroute.bundle.reader import Cable
    from vlanroute.device.cabling import OK, SWAPPED, check_cabling
    from vlanroute.device.lldp import LldpTable
    from vlanroute.drivers.family import LldpNeighbor

    assert EOS.lldp_port_name("Et49/1") == EOS.lldp_port_name("Ethernet49/1") == "Ethernet49/1"
    assert OS10.lldp_port_name("ethernet 1/1/5") == "ethernet1/1/5"
    assert EOS.lldp_port_name("0200.0a00.0001") == "0200.0a00.0001"        # a MAC stays as sent
    assert FAMILIES["dell-os6"].lldp_port_name("Te1/0/3") == "Te1/0/3"
    cables = [Cable(0, "os1", "ethernet1/1/1", "eos1", "Ethernet49/1", None, None, "inter-switch", "C1")]
    table = {"os1": LldpTable("os1", (LldpNeighbor("ethernet1/1/1", "", "Et49/1", "eos1"),))}
    names = {"eos1": EOS.lldp_port_name, "os1": OS10.lldp_port_name}
    assert check_cabling(cables, table, ["os1", "eos1"], {}, names).cables[0].status == OK
    assert check_cabling(cables, table, ["os1", "eos1"], {}).cables[0].status == SWAPPED


# -- the example inventories -----------------------------------------------------------------

@pytest.fixture(scope="module", params=["arista", "os10"])
def rendered(request, tmp_path_factory):
    inv = REPO / "inventories" / f"seed-torus-{request.param}.yaml"
    doc = plan_from_file(inv, []).to_document()
    out = tmp_path_factory.mktemp(request.param) / "out"
    render_to_dir(doc, out, RenderOptions())          # verify included: parse back + simulate
    return request.param, doc, out


def test_seed_torus_renders_trunk_host_ports(rendered):
    kind, doc, out = rendered
    family = EOS if kind == "arista" else OS10
    platform = ARISTA if kind == "arista" else S5248
    for name, sw in doc.switches.items():
        assert sw.host_attachment == "trunk"
        text = (out / "switches" / f"{name}.cfg").read_text()
        cfg = family.parse(text, switch=name, platform=platform)
        assert cfg.aging_time == 1_000_000 and cfg.flow_control is True
        for port, p in sw.ports.items():
            got = cfg.effective(port)
            if p.role == "host":
                # Native = the host's own VLAN, untagged; every other routing VLAN tagged.
                assert (got.pvid, got.untagged, got.tagged) == (p.pvid, {p.pvid}, ROUTING - {p.pvid})
                assert got.stp_enabled
            else:
                assert got.untagged == set() and got.tagged == set(p.tagged) and not got.stp_enabled
                assert cfg.ports[port].flow_control is True
        assert {lag.hash_mode for lag in cfg.lags.values()} == {"ip-l4"}


def test_rendered_files_keep_the_loop_safe_order(rendered):
    kind, doc, out = rendered
    family = EOS if kind == "arista" else OS10
    sw = doc.switches["sw1"]
    lines = family.config_commands((out / "switches" / "sw1.cfg").read_text())
    check_order(lines, PortRoles.from_plan(sw), family)
    # Spanning tree off on an inter-switch port before its memberships exist is refused.
    stp = next(i for i, l in enumerate(lines) if l in ("spanning-tree bpdufilter enable", "spanning-tree disable"))
    block = lines[stp - 1:stp + 2]                     # interface ..., spanning tree off, exit
    rest = lines[:stp - 1] + lines[stp + 2:]
    first_if = next(i for i, l in enumerate(rest) if l.startswith("interface ") and "vlan" not in l)
    with pytest.raises(UnsafeOrder):
        check_order(rest[:first_if] + block + rest[first_if:], PortRoles.from_plan(sw), family)


def test_delta_takes_factory_to_rendered_and_back(rendered):
    kind, doc, out = rendered
    family = EOS if kind == "arista" else OS10
    platform = ARISTA if kind == "arista" else S5248
    text = (out / "switches" / "sw2.cfg").read_text()
    target = family.parse(text, switch="sw2", platform=platform)
    factory = family.parse("", switch="sw2", platform=platform)
    forward = family.delta_commands(factory, target)
    reached = family.parse_running("\n".join(forward), switch="sw2", platform=platform)
    canon = lambda c: [l.text for l in family.canonical_lines(c)]      # noqa: E731
    assert canon(reached) == canon(target)
    back = family.delta_commands(target, factory)
    # The way back: spanning tree on first, VLANs deleted last.
    stp_on = ("no spanning-tree bpdufilter", "no spanning-tree disable")
    first_on = min(i for i, l in enumerate(back) if l in stp_on)
    assert all(not l.startswith("switchport") for l in back[:first_on])
    assert back[-2].startswith(("no vlan", "no interface vlan"))
    returned = family.parse_running(text + "\n" + "\n".join(back), switch="sw2", platform=platform)
    assert canon(returned) == canon(factory)


def test_plan_chooses_trunk_and_render_warns_about_unconfirmed_commands(capsys, tmp_path):
    from vlanroute.cli import main
    for kind, title, word in (("arista", "Arista EOS", "bpdufilter"), ("os10", "Dell OS10", "flowcontrol transmit")):
        inv = str(REPO / "inventories" / f"seed-torus-{kind}.yaml")
        assert main(["plan", inv]) == 0
        out = capsys.readouterr()
        assert "host attachment: trunk" in " ".join((out.out + out.err).split())
        assert main(["render", inv, "-o", str(tmp_path / kind)]) == 0
        out = capsys.readouterr()
        text = " ".join((out.out + out.err).split())
        assert f"warning: {title} syntax that no public source confirms" in text and word in text


def command_stem(line: str) -> str:
    """The words of a config line before its first argument (a number, list or port)."""
    words = []
    for word in line.split():
        if any(c.isdigit() for c in word):
            break
        words.append(word)
    return " ".join(words)


def test_the_evidence_page_names_every_command_the_template_renders(rendered):
    kind, _, out = rendered
    family = EOS if kind == "arista" else OS10
    page = (REPO / "docs" / "platforms" / f"{family.name}.md").read_text()
    stems = {command_stem(line) for cfg in (out / "switches").glob("*.cfg")
             for line in family.config_commands(cfg.read_text())}
    stems |= {command_stem(line.replace("{name}", "NAME")).replace(" NAME", "").split(":")[0]
              for line in (family.transaction.begin + family.transaction.commit
                                              + family.transaction.abort + family.transaction.checkpoint
                                              + family.transaction.restore + family.transaction.cleanup)}
    stems.discard("")
    missing = sorted(s for s in stems if f"`{s}" not in page)
    assert not missing, f"commands without evidence on the {family.name} page"


@pytest.mark.parametrize("kind", ["arista", "os10"])
def test_the_evidence_page_names_every_command_the_delta_sends(kind):
    """A later push that changes the plan, `vlanroute rollback` and OS10's rollback after a
    commit send the family's delta (`delta_commands`), not the rendered file: its commands
    need a verdict and a source too. The states: factory, a site's production config, and
    the seed torus rendered three ways (other LAGs, flow control, VLAN ids)."""
    family, platform = (EOS, ARISTA) if kind == "arista" else (OS10, S5248)
    page = (REPO / "docs" / "platforms" / f"{family.name}.md").read_text()
    states = [family.parse("", switch="sw1", platform=platform),
              family.parse_running((FIXTURES / f"{family.name}-production.cfg").read_text(),
                                   switch="sw1", platform=platform)]
    for sets in ([], ["topology.links_per_pair=1", "settings.flow_control=false"], ["routing.first_vlan=201"]):
        doc = plan_from_file(REPO / "inventories" / f"seed-torus-{kind}.yaml", sets).to_document()
        text = render_files(doc, RenderOptions())["switches/sw1.cfg"]
        states.append(family.parse(text, switch="sw1", platform=platform))
    stems = {command_stem(line) for cur in states for tgt in states if cur is not tgt
             for line in family.delta_commands(cur, tgt)}
    stems.discard("")
    missing = sorted(s for s in stems if f"`{s}" not in page)
    assert not missing, f"delta commands without evidence on the {family.name} page"


def _key(item: str) -> str:
    """The command an `unconfirmed` entry is about: its first two words (`mac address-table`,
    `channel-group N`, `interface vlanN`)."""
    return " ".join(item.split()[:2])


@pytest.mark.parametrize("family", [EOS, OS10], ids=lambda f: f.name)
def test_every_unconfirmed_command_is_marked_in_the_template_header_and_on_the_evidence_page(family):
    """Render warns about `Family.unconfirmed`; the same commands must be marked U in the
    template header and unknown on the evidence page, so the three never disagree."""
    template = (REPO / "templates" / "switch" / f"{family.name}.j2").read_text()
    header = template[template.index("{#-"):template.index("-#}")]
    parts = re.split(r"(?:^|\s)([CU])  ", header, flags=re.M)
    unknown = " ".join(" ".join(parts[i + 1].split()) for i in range(1, len(parts) - 1, 2) if parts[i] == "U")
    page = (REPO / "docs" / "platforms" / f"{family.name}.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `") and "unknown" in line.lower()]
    for item in family.unconfirmed:
        key = _key(item).replace("vlanN", "vlan")
        assert key in unknown, f"{item!r}: not marked U in the header of {family.name}.j2"
        assert any(key in row for row in rows), f"{item!r}: no unknown row on docs/platforms/{family.name}.md"


def test_the_emulated_eos_takes_a_banner_typed_in_a_session():
    """`banner motd` opens a heredoc up to a line `EOF`; while it is open the emulator shows
    no prompt (it raised KeyError on the prompt of that mode), and after it the session goes on."""
    from vlanroute.lab.eos import EosInterpreter, EosState, EosSwitchData
    ports = tuple(PLATFORMS["arista-7050sx-64"].ports)
    data = EosSwitchData(EosState.factory_default(ports), [])
    cli = EosInterpreter("sw1", data, model="DCS-7050SX-64")
    for line in ("configure", "banner motd"):
        cli.execute(line)
    assert cli.prompt() == ""
    for line in ("Authorised use only.", "EOF"):
        cli.execute(line)
    assert cli.prompt() == "sw1(config)#"
    cli.execute("end")
    assert "banner motd\nAuthorised use only.\nEOF" in cli.running_config()


def test_the_emulated_eos_session_left_behind_by_another_commit():
    """Two sessions edit one configure session; one commits it: the other's next command is
    refused and it is back in privileged mode (it raised KeyError)."""
    from vlanroute.lab.eos import EosInterpreter, EosState, EosSwitchData
    ports = tuple(PLATFORMS["arista-7050sx-64"].ports)
    data = EosSwitchData(EosState.factory_default(ports), [])
    one, two = (EosInterpreter("sw1", data, model="DCS-7050SX-64") for _ in range(2))
    for cli in (one, two):
        cli.execute("configure session vr1")
    one.execute("vlan 101")
    one.execute("commit")
    reply = two.execute("vlan 102")
    assert "session vr1 does not exist" in reply.output and two.prompt() == "sw1#"
    assert "vlan 101" in one.running_config() and "vlan 102" not in one.running_config()


def test_render_warns_when_an_os10_fabric_exceeds_the_vlans_dell_advises_rpvst_for(monkeypatch, capsys, tmp_path):
    """Issue 41, item 9: with more than 64 VLANs in a fabric Dell advises RSTP instead of
    OS10's default RPVST+ [MXGUIDE] (docs/platforms/dell-os10.md). Render warns, naming the
    switches and `spanning-tree mode rstp`, and changes no config; the seed torus's switches
    hold 5 VLANs (101-104 and 1), so the limit is lowered to 4 to see it, and at 64 nothing
    is said."""
    from vlanroute.cli import main
    import vlanroute.drivers.dellos10 as dellos10
    inv = str(REPO / "inventories" / "seed-torus-os10.yaml")
    assert main(["render", inv, "-o", str(tmp_path / "a")]) == 0
    assert "RPVST+" not in capsys.readouterr().err
    monkeypatch.setattr(dellos10, "RPVST_ADVISED_MAX_VLANS", 4)
    assert main(["render", inv, "-o", str(tmp_path / "b")]) == 0
    text = " ".join(capsys.readouterr().err.split())
    assert "warning: Dell OS10: sw1, sw2" in text and "up to 5 VLANs" in text
    assert "RPVST+" in text and "spanning-tree mode rstp" in text
    assert (tmp_path / "a" / "switches" / "sw1.cfg").read_text() == (tmp_path / "b" / "switches" / "sw1.cfg").read_text()
    monkeypatch.undo()
    # The families without such advice say nothing, whatever the count.
    assert EOS.advice({"sw1": 4094}) == [] and OS10.advice({"sw1": 64}) == []
    assert OS10.advice({"sw1": 65})
