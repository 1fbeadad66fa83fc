"""Arista EOS (family `arista-eos`; the 7050 class and any EOS switch with Ethernet ports).

EOS ports are access or trunk ports only: a host port cannot be an untagged member of
several VLANs, so plans attach EOS hosts by trunk (native VLAN = the host's own VLAN, the
other routing VLANs tagged). Push uses EOS's own transaction, a configure session: the
commands are typed into `configure session NAME`, the switch's own diff is read (`show
session-config diffs`), then `commit`; any failure before that is an `abort`, which leaves
the running config untouched. A checkpoint taken before (`configure checkpoint save`) is
what a failed check after the commit goes back to (`configure replace checkpoint:NAME`).
Bracketed keys are the sources on docs/platforms/arista-eos.md.
"""

from __future__ import annotations

import re

from vlanroute.drivers.arista import show
from vlanroute.drivers.family import Capabilities, CliDialog, FirmwareDefaults, StpTable, Transaction, Unprinted
from vlanroute.drivers.trunk.delta import TrunkSyntax
from vlanroute.drivers.trunk.family import ShowReaders, TrunkFamily
from vlanroute.drivers.trunk.mode import TrunkDialect
from vlanroute.model.bridge import LagPort, PortRef

# The one LAG hash vlanroute renders, as a real 7060CX2 (EOS 4.23) prints it [CSM].
HASH_IP_L4 = "port-channel load-balance trident fields ip source-ip destination-ip source-port destination-port"
STP_OFF = "spanning-tree bpdufilter enable"

EOS_DEFAULTS = FirmwareDefaults(
    flow_control=False,
    lag_hash=None,
    sources={
        "flow_control": "confirmed off: `show running-config all` prints `no flowcontrol send` / "
                        "`no flowcontrol receive` on every port [BF]",
        "aging_time": "confirmed 300 s: `show running-config all` prints `mac address-table aging-time 300` "
                      "[PYEAPI]",
        "spanning_tree": "confirmed on, mode mstp: `spanning-tree mode mstp` in every vEOS capture [LABVAL]",
        "port_mode": "confirmed access in VLAN 1, native VLAN 1, allowed all (show run all) [BF], [FAKESW]",
        "lag_hash": "unknown: the platform's default hash is not printed anywhere seen",
    })


def lag_label(lag_id: int) -> str:
    """EOS names a LAG `Port-Channel1` in its config and `Po1` in tables [LABVAL], [NTC]."""
    return f"Po{lag_id}"


def interface_command(port: PortRef) -> str:
    return f"interface Port-Channel{port.id}" if isinstance(port, LagPort) else f"interface {port}"


def _port_name(text: str) -> str | None:
    m = re.fullmatch(r"(?:Ethernet|Et) ?(\d+(?:/\d+)*)", text, re.IGNORECASE)
    return f"Ethernet{m.group(1)}" if m else None


EOS = TrunkDialect(
    family="arista-eos", title="Arista EOS", port_name=_port_name,
    lag_if=r"interface (?:Port-Channel|Po) ?(\d+)", phys_if=r"interface ((?:Ethernet|Et) ?\d+(?:/\d+)*)",
    native_is_access=False, allowed_additive=False, trunk_default_all=True, vlan_global=True,
    vlan_if=None, port_stp_off=(STP_OFF,),
    port_stp_on=("spanning-tree bpdufilter disable", "no spanning-tree bpdufilter"),
    global_stp_off="spanning-tree mode none", global_stp_on=r"spanning-tree mode (mstp|rstp|rapid-pvst)",
    aging="mac address-table aging-time", lag_hashes={HASH_IP_L4: "ip-l4"},
    flow_lines={"flowcontrol send on": ("send", True), "flowcontrol send off": ("send", False),
                "no flowcontrol send": ("send", False), "flowcontrol receive on": ("receive", True),
                "flowcontrol receive off": ("receive", False), "no flowcontrol receive": ("receive", False)},
    flow_defaults={"send": False, "receive": False},
    defaults=EOS_DEFAULTS, lag_label=lag_label,
    harmless_if=r"(description|mtu|speed|error-correction|(no )?lldp|load-interval|logging|"
                r"(no )?spanning-tree (portfast|link-type|cost|port-priority|bpduguard|guard)|"
                r"(no )?storm-control|no switchport trunk group)\b",
    harmless_global=r"(hostname|username|aaa|no aaa|ip domain-name|ip name-server|dns|ntp|logging|"
                    r"service|transceiver|clock|snmp-server|lldp|management|spanning-tree mst|"
                    r"ip routing|no ip routing)\b",
    heredoc=r"banner (login|motd)",
    # Real EOS configs name Port-Channel251 (Cray-HPE/docs-csm) and Port-Channel2000
    # (aristanetworks/avd); 2000 is the highest seen [CSM], [AVD].
    lag_id_max=2000)


def _create(ids: list[int]) -> list[str]:
    # One VLAN a command: `vlan 10,20` is confirmed as input, a range `vlan 101-104` is not.
    return [line for v in ids for line in (f"vlan {v}", "exit")]


