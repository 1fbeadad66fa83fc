"""The Family part the access/trunk CLIs (Arista EOS, Dell OS10) share: each states its
dialect (how its configs read, trunkmode), its syntax (what push and rollback type,
trunkdelta), its show-command readers and the few lines push classifies by name; reading,
comparing, delta and push classification are the same code for both."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vlanroute.drivers.family import (CanonicalLine, Family, LldpNeighbor, PushLine, ShowCommand,
                                      SwitchFacts)
from vlanroute.drivers.trunk.delta import TrunkSyntax, canonical_lines, delta_commands, port_fixups
from vlanroute.drivers.trunk.lines import classify_push_lines
from vlanroute.drivers.trunk.mode import TrunkDialect, parse_trunk
from vlanroute.model.bridge import LagPort, PortRef, SwitchConfig
from vlanroute.model.platforms import Platform


@dataclass(frozen=True)
class ShowReaders:
    """The family's readers of its show commands' output (its `show` module)."""
    facts: Callable[[str, ShowCommand], SwitchFacts]
    address_table: Callable[[str], dict[tuple[int, str], PortRef]]
    lldp_neighbors: Callable[[str], list[LldpNeighbor]]


class TrunkFamily(Family):
    dialect: TrunkDialect
    syntax: TrunkSyntax
    readers: ShowReaders
    vlan_line: str                 # regex of the line that creates a VLAN, for push's classification
    config_enter: str = "configure"

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parse_trunk(self.dialect, text, switch=switch, platform=platform, source=source)

    def parse_running(self, text: str, *, switch: str, platform: Platform,
                      source: str = "") -> SwitchConfig:
        return parse_trunk(self.dialect, text, switch=switch, platform=platform, source=source, strict=False)

    def lag_label(self, lag_id: int) -> str:
        return self.dialect.lag_label(lag_id)

    def config_commands(self, text: str) -> list[str]:
        return [line.strip() for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("!")]

    def canonical_lines(self, cfg: SwitchConfig) -> list[CanonicalLine]:
        return canonical_lines(cfg, self.syntax)

    def port_fixups(self, cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef]) -> list[str]:
        return port_fixups(cur, tgt, ports, self.syntax)

    def delta_commands(self, cur: SwitchConfig, tgt: SwitchConfig) -> list[str]:
        return delta_commands(cur, tgt, self.syntax, enter=self.config_enter)

    def classify_push_lines(self, lines: list[str]) -> list[PushLine]:
        return classify_push_lines(lines, self._targets, self.vlan_line, (self.syntax.stp_off,),
                                   self.syntax.global_stp_off)

    def interface_command(self, port: PortRef) -> str:
        return self.syntax.interface(port)

    def facts(self, running_config: str, show_command: ShowCommand) -> SwitchFacts:
        return self.readers.facts(running_config, show_command)

    def parse_address_table(self, text: str) -> dict[tuple[int, str], PortRef]:
        return self.readers.address_table(text)

    def parse_lldp(self, text: str) -> list[LldpNeighbor]:
        return self.readers.lldp_neighbors(text)

    def lldp_port_name(self, text: str) -> str:
        return self.dialect.port_name(text) or text

    def _targets(self, line: str) -> list[PortRef] | None:
        """The ports an `interface ...` line of a push opens, in the plan's names."""
        if m := re.fullmatch(self.dialect.lag_if, line, re.IGNORECASE):
            return [LagPort(int(m.group(1)))]
        if m := re.fullmatch(self.dialect.phys_if, line, re.IGNORECASE):
            name = self.dialect.port_name(m.group(1))
            return [name] if name else None
        return None
