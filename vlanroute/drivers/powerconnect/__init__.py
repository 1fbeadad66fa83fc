"""Dell PowerConnect: the 62xx CLI (6224/6248, FW 3.x; family `powerconnect-62xx`) and the
OS6 CLI of the PowerConnect 8100 / N-series (family `dell-os6`).

Both share the general-mode port commands, the SSH dialog (netmiko's DellDNOS6 class) and
the learned-MAC table layout; they differ in VLAN creation, port names, the aging command,
EEE, firmware defaults and how a LAG is printed (62xx `ch1`, OS6 `Po1`). The 62xx has the
whole push lifecycle; OS6 the read side of it (`push --dry-run`: parse, compare, pre-flight)
but no rollback yet. Bracketed keys are the sources on docs/platforms/<family>.md.
"""

from __future__ import annotations

from vlanroute.drivers.family import (CanonicalLine, Capabilities, CliDialog, Family, LldpNeighbor, Probe,
                                      PushLine, ShowCommand, StpTable, SwitchFacts)
from vlanroute.drivers.powerconnect import address_table, delta, facts, lines, lldp, parser, stp, target
from vlanroute.drivers.powerconnect.cli import interface_command, lag_label_62xx, lag_label_os6
from vlanroute.drivers.powerconnect.defaults import OS6_DEFAULTS, PC62XX_DEFAULTS
from vlanroute.model.bridge import PortRef, SwitchConfig
from vlanroute.model.platforms import Platform

# Replies that mean "command rejected": every text a real 62xx / OS6 CLI (or code built
# against one) is seen to print for a refused command. Not an error: the `Warning: The use
# of large numbers of VLANs ...` reply to `vlan N` [NM], [FS], and the `If any of the VLANs
# being deleted are for access ports ...` reply to `no vlan N` [FS].
ERRORS = (
    r"% Invalid input detected",              # after a caret line [FS], [NOC]
    r"^\s*\^\s*$",                            # the caret line itself
    r"Invalid input",                         # `ERROR: Invalid input!`, `Invalid input. Please
                                              # specify an integer in the range 1 to 4093.` [FS], [NM]
    r"Value is out of range",                 # [NM10], [FS]
    r"is out of range",                       # `VLAN ID is out of range` [FS10]
    r"^\s*Could not ",                        # `Could not configure pvid.` [NM], [FS], [FS10]
    r"do(es)? not exist",                     # `These VLANs do not exist:  N.`,
                                              # `ERROR: This VLAN does not exist.` [NM], [FS]
    r"not in (General|Trunk|Access) Mode",    # `Interface not in General Mode.` [FS]
    r"Port is not general port",              # [FS]
    r"VLAN ID not found",                     # [FS]
    r"Failure Information",                   # `VLANs failed to be configured : 1` [NM]
    r"failed to be configured",
    r"An invalid interface has been used",    # [FS10], [NM10]
    r"Incomplete command",                    # `Command not found / Incomplete command.` [FS]
    r"Command not found",
    r"VLAN range - separate non-consecutive",  # [FS]
    r"Interface is part of a port-channel",   # [OS6T]
    r"must be \d+ characters or less",        # [FS]
    r"An invalid .* was entered",
    r"Error:",
    r"ERROR:",
)

# dell_powerconnect tries SSH "none" auth and fails on 62xx ("Bad authentication type",
# netmiko issue #918); dell_os6 shares the CLI base and uses password auth, and sends
# `terminal length 0` at login: OS6 takes it [OS6T], [NM10]; the 62xx emulator refuses it
# [FS] and netman never sends it to a 62xx [NM], so there the session reads through the
# `--More-- or (q)uit` pager [8024F], pressing space as [NOC] and [OXI] do. The save
# command asks `(y/n)` and takes one key without Enter, with no echo of the key [FS];
# `terminal datadump` is a 55xx command [R2N] and is not sent.
DELL_DIALOG = CliDialog(
    netmiko_device_type="dell_os6",
    save_command="copy running-config startup-config",
    save_confirm=r"\(y/n\)",
    save_answer="y",
    error_patterns=ERRORS,
    pager_patterns=(r"--More-- or \(q\)uit", r"--More--"),
    pager_key=" ",
)