def _delete(ids: list[int]) -> list[str]:
    return [f"no vlan {v}" for v in ids]


SYNTAX = TrunkSyntax(
    interface=interface_command, create=_create, delete=_delete, native_is_access=False,
    allowed_additive=False, stp_off=STP_OFF, stp_on="no spanning-tree bpdufilter",
    global_stp_off="spanning-tree mode none", global_stp_on="spanning-tree mode mstp",
    aging="mac address-table aging-time", lag_hash=lambda key: HASH_IP_L4,
    flow=lambda on: [f"flowcontrol send {'on' if on else 'off'}", f"flowcontrol receive {'on' if on else 'off'}"],
    flow_reset=("no flowcontrol send", "no flowcontrol receive"),
    member=lambda lag: f"channel-group {lag} mode on", defaults=EOS_DEFAULTS, trunk_default_all=True)

# Replies that mean "command rejected" [SCRAPLI], [ANS-EOS], [FAKESW]. Not an error: a
# `... not found in current VLAN` line of a show command [ANS-EOS].
ERRORS = (
    r"^% Invalid input", r"^% Incomplete command", r"^% Ambiguous command", r"^% ?Error",
    r"^% Cannot commit", r"^% Unavailable command", r"^% Cannot change mode",
    r"Maximum number of pending sessions has been reached",
    r"Configuration replace aborted",
)


class AristaEos(TrunkFamily):
    name = "arista-eos"
    title = "Arista EOS"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=False,     # access/trunk ports only: one native VLAN
        eee=False,
        lag_hash_modes={"src-dst-ip-port": "ip-l4"},
        lag_hash_refused={"src-dst-mac": "vlanroute renders only the IP + L4 port hash on EOS",
                          "enhanced": "EOS has no such hash mode"},
        push=True, preview=True, audit=True)
    unconfirmed = (
        "spanning-tree bpdufilter enable as 'spanning tree off' on inter-switch ports (syntax "
        "confirmed; that the port then forwards in every VLAN is not: push reads its state "
        "after every change and does not save while it is not forwarding)",
        "port-channel load-balance trident fields ip ... on a 7050 (seen on a 7060CX2 only)",
        "channel-group N mode on printed as given (seen on a 7060CX2 only)",
    )
    defaults = EOS_DEFAULTS
    # netmiko's arista_eos class sends `terminal width 511` and `terminal length 0` at login
    # and waits for `Width set to` / `Pagination disabled` [NETMIKO].
    cli = CliDialog(
        netmiko_device_type="arista_eos",
        save_command="write memory",
        save_confirm=None,
        save_answer=None,
        error_patterns=ERRORS,
        pager_patterns=(r" ?--More--",),
        save_done=r"Copy completed successfully",
        save_not_done=r"% ?Error|not saved",
    )
    transaction = Transaction(
        begin=("configure session {name}",),
        diff="show session-config diffs",
        commit=("commit",),
        abort=("abort",),
        checkpoint=("configure checkpoint save {name}",),
        restore=("configure replace checkpoint:{name} skip-checkpoint",),
        cleanup=("delete checkpoint:{name}",),
    )
    flow_per_port = True
    # Lines printed on a 7060CX2 [CSM] that another model could take as its default and
    # print nothing for (issue 41, docs/platforms/arista-eos.md "Read-back"):
    unprinted = (
        # Flow control is off by default on every image seen, and `show running-config all`
        # prints each port's setting, the default too (`no flowcontrol send`) [PYEAPI], [BF]:
        # a line it prints is the model's default, anything else is not in effect.
        Unprinted(r"interface \S+: flowcontrol (send|receive) on", "show running-config all",
                  "EOS flow control is off unless set [PYEAPI], [BF]"),
        # No source shows the LAG hash in `show running-config all`, nor the 7050's default
        # hash; a refused line stops the push before the commit, so a line taken without
        # error and not printed is the model's default (as on OS10 [GC]). The hash picks a
        # LAG member, never a VLAN or a loop: its absence is said, not rolled back.
        Unprinted(r"port-channel load-balance trident fields ip .*", None,
                  "a 7060CX2 prints it [CSM]; EOS prints no line for a default"),
    )
    address_table_command = "show mac address-table"
    lldp_command = "show lldp neighbors"
    dialect = EOS
    syntax = SYNTAX
    readers = ShowReaders(show.facts, show.parse_address_table, show.parse_lldp_neighbors)
    vlan_line = r"vlan \d+"

    # A bpdufilter port stays in the spanning tree (MSTP), so the topology lists it with its
    # real state; a port spanning tree does not run on is listed under `NoStp` [ANTA]. A port
    # missing from a VLAN's topology is therefore not read as forwarding.
    stp_off_unlisted = False

    def stp_state_commands(self, vlans: list[int]) -> list[str]:
        return [show.stp_topology_command(v) for v in vlans]

    def parse_stp_state(self, replies: list[str], vlans: list[int]) -> StpTable:
        return show.parse_stp_topology(replies, vlans)


ARISTA_EOS = AristaEos()
