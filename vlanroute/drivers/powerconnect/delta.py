"""Dell PowerConnect 62xx / OS6: commands that take a switch from one parsed config to another.

Push uses them for the removals the rendered file cannot know about (VLANs a port carries
today that the plan does not want) and rollback uses them to go back to the backup. Both
work on parsed models (vlanroute.model.bridge), so they never depend on text layout.

The canonical view is the config as the switch would print it: only what differs from the
firmware defaults (FirmwareDefaults: flow control on on a 62xx, the aging default, the
default LAG hash), because a real switch prints no line for a default. A line vlanroute does
not model (SwitchConfig.context) is never part of it, and never touched.

The order of a full delta, chosen so that no step can open a loop, is every family's:
drivers/deltaorder.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vlanroute.drivers import deltaorder
from vlanroute.drivers.deltaorder import DeltaSteps
from vlanroute.drivers.family import CanonicalLine, FirmwareDefaults
from vlanroute.drivers.powerconnect.cli import format_vlan_ids, interface_command
from vlanroute.model.bridge import LagPort, PortConfig, PortRef, SwitchConfig


@dataclass(frozen=True)
class Syntax:
    """The few commands in which the Dell CLIs differ, and their firmware defaults."""

    interface: Callable[[PortRef], str]          # enters a port's or LAG's sub-mode
    aging: str                                   # global aging-time command, without the value
    vlan_table: str                              # canonical prefix of the VLAN list line
    create: Callable[[list[int]], list[str]]     # commands that create VLANs
    delete: Callable[[list[int]], list[str]]     # commands that delete VLANs
    defaults: FirmwareDefaults


def canonical_lines(cfg: SwitchConfig, syn: Syntax) -> list[CanonicalLine]:
    """The config as the switch would print it, non-default settings only, in a fixed
    order: the basis of the diff shown before a push and of the post-push check."""
    lines: list[CanonicalLine] = []

    def glob(text: str) -> None:
        lines.append(CanonicalLine(None, text))

    extra = sorted(cfg.vlans - {1})
    if extra:
        glob(f"{syn.vlan_table}{format_vlan_ids(extra)}")
    if not cfg.stp_global_enabled:
        glob("no spanning-tree")
    if cfg.aging_time != cfg.aging_default:
        glob(f"{syn.aging} {cfg.aging_time}")
    if cfg.flow_control is not None and cfg.flow_control != syn.defaults.flow_control:
        glob("flowcontrol" if cfg.flow_control else "no flowcontrol")
    for lag_id, lag in sorted(cfg.lags.items()):
        key = LagPort(lag_id)
        lines += [CanonicalLine(key, f"{syn.interface(key)}: {x}")
                  for x in port_lines(lag, is_lag=True, syn=syn)]
    for name, port in cfg.ports.items():
        lines += [CanonicalLine(name, f"{syn.interface(name)}: {x}")
                  for x in port_lines(port, is_lag=False, syn=syn)]
    return lines


def port_lines(p: PortConfig, *, is_lag: bool, syn: Syntax) -> list[str]:
    out: list[str] = []
    if p.mode != "access":
        out.append(f"switchport mode {p.mode}")
    if p.pvid != 1:
        out.append(f"switchport general pvid {p.pvid}")
    if 1 not in p.untagged | p.tagged:
        out.append("switchport general allowed vlan remove 1")
    if p.untagged - {1}:
        out.append(f"switchport general allowed vlan add {format_vlan_ids(p.untagged - {1})} untagged")
    if p.tagged:
        out.append(f"switchport general allowed vlan add {format_vlan_ids(p.tagged)} tagged")
    if p.acceptable != "all":
        out.append(f"switchport general acceptable-frame-type {p.acceptable}")
    if not p.ingress_filtering:
        out.append("switchport general ingress-filtering disable")
    if not p.stp_enabled:
        out.append("spanning-tree disable")
    if not p.enabled:
        out.append("shutdown")
    if not is_lag and p.lag is not None:
        out.append(f"channel-group {p.lag} mode on")
    if is_lag and p.hash_mode is not None and p.hash_mode != syn.defaults.lag_hash:
        out.append(f"hashing-mode {p.hash_mode}")
    if is_lag and p.members:
        out.append("members " + ",".join(sorted(p.members)))
    return out


def _hash(p: PortConfig, syn: Syntax) -> str | None:
    """A LAG's hash as the switch holds it: no line is the firmware default."""
    return p.hash_mode if p.hash_mode is not None else syn.defaults.lag_hash


