"""What in a switch's running config stops a push: lines that touch what the plan manages.

vlanroute manages the forwarding settings of the ports, LAGs and VLANs its plan names, and
keeps every other line of the running config as it is (SwitchConfig.context). A push
refuses a switch, before sending anything, only where the two meet:

1. a line vlanroute does not model, on a port or LAG the plan manages, that may change what
   that port forwards (a trunk, port security, 802.1X, an ACL, anything unknown): push would
   have to override a setting it cannot predict nor roll back;
2. a line vlanroute does not model that acts in a routing VLAN of this switch (an IP
   interface or `routing` in `interface vlan N`, `vlan routing N`, the management VLAN, a
   trunk carrying it): the site already uses that VLAN id;
3. a managed port that is a member of a LAG the plan does not have on this switch;
4. a LAG of the plan that has a member port the plan does not manage;
5. a port or LAG the plan does not manage that is a member of a routing VLAN: the VLAN would
   leave its tree there.

`push --strict` reads the running config with the family's strict parser instead, which
refuses any line it does not know at all (vlanroute.device.push).
"""

from __future__ import annotations

from dataclasses import dataclass

from vlanroute.device.targets import Target
from vlanroute.model.bridge import LagPort, PortRef, SwitchConfig
from vlanroute.vlanlist import format_vlan_list


@dataclass(frozen=True)
class Conflict:
    line: str                # "line 34: switchport mode trunk", or the setting concerned
    where: str               # "1/g5, the host port of node001"
    why: str
    fix: str

    def __str__(self) -> str:
        return f"{self.line} ({self.where}): {self.why}; fix: {self.fix}"


def routing_vlans(target: Target) -> set[int]:
    """Every VLAN the plan puts on this switch's ports (VLAN 1 is never one)."""
    out: set[int] = set()
    for port in target.switch.ports.values():
        out |= set(port.untagged) | set(port.tagged)
        if port.pvid is not None:
            out.add(port.pvid)
    for lag in target.switch.lags.values():
        out |= set(lag.tagged)
    return out - {1}


def _describe(target: Target, port: PortRef) -> str:
    label = target.family.port_label(port)
    if isinstance(port, LagPort):
        lag = target.switch.lag(port.id)
        return f"{label}, the LAG to {lag.neighbor}" if lag else f"{label}, not managed by the plan"
    doc = target.switch.ports.get(port)
    if doc is None:
        reserved = " (reserved)" if port in target.switch.reserved_ports else ""
        return f"{label}, not managed by the plan{reserved}"
    if doc.role == "host":
        return f"{label}, the host port of {doc.host}"
    return f"{label}, a cable to {doc.neighbor}" + (f" in LAG {doc.lag}" if doc.lag else "")


def find_conflicts(target: Target, running: SwitchConfig) -> list[Conflict]:
    sw = target.name
    managed: set[PortRef] = set(target.switch.ports) | {LagPort(i) for i in target.switch.lag_ids()}
    planned_lags = set(target.switch.lag_ids())
    vlans = routing_vlans(target)
    reserve = (f"or reserve the port in the inventory (switches.{sw}.reserved_ports) and "
               "render again")
    other_ids = "give the plan other VLAN ids (routing.first_vlan or routing.vlan_ids) and render again"
    out: list[Conflict] = []
    for c in running.context:
        if c.effect != "forwarding":
            continue
        text = c.text.strip()
        if c.port is not None and c.port in managed:
            trunk = text.startswith(("switchport mode trunk", "switchport trunk"))
            why = ("the port is a trunk, which vlanroute does not manage: push would have to "
                   "override it" if trunk else
                   "vlanroute does not manage this setting, and it may change what the port forwards")
            out.append(Conflict(f"line {c.lineno}: {text}", _describe(target, c.port), why,
                                f"remove the line on the switch, {reserve}"))
        elif c.vlans & vlans:
            where = f"routing VLAN {format_vlan_list(sorted(c.vlans & vlans))}"
            if c.block:
                where += f", in `{c.block}`"
            out.append(Conflict(f"line {c.lineno}: {text}", where,
                                "the switch already uses this VLAN for something vlanroute does not "
                                "manage", f"remove the line on the switch, or {other_ids}"))
    for name, port in running.ports.items():
        if port.lag is None:
            continue
        line = f"`{running.origin.get((name, 'lag'), f'channel-group {port.lag}')}`"
        if name in managed and port.lag not in planned_lags:
            out.append(Conflict(line, _describe(target, name),
                                f"it is a member of {target.family.lag_label(port.lag)}, a LAG the "
                                "plan does not have on this switch",
                                f"take it out of that LAG on the switch (no channel-group), {reserve}"))
        elif name not in managed and port.lag in planned_lags:
            out.append(Conflict(line, _describe(target, name),
                                f"it is a member of {target.family.lag_label(port.lag)}, which the "
                                "plan uses for a cable of its own",
                                "take it out of that LAG on the switch (no channel-group), or "
                                "cable it as the plan says"))
    for ref, port in running.bridge_ports().items():
        if ref in managed or (isinstance(ref, LagPort) and ref.id in planned_lags):
            continue
        leaked = (port.untagged | port.tagged) & vlans
        if leaked:
            out.append(Conflict(f"its VLAN membership ({format_vlan_list(sorted(leaked))})",
                                _describe(target, ref),
                                "a routing VLAN would reach a port outside its tree",
                                f"remove those VLANs from the port on the switch, or {other_ids}"))
    return out
