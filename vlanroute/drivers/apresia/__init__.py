"""APRESIA AEOS (Apresia13000/15000, AEOS 8; family `apresia-aeos`).

Render and verify only: no public AEOS command reference was readable, so much of the
syntax is an assumption (templates/switch/apresia-aeos.j2, docs/platforms/apresia-aeos.md)
and push and audit are not offered. The ports use the trunk syntax AEOS-style configs show.
Whether a host port can be an untagged member of several VLANs, which VLAN routing needs,
is the open question: the capability is False and `vlanroute plan` refuses the family
unless the inventory confirms it for its platform (`confirm: [host-untagged-in-many-vlans]`).
"""

from __future__ import annotations

from vlanroute.drivers.apresia import parser
from vlanroute.drivers.family import HOST_UNTAGGED, Capabilities, CliDialog, Family
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import Platform


class ApresiaAeos(Family):
    name = "apresia-aeos"
    title = "APRESIA AEOS"
    capabilities = Capabilities(
        # No source shows an AEOS port untagged in more than its native VLAN.
        host_untagged_in_many_vlans=False,
        eee=False,
        lag_hash_modes={"src-dst-ip-port": "src-dst-ip-port"},
        push=False, audit=False)
    unconfirmed_untagged_hosts = (
        "a host port untagged in several VLANs (`switchport trunk add LIST untagged`)",)
    unconfirmed = (
        "switchport trunk add LIST (tagged members; an unnamed vendor's AEOS-style config only)",
        "switchport trunk native N (the PVID; the same config only)",
        "pause enable (802.3x flow control; the same config only)",
        "switchport trunk remove LIST",
        "no pause enable",
        "vlan LIST / exit at global level",
        "interface port-channel N with members' channel-group N mode on",
        "port-channel load-balance src-dst-ip-port",
        "spanning-tree disable",
        "mac-address-table aging-time 1000000",
    )
    confirmable = {HOST_UNTAGGED: "no public source shows an AEOS port that is an untagged member "
                                  "of several VLANs (the AEOS configurations found have trunk ports "
                                  "with one native VLAN)"}
    # netmiko's apresia_aeos class (tested on an Apresia15000-64XL-PSR); save `write memory`
    # [AP13]; pager `--- more ---` (netmiko commit bf7c90c4).
    cli = CliDialog(
        netmiko_device_type="apresia_aeos",
        save_command="write memory",
        save_confirm=None,
        save_answer=None,
        error_patterns=(r"% Invalid input", r"Invalid command", r"Error", r"% Incomplete command",
                        r"Unrecognized command"),
        pager_patterns=(r"--- ?more ?---",),
    )

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse(text, switch=switch, platform=platform, source=source)

    def lag_label(self, lag_id: int) -> str:
        return parser.lag_label(lag_id)


APRESIA_AEOS = ApresiaAeos()
