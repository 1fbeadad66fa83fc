"""Config parsers: one per platform family, each text -> vendor-neutral SwitchConfig.

`PARSERS` is the single dispatcher table, keyed by `Platform.family`. A parser must accept
every line its family's template can emit and the same switch's `show running-config`
text; anything else is a UserError naming the file and line.
"""

from __future__ import annotations

from collections.abc import Callable

from vlanroute.model.bridge import SwitchConfig
from vlanroute.errors import UserError
from vlanroute.drivers import apresia, linuxbridge, powerconnect
from vlanroute.model.platforms import Platform

Parser = Callable[..., SwitchConfig]

PARSERS: dict[str, Parser] = {
    "powerconnect-62xx": powerconnect.parse,
    "dell-os6": powerconnect.parse_os6,
    "apresia-aeos": apresia.parse,
    "linux-bridge": linuxbridge.parse,
}


def parse_config(family: str, text: str, *, switch: str, platform: Platform,
                 source: str = "") -> SwitchConfig:
    """Parse one switch's config text of platform family `family`."""
    parser = PARSERS.get(family)
    if parser is None:
        known = ", ".join(sorted(PARSERS))
        raise UserError(f"no config parser for platform family {family!r} (switch {switch})",
                        file=source or None, fix=f"families with a parser: {known}")
    return parser(text, switch=switch, platform=platform, source=source)
