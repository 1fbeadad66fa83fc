"""APRESIA AEOS (Apresia13000/15000, AEOS 8; family `apresia-aeos`).

Render and verify only: no public AEOS command reference was readable, so most of the
syntax is an assumption (templates/switch/apresia-aeos.j2, docs/platforms.md) and push
and audit are not offered. Hybrid ports play the role of the Dell general mode.
"""

from __future__ import annotations

from vlanroute.drivers.apresia import parser
from vlanroute.drivers.family import Capabilities, CliDialog, Family
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import Platform


class ApresiaAeos(Family):
    name = "apresia-aeos"
    title = "APRESIA AEOS"
    capabilities = Capabilities(
        # Assumed: a hybrid port with one PVID, untagged in many VLANs (unconfirmed).
        host_untagged_in_many_vlans=True,
        eee=False,
        lag_hash_modes={"src-dst-ip-port": "src-dst-ip-port"},
        push=False, audit=False)
    unconfirmed = (
        "vlan LIST / exit at global level",
        "switchport mode hybrid",
        "switchport hybrid allowed vlan add LIST tagged|untagged / remove LIST",
        "switchport hybrid pvid N",
        "a port untagged in several VLANs",
        "interface port-channel N with members' channel-group N mode on",
        "port-channel load-balance src-dst-ip-port",
        "spanning-tree disable",
        "mac-address-table aging-time 1000000",
        "flowcontrol on / off per port",
    )
    # netmiko's apresia_aeos class (tested on an Apresia15000-64XL-PSR); save `write memory`.
    cli = CliDialog(
        netmiko_device_type="apresia_aeos",
        save_command="write memory",
        save_confirm=None,
        save_answer=None,
        error_patterns=(r"% Invalid input", r"Invalid command", r"Error", r"% Incomplete command",
                        r"Unrecognized command"),
    )

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse(text, switch=switch, platform=platform, source=source)

    def lag_label(self, lag_id: int) -> str:
        return parser.lag_label(lag_id)


APRESIA_AEOS = ApresiaAeos()