def membership_commands(cur: PortConfig, tgt: PortConfig, *, is_lag: bool, syn: Syntax) -> list[str]:
    """Sub-mode commands (without `interface`/`exit`) for everything but spanning tree."""
    cmds: list[str] = []
    if not is_lag and cur.lag != tgt.lag:
        if cur.lag is not None:
            cmds.append("no channel-group")
        if tgt.lag is not None:
            cmds.append(f"channel-group {tgt.lag} mode on")
    if cur.mode != tgt.mode:
        cmds.append(f"switchport mode {tgt.mode}")
    if tgt.mode == "access" and (cur.mode != "access" or cur.pvid != tgt.pvid) \
            and (tgt.pvid != 1 or cur.mode == "access"):
        # An access port forwards in its access VLAN, which the model keeps as its PVID.
        cmds.append(f"switchport access vlan {tgt.pvid}" if tgt.pvid != 1 else "no switchport access vlan")
    if tgt.mode == "general":
        cur_members = cur.untagged | cur.tagged
        remove = cur_members - (tgt.untagged | tgt.tagged)
        if remove:
            cmds.append(f"switchport general allowed vlan remove {format_vlan_ids(remove)}")
        add_u = tgt.untagged - cur.untagged
        if add_u:
            cmds.append(f"switchport general allowed vlan add {format_vlan_ids(add_u)} untagged")
        add_t = tgt.tagged - cur.tagged
        if add_t:
            cmds.append(f"switchport general allowed vlan add {format_vlan_ids(add_t)} tagged")
        if cur.pvid != tgt.pvid or cur.mode != tgt.mode:
            cmds.append(f"switchport general pvid {tgt.pvid}")
        if cur.acceptable != tgt.acceptable:
            cmds.append("switchport general acceptable-frame-type tagged-only"
                        if tgt.acceptable == "tagged-only"
                        else "no switchport general acceptable-frame-type tagged-only")
        if cur.ingress_filtering != tgt.ingress_filtering:
            cmds.append("no switchport general ingress-filtering disable" if tgt.ingress_filtering
                        else "switchport general ingress-filtering disable")
    if is_lag and _hash(cur, syn) != _hash(tgt, syn):
        cmds.append(f"hashing-mode {tgt.hash_mode}" if tgt.hash_mode else "no hashing-mode")
    if cur.enabled != tgt.enabled:
        cmds.append("no shutdown" if tgt.enabled else "shutdown")
    return cmds


def _steps(syn: Syntax) -> DeltaSteps:
    return DeltaSteps(interface=syn.interface,
                      membership=lambda c, t, is_lag: membership_commands(c, t, is_lag=is_lag, syn=syn),
                      create=syn.create, delete=syn.delete, global_stp_on="spanning-tree",
                      global_stp_off="no spanning-tree", port_stp_on="no spanning-tree disable",
                      port_stp_off="spanning-tree disable")


def port_fixups(cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef], syn: Syntax) -> list[str]:
    """Membership commands for the named ports/LAGs only (no spanning tree, no VLANs)."""
    return deltaorder.port_fixups(cur, tgt, ports, _steps(syn))


def delta_commands(cur: SwitchConfig, tgt: SwitchConfig, syn: Syntax) -> list[str]:
    """Every command, in loop-safe order (drivers/deltaorder.py), that turns `cur` into `tgt`
    (used for rollback)."""
    settings: list[str] = []
    if cur.aging_time != tgt.aging_time:
        settings.append(f"{syn.aging} {tgt.aging_time}")
    if tgt.flow_control is not None and cur.flow_control != tgt.flow_control:
        settings.append("flowcontrol" if tgt.flow_control else "no flowcontrol")
    return deltaorder.ordered_delta(cur, tgt, _steps(syn), enter="configure", settings=settings)


def _pc62xx_create(ids: list[int]) -> list[str]:
    return ["vlan database", f"vlan {format_vlan_ids(ids)}", "exit"]


def _pc62xx_delete(ids: list[int]) -> list[str]:
    return ["vlan database", f"no vlan {format_vlan_ids(ids)}", "exit"]


def _os6_create(ids: list[int]) -> list[str]:
    # One VLAN per command: a range at global level is not confirmed on OS6.
    return [line for v in ids for line in (f"vlan {v}", "exit")]


def _os6_delete(ids: list[int]) -> list[str]:
    return [f"no vlan {v}" for v in ids]


def _os6_interface(port: PortRef) -> str:
    return f"interface port-channel {port.id}" if isinstance(port, LagPort) else f"interface {port}"


def syntax_62xx(defaults: FirmwareDefaults) -> Syntax:
    return Syntax(interface=interface_command, aging="bridge aging-time",
                  vlan_table="vlan database: vlan ", create=_pc62xx_create,
                  delete=_pc62xx_delete, defaults=defaults)


def syntax_os6(defaults: FirmwareDefaults) -> Syntax:
    return Syntax(interface=_os6_interface, aging="mac address-table aging-time",
                  vlan_table="vlan ", create=_os6_create, delete=_os6_delete, defaults=defaults)
