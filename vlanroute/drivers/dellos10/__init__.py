"""Dell SmartFabric OS10 (family `dell-os10`; S5248F-ON class), successor of OS6 in Dell's range.

OS10 ports are access or trunk ports only; on a trunk, `switchport access vlan N` is the
untagged (native) VLAN and `switchport trunk allowed vlan LIST` ADDS to the tagged list
(`no switchport trunk allowed vlan LIST` removes) [UG], [GC]. So plans attach OS10 hosts by
trunk. Spanning tree has a per-port off switch, `spanning-tree disable` [GC] (seen under
Ethernet ports; under a port-channel it is unconfirmed). Push uses
OS10's transaction: `lock`, `start transaction`, the commands, `show diff
candidate-configuration running-configuration`, `commit`; `discard` before a commit [KB],
[UG]. OS10 has no configure-replace or checkpoint [UG], [DELLOS10NAPALM]: a failed check
after the commit is undone by committing the inverse commands in a new transaction (VLAN
deletions in one of their own, after the rest: the guide's "Range configuration conflict"),
and an undo the switch refuses is discarded, since every transaction session shares one
candidate config that anyone's next change commits [UG].
Bracketed keys are the sources on docs/platforms/dell-os10.md.
"""

from __future__ import annotations

from collections.abc import Mapping
import re

from vlanroute.drivers.dellos10 import show
from vlanroute.drivers.family import Capabilities, CliDialog, FirmwareDefaults, StpTable, Transaction
from vlanroute.drivers.trunk.delta import TrunkSyntax
from vlanroute.drivers.trunk.family import ShowReaders, TrunkFamily
from vlanroute.drivers.trunk.mode import TrunkDialect
from vlanroute.model.bridge import LagPort, PortRef

# The LAG hash on source/destination IP and L4 ports, as typed on a real S4112F-ON
# (OS10 10.5.0.2) [GC]. Its show running-configuration printed no load-balancing line
# afterwards [GC]: the OS10 default (an IP 4-tuple hash [S4112REF]), never printed.
HASH_IP_L4 = "load-balancing ip-selection destination-ip source-ip protocol l4-destination-port l4-source-port"
STP_OFF = "spanning-tree disable"
# Dell: RSTP rather than the default RPVST+ "when more than 64 VLANs are required in a
# fabric" [MXGUIDE].
RPVST_ADVISED_MAX_VLANS = 64

OS10_DEFAULTS = FirmwareDefaults(
    flow_control=None,
    lag_hash="ip-l4",
    sources={
        "flow_control": "receive on: every port of real S4112F-ON configs prints `flowcontrol receive "
                        "on` [GC]; transmit: unknown (never printed; off assumed)",
        "aging_time": "confirmed 1800 s, range 0-1,000,000 s (Dell SmartFabric OS10 User Guide [UG])",
        "spanning_tree": "on (a fixture prints `spanning-tree mode rstp` [ANS-OS10]); the default mode is unknown",
        "port_mode": "confirmed access in VLAN 1, printed `switchport access vlan 1` [GC], [DELLOS10NAPALM]",
        "lag_hash": "confirmed not printed: the IP + L4 hash typed on a real S4112F-ON is absent from its "
                    "show running-configuration [GC]",
    })


def lag_label(lag_id: int) -> str:
    """OS10 prints a LAG `port-channel1` in show running-configuration and tables [GC], [NETDISCO]."""
    return f"port-channel{lag_id}"


def interface_command(port: PortRef) -> str:
    return f"interface port-channel{port.id}" if isinstance(port, LagPort) else f"interface {port}"


def _port_name(text: str) -> str | None:
    m = re.fullmatch(r"ethernet ?(\d+/\d+/\d+(?::\d+)?)", text, re.IGNORECASE)
    return f"ethernet{m.group(1)}" if m else None


OS10 = TrunkDialect(
    family="dell-os10", title="Dell OS10", port_name=_port_name,
    lag_if=r"interface port-channel ?(\d+)", phys_if=r"interface (ethernet ?\d+/\d+/\d+(?::\d+)?)",
    native_is_access=True, allowed_additive=True, trunk_default_all=False, vlan_global=False,
    vlan_if=r"interface vlan ?(\d+)", port_stp_off=(STP_OFF,), port_stp_on=("no spanning-tree disable",),
    global_stp_off="spanning-tree disable", global_stp_on=r"spanning-tree mode (rstp|mst|rapid-pvst)|no spanning-tree disable",
    aging="mac address-table aging-time", lag_hashes={HASH_IP_L4: "ip-l4"},
    flow_lines={"flowcontrol receive on": ("receive", True), "flowcontrol receive off": ("receive", False),
                "flowcontrol transmit on": ("transmit", True), "flowcontrol transmit off": ("transmit", False)},
    flow_defaults={"receive": True, "transmit": False},
    defaults=OS10_DEFAULTS, lag_label=lag_label,
    harmless_if=r"(description|mtu|speed|fec|(no )?negotiation|(no )?lldp|"
                r"(no )?spanning-tree (port type|bpduguard|bpdufilter|guard|link-type|cost|priority)|"
                r"(no )?storm-control)\b",
    harmless_global=r"(hostname|username|system-user|ip domain-name|ip name-server|ip vrf default|iscsi|"
                    r"logging|aaa|snmp-server|ntp|clock|feature|spanning-tree mode)\b")


def _create(ids: list[int]) -> list[str]:
    return [line for v in ids for line in (f"interface vlan{v}", "exit")]


def _delete(ids: list[int]) -> list[str]:
    return [f"no interface vlan{v}" for v in ids]


