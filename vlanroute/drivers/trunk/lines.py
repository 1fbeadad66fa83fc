"""Arista EOS / Dell OS10: what each command line of a pushed file does (loop-safe order).

Both CLIs are modal like the Dell general-mode ones: `vlan N` (EOS) or `interface vlanN`
(OS10) creates a VLAN and enters its sub-mode, `interface ...` enters a port's or LAG's
sub-mode, `exit` leaves it, `end` leaves configuration mode. Which phase a line belongs to
is decided by vlanroute.device.order from the role of the ports it touches.
"""

from __future__ import annotations

from collections.abc import Callable
import re

from vlanroute.drivers.family import LineRole, PushLine, UnsupportedLine
from vlanroute.model.bridge import PortRef

# Per-port lines that cannot open a loop whatever the port: flow control.
_NEUTRAL_IN_PORT = re.compile(r"(no )?flowcontrol( \S+)*")
# Per-port lines that take VLANs off the port: an allowed-list removal (OS10 `no
# switchport trunk allowed vlan LIST`, EOS `... remove LIST`), the native VLAN off (OS10
# `no switchport access vlan` on a trunk).
_REMOVAL = re.compile(r"no switchport trunk allowed vlan \S+|switchport trunk allowed vlan remove \S+|"
                      r"no switchport access vlan")


def classify_push_lines(lines: list[str], targets: Callable[[str], list[PortRef] | None],
                        vlan_open: str, stp_off: tuple[str, ...], global_stp_off: str) -> list[PushLine]:
    out: list[PushLine] = []
    context = "global"                       # global | vlan | if
    vlan_re = re.compile(vlan_open, re.IGNORECASE)
    for raw in lines:
        line = " ".join(raw.split())
        if line in ("exit", "end"):
            context = "global"
            out.append(PushLine(LineRole.END if line == "end" else LineRole.LEAVE))
        elif vlan_re.fullmatch(line):
            context = "vlan"
            out.append(PushLine(LineRole.VLAN_TABLE))
        elif line.lower().startswith("interface "):
            entered = targets(line)
            if entered is None:
                raise UnsupportedLine(f"unsupported interface line {line!r}")
            context = "if"
            out.append(PushLine(LineRole.ENTER_PORTS, tuple(entered)))
        elif context == "vlan":
            out.append(PushLine(LineRole.VLAN_TABLE))
        elif context == "if":
            if line in stp_off:
                out.append(PushLine(LineRole.PORT_STP_OFF))
            elif _REMOVAL.fullmatch(line):
                out.append(PushLine(LineRole.PORT_VLAN_REMOVAL))
            elif _NEUTRAL_IN_PORT.fullmatch(line):
                out.append(PushLine(LineRole.NEUTRAL))
            else:
                out.append(PushLine(LineRole.PORT_SETTING))
        elif line == global_stp_off:
            out.append(PushLine(LineRole.GLOBAL_STP_OFF))
        else:
            out.append(PushLine(LineRole.NEUTRAL))   # aging time, LAG hash, `configure`
    return out
