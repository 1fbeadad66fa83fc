"""Parser for APRESIA AEOS configs (family `apresia-aeos`).

The syntax is the one AEOS-style configurations show (docs/platforms/apresia-aeos.md):
`interface port 1/N` with indented sub-lines, trunk ports with `switchport trunk add LIST`
(tagged members) and `switchport trunk native N` (the PVID, untagged), `pause enable` for
802.3x flow control, `!` / `end` framing. Assumed, and read the same way: `switchport trunk
add LIST untagged` (a port untagged in several VLANs, the open question of this family),
`switchport trunk remove LIST`, `no pause enable`, and the VLAN, LAG, spanning-tree and
aging commands of templates/switch/apresia-aeos.j2.

Trunk semantics assumed: `switchport mode trunk` leaves the port an untagged member of
VLAN 1 with PVID 1 (its native VLAN); `native N` makes N the PVID and an untagged member.
Whether AEOS rejects trunk commands on a port not in trunk mode is unknown, so that is not
enforced here.
"""

from __future__ import annotations

import re

from vlanroute.drivers.dialect_parser import Dialect, Membership, parse_with
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import Platform


def _port(text: str) -> str | None:
    return text if re.fullmatch(r"\d+/\d+", text) else None


def lag_label(lag_id: int) -> str:
    """How AEOS names a LAG in its output is unknown; the config's own spelling is used."""
    return f"port-channel {lag_id}"


AEOS_TRUNK = Membership(
    add=r"switchport trunk add (\S+)( tagged| untagged)?", add_default="tagged",
    remove=r"switchport trunk remove (\S+)", pvid=r"switchport trunk native (\d+)",
    pvid_untagged=True, extra=False)

AEOS = Dialect(
    family="apresia-aeos", title="APRESIA AEOS", mode_word="trunk",
    vlan_database=False, aging="mac-address-table aging-time",
    phys_if=(r"interface (?:range )?port (\S+)",),
    port_name=_port, range_re=r"(\d+/)(\d+)", need_mode=False, lag_label=lag_label,
    membership=AEOS_TRUNK, port_flow=("pause enable", "no pause enable"),
    global_lag_hash=r"port-channel load-balance (\S+)", indented=True)


def parse(text: str, *, switch: str, platform: Platform, source: str = "",
          strict: bool = True) -> SwitchConfig:
    """Parse APRESIA AEOS config text into the vendor-neutral model."""
    return parse_with(AEOS, text, switch=switch, platform=platform, source=source, strict=strict)
