"""The running configuration of one emulated PowerConnect 62xx, and its `show` output.

This is the emulator's own small model (not vlanroute.model.bridge): it must behave like
the switch, e.g. keep a port's own VLAN settings while it is a LAG member, print only
non-default settings, and refuse a PVID whose VLAN does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import copy

from vlanroute.drivers.powerconnect.cli import format_vlan_ids

DEFAULT_AGING = 300


@dataclass
class PortState:
    general: bool = False                 # `switchport mode general` given
    pvid: int = 1
    untagged: set[int] = field(default_factory=lambda: {1})
    tagged: set[int] = field(default_factory=set)
    tagged_only: bool = False             # acceptable-frame-type tagged-only
    stp_disabled: bool = False            # `spanning-tree disable`
    channel_group: int | None = None      # ethernet ports only
    hashing_mode: int | None = None       # port-channels only


@dataclass(frozen=True)
class MacEntry:
    vlan: int
    mac: str          # aa:bb:cc:dd:ee:ff
    port: str         # 1/g5 or ch1


@dataclass
class SwitchState:
    ports: dict[str, PortState]
    lags: dict[int, PortState]
    vlans: set[int] = field(default_factory=lambda: {1})
    stp_enabled: bool = True
    aging: int = DEFAULT_AGING
    flowcontrol: bool | None = None       # None: never set (printed as nothing)
    mac_table: list[MacEntry] = field(default_factory=list)

    @classmethod
    def factory_default(cls, ports: tuple[str, ...], lag_count: int) -> "SwitchState":
        return cls(ports={p: PortState() for p in ports},
                   lags={n: PortState() for n in range(1, lag_count + 1)})

    def clone(self) -> "SwitchState":
        return copy.deepcopy(self)

    def delete_vlan(self, vid: int) -> None:
        self.vlans.discard(vid)
        for port in [*self.ports.values(), *self.lags.values()]:
            port.untagged.discard(vid)
            port.tagged.discard(vid)
            if port.pvid == vid:
                port.pvid = 1

    def running_config(self, description: str) -> str:
        """`show running-config` text: header comments, then only non-default settings."""
        lines = ["!Current Configuration:", f'!System Description "{description}"',
                 "!System Software Version 3.3.7.3", "!", "configure"]
        extra_vlans = sorted(self.vlans - {1})
        if extra_vlans:
            lines += ["vlan database", f"vlan {format_vlan_ids(extra_vlans)}", "exit"]
        if not self.stp_enabled:
            lines.append("no spanning-tree")
        if self.aging != DEFAULT_AGING:
            lines.append(f"bridge aging-time {self.aging}")
        if self.flowcontrol is not None:
            lines.append("flowcontrol" if self.flowcontrol else "no flowcontrol")
        for lag_id, lag in sorted(self.lags.items()):
            lines += _interface_block(f"interface port-channel {lag_id}", lag)
        for name, port in self.ports.items():
            lines += _interface_block(f"interface ethernet {name}", port)
        lines.append("exit")
        return "\n".join(lines) + "\n"


def _interface_block(header: str, port: PortState) -> list[str]:
    body: list[str] = []
    if port.general:
        body.append("switchport mode general")
    if port.pvid != 1:
        body.append(f"switchport general pvid {port.pvid}")
    if 1 not in port.untagged and 1 not in port.tagged:
        body.append("switchport general allowed vlan remove 1")
    untagged = sorted(port.untagged - {1})
    if untagged:
        body.append(f"switchport general allowed vlan add {format_vlan_ids(untagged)} untagged")
    if port.tagged:
        body.append(f"switchport general allowed vlan add {format_vlan_ids(port.tagged)} tagged")
    if port.tagged_only:
        body.append("switchport general acceptable-frame-type tagged-only")
    if port.stp_disabled:
        body.append("spanning-tree disable")
    if port.channel_group is not None:
        body.append(f"channel-group {port.channel_group} mode on")
    if port.hashing_mode is not None:
        body.append(f"hashing-mode {port.hashing_mode}")
    return [header, *body, "exit"] if body else []


def address_table(state: SwitchState) -> str:
    """`show bridge address-table` in the 62xx (FASTPATH) layout."""
    lines = [f"Aging time is {state.aging} Sec", "",
             "  Vlan     Mac Address       Port     Type",
             "-------- --------------------- ---------- --------------------"]
    for entry in sorted(state.mac_table, key=lambda e: (e.vlan, e.mac)):
        lines.append(f"{entry.vlan:>6}     {entry.mac.upper():<21} {entry.port:<10} Dynamic")
    lines.append("")
    return "\n".join(lines) + "\n"
