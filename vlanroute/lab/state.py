"""The running configuration of one emulated Dell switch (PowerConnect 62xx or OS6), and
its `show` output.

This is the emulator's own small model (not vlanroute.model.bridge): it must behave like
the switch, e.g. keep a port's own VLAN settings while it is a LAG member, print only
non-default settings, refuse a PVID whose VLAN does not exist, and keep every production
line it does not model (host name, users, SNMP, routing interfaces, port security ...)
exactly as it was given, printing it back in the same order.

Bracketed keys are the evidence sources listed on docs/platforms/powerconnect-62xx.md and
dell-os6.md; a behaviour without a key is this emulator's own choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import copy
import re

from vlanroute.drivers.powerconnect.cli import format_vlan_ids

# Placeholders in SwitchState.layout for what the emulator models; every other layout item
# is an opaque chunk (a line, or a block with its `exit`).
VLANS, GLOBALS, INTERFACES = "<vlans>", "<globals>", "<interfaces>"


@dataclass
class PortState:
    mode: str = "access"                  # access | general | trunk
    access_vlan: int | None = None        # `switchport access vlan N`
    pvid: int = 1
    untagged: set[int] = field(default_factory=lambda: {1})
    tagged: set[int] = field(default_factory=set)
    trunk_vlans: set[int] | None = None   # `switchport trunk allowed vlan ...` (a list was given)
    tagged_only: bool = False             # acceptable-frame-type tagged-only
    stp_disabled: bool = False            # `spanning-tree disable`
    shutdown: bool = False
    channel_group: int | None = None      # ethernet ports only
    channel_mode: str = "on"
    hashing_mode: int | None = None       # port-channels only
    eee: bool | None = None               # OS6 `green-mode eee`; None: never set
    extra: list[str] = field(default_factory=list)   # lines kept as given, nested blocks too

    @property
    def general(self) -> bool:
        return self.mode == "general"


@dataclass(frozen=True)
class MacEntry:
    vlan: int
    mac: str          # aa:bb:cc:dd:ee:ff
    port: str         # 1/g5, ch1 (62xx) or Te1/0/5, Po1 (OS6)


@dataclass(frozen=True)
class LldpEntry:
    """One LLDP neighbour this switch has heard on `port` (vlanroute.lab.wiring fills them
    from a cabling file: what the device at the cable's other end would send)."""

    port: str         # this switch's port
    chassis: str      # 00:41:D2:17:2F:00
    port_id: str      # the far end's interface name, or its MAC (a host's lldpd default)
    system_name: str


@dataclass
class SwitchState:
    ports: dict[str, PortState]
    lags: dict[int, PortState]
    vlans: set[int] = field(default_factory=lambda: {1})
    stp_enabled: bool = True
    aging: int = 300
    aging_default: int = 300              # `Aging time is 300 Sec` with no aging line [FS], [NM]
    flowcontrol: bool | None = True       # current global flow control (None: never set)
    flow_default: bool | None = True      # 62xx: on, and a default prints no line [8024F], [R2N]
    vlan_names: dict[int, list[str]] = field(default_factory=dict)  # OS6 `vlan N` block lines
    vlandb_extra: list[str] = field(default_factory=list)   # 62xx `vlan database` lines kept
    layout: list[str | list[str]] = field(default_factory=lambda: [VLANS, GLOBALS, INTERFACES])
    mac_table: list[MacEntry] = field(default_factory=list)
    lldp: list[LldpEntry] = field(default_factory=list)

    @classmethod
    def factory_default(cls, ports: tuple[str, ...], lag_count: int, *, aging_default: int = 300,
                        flow_default: bool | None = True) -> SwitchState:
        return cls(ports={p: PortState() for p in ports},
                   lags={n: PortState() for n in range(1, lag_count + 1)},
                   aging=aging_default, aging_default=aging_default,
                   flowcontrol=flow_default, flow_default=flow_default)

    def links_up(self) -> set[str]:
        """Ports whose link is up: a cable of the lab is plugged in and not down
        (vlanroute.lab.linkdown); LLDP hears whatever is at its other end."""
        return {e.port for e in self.lldp}

    def lags_up(self) -> set[int]:
        """LAGs with at least one member port up."""
        up = self.links_up()
        return {p.channel_group for name, p in self.ports.items()
                if p.channel_group is not None and name in up}

    def clone(self) -> SwitchState:
        return copy.deepcopy(self)

    def delete_vlan(self, vid: int) -> None:
        self.vlans.discard(vid)
        self.vlan_names.pop(vid, None)
        for port in [*self.ports.values(), *self.lags.values()]:
            port.untagged.discard(vid)
            port.tagged.discard(vid)
            if port.trunk_vlans is not None:
                port.trunk_vlans.discard(vid)
            if port.pvid == vid:
                port.pvid = 1

    def keep(self, chunk: list[str]) -> None:
        """A production line (or block) the emulator does not model: printed back as given."""
        self.layout.append(chunk)

    def place(self, placeholder: str) -> None:
        """Where a modelled part is printed: where the config first showed it."""
        if placeholder not in self.layout:
            self.layout.append(placeholder)

    def globals_lines(self) -> list[str]:
        lines = []
        if not self.stp_enabled:
            lines.append("no spanning-tree")
        if self.aging != self.aging_default:
            lines.append(f"{{aging}} {self.aging}")
        if self.flowcontrol is not None and self.flowcontrol != self.flow_default:
            lines.append("flowcontrol" if self.flowcontrol else "no flowcontrol")
        return lines


def port_block(header: str, port: PortState, *, os6: bool) -> list[str]:
    """One interface block as the switch prints it: only what differs from the defaults
    (a port in access mode prints no mode line [B], [8024F], [FS]), then the kept lines."""
    body: list[str] = []
    if port.channel_group is not None and os6:
        body.append(f"channel-group {port.channel_group} mode {port.channel_mode}")  # first [NPD]
    if port.shutdown:
        body.append("shutdown")
    if port.mode != "access":
        body.append(f"switchport mode {port.mode}")
    if port.access_vlan is not None:
        body.append(f"switchport access vlan {port.access_vlan}")
    if port.general:
        if port.pvid != 1:
            body.append(f"switchport general pvid {port.pvid}")
        if 1 not in port.untagged and 1 not in port.tagged:
            body.append("switchport general allowed vlan remove 1")
        untagged = sorted(port.untagged - {1})
        if untagged:   # the untagged add is printed without its keyword [B], [ASM]
            body.append(f"switchport general allowed vlan add {format_vlan_ids(untagged)}")
        if port.tagged:
            body.append(f"switchport general allowed vlan add {format_vlan_ids(port.tagged)} tagged")
        if port.tagged_only:
            body.append("switchport general acceptable-frame-type tagged-only")
    if port.trunk_vlans:
        if os6:        # OS6 prints the whole list [NPD]; 62xx an add [B]
            body.append(f"switchport trunk allowed vlan {format_vlan_ids(port.trunk_vlans)}")
        else:
            body.append(f"switchport trunk allowed vlan add {format_vlan_ids(port.trunk_vlans)}")
    if port.stp_disabled:
        body.append("spanning-tree disable")
    if port.channel_group is not None and not os6:
        body.append(f"channel-group {port.channel_group} mode {port.channel_mode}")
    if port.hashing_mode is not None:
        body.append(f"hashing-mode {port.hashing_mode}")
    if port.eee is not None:
        body.append("green-mode eee" if port.eee else "no green-mode eee")
    body += port.extra
    return [header, *body, "exit"] if body else []


def running_config(state: SwitchState, *, description: str, software: str, os6: bool) -> str:
    """`show running-config`: the header [A], [B], [NPD], then the layout in order."""
    lines = ["!Current Configuration:", f'!System Description "{description}"',
             f"!System Software Version {software}", "!Cut-through mode is configured as disabled",
             "!", "configure"]
    aging = "mac address-table aging-time" if os6 else "bridge aging-time"
    for item in state.layout:
        if item == VLANS:
            extra = sorted(state.vlans - {1})
            if os6:
                if extra:      # a range line, then a block per named VLAN [NPD]
                    lines += [f"vlan {format_vlan_ids(extra)}", "exit"]
                for vid in sorted(state.vlan_names):
                    lines += [f"vlan {vid}", *state.vlan_names[vid], "exit"]
            elif extra or state.vlandb_extra:
                lines += ["vlan database"]
                if extra:
                    lines.append(f"vlan {format_vlan_ids(extra)}")
                lines += state.vlandb_extra + ["exit"]
        elif item == GLOBALS:
            lines += [line.replace("{aging}", aging) for line in state.globals_lines()]
        elif item == INTERFACES:
            lag_header = "interface port-channel {}"
            port_header = "interface {}" if os6 else "interface ethernet {}"
            for name, port in state.ports.items():
                block = port_block(port_header.format(name), port, os6=os6)
                lines += block + (["!"] if block else [])
            for lag_id, lag in sorted(state.lags.items()):
                block = port_block(lag_header.format(lag_id), lag, os6=os6)
                lines += block + (["!"] if block else [])
        else:
            lines += item
    lines.append("exit")
    return "\n".join(lines) + "\n"


def dotted(mac: str) -> str:
    """aa:bb:cc:dd:ee:ff -> AABB.CCDD.EEFF, as both CLIs print MACs [NM], [NPD]."""
    digits = mac.replace(":", "").upper()
    return f"{digits[0:4]}.{digits[4:8]}.{digits[8:12]}"


def address_table(state: SwitchState, *, os6: bool) -> str:
    """62xx `show bridge address-table` (columns Vlan, Mac Address, Port, Type; total without
    a space) [NM], or OS6 `show mac address-table` (Type before Port, LAGs `PoN`) [NM10], [NPD]."""
    entries = sorted(state.mac_table, key=lambda e: (e.vlan, e.mac))
    if os6:
        lines = ["", f"Aging time is {state.aging} Sec", "",
                 "Vlan     Mac Address           Type        Port",
                 "-------- --------------------- ----------- ---------------------"]
        lines += [f"{e.vlan:<8} {dotted(e.mac):<21} {'Dynamic':<11} {e.port}" for e in entries]
        lines += ["", f"Total MAC Addresses in use: {len(entries)}", ""]
    else:
        lines = ["", f"Aging time is {state.aging} Sec", "",
                 "  Vlan        Mac Address       Port          Type",
                 "-------- --------------------- ---------- --------------------"]
        lines += [f"{e.vlan:<8} {dotted(e.mac):<21} {e.port:<10} Dynamic" for e in entries]
        lines += ["", f"Total MAC Addresses in use:{len(entries)}", ""]
    return "\n".join(lines) + "\n"


# The summary cuts a longer system name to 14 characters and "..." [NPD]; the length up to
# which a name is printed whole (the column is 17 wide) is assumed.
LLDP_NAME_WIDTH, LLDP_NAME_CUT = 17, 14


def lldp_summary(state: SwitchState) -> str:
    """`show lldp remote-device all` in the OS6 layout [NPD], [OS6F]: title, `Local`, header,
    dashes, one row per neighbour; the system name drifts two columns right of its header
    when the Port ID is a name, as in both captures. The 62xx layout is assumed the same."""
    lines = ["", "LLDP Remote Device Summary", "", "Local",
             "Interface RemID   Chassis ID          Port ID           System Name",
             "--------- ------- ------------------- ----------------- -----------------"]
    for i, e in enumerate(state.lldp, start=1):
        name = e.system_name
        if len(name) > LLDP_NAME_WIDTH:
            name = name[:LLDP_NAME_CUT] + "..."
        lines.append(f"{e.port:<9} {i:<7} {e.chassis:<19} {e.port_id:<19} {name}".rstrip())
    return "\n".join(lines) + "\n\n"


def lldp_detail(state: SwitchState, port: str) -> str:
    """`show lldp remote-device detail PORT` [NPD]: every neighbour of one port in full."""
    out = []
    for i, e in enumerate(state.lldp, start=1):
        if e.port.lower() != port.lower():
            continue
        mac = e.port_id.count(":") == 5
        out += ["", "LLDP Remote Device Detail", "", f"Local Interface: {e.port}", "", "",
                f"Remote Identifier: {i}", "Chassis ID Subtype: MAC Address", f"Chassis ID: {e.chassis}",
                f"Port ID Subtype: {'MAC Address' if mac else 'Interface Name'}", f"Port ID: {e.port_id}",
                f"System Name: {e.system_name}", "System Description:", "Port Description:",
                "System Capabilities Supported:", "System Capabilities Enabled:",
                "Time to Live: 105 seconds"]
    return "\n".join(out) + "\n\n"


def spanning_tree(state: SwitchState, *, os6: bool, blocking: re.Pattern[str] | None = None) -> str:
    """`show spanning-tree` in the layout of a real OS6 switch [OS6STP]: the global line,
    the root and bridge blocks, `Interfaces`, then `Name State Prio.Nbr Cost Sts Role
    Restricted` with one row per bridge port (ports outside a LAG, then LAGs with members;
    62xx `ch1`, OS6 `Po1`). The 62xx layout is assumed the same. The emulator runs no
    spanning tree: a port under it prints `Enabled ... FWD Desg` when its link is up and
    `DIS Disb` when down; a port with `spanning-tree disable` (or every port under `no
    spanning-tree`) prints `Disabled ... DIS Disb` (assumed: no capture shows such a port).
    `blocking` (fault knob Faults.stp_blocking): the ports whose name it matches print
    `Enabled ... BLK Altn` whatever their config says, as a switch blocking them would."""
    on = "Enabled" if state.stp_enabled else "Disabled"
    lines = ["", f"Spanning tree :{on} - BPDU Flooding :Disabled - Portfast BPDU filtering :Disabled - mode :rstp",
             "CST Regional Root:        80:00:00:10:18:00:00:01", "Regional Root Path Cost:  0",
             "ROOT ID", "              Priority        32768", "              Address         0010.1800.0001",
             "              This Switch is the Root.",
             "              Hello Time 2 Sec Max Age 20 sec Forward Delay 15 sec TxHoldCount 6 sec",
             "Interfaces", "", "Name     State    Prio.Nbr  Cost      Sts  Role  Restricted",
             "------   -------- --------- --------- ---- ----- ----------"]
    up = state.links_up()
    lags_up = state.lags_up()
    rows: list[tuple[str, PortState, bool]] = [(n, p, n in up) for n, p in state.ports.items()
                                               if p.channel_group is None]
    members = {p.channel_group for p in state.ports.values() if p.channel_group is not None}
    rows += [(f"{'Po' if os6 else 'ch'}{n}", lag, n in lags_up) for n, lag in sorted(state.lags.items())
             if n in members]
    for number, (name, port, link) in enumerate(rows, start=1):
        if blocking is not None and blocking.fullmatch(name):
            mode, sts, role = "Enabled", "BLK", "Altn"
        elif not state.stp_enabled or port.stp_disabled:
            mode, sts, role = "Disabled", "DIS", "Disb"
        elif link:
            mode, sts, role = "Enabled", "FWD", "Desg"
        else:
            mode, sts, role = "Enabled", "DIS", "Disb"
        lines.append(f"{name:<8} {mode:<8} {f'128.{number}':<9} {'20000':<9} {sts:<4} {role:<5} No")
    return "\n".join(lines) + "\n\n"