SYNTAX = TrunkSyntax(
    interface=interface_command, create=_create, delete=_delete, native_is_access=True,
    allowed_additive=True, stp_off=STP_OFF, stp_on="no spanning-tree disable",
    global_stp_off="spanning-tree disable", global_stp_on="no spanning-tree disable",
    aging="mac address-table aging-time", lag_hash=lambda key: HASH_IP_L4,
    flow=lambda on: [f"flowcontrol receive {'on' if on else 'off'}", f"flowcontrol transmit {'on' if on else 'off'}"],
    # The S4112F-ON's printed default (receive on [GC]) and transmit off (assumed).
    flow_reset=("flowcontrol receive on", "flowcontrol transmit off"),
    member=lambda lag: f"channel-group {lag} mode on", defaults=OS10_DEFAULTS, trunk_default_all=False)

# Replies that mean "command rejected" [UG], [ANS-OS10], [DELLOS10NAPALM].
ERRORS = (r"% ?Error", r"Syntax error:", r"(?i)invalid input", r"(?i)(incomplete|ambiguous) command",
          r"% ?Bad secret")


class DellOS10(TrunkFamily):
    name = "dell-os10"
    title = "Dell OS10"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=False,     # access/trunk ports only: one untagged VLAN
        eee=False,
        lag_hash_modes={"src-dst-ip-port": "ip-l4"},
        lag_hash_refused={"src-dst-mac": "vlanroute renders only the IP + L4 port hash on OS10",
                          "enhanced": "OS10 has no such hash mode"},
        push=True, preview=True, audit=True)
    unconfirmed = (
        "flowcontrol transmit on|off (default and printed form unknown)",
        "spanning-tree disable under interface port-channelN (seen under Ethernet ports only)",
    )
    defaults = OS10_DEFAULTS
    # netmiko's dell_os10 class sends `terminal length 0` at login [NETMIKO]; `write memory`
    # has the effect of `copy running-configuration startup-configuration` [UG].
    cli = CliDialog(
        netmiko_device_type="dell_os10",
        save_command="write memory",
        save_confirm=None,
        save_answer=None,
        error_patterns=ERRORS,
        pager_patterns=(r"--more--", r"--More--"),
        save_done=r"",
        save_not_done=r"% ?Error",
    )
    transaction = Transaction(
        begin=("lock", "start transaction", "configure terminal"),
        diff="do show diff candidate-configuration running-configuration",
        commit=("do commit", "end", "unlock"),
        abort=("end", "discard", "unlock"),
        enter="configure terminal",
        # Deleting VLANs whose port membership changed in the same candidate is refused with
        # "% Error:  Range configuration conflict - the last command was not applied. Please
        # commit (or discard) the rest of the configuration changes and retry." [UG]; the
        # guide's way out, taken by rollback: commit the rest, then delete the VLANs.
        apart=r"no interface vlan ?\d+",
    )
    flow_per_port = True
    address_table_command = "show mac address-table"
    # The detail, not the summary `show lldp neighbors`: the summary cuts a neighbour's name
    # to 17 characters and `...` [MFD], so two switches alike in their first 17 could not be
    # told apart; the detail prints every name in full [ARC].
    lldp_command = "show lldp neighbors detail"
    dialect = OS10
    syntax = SYNTAX
    readers = ShowReaders(show.facts, show.parse_address_table, show.parse_lldp_neighbors_detail)
    vlan_line = r"interface vlan ?\d+"
    config_enter = "configure terminal"

    # `show spanning-tree active` lists the ports spanning tree runs on [UG10.5]: a port
    # with `spanning-tree disable` is not in it, and its link decides (device/stpstate.py).
    stp_off_unlisted = True

    def stp_state_commands(self, vlans: list[int]) -> list[str]:
        return [show.STP_COMMAND]

    def parse_stp_state(self, replies: list[str], vlans: list[int]) -> StpTable:
        return show.parse_spanning_tree_active(replies[0], vlans)


    def advice(self, vlans_by_switch: Mapping[str, int]) -> list[str]:
        """OS10's default spanning-tree mode is RPVST+ on every platform, and Dell advises RSTP
        instead when a fabric needs more than 64 VLANs, "to avoid performance problems"
        [MXGUIDE]; RPVST+ runs one instance per VLAN [UG]. vlanroute warns and leaves the mode
        alone: it is a switch-wide setting that also rules the ports it does not manage, and
        the same guide has the mode match the switches the site already runs [MXGUIDE]."""
        many = sorted((n for n, count in vlans_by_switch.items() if count > RPVST_ADVISED_MAX_VLANS),
                      key=lambda n: (-vlans_by_switch[n], n))
        if not many:
            return []
        names = ", ".join(many[:5]) + (f" and {len(many) - 5} more" if len(many) > 5 else "")
        return [f"Dell OS10: {names} will hold up to {vlans_by_switch[many[0]]} VLANs; with more than "
                f"{RPVST_ADVISED_MAX_VLANS} VLANs in a fabric Dell advises RSTP instead of OS10's default "
                f"spanning-tree mode, RPVST+ (one instance per VLAN), to avoid performance problems. "
                f"vlanroute does not change the mode (switch-wide, it also rules ports the plan does not "
                f"manage): check `spanning-tree mode` in each switch's running config and, where it is "
                f"RPVST+ (no line, or `spanning-tree mode rapid-pvst`), set `spanning-tree mode rstp` "
                f"as your site's other switches allow (docs/platforms/dell-os10.md)"]


DELL_OS10 = DellOS10()
