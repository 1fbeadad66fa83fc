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

from vlanroute.bundle.document import SwitchDoc
from vlanroute.drivers.family import Family, LineRole, PushLine, UnsupportedLine
from vlanroute.model.bridge import LagPort, PortRef

NEUTRAL = 0


class UnsafeOrder(Exception):
    """The command list would break the loop-safe order or touch an unmanaged port."""


@dataclass(frozen=True)
class PortRoles:
    inter_switch: frozenset[PortRef]   # inter-switch ports, LAG members and LAGs
    host: frozenset[PortRef]

    @classmethod
    def from_plan(cls, switch: SwitchDoc) -> PortRoles:
        inter: set[PortRef] = {LagPort(lag_id) for lag_id in switch.lag_ids()}
        host: set[PortRef] = set()
        for name, port in switch.ports.items():
            (host if port.role == "host" else inter).add(name)
        return cls(frozenset(inter), frozenset(host))

    @property
    def managed(self) -> frozenset[PortRef]:
        return self.inter_switch | self.host


def _read(family: Family, lines: list[str]) -> list[PushLine]:
    try:
        meanings = family.classify_push_lines(lines)
    except UnsupportedLine as exc:
        raise UnsafeOrder(str(exc)) from None
    assert len(meanings) == len(lines)
    return meanings


def classify(lines: list[str], roles: PortRoles, family: Family) -> list[int]:
    """The phase (1-4) of every line, NEUTRAL (0) for mode changes and global settings
    that cannot create a loop (aging time, flow control)."""
    phases: list[int] = []
    kind = ""                                  # "host" | "inter" inside an interface block
    for raw, meaning in zip(lines, _read(family, lines)):
        line = " ".join(raw.split())
        role = meaning.role
        phase = NEUTRAL
        if role in (LineRole.LEAVE, LineRole.END):
            kind = ""
        elif role is LineRole.ENTER_PORTS:
            targets = meaning.targets
            stray = [family.port_label(t) for t in targets if t not in roles.managed]
            if stray:
                raise UnsafeOrder(f"{line!r} touches {', '.join(stray)}, which the plan does "
                                  "not manage (reserved or unused ports are never touched)")
            inter = [t in roles.inter_switch for t in targets]
            if any(inter) and not all(inter):
                raise UnsafeOrder(f"{line!r} mixes host and inter-switch ports")
            kind = "inter" if all(inter) else "host"
        elif role is LineRole.VLAN_TABLE:
            phase = 1
        elif role in (LineRole.PORT_SETTING, LineRole.PORT_VLAN_REMOVAL, LineRole.PORT_STP_OFF):
            if kind == "host":
                phase = 2
            elif role is LineRole.PORT_STP_OFF:
                phase = 4
            elif role is LineRole.PORT_VLAN_REMOVAL:
                phase = 3
            else:
                phase = 1
        elif role is LineRole.GLOBAL_STP_OFF:
            phase = 4
        phases.append(phase)
    return phases


def check_order(lines: list[str], roles: PortRoles, family: Family) -> None:
    """Raise UnsafeOrder naming the first line that comes before a phase it must follow."""
    highest, where = NEUTRAL, ""
    for line, phase in zip(lines, classify(lines, roles, family)):
        if phase == NEUTRAL:
            continue
        if phase < highest:
            raise UnsafeOrder(f"{line.strip()!r} (phase {phase}) comes after {where!r} "
                              f"(phase {highest})")
        highest, where = phase, line.strip()


def insert_fixups(lines: list[str], roles: PortRoles, family: Family, host_fix: list[str],
                  inter_fix: list[str]) -> list[str]:
    """Put extra host-port commands at the end of phase 2 and extra inter-switch removals
    at the end of phase 3, i.e. before the first line of the following phase."""
    phases = classify(lines, roles, family)
    roles_of = [m.role for m in _read(family, lines)]

    def first_at_least(phase: int) -> int:
        for i, p in enumerate(phases):
            if p >= phase:
                # Insert before the line that opened this line's interface block, if any.
                for k in range(i - 1, -1, -1):
                    if roles_of[k] in (LineRole.LEAVE, LineRole.END):
                        break
                    if roles_of[k] is LineRole.ENTER_PORTS:
                        return k
                return i
        end = len(lines)
        if lines and roles_of[-1] is LineRole.END:
            end -= 1
        return end

    at3, at4 = first_at_least(3), first_at_least(4)
    out = lines[:at3] + host_fix + lines[at3:at4] + inter_fix + lines[at4:]
    check_order(out, roles, family)      # the result is proven, not assumed
    return out
