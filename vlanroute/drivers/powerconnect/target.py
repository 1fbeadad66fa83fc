"""Dell OS6: each switch's target configuration as `show running-config` prints it, for
tools that compare line by line, such as Ansible's `dellemc.os6.os6_config` (docs/ansible.md).

The rendered switches/<switch>.cfg is a delta: it holds `no ...` lines and removals
(`switchport general allowed vlan remove 1,103`) that a running config never prints, so a
line-by-line comparison finds them missing on every run and sends them again. This file
holds only lines the switch prints once the config is in place: non-default settings (the
canonical view, vlanroute.drivers.powerconnect.delta), an untagged VLAN add without its
keyword (the switch prints it that way, docs/platforms/dell-os6.md [ASM], [ASMF]), one
`interface` block per step, each ending in `exit`, and no comment inside a block (os6_config
starts a new top-level section at a comment or blank line).

The blocks come in the loop-safe order of the push (README "The push order"), because a
line-by-line tool sends what is missing in file order: VLANs and global settings, LAG
membership, the inter-switch ports' tree VLANs, host ports, then VLAN 1 off the inter-switch
ports, then spanning tree off on them, and Energy Efficient Ethernet last.

A line-by-line tool only adds: it cannot remove a VLAN a port carries today that the plan
does not want, nor make a switch's VLAN list shorter. Those stay for `vlanroute push`.
"""

from __future__ import annotations

from vlanroute.drivers.powerconnect.cli import format_vlan_ids
from vlanroute.drivers.powerconnect.delta import Syntax, port_lines
from vlanroute.model.bridge import LagPort, PortConfig, PortRef, SwitchConfig

HEADER = ("! vlanroute target configuration of {switch} for line-by-line tools (Ansible dellemc.os6.os6_config\n"
          "! src=...): the lines `show running-config` prints once the plan is applied, in push order\n")
REMOVE_1 = "switchport general allowed vlan remove 1"
STP_OFF = "spanning-tree disable"


def _push_order(lines: list[str]) -> list[str]:
    """Within a block, as the rendered config sends it: mode, VLAN adds, then the PVID (a
    host keeps reaching its VLAN throughout), the rest, VLAN 1 off last."""
    def rank(line: str) -> int:
        return (0 if line.startswith("switchport mode ") else 1 if line.startswith("switchport general allowed vlan add")
                else 3 if line == REMOVE_1 else 2)
    return sorted(lines, key=rank)


def _printed(line: str) -> str:
    """The form the switch prints: an untagged add has no keyword."""
    return line.removesuffix(" untagged") if line.startswith("switchport general allowed vlan add ") else line


def target_config(cfg: SwitchConfig, syn: Syntax) -> str:
    blocks: list[tuple[str, list[str]]] = []

    def block(port: PortRef, lines: list[str]) -> None:
        if lines:
            blocks.append((syn.interface(port), lines))

    ports: list[tuple[PortRef, PortConfig, bool]] = [(LagPort(i), lag, True) for i, lag in sorted(cfg.lags.items())]
    ports += [(name, p, False) for name, p in cfg.ports.items() if name in cfg.touched or p.lag is not None]
    body = {port: _push_order([_printed(x) for x in port_lines(p, is_lag=lag, syn=syn)
                               if not x.startswith("members ")])
            for port, p, lag in ports}
    inter = [port for port, p, _ in ports if not p.stp_enabled]
    members = [port for port, p, lag in ports if not lag and p.lag is not None]
    hosts = [port for port, p, _ in ports if p.stp_enabled and port not in members]
    late = (REMOVE_1, STP_OFF)
    for port in members:
        block(port, body[port])
    for port in inter + hosts:
        if port not in members:
            block(port, [x for x in body[port] if port in hosts or x not in late])
    for line in late:
        for port in inter:
            block(port, [x for x in body[port] if x == line])
    if cfg.eee is not None:
        for port, _p, lag in ports:
            if not lag and port in cfg.touched:
                block(port, ["green-mode eee" if cfg.eee else "no green-mode eee"])

    out: list[str] = []
    extra = sorted(cfg.vlans - {1})
    if extra:
        out += [f"vlan {format_vlan_ids(extra)}", "exit"]
    if cfg.aging_time != cfg.aging_default:
        out.append(f"{syn.aging} {cfg.aging_time}")
    if cfg.flow_control is not None and cfg.flow_control != syn.defaults.flow_control:
        out.append("flowcontrol" if cfg.flow_control else "no flowcontrol")
    for header, lines in blocks:
        out += [header, *lines, "exit"]
    return HEADER.format(switch=cfg.name) + "\n".join(out) + "\n"
