"""Parser for APRESIA AEOS configs (family `apresia-aeos`).

The AEOS syntax in templates/switch/apresia-aeos.j2 is largely UNCONFIRMED (see the
template header and docs/platforms/apresia-aeos.md); this parser accepts exactly that
subset, plus the Cisco-like framing of `show running-config` (`!`, indented sub-lines,
`end`). Hybrid ports play the role of the Dell general mode. Whether AEOS rejects hybrid
commands on a port not in hybrid mode is unknown, so that is not enforced here.
"""

from __future__ import annotations

import re

from vlanroute.model.bridge import SwitchConfig
from vlanroute.drivers.generalmode import Dialect, parse_with
from vlanroute.model.platforms import Platform


def _port(text: str) -> str | None:
    return text if re.fullmatch(r"\d+/\d+", text) else None


def lag_label(lag_id: int) -> str:
    """How AEOS names a LAG in its output is unknown; the config's own spelling is used."""
    return f"port-channel {lag_id}"


AEOS = Dialect(
    family="apresia-aeos", title="APRESIA AEOS", mode_word="hybrid",
    vlan_database=False, aging="mac-address-table aging-time",
    phys_if=(r"interface (?:range )?port (\S+)",),
    port_name=_port, range_re=r"(\d+/)(\d+)", need_mode=False, lag_label=lag_label,
    per_port_flowcontrol=True, global_lag_hash=r"port-channel load-balance (\S+)")


def parse(text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
    """Parse APRESIA AEOS config text into the vendor-neutral model."""
    return parse_with(AEOS, text, switch=switch, platform=platform, source=source)
