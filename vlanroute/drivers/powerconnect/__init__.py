"""Dell PowerConnect: the 62xx CLI (6224/6248, FW 3.x; family `powerconnect-62xx`) and the
OS6 CLI of the PowerConnect 8100 / N-series (family `dell-os6`).

Both share the general-mode port commands, the SSH dialog (netmiko's DellDNOS6 class) and
the learned-MAC table layout; they differ in VLAN creation, port names, the aging command,
EEE and how a LAG is printed (62xx `ch1`, OS6 `Po1`). Only the 62xx has the push
lifecycle: its delta and rollback commands are written for `vlan database`.
"""

from __future__ import annotations

from vlanroute.drivers.family import (CanonicalLine, Capabilities, CliDialog, Family, PushLine)
from vlanroute.drivers.powerconnect import address_table, delta, lines, parser
from vlanroute.drivers.powerconnect.cli import interface_command, lag_label_62xx, lag_label_os6
from vlanroute.model.bridge import PortRef, SwitchConfig
from vlanroute.model.platforms import Platform

# Replies that mean "command rejected" (62xx and OS6 print the same texts).
_ERRORS = (
    r"% Invalid input detected",
    r"Invalid input",
    r"VLAN ID not found",
    r"Port is not general port",
    r"^\s*\^\s*$",
    r"Incomplete command",
    r"An invalid .* was entered",
    r"Error:",
    r"ERROR:",
)

# dell_powerconnect tries SSH "none" auth and fails on 62xx ("Bad authentication type",
# netmiko issue #918); dell_os6 shares the CLI base and uses password auth. The save
# command asks `(y/n)` and takes one key without Enter; netmiko's save_config would wait
# for a prompt that never comes.
DELL_DIALOG = CliDialog(
    netmiko_device_type="dell_os6",
    save_command="copy running-config startup-config",
    save_confirm=r"\(y/n\)",
    save_answer="y",
    error_patterns=_ERRORS,
    # dell_os6 sends only `terminal length 0`; `terminal datadump` also stops the pager.
    session_setup=("terminal datadump",),
)


class PowerConnect62xx(Family):
    name = "powerconnect-62xx"
    title = "PowerConnect 62xx"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=True,        # switchport mode general
        eee=False,                               # the 62xx PHYs predate 802.3az
        lag_hash_modes={"src-dst-ip-port": "6", "src-dst-mac": "5", "enhanced": "7"},
        push=True, audit=True)
    unconfirmed = (
        "hashing-mode 6 (LAG hash on IP and L4 ports; confirmed for OS6 and FW 4.x only)",
        "channel-group N mode on (only `mode auto` seen on a 62xx)",
        "spanning-tree disable on a port-channel",
        "bridge aging-time 1000000",
        "flowcontrol / no flowcontrol (global)",
    )
    cli = DELL_DIALOG
    address_table_command = "show bridge address-table"

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse(text, switch=switch, platform=platform, source=source)

    def lag_label(self, lag_id: int) -> str:
        return lag_label_62xx(lag_id)

    def config_commands(self, text: str) -> list[str]:
        return [line.strip() for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("!")]

    def canonical_lines(self, cfg: SwitchConfig) -> list[CanonicalLine]:
        return delta.canonical_lines(cfg)

    def port_fixups(self, cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef]) -> list[str]:
        return delta.port_fixups(cur, tgt, ports)

    def delta_commands(self, cur: SwitchConfig, tgt: SwitchConfig) -> list[str]:
        return delta.delta_commands(cur, tgt)

    def classify_push_lines(self, text_lines: list[str]) -> list[PushLine]:
        return lines.classify_push_lines(text_lines)

    def interface_command(self, port: PortRef) -> str:
        return interface_command(port)

    def parse_address_table(self, text: str) -> dict[tuple[int, str], PortRef]:
        return address_table.parse_address_table(text, "ch")


class DellOS6(Family):
    name = "dell-os6"
    title = "Dell OS6"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=True,        # switchport mode general
        eee=True,                                # green-mode eee
        lag_hash_modes={"src-dst-ip-port": "6", "src-dst-mac": "5", "enhanced": "7"},
        push=False, audit=True)
    unconfirmed = (
        "switchport general allowed vlan add LIST untagged (show-run omits the keyword)",
        "no switchport general acceptable-frame-type tagged-only (only the positive form seen)",
        "mac address-table aging-time 1000000",
        "flowcontrol / no flowcontrol (global)",
        "green-mode eee / no green-mode eee",
    )
    cli = DELL_DIALOG
    address_table_command = "show mac address-table"

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse_os6(text, switch=switch, platform=platform, source=source)

    def lag_label(self, lag_id: int) -> str:
        return lag_label_os6(lag_id)

    def parse_address_table(self, text: str) -> dict[tuple[int, str], PortRef]:
        return address_table.parse_address_table(text, "Po")


POWERCONNECT_62XX = PowerConnect62xx()
DELL_OS6 = DellOS6()
