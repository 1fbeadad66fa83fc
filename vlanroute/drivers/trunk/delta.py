"""Arista EOS / Dell OS10: commands that take a switch from one parsed config to another,
and the canonical view push compares (as vlanroute.drivers.powerconnect.delta does for
the Dell general-mode CLIs).

The canonical view lists only what differs from the firmware defaults, because a switch
prints no line for a default. Lines vlanroute does not model are never part of it.

The two CLIs differ in a few commands (`TrunkSyntax`): how a VLAN is made (EOS `vlan N`,
OS10 `interface vlanN`), how a trunk's native VLAN is written (EOS `switchport trunk
native vlan N`, OS10 `switchport access vlan N`), whether the allowed list is replaced
(EOS) or added to (OS10), and how spanning tree is turned off on a port.

The order of a full delta, so that no step can open a loop even outside a transaction,
is every family's: drivers/deltaorder.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vlanroute.drivers import deltaorder
from vlanroute.drivers.deltaorder import DeltaSteps
from vlanroute.drivers.family import CanonicalLine, FirmwareDefaults
from vlanroute.drivers.trunk.mode import ALL_VLANS
from vlanroute.model.bridge import LagPort, PortConfig, PortRef, SwitchConfig
from vlanroute.vlanlist import format_vlan_list


def vl(ids: set[int] | frozenset[int] | list[int]) -> str:
    return format_vlan_list(sorted(ids))


@dataclass(frozen=True)
class TrunkSyntax:
    interface: Callable[[PortRef], str]
    create: Callable[[list[int]], list[str]]
    delete: Callable[[list[int]], list[str]]
    native_is_access: bool               # OS10
    allowed_additive: bool               # OS10
    stp_off: str                         # per-port line
    stp_on: str
    global_stp_off: str
    global_stp_on: str
    aging: str
    lag_hash: Callable[[str], str]       # hash keyword -> the global line
    flow: Callable[[bool], list[str]]    # per-port flow-control lines
    flow_reset: tuple[str, ...]          # back to the firmware's own setting (no value set)
    member: Callable[[int], str]         # a LAG member's line
    defaults: FirmwareDefaults
    trunk_default_all: bool              # EOS


def _allowed(p: PortConfig) -> set[int]:
    return (p.untagged | p.tagged)


def port_lines(p: PortConfig, *, is_lag: bool, syn: TrunkSyntax) -> list[str]:
    """One port's non-default settings, in the switch's own words."""
    out: list[str] = []
    if not is_lag and p.lag is not None:
        out.append(syn.member(p.lag))
    if p.mode == "trunk":
        out.append("switchport mode trunk")
        if syn.native_is_access:
            out.append(f"switchport access vlan {p.pvid}" if p.pvid else "no switchport access vlan")
            tagged = p.tagged - {p.pvid}
            if tagged:
                out.append(f"switchport trunk allowed vlan {vl(tagged)}")
        else:
            if p.pvid != 1:
                out.append(f"switchport trunk native vlan {p.pvid}")
            allowed = _allowed(p)
            if allowed != ALL_VLANS:
                out.append(f"switchport trunk allowed vlan {vl(allowed) if allowed else 'none'}")
    elif p.mode == "routed":
        out.append("no switchport")
    elif p.pvid != 1:
        out.append(f"switchport access vlan {p.pvid}")
    if not p.stp_enabled:
        out.append(syn.stp_off)
    if not p.enabled:
        out.append("shutdown")
    if p.flow_control is not None:
        out += syn.flow(p.flow_control)
    return out


def canonical_lines(cfg: SwitchConfig, syn: TrunkSyntax) -> list[CanonicalLine]:
    lines: list[CanonicalLine] = []

    def glob(text: str) -> None:
        lines.append(CanonicalLine(None, text))

    extra = sorted(cfg.vlans - {1})
    if extra:
        glob(f"VLANs {vl(extra)}")
    if not cfg.stp_global_enabled:
        glob(syn.global_stp_off)
    if cfg.aging_time != cfg.aging_default:
        glob(f"{syn.aging} {cfg.aging_time}")
    if cfg.lag_hash is not None and cfg.lag_hash != syn.defaults.lag_hash:
        glob(syn.lag_hash(cfg.lag_hash))
    for lag_id, lag in sorted(cfg.lags.items()):
        key = LagPort(lag_id)
        lines += [CanonicalLine(key, f"{syn.interface(key)}: {x}") for x in port_lines(lag, is_lag=True, syn=syn)]
        if lag.members:
            lines.append(CanonicalLine(key, f"{syn.interface(key)}: members {','.join(lag.members)}"))
    for name, port in cfg.ports.items():
        lines += [CanonicalLine(name, f"{syn.interface(name)}: {x}")
                  for x in port_lines(port, is_lag=False, syn=syn)]
    return lines


def membership_commands(cur: PortConfig, tgt: PortConfig, *, is_lag: bool, syn: TrunkSyntax) -> list[str]:
    """Sub-mode commands (without `interface`/`exit`) for everything but spanning tree."""
    cmds: list[str] = []
    if not is_lag and cur.lag != tgt.lag:
        if cur.lag is not None:
            cmds.append("no channel-group")
        if tgt.lag is not None:
            cmds.append(syn.member(tgt.lag))
    if cur.mode != tgt.mode:
        if tgt.mode == "routed":
            cmds.append("no switchport")
        else:
            if cur.mode == "routed":
                cmds.append("switchport")
            cmds.append(f"switchport mode {tgt.mode}")
    if cur.mode == "trunk" and tgt.mode != "trunk" and not syn.native_is_access:
        # EOS keeps (and prints) a trunk's native VLAN and allowed list on a port that is no
        # longer a trunk: clear them, or a rollback leaves them behind [ANS-EOS].
        if cur.pvid != 1:
            cmds.append("no switchport trunk native vlan")
        if _allowed(cur) != ALL_VLANS:
            cmds.append("no switchport trunk allowed vlan")
    if tgt.mode == "access":
        if cur.mode != "access" or cur.pvid != tgt.pvid:
            cmds.append(f"switchport access vlan {tgt.pvid}" if tgt.pvid != 1 else "no switchport access vlan")
    elif tgt.mode == "trunk":
        cmds += _trunk_commands(cur, tgt, syn)
    if cur.enabled != tgt.enabled:
        cmds.append("no shutdown" if tgt.enabled else "shutdown")
    if tgt.flow_control != cur.flow_control:
        cmds += syn.flow(tgt.flow_control) if tgt.flow_control is not None else list(syn.flow_reset)
    return cmds


def _trunk_commands(was: PortConfig, tgt: PortConfig, syn: TrunkSyntax) -> list[str]:
    out: list[str] = []
    cur = was if was.mode == "trunk" else None
    if syn.native_is_access:
        # OS10: the access VLAN is the native VLAN (an access port's VLAN stays when it becomes
        # a trunk); the allowed list grows with each line.
        cur_native = was.pvid if was.mode in ("access", "trunk") else 1
        cur_tagged = (cur.tagged - {cur.pvid}) if cur is not None else set()
        want = tgt.tagged - {tgt.pvid}
        # OS10 refuses a VLAN in the allowed list while it is the access VLAN, and the other
        # way round ("% Error: Interface cannot be an access and trunk member of the same
        # VLAN", ipspace/netlab PR #1838): drop first (the new native leaves the list), then
        # the native (the old one stops being the access VLAN), then add (the old may join).
        drop = cur_tagged - want
        if drop:
            out.append(f"no switchport trunk allowed vlan {vl(drop)}")
        if cur_native != tgt.pvid:
            out.append(f"switchport access vlan {tgt.pvid}" if tgt.pvid else "no switchport access vlan")
        add = want - cur_tagged
        if add:
            out.append(f"switchport trunk allowed vlan {vl(add)}")
        return out
    cur_native = cur.pvid if cur is not None else 1
    cur_allowed = _allowed(cur) if cur is not None else set(ALL_VLANS)
    if cur_native != tgt.pvid:
        out.append(f"switchport trunk native vlan {tgt.pvid}" if tgt.pvid != 1
                   else "no switchport trunk native vlan")
    want = _allowed(tgt)
    if want != cur_allowed:
        out.append("no switchport trunk allowed vlan" if want == ALL_VLANS else
                   f"switchport trunk allowed vlan {vl(want) if want else 'none'}")
    return out


def _steps(syn: TrunkSyntax) -> DeltaSteps:
    return DeltaSteps(interface=syn.interface,
                      membership=lambda c, t, is_lag: membership_commands(c, t, is_lag=is_lag, syn=syn),
                      create=syn.create, delete=syn.delete, global_stp_on=syn.global_stp_on,
                      global_stp_off=syn.global_stp_off, port_stp_on=syn.stp_on, port_stp_off=syn.stp_off)


def port_fixups(cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef], syn: TrunkSyntax) -> list[str]:
    return deltaorder.port_fixups(cur, tgt, ports, _steps(syn))


def delta_commands(cur: SwitchConfig, tgt: SwitchConfig, syn: TrunkSyntax,
                   enter: str = "configure") -> list[str]:
    """Every command, in loop-safe order (drivers/deltaorder.py), that turns `cur` into `tgt`
    (rollback)."""
    settings: list[str] = []
    if cur.aging_time != tgt.aging_time:
        settings.append(f"{syn.aging} {tgt.aging_time}")
    if tgt.lag_hash != cur.lag_hash:
        settings.append(syn.lag_hash(tgt.lag_hash) if tgt.lag_hash is not None
                        else "no " + syn.lag_hash(cur.lag_hash or ""))
    for lag_id in sorted(set(cur.lags) - set(tgt.lags)):
        settings.append("no " + syn.interface(LagPort(lag_id)))     # members were taken out above
    return deltaorder.ordered_delta(cur, tgt, _steps(syn), enter=enter, settings=settings)