class _DellLldp:
    """`show lldp remote-device all` / `detail PORT` (vlanroute.drivers.powerconnect.lldp):
    confirmed on OS6, assumed on the 62xx (docs/platforms/<family>.md)."""

    lldp_command: str | None = "show lldp remote-device all"

    def lldp_detail_command(self, port: str) -> str | None:
        return f"show lldp remote-device detail {port}"

    def parse_lldp(self, text: str) -> list[LldpNeighbor]:
        return lldp.parse_remote_devices(text)

    def parse_lldp_detail(self, text: str) -> str | None:
        return lldp.parse_detail_name(text)


class _GeneralMode(_DellLldp, Family):
    """What the 62xx and OS6 share beyond LLDP: the SSH dialog, the general-mode delta
    (drivers/powerconnect/delta.py, given each family's syntax) and the learned-MAC table,
    whose LAG ports differ only in their prefix (62xx `ch1`, OS6 `Po1`)."""

    cli = DELL_DIALOG
    _syntax: delta.Syntax
    _lag_prefix: str

    def config_commands(self, text: str) -> list[str]:
        return [line.strip() for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("!")]

    def canonical_lines(self, cfg: SwitchConfig) -> list[CanonicalLine]:
        return delta.canonical_lines(cfg, self._syntax)

    def port_fixups(self, cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef]) -> list[str]:
        return delta.port_fixups(cur, tgt, ports, self._syntax)

    def parse_address_table(self, text: str) -> dict[tuple[int, str], PortRef]:
        return address_table.parse_address_table(text, self._lag_prefix)

    # `show spanning-tree`: one table for every VLAN (drivers/powerconnect/stp.py); a port
    # with spanning tree disabled may not be listed (no source shows it).
    stp_off_unlisted = True

    def stp_state_commands(self, vlans: list[int]) -> list[str]:
        return [stp.COMMAND]

    def parse_stp_state(self, replies: list[str], vlans: list[int]) -> StpTable:
        return stp.parse_spanning_tree(replies[0], vlans, self._lag_prefix)


class PowerConnect62xx(_GeneralMode):
    name = "powerconnect-62xx"
    title = "PowerConnect 62xx"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=True,        # switchport mode general
        eee=False,                               # the 62xx PHYs predate 802.3az
        lag_hash_modes={"src-dst-ip-port": "6", "src-dst-mac": "5"},
        lag_hash_refused={"enhanced": "enhanced hashing (hashing-mode 7) came with firmware 4.0 "
                                      "(Dell PowerConnect 7000 CLI reference, p.626) and PowerConnect "
                                      "62xx firmware ends at 3.3.x"},
        push=True, preview=True, audit=True)
    unconfirmed = (
        "hashing-mode 6 (LAG hash on IP and L4 ports; confirmed for OS6 and FW 4.x only)",
        "channel-group N mode on (only `mode auto` seen on a 62xx)",
        "spanning-tree disable on a port-channel",
        "bridge aging-time 1000000",
        "flowcontrol / no flowcontrol (global)",
    )
    probes = (
        Probe("hashing-mode N under a port-channel", r"hashing-mode (?P<value>\d)", "hashing-mode"),
        Probe("channel-group N mode on", r"channel-group \d+ mode (?P<value>on)", ""),
        Probe("spanning-tree disable on a port-channel", r"spanning-tree (?P<value>disable)",
              "spanning-tree", mode=r"interface port-channel \d+"),
        Probe("bridge aging-time", r"bridge aging-time (?P<value>\d+)", "bridge aging-time"),
        Probe("flowcontrol (global)", r"(no )?flowcontrol", "flowcontrol", mode="configure"),
    )
    defaults = PC62XX_DEFAULTS
    address_table_command = "show bridge address-table"
    _lag_prefix = "ch"
    _syntax = delta.syntax_62xx(PC62XX_DEFAULTS)

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse(text, switch=switch, platform=platform, source=source)

    def parse_running(self, text: str, *, switch: str, platform: Platform,
                      source: str = "") -> SwitchConfig:
        return parser.parse(text, switch=switch, platform=platform, source=source, strict=False)

    def lag_label(self, lag_id: int) -> str:
        return lag_label_62xx(lag_id)

    def delta_commands(self, cur: SwitchConfig, tgt: SwitchConfig) -> list[str]:
        return delta.delta_commands(cur, tgt, self._syntax)

    def classify_push_lines(self, text_lines: list[str]) -> list[PushLine]:
        return lines.classify_push_lines(text_lines)

    def interface_command(self, port: PortRef) -> str:
        return interface_command(port)

    def facts(self, running_config: str, show: ShowCommand) -> SwitchFacts:
        return facts.facts_62xx(running_config, show)



