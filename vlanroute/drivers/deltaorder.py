"""The loop-safe order of a full delta, one home for every family (PowerConnect/OS6 in
drivers/powerconnect/delta.py, EOS/OS10 in drivers/trunk/delta.py): the commands that take a
switch from one parsed config to another, as rollback sends them.

Order, chosen so that no step can open a loop even outside a transaction: spanning tree
back ON first (global, then per port), VLAN creation, port membership, spanning tree OFF
where the target wants it, then the family's own settings (aging, flow control, LAG hash,
LAGs removed), VLAN deletion last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vlanroute.model.bridge import LagPort, PortConfig, PortRef, SwitchConfig

PortDelta = tuple[PortRef, PortConfig, PortConfig, bool]     # (port, current, target, is_lag)


@dataclass(frozen=True)
class DeltaSteps:
    """What a family writes for each step of the order."""

    interface: Callable[[PortRef], str]                        # enters a port's or LAG's sub-mode
    membership: Callable[[PortConfig, PortConfig, bool], list[str]]   # (current, target, is_lag)
    create: Callable[[list[int]], list[str]]                   # commands that create VLANs
    delete: Callable[[list[int]], list[str]]                   # commands that delete VLANs
    global_stp_on: str
    global_stp_off: str
    port_stp_on: str
    port_stp_off: str


def all_ports(cur: SwitchConfig, tgt: SwitchConfig) -> list[PortDelta]:
    """(port, current, target, is_lag) for every LAG then every physical port of the target."""
    out: list[PortDelta] = []
    for lag_id in sorted(set(cur.lags) | set(tgt.lags)):
        key = LagPort(lag_id)
        out.append((key, cur.lags.get(lag_id, PortConfig(name=str(key), is_lag=True)),
                    tgt.lags.get(lag_id, PortConfig(name=str(key), is_lag=True)), True))
    for name in tgt.ports:
        out.append((name, cur.ports.get(name, PortConfig(name=name)), tgt.ports[name], False))
    return out


def block(port: PortRef, body: list[str], interface: Callable[[PortRef], str]) -> list[str]:
    """A port's commands inside its sub-mode; nothing for no commands."""
    return [interface(port), *body, "exit"] if body else []


def port_fixups(cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef], steps: DeltaSteps) -> list[str]:
    """Membership commands for the named ports/LAGs only (no spanning tree, no VLANs)."""
    out: list[str] = []
    for name, c, t, is_lag in all_ports(cur, tgt):
        if name in ports:
            out += block(name, steps.membership(c, t, is_lag), steps.interface)
    return out


def ordered_delta(cur: SwitchConfig, tgt: SwitchConfig, steps: DeltaSteps, *, enter: str,
                  settings: list[str]) -> list[str]:
    """Every command, in the loop-safe order above, that turns `cur` into `tgt`; `settings`:
    the family's own global commands (after spanning tree off, before VLAN deletion)."""
    ports = all_ports(cur, tgt)
    out = [enter]
    if tgt.stp_global_enabled and not cur.stp_global_enabled:
        out.append(steps.global_stp_on)
    for name, c, t, _ in ports:
        if t.stp_enabled and not c.stp_enabled:
            out += block(name, [steps.port_stp_on], steps.interface)
    create = tgt.vlans - cur.vlans
    if create:
        out += steps.create(sorted(create))
    for name, c, t, is_lag in ports:
        out += block(name, steps.membership(c, t, is_lag), steps.interface)
    for name, c, t, _ in ports:
        if c.stp_enabled and not t.stp_enabled:
            out += block(name, [steps.port_stp_off], steps.interface)
    if cur.stp_global_enabled and not tgt.stp_global_enabled:
        out.append(steps.global_stp_off)
    out += settings
    delete = cur.vlans - tgt.vlans - {1}
    if delete:
        out += steps.delete(sorted(delete))
    out.append("end")
    return out
