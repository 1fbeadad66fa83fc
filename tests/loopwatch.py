"""A watch on a lab fabric: after every configuration line any emulated switch executes, the
fabric's state is read from the emulated switches themselves (their running configs, parsed
by the family's reader) and checked for loops by the tests' own check
(transition_support.fabric_loops, networkx), independent of vlanroute.transition.

The emulated switches run in one event loop, so no other switch changes while one line is
checked: every state the fabric passes through is seen, whatever order push sends its
lines in and however many switches it works on at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transition_support import fabric_loops
from vlanroute.drivers import FAMILIES
from vlanroute.model.bridge import SwitchConfig
from vlanroute.transition.fabric import Wire

# Lines that change nothing a loop depends on (modes, reads, the save).
QUIET = ("show ", "terminal ", "enable", "exit", "end", "configure", "interface ", "vlan database", "copy ",
         "write", "no page", "do show", "abort", "start transaction", "lock", "unlock", "discard")


@dataclass
class LoopWatch:
    farm: object
    wires: list[Wire]
    cfgs: dict[str, SwitchConfig] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    states: int = 0

    def __post_init__(self) -> None:
        for name, sw in self.farm.switches.items():      # type: ignore[attr-defined]
            self.cfgs[name] = self._read(sw)
            sw.watch = self.seen
        self.check("start")

    def _read(self, sw) -> SwitchConfig:  # type: ignore[no-untyped-def]
        fam = FAMILIES[sw.platform.family]
        return fam.parse_running(sw.running_config(), switch=sw.name, platform=sw.platform, source=sw.name)

    def seen(self, sw, line: str) -> None:  # type: ignore[no-untyped-def]
        if line.startswith(QUIET) or line in ("y", "n"):
            return
        try:
            self.cfgs[sw.name] = self._read(sw)
        except Exception as exc:  # noqa: BLE001 - a watch must never break the emulated switch
            self.violations.append(f"{sw.name} after {line!r}: cannot read the running config: {exc}")
            return
        self.check(f"{sw.name} after {line!r}")

    def check(self, where: str) -> None:
        self.states += 1
        bad = fabric_loops(sorted(self.cfgs), self.wires, self.cfgs)
        if bad:
            self.violations.append(f"{where}: loop in VLAN {bad}")

    def stop(self) -> None:
        for sw in self.farm.switches.values():      # type: ignore[attr-defined]
            sw.watch = None
