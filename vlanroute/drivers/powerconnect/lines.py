"""PowerConnect 62xx / OS6: what each command line of a pushed file does (for the loop-safe order).

Both CLIs are modal: `vlan database` ... `exit` (62xx) or `vlan N` ... `exit` (OS6)
creates VLANs, `interface ...` ... `exit` configures the ports named, `end` leaves
configuration mode. The classifier follows those modes; which phase a line belongs to is
decided by vlanroute.device.order from the role of the ports it touches.
"""

from __future__ import annotations

from collections.abc import Callable
import re

from vlanroute.drivers.family import LineRole, PushLine, UnsupportedLine
from vlanroute.drivers.powerconnect.cli import CliSyntaxError, expand_port_range
from vlanroute.model.bridge import LagPort, PortRef

# Per-port lines that cannot open a loop whatever the port (EEE): never part of a phase.
_NEUTRAL_IN_PORT = re.compile(r"(no )?green-mode eee")


def targets_62xx(line: str) -> list[PortRef] | None:
    if m := re.fullmatch(r"interface (?:range )?ethernet (\S+)", line):
        return list(expand_port_range(m.group(1)))
    if m := re.fullmatch(r"interface port-channel (\d+)", line):
        return [LagPort(int(m.group(1)))]
    return None


def targets_os6(line: str) -> list[PortRef] | None:
    if m := re.fullmatch(r"interface port-channel (\d+)", line):
        return [LagPort(int(m.group(1)))]
    if m := re.fullmatch(r"interface ((?:Te|Gi|Fo|Tw)\d+/\d+/\d+)", line):
        return [m.group(1)]
    return None


def classify_push_lines(lines: list[str],
                        targets: Callable[[str], list[PortRef] | None] = targets_62xx,
                        vlan_mode: str = r"vlan database") -> list[PushLine]:
    out: list[PushLine] = []
    context = "global"                       # global | vlandb | if
    vlan_open = re.compile(vlan_mode)
    for raw in lines:
        line = " ".join(raw.split())
        if line in ("exit", "end"):
            context = "global"
            out.append(PushLine(LineRole.END if line == "end" else LineRole.LEAVE))
        elif line.startswith("interface "):
            try:
                entered = targets(line)
            except CliSyntaxError as exc:
                raise UnsupportedLine(str(exc)) from None
            if entered is None:
                raise UnsupportedLine(f"unsupported interface line {line!r}")
            context = "if"
            out.append(PushLine(LineRole.ENTER_PORTS, tuple(entered)))
        elif context == "vlandb" or (context == "global" and vlan_open.fullmatch(line)):
            context = "vlandb"
            out.append(PushLine(LineRole.VLAN_TABLE))
        elif context == "if":
            if line == "spanning-tree disable":
                out.append(PushLine(LineRole.PORT_STP_OFF))
            elif line.startswith("switchport general allowed vlan remove "):
                out.append(PushLine(LineRole.PORT_VLAN_REMOVAL))
            elif _NEUTRAL_IN_PORT.fullmatch(line):
                out.append(PushLine(LineRole.NEUTRAL))
            else:
                out.append(PushLine(LineRole.PORT_SETTING))
        elif line == "no spanning-tree":
            out.append(PushLine(LineRole.GLOBAL_STP_OFF))
        else:
            out.append(PushLine(LineRole.NEUTRAL))   # aging time, flow control, `configure`
    return out
