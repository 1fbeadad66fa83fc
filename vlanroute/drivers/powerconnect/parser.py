"""Parsers for Dell PowerConnect configs: 62xx (family `powerconnect-62xx`) and the
8100/N-series OS6 CLI (family `dell-os6`).

Both read what `templates/switch/<family>.j2` renders and what the switch prints in
`show running-config` (docs/outdir-layout.md lists the 62xx subset). The two CLIs share
the general-mode port commands; they differ in VLAN creation (62xx: `vlan database`;
OS6: `vlan N` at global level), port names (`ethernet 1/g5` vs `Te1/0/5`) and the aging
command. A `switchport general ...` line on a port not in general mode is rejected, as
the switch does ("Port is not general port.").
"""

from __future__ import annotations

import re

from vlanroute.model.bridge import SwitchConfig
from vlanroute.drivers.dialect_parser import Dialect, parse_with
from vlanroute.drivers.powerconnect.cli import (BLOCK_OPEN, HARMLESS_IF, IF_BLOCK_OPEN, lag_label_62xx,
                                                lag_label_os6)
from vlanroute.drivers.powerconnect.defaults import OS6_DEFAULTS, PC62XX_DEFAULTS
from vlanroute.model.platforms import Platform


def _pc62xx_port(text: str) -> str | None:
    return text if re.fullmatch(r"\d+/x?g\d+", text) else None


_OS6_LONG = {"tengigabitethernet": "Te", "gigabitethernet": "Gi", "fortygigabitethernet": "Fo",
             "twentyfivegigabitethernet": "Tw"}


def _os6_port(text: str) -> str | None:
    m = re.fullmatch(r"(Te|Gi|Fo|Tw|te|gi|fo|tw)(\d+/\d+/\d+)", text)
    return f"{m.group(1).capitalize()}{m.group(2)}" if m else None


PC62XX = Dialect(
    family="powerconnect-62xx", title="PowerConnect 62xx", mode_word="general",
    vlan_database=True, aging="bridge aging-time",
    phys_if=(r"interface (?:range )?ethernet (\S+)",),
    port_name=_pc62xx_port, range_re=r"(\d+/x?g)(\d+)", lag_label=lag_label_62xx,
    lag_if=(r"interface (?:range )?(?:port-channel|Po) ?(\S+)", r"interface ch(\d+)"),
    defaults=PC62XX_DEFAULTS, block_open=BLOCK_OPEN, if_block_open=IF_BLOCK_OPEN,
    harmless_if=HARMLESS_IF)

OS6 = Dialect(
    family="dell-os6", title="Dell OS6", mode_word="general",
    vlan_database=False, aging="mac address-table aging-time",
    phys_if=(r"interface (?:range )?((?:Te|Gi|Fo|Tw)\S+)",),
    port_name=_os6_port, range_re=r"((?:Te|Gi|Fo|Tw)\d+/\d+/)(\d+)", eee=True,
    lag_label=lag_label_os6, defaults=OS6_DEFAULTS, block_open=BLOCK_OPEN,
    if_block_open=IF_BLOCK_OPEN, harmless_if=HARMLESS_IF,
    # A trunk without an allowed list carries every VLAN (unconfirmed; the N-series
    # captures show trunks with and without a list).
    trunk_all_vlans=True)


def parse(text: str, *, switch: str, platform: Platform, source: str = "",
          strict: bool = True) -> SwitchConfig:
    """Parse PowerConnect 62xx config text into the vendor-neutral model."""
    return parse_with(PC62XX, text, switch=switch, platform=platform, source=source, strict=strict)


def parse_os6(text: str, *, switch: str, platform: Platform, source: str = "",
              strict: bool = True) -> SwitchConfig:
    """Parse Dell OS6 (PowerConnect 8100, N-series) config text into the model."""
    # `interface tengigabitethernet 1/0/5` is the long form of `interface Te1/0/5`.
    def short(m: re.Match[str]) -> str:
        prefix = _OS6_LONG[m.group(2).lower()]
        ports = ",".join(prefix + p for p in m.group(3).split(","))
        return f"interface {m.group(1) or ''}{ports}"
    text = re.sub(r"^\s*interface (range )?(tengigabitethernet|gigabitethernet|fortygigabitethernet|"
                  r"twentyfivegigabitethernet) (\S+)\s*$", short, text, flags=re.MULTILINE | re.IGNORECASE)
    return parse_with(OS6, text, switch=switch, platform=platform, source=source, strict=strict)
