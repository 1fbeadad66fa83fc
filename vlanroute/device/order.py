"""The loop-safe push order, checked line by line before anything is sent.

While a switch is half-configured its inter-switch ports may still carry VLAN 1 (and any
other old VLAN) on top of the routing VLANs. Spanning tree keeps those loops blocked, so it
may only be switched off once every inter-switch port carries exactly its tree VLANs:

  phase 1  VLANs, and the tagged memberships / LAGs of inter-switch ports
  phase 2  host ports (PVID and untagged memberships need the VLANs of phase 1)
  phase 3  removal of every other VLAN, VLAN 1 included, from inter-switch ports
  phase 4  spanning tree off on inter-switch ports (or globally)

Removing VLAN 1 before the routing VLANs exist would also cut the switches off each other
in the middle of the push. The rendered file is written in this order
(docs/outdir-layout.md); this module proves it instead of trusting it, and refuses lines
that touch ports the plan does not manage (reserved ports are never touched).
"""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Any

from vlanroute.drivers.pc_cli import CliSyntaxError, expand_port_range

NEUTRAL = 0


class UnsafeOrder(Exception):
    """The command list would break the loop-safe order or touch an unmanaged port."""


@dataclass(frozen=True)
class PortRoles:
    inter_switch: frozenset[str]     # inter-switch ports, LAG members and LAGs ("chN")
    host: frozenset[str]

    @classmethod
    def from_plan(cls, switch_doc: dict[str, Any]) -> "PortRoles":
        inter = {f"ch{lag}" for lag in switch_doc.get("lags", {})}
        host: set[str] = set()
        for name, port in switch_doc.get("ports", {}).items():
            (host if port["role"] == "host" else inter).add(name)
        return cls(frozenset(inter), frozenset(host))

    @property
    def managed(self) -> frozenset[str]:
        return self.inter_switch | self.host


def _targets(line: str) -> list[str] | None:
    if m := re.fullmatch(r"interface (?:range )?ethernet (\S+)", line):
        return list(expand_port_range(m.group(1)))
    if m := re.fullmatch(r"interface port-channel (\d+)", line):
        return [f"ch{m.group(1)}"]
    return None


def classify(lines: list[str], roles: PortRoles) -> list[int]:
    """The phase (1-4) of every line, NEUTRAL (0) for mode changes and global settings
    that cannot create a loop (aging time, flow control)."""
    phases: list[int] = []
    context, kind = "global", ""
    for raw in lines:
        line = " ".join(raw.split())
        phase = NEUTRAL
        if line in ("exit", "end"):
            context = "global"
        elif line.startswith("interface "):
            try:
                targets = _targets(line)
            except CliSyntaxError as exc:
                raise UnsafeOrder(str(exc)) from None
            if targets is None:
                raise UnsafeOrder(f"unsupported interface line {line!r}")
            stray = [t for t in targets if t not in roles.managed]
            if stray:
                raise UnsafeOrder(f"{line!r} touches {', '.join(stray)}, which the plan does "
                                  "not manage (reserved or unused ports are never touched)")
            inter = [t in roles.inter_switch for t in targets]
            if any(inter) and not all(inter):
                raise UnsafeOrder(f"{line!r} mixes host and inter-switch ports")
            context, kind = "if", "inter" if all(inter) else "host"
        elif context == "vlandb" or line == "vlan database":
            context = "vlandb"
            phase = 1
        elif context == "if" and kind == "host":
            phase = 2
        elif context == "if":
            if line == "spanning-tree disable":
                phase = 4
            elif line.startswith("switchport general allowed vlan remove "):
                phase = 3
            else:
                phase = 1
        elif line == "no spanning-tree":
            phase = 4
        phases.append(phase)
    return phases


def check_order(lines: list[str], roles: PortRoles) -> None:
    """Raise UnsafeOrder naming the first line that comes before a phase it must follow."""
    highest, where = NEUTRAL, ""
    for line, phase in zip(lines, classify(lines, roles)):
        if phase == NEUTRAL:
            continue
        if phase < highest:
            raise UnsafeOrder(f"{line.strip()!r} (phase {phase}) comes after {where!r} "
                              f"(phase {highest})")
        highest, where = phase, line.strip()


def insert_fixups(lines: list[str], roles: PortRoles, host_fix: list[str],
                  inter_fix: list[str]) -> list[str]:
    """Put extra host-port commands at the end of phase 2 and extra inter-switch removals
    at the end of phase 3, i.e. before the first line of the following phase."""
    phases = classify(lines, roles)

    def first_at_least(phase: int) -> int:
        for i, p in enumerate(phases):
            if p >= phase:
                # Insert before the `interface` line that opened this line's block, if any.
                for k in range(i - 1, -1, -1):
                    text = lines[k].strip()
                    if text in ("exit", "end"):
                        break
                    if text.startswith("interface "):
                        return k
                return i
        end = len(lines)
        if lines and lines[-1].strip() == "end":
            end -= 1
        return end

    at3, at4 = first_at_least(3), first_at_least(4)
    out = lines[:at3] + host_fix + lines[at3:at4] + inter_fix + lines[at4:]
    check_order(out, roles)      # the result is proven, not assumed
    return out