class DellOS6(_GeneralMode):
    name = "dell-os6"
    title = "Dell OS6"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=True,        # switchport mode general
        eee=True,                                # green-mode eee
        lag_hash_modes={"src-dst-ip-port": "6", "src-dst-mac": "5", "enhanced": "7"},
        push=False, preview=True, audit=True)
    unconfirmed = (
        "switchport general allowed vlan add LIST untagged (show-run omits the keyword)",
        "no switchport general acceptable-frame-type tagged-only (only the positive form seen)",
        "spanning-tree disable on a port-channel",
        "mac address-table aging-time 1000000",
        "flowcontrol / no flowcontrol (global)",
        "green-mode eee / no green-mode eee",
    )
    probes = (
        Probe("switchport general allowed vlan add LIST untagged",
              r"switchport general allowed vlan add \S+ (?P<value>untagged)", ""),
        Probe("no switchport general acceptable-frame-type tagged-only",
              r"no switchport general acceptable-frame-type (?P<value>tagged-only)", ""),
        Probe("spanning-tree disable on a port-channel", r"spanning-tree (?P<value>disable)",
              "spanning-tree", mode=r"interface port-channel \d+"),
        Probe("mac address-table aging-time", r"mac address-table aging-time (?P<value>\d+)",
              "mac address-table aging-time"),
        Probe("flowcontrol (global)", r"(no )?flowcontrol", "flowcontrol", mode="configure"),
        Probe("green-mode eee", r"(no )?green-mode (?P<value>eee)", "green-mode"),
    )
    defaults = OS6_DEFAULTS
    address_table_command = "show mac address-table"
    _lag_prefix = "Po"
    _syntax = delta.syntax_os6(OS6_DEFAULTS)

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse_os6(text, switch=switch, platform=platform, source=source)

    def parse_running(self, text: str, *, switch: str, platform: Platform,
                      source: str = "") -> SwitchConfig:
        return parser.parse_os6(text, switch=switch, platform=platform, source=source, strict=False)

    def lag_label(self, lag_id: int) -> str:
        return lag_label_os6(lag_id)

    def target_config(self, cfg: SwitchConfig) -> str | None:
        return target.target_config(cfg, self._syntax)

    def classify_push_lines(self, text_lines: list[str]) -> list[PushLine]:
        return lines.classify_push_lines(text_lines, lines.targets_os6, r"vlan \d+")

    def interface_command(self, port: PortRef) -> str:
        return self._syntax.interface(port)

    def facts(self, running_config: str, show: ShowCommand) -> SwitchFacts:
        return facts.facts_os6(running_config, show)


POWERCONNECT_62XX = PowerConnect62xx()
DELL_OS6 = DellOS6()
