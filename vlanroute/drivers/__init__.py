"""Switch families: one package per configuration language, behind one interface
(vlanroute.drivers.family.Family) and one dispatcher table, `FAMILIES`, keyed by
`Platform.family` (the netmiko model: one class per platform family, one table).

- powerconnect/: `powerconnect-62xx` (render, verify, push, audit) and `dell-os6`
  (render, verify, push --dry-run, audit), two family objects sharing the general-mode
  parser and CLI code;
- apresia/: `apresia-aeos` (render, verify; syntax largely unconfirmed, host ports
  untagged in several VLANs only where the inventory confirms it);
- arista/: `arista-eos` (render, verify, push in a configure session, audit; host ports
  attached by trunk);
- dellos10/: `dell-os10` (render, verify, push in a `start transaction`, audit; host
  ports attached by trunk);
- linuxbridge/: `linux-bridge` (render, verify, emulate).

Everything outside this package reaches a family through `family_of(platform)`; adding a
family is one package plus one line here (docs/architecture.md has a worked example,
docs/architecture-families.md the details).
This package depends only on vlanroute.model, names and vlanlist, so every stage may use it.
"""

from __future__ import annotations

from vlanroute.drivers.apresia import APRESIA_AEOS
from vlanroute.drivers.arista import ARISTA_EOS
from vlanroute.drivers.dellos10 import DELL_OS10
from vlanroute.drivers.family import Family
from vlanroute.drivers.linuxbridge import LINUX_BRIDGE
from vlanroute.drivers.powerconnect import DELL_OS6, POWERCONNECT_62XX
from vlanroute.errors import UserError
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import Platform

# The single dispatcher table: family name -> family object.
FAMILIES: dict[str, Family] = {f.name: f for f in (POWERCONNECT_62XX, DELL_OS6, APRESIA_AEOS, ARISTA_EOS,
                                                  DELL_OS10, LINUX_BRIDGE)}


def family_named(name: str, *, file: str | None = None, field: str | None = None) -> Family:
    family = FAMILIES.get(name)
    if family is None:
        raise UserError(f"no switch family {name!r}", file=file, field=field,
                        fix="known families: " + ", ".join(sorted(FAMILIES)))
    return family


def family_of(platform: Platform) -> Family:
    """The family that writes, reads and drives `platform`'s configs."""
    return family_named(platform.family, field=f"platform {platform.name}")


def parse_config(platform: Platform, text: str, *, switch: str, source: str = "") -> SwitchConfig:
    """Parse one switch's config text with its platform's family parser."""
    return family_of(platform).parse(text, switch=switch, platform=platform, source=source)
