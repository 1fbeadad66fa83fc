"""An emulated Dell OS10 switch (no I/O: text in, text out), for push and audit tests.

Behaviour, from the sources on docs/platforms/dell-os10.md (bracketed keys); "(assumed)"
marks this emulator's own choice where no source shows the real switch:
- prompts `sw1#`, `sw1(config)#`, `sw1(conf-if-eth1/1/1)#`, `sw1(conf-if-po-1)#`,
  `sw1(conf-if-vl-101)#` [GC], [UG];
- `terminal length 0` accepted, no reply (assumed wording) [NETMIKO];
- transactions: `lock` / `unlock`, `start transaction` (EXEC), then changes go to a candidate
  config until `commit` (EXEC, or `do commit` in configuration mode) or `discard`;
  `show diff candidate-configuration running-configuration`; without a transaction each
  command takes effect at once [KB], [UG]. As the User Guide's "CLI Basics" says [UG]: every
  transaction session edits the SAME candidate, which outlives a session that ends without
  a commit; anyone's `commit`, and any configuration change made outside a transaction,
  commits it whole; `lock` stops configuration changes in every other session, transaction
  or not, until `unlock` or the end of the locking session. A refused change in another
  session answers `% Error: The configuration is locked by another session.` (assumed text);
- deleting a VLAN whose port membership the candidate changed (added to or taken off an
  allowed list, made or unmade an access VLAN) is refused: `% Error:  Range configuration
  conflict - the last command was not applied. Please commit (or discard) the rest of the
  configuration changes and retry.` [UG] (the guide shows it for VLANs added to a port in the
  candidate; for VLANs taken off a port it is assumed);
- `interface vlanN` creates VLAN N, `no interface vlanN` deletes it and takes it off every
  allowed list [UG]; `switchport access vlan N` on a trunk is its untagged VLAN [GC];
  `switchport trunk allowed vlan LIST` adds, `no switchport trunk allowed vlan LIST` removes
  [UG]; a VLAN that does not exist is refused (assumed text `% Error: vlan N does not exist`);
  a VLAN cannot be a trunk's access VLAN and in its allowed list at once [NETLAB1838];
- a static member prints ` channel-group N` without `mode on`, then ` no switchport` [GC];
  `no channel-group` gives back an access port in VLAN 1 (assumed);
- the IP + L4 `load-balancing` line is the default: not printed [GC];
- show running-configuration: `! Version`, `! Last configuration change` header, VLAN
  interfaces, port-channels, mgmt, ethernet ports in that order, one-space indent, ` no
  shutdown` and ` switchport access vlan 1` printed on access ports, `flowcontrol receive on`
  printed on every port (the default on an S4112F-ON) [GC], [DELLOS10NAPALM];
- errors start `% Error:` [UG]; `write memory` copies running to startup, no reply [CSM];
- `show lldp neighbors`: header, dashed line, one row per neighbour of the wired cables
  (vlanroute.lab.wiring), a host name longer than 20 characters cut to 17 and `...`, MACs
  lower case with colons [MFD];
- `show lldp neighbors detail` (what vlanroute reads): one block per neighbour in the
  layout of a real S5248F-ON capture [ARC], names in full, `Not Advertised` for a host
  without a name, blocks separated by a dashed line and a blank line, none after the last;
  the TTL, timers, `Remote Port Description` and `Remote System Desc` values are the
  emulator's own (assumed);
- `show spanning-tree active` in the User Guide's layout [UG10.5], [MXGUIDE], listing only
  the ports spanning tree runs on; the states the emulator's own (spanning_tree_active).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import ClassVar

from vlanroute.lab.state import LldpEntry
from vlanroute.lab.trunkswitch import (CliSpec, Rejected, Reply, TrunkInterpreter, TrunkPort,
                                       TrunkState, TrunkSwitchData, bridge_ports, load_lines)
from vlanroute.vlanlist import format_vlan_list

INVALID = "% Error: Unrecognized command."            # (assumed wording; `% Error` is confirmed [UG])
# A VLAN added to a trunk's allowed list while it is the port's access VLAN [NETLAB1838];
# the reverse (the access VLAN set to one in the list) is refused alike (assumed text).
ACCESS_AND_TRUNK = ("% Error: Interface cannot be an access and trunk member of the same VLAN. "
                    "One of the vlan in the range provided is already an access vlan.")
ACCESS_AND_TRUNK_REVERSE = "% Error: Interface cannot be an access and trunk member of the same VLAN."
# The LAG hash an S4112F-ON takes and then prints no line for [GC].
LOCKED = "% Error: The configuration is locked by another session."      # (assumed text)
RANGE_CONFLICT = ("% Error:  Range configuration conflict - the last command was not applied. Please\n"
                  "commit (or discard) the rest of the configuration changes and retry.")   # [UG]
HASH_DEFAULT = ("load-balancing ip-selection destination-ip source-ip protocol l4-destination-port "
                "l4-source-port")
VERSION = "10.5.2.0"

_KEPT_GLOBAL = re.compile(
    r"(hostname \S+|username \S.*|system-user \S.*|ip domain-name \S+|ip name-server \S.*|ip vrf default|"
    r"iscsi \S.*|logging \S.*|aaa \S.*|snmp-server \S.*|ntp \S.*|clock \S.*|feature \S.*|"
    r"spanning-tree mode \S+|interface breakout \S.*|ip route \S.*|management route \S.*|support-assist|"
    r"ipv6 \S.*)")
_BLOCK = re.compile(r"(class-map \S.*|policy-map \S.*|route-map \S.*|vlt-domain \d+|monitor session \d+.*|"
                    r"spanning-tree mst configuration|router \S.*|interface (loopback|mgmt)\S*( \S+)?)")
_KEPT_IF = re.compile(r"(description \S.*|mtu \d+|speed \S+|fec \S+|(no )?negotiation|"
                      r"(no )?spanning-tree (port type|bpduguard|bpdufilter|guard|link-type) ?\S*( \S+)*|"
                      r"(no )?lldp \S.*|vlt-port-channel \d+|ip address \S.*)")


# What the code both emulators share needs: the `interface` arguments and limits, the
# one-space indent of a block [GC], the least aging time, the global lines kept.
SPEC = CliSpec(invalid=INVALID, indent=" ", aging_min=0, block=_BLOCK, kept_global=_KEPT_GLOBAL,
               lag_arg=r"port-channel ?(\d+)", lag_max=128,
               port_arg=r"ethernet ?(\d+/\d+/\d+(?::\d+)?)", port_prefix="ethernet")


@dataclass
class Os10Port(TrunkPort):
    access_vlan: int | None = 1             # None: `no switchport access vlan`
    allowed: set[int] = field(default_factory=set)
    stp_disabled: bool = False
    flow_receive: bool = True               # printed on every port of a real S4112F-ON [GC]
    flow_transmit: bool = False             # (assumed default)


@dataclass
class Os10State(TrunkState):
    port_type: ClassVar[type] = Os10Port

    ports: dict[str, Os10Port]
    lags: dict[int, Os10Port] = field(default_factory=dict)
    stp_disabled: bool = False

    def delete_vlan(self, vid: int) -> None:
        self.vlans.pop(vid, None)
        for p in [*self.ports.values(), *self.lags.values()]:
            p.allowed.discard(vid)             # deleting a VLAN takes it off every list [UG]
            if p.access_vlan == vid:
                p.access_vlan = 1


def _membership(st: Os10State, vid: int) -> set[tuple[str, bool, bool]]:
    """Where VLAN `vid` is: (port, in its allowed list, its access VLAN) for every port."""
    ports = [*st.ports.items(), *((f"Po{k}", v) for k, v in st.lags.items())]
    return {(name, vid in p.allowed, p.access_vlan == vid) for name, p in ports}


def _port_block(header: str, p: Os10Port, *, is_lag: bool) -> list[str]:
    body = [" shutdown" if p.shutdown else " no shutdown"]
    body += [f" {x}" for x in p.extra if x.startswith("description")]
    if p.channel_group is not None:
        # A static member prints `channel-group N` (no `mode on`), then `no switchport` [GC].
        body.append(f" channel-group {p.channel_group}" + ("" if p.channel_mode == "on" else f" mode {p.channel_mode}"))
        body.append(" no switchport")
    elif p.mode == "routed":
        body.append(" no switchport")
    if p.mode == "trunk" and p.channel_group is None:
        body.append(" switchport mode trunk")
    if p.mode != "routed" and p.channel_group is None and p.access_vlan is not None:
        body.append(f" switchport access vlan {p.access_vlan}")
    if p.mode == "trunk" and p.channel_group is None and p.allowed:
        body.append(f" switchport trunk allowed vlan {format_vlan_list(sorted(p.allowed))}")
    if not is_lag:
        body.append(f" flowcontrol receive {'on' if p.flow_receive else 'off'}")
        if p.flow_transmit:
            body.append(" flowcontrol transmit on")
    if p.stp_disabled:
        body.append(" spanning-tree disable")
    body += [f" {x}" for x in p.extra if not x.startswith("description")]
    return [header, *body, "!"]


def running_config(state: Os10State) -> str:
    lines = [f"! Version {VERSION}", "! Last configuration change at Nov  23 18:00:00 2026", "!"]
    for chunk in state.head:
        lines += chunk + (["!"] if len(chunk) > 1 else [])
    if state.stp_disabled:
        lines.append("spanning-tree disable")
    if state.aging is not None:
        lines.append(f"mac address-table aging-time {state.aging}")
    lines += state.lag_hash
    lines.append("!")
    for v, sub in sorted(state.vlans.items()):
        lines += [f"interface vlan{v}", " no shutdown", *[f" {s}" for s in sub], "!"]
    for lag_id, lag in sorted(state.lags.items()):
        lines += _port_block(f"interface port-channel{lag_id}", lag, is_lag=True)
    if not any(chunk[0] == "interface mgmt1/1/1" for chunk in state.tail):
        lines += ["interface mgmt1/1/1", " no shutdown", " no ip address dhcp", "!"]
    for name, p in state.ports.items():
        lines += _port_block(f"interface {name}", p, is_lag=False)
    for chunk in state.tail:
        lines += chunk + ["!"]
    return "\n".join(lines) + "\n"


@dataclass
class Os10SwitchData(TrunkSwitchData):
    state: Os10State
    candidate: Os10State | None = None      # the shared candidate config of `start transaction`
    locked_by: int | None = None            # the session holding `lock`


def _lldp_mac(text: str) -> str:
    return text.lower() if text.count(":") == 5 else text


# The host name column is 20 wide; a longer name is cut to 17 characters and `...` [MFD].
LLDP_NAME_WIDTH, LLDP_NAME_CUT = 20, 17


def lldp_neighbors(entries: list[LldpEntry]) -> str:
    """`show lldp neighbors` in the layout of the OS10 capture [MFD]: header, one dashed
    line, one row per neighbour; MACs (chassis, a host's Port ID) lower case with colons."""
    lines = ["Loc PortID          Rem Host Name        Rem Port Id                    Rem Chassis Id",
             "-" * 86]
    for e in entries:
        name = e.system_name or "Not Advertised"
        if len(name) > LLDP_NAME_WIDTH:
            name = name[:LLDP_NAME_CUT] + "..."
        lines.append(f"{e.port:<19} {name:<20} {_lldp_mac(e.port_id):<29} {e.chassis.lower()}")
    return "\n".join(lines) + "\n"


def lldp_neighbors_detail(entries: list[LldpEntry]) -> str:
    """`show lldp neighbors detail` in the layout of the real S5248F-ON capture [ARC]: per
    neighbour the chassis and port subtypes and ids, the local port, timers, the system
    name (`Not Advertised` when none), the MAC/PHY lines; a host's Port ID is its MAC
    (subtype `Mac address (3)`), a switch's its interface name (`Interface name (5)`)."""
    blocks = []
    for index, e in enumerate(entries, start=1):
        host = e.port_id.count(":") == 5
        blocks.append("\n".join([
            "Remote Chassis ID Subtype: Mac address (4)",
            f"Remote Chassis ID: {e.chassis.lower()}",
            f"Remote Port Subtype: {'Mac address (3)' if host else 'Interface name (5)'}",
            f"Remote Port ID: {_lldp_mac(e.port_id)}",
            f"Remote Port Description: {'Not Advertised' if host else e.port_id}",
            f"Local Port ID: {e.port}",
            f"Locally assigned remote Neighbor Index: {index}",
            f"Remote TTL: {48 if host else 120}",
            f"Information valid for next {40 if host else 110} seconds",
            "Time since last information change of this neighbor: 2 weeks 4 days 05:51:53",
            f"Remote System Name: {e.system_name or 'Not Advertised'}",
            "Remote System Desc: Not Advertised",
            f"Remote Max Frame Size: {0 if host else 9216}",
            "Remote Aggregation Status: false",
            "MAC PHY Configuration:",
            "    Auto-neg supported: 0",
            "    Auto-neg enabled: 0"]))
    return ("\n" + "-" * 75 + "\n\n").join(blocks) + ("\n" if blocks else "")


def _carries(p: Os10Port, vlan: int) -> bool:
    if p.mode == "trunk":
        return vlan in p.allowed or p.access_vlan == vlan
    return p.mode == "access" and p.access_vlan == vlan


def spanning_tree_active(state: Os10State, lldp: list[LldpEntry], blocking: re.Pattern[str] | None) -> str:
    """`show spanning-tree active` in the layout of the User Guide's examples [UG10.5],
    [MXGUIDE]: the protocol line (the mode of a kept `spanning-tree mode X` line, else
    `rapid-pvst`, OS10's default), then under RPVST+ one section per VLAN (`VLAN N`, root and
    bridge lines, the two tables), under another mode one section for all. Only the ports
    spanning tree runs on are listed ("RSTP-active interfaces" [UG10.5]): a port with
    `spanning-tree disable` is not. The emulator runs no spanning tree: a listed port whose
    link is up is `FWD` (`Desg`), one whose link is down is not listed (assumed);
    `spanning-tree disable` on the whole switch prints nothing (assumed). `blocking`
    (Faults.stp_blocking): matching ports carrying the VLAN are listed `BLK` (`Altr`), as
    the guide prints a blocked port, whatever their config says."""
    if state.stp_disabled:
        return ""
    mode = next((c[0].split()[-1] for c in state.head if c and c[0].startswith("spanning-tree mode ")), "rapid-pvst")
    ports = bridge_ports(state, lldp, "port-channel{}")

    def table(vlans: list[int]) -> list[str]:
        rows: list[tuple[str, str, str]] = []
        for name, port, up in ports:
            if not any(_carries(port, v) for v in vlans):
                continue
            if blocking is not None and blocking.fullmatch(name):
                rows.append((name, "BLK", "Altr"))
            elif up and not port.stp_disabled:
                rows.append((name, "FWD", "Desg"))
        ident = {name: f"128.{i}" for i, (name, _, _) in enumerate(ports, start=1)}
        out = ["Interface                                                  Designated",
               "Name           PortID   Prio  Cost  Sts  Cost  Bridge ID              PortID",
               "-" * 78]
        out += [f"{n:<14} {ident[n]:<8} 128   500   {sts:<4} 0     32769 90b1.1cf4.a625   {ident[n]}"
                for n, sts, _ in rows]
        out += ["Interface", "Name           Role  PortID   Prio  Cost  Sts  Cost  Link-type  Edge", "-" * 70]
        out += [f"{n:<14} {role:<5} {ident[n]:<8} 128   500   {sts:<4} 0     AUTO       No" for n, sts, role in rows]
        return out

    root = ["Executing IEEE compatible Spanning Tree Protocol",
            "Root ID    Priority 32769, Address 90b1.1cf4.a625",
            "Root Bridge hello time 2, max age 20, forward delay 15",
            "Bridge ID    Priority 32769, Address 90b1.1cf4.a625",
            "Configured hello time 2, max age 20, forward delay 15"]
    lines = [f"Spanning tree enabled protocol {mode} with force-version rstp"]
    if mode == "rapid-pvst":
        for vlan in sorted(state.vlans):
            lines += [f"VLAN {vlan}", *root, *table([vlan])]
    else:
        lines += [*root, *table(sorted(state.vlans))]
    return "\n".join(lines) + "\n"


_SESSIONS = iter(range(1, 1 << 30))


@dataclass
class Os10Interpreter(TrunkInterpreter):
    spec: ClassVar[CliSpec] = SPEC

    switch: Os10SwitchData
    model: str = "S5248F-ON"
    in_transaction: bool = False
    vlan_id: int = 0
    ident: int = field(default_factory=lambda: next(_SESSIONS))

    @property
    def state(self) -> Os10State:
        # Outside a transaction a change goes into the shared candidate, if there is one, and
        # commits it whole (execute) [UG].
        if self.switch.candidate is not None and (self.in_transaction or self.mode != "priv"):
            return self.switch.candidate
        return self.switch.state

    def execute(self, line: str) -> Reply:
        sw = self.switch
        words = line.split()
        changing = self.mode != "priv" and not self.seeding and bool(words) and words[0] not in ("end", "exit", "do")
        if changing and sw.locked_by not in (None, self.ident):
            return Reply(LOCKED + "\n")            # `lock` of another session [UG]
        reply = super().execute(line)
        if changing and not self.in_transaction and sw.candidate is not None and not reply.output.startswith("%"):
            # A change made outside a transaction commits the candidate of every other session [UG].
            sw.state, sw.candidate = sw.candidate, None
        return reply

    def prompt(self) -> str:
        h = self.hostname
        if self.mode == "priv":
            return f"{h}#"
        if self.mode == "if":
            t = self.targets[0] if self.targets else ""
            label = f"po-{t[2:]}" if t.startswith("Po") else "eth" + t.removeprefix("ethernet")
            return f"{h}(conf-if-{label})#"
        if self.mode == "vlan":
            return f"{h}(conf-if-vl-{self.vlan_id})#"
        return f"{h}(config)#"

    def running_config(self) -> str:
        return running_config(self.switch.state)

    def on_close(self) -> None:
        """The session ended: its lock goes with it (assumed); the candidate config, shared
        by every transaction session [UG], stays until a `commit` or `discard`."""
        if self.switch.locked_by == self.ident:
            self.switch.locked_by = None

    # -- EXEC ---------------------------------------------------------------------------
    def _exec(self, words: list[str]) -> Reply | None:
        """EXEC commands, also reachable with `do` from configuration mode."""
        sw = self.switch
        if words in (["commit"], ["discard"]) and sw.locked_by not in (None, self.ident):
            raise Rejected(LOCKED)
        if words == ["commit"]:
            if sw.candidate is not None:         # the candidate of every session [UG]
                sw.state, sw.candidate = sw.candidate, None
            self.in_transaction = False          # back to non-transaction mode [UG]
            return Reply()
        if words == ["discard"]:
            sw.candidate = None                  # the shared candidate's uncommitted changes [UG]
            self.in_transaction = False
            return Reply()
        if words[0] == "show" and len(words) >= 2:
            return Reply(self._show(words[1:]))
        if words in (["write", "memory"], ["copy", "running-configuration", "startup-configuration"]):
            sw.saved.append(self.running_config())
            return Reply()
        return None

    def _priv(self, words: list[str]) -> Reply:
        sw = self.switch
        if words[:2] == ["terminal", "length"] or words[:2] == ["terminal", "width"]:
            return Reply()
        if words == ["lock"]:
            if sw.locked_by not in (None, self.ident):
                raise Rejected("% Error: The configuration is locked by another session.")
            sw.locked_by = self.ident
            return Reply()
        if words == ["unlock"]:
            if sw.locked_by == self.ident:
                sw.locked_by = None
            return Reply()
        if words == ["start", "transaction"]:
            if sw.locked_by not in (None, self.ident):
                raise Rejected("% Error: The configuration is locked by another session.")
            if sw.candidate is None:
                sw.candidate = sw.state.clone()
            self.in_transaction = True
            return Reply()
        if (reply := self._exec(words)) is not None:
            return reply
        raise Rejected(INVALID)

    def _show(self, args: list[str]) -> str:
        sw = self.switch
        if args in (["running-configuration"], ["running-config"]):
            return self.running_config()
        if args in (["candidate-configuration"],):
            return running_config(sw.candidate or sw.state)
        if args == ["diff", "candidate-configuration", "running-configuration"]:
            before = self.running_config().splitlines()
            after = running_config(sw.candidate or sw.state).splitlines()
            return "\n".join(difflib.unified_diff(before, after, "running-configuration",
                                                  "candidate-configuration", lineterm="")) + "\n"
        if args == ["version"]:
            return (f"Dell SmartFabric OS10 Enterprise\nCopyright (c) 1999-2025 by Dell Inc. All Rights Reserved.\n"
                    f"OS Version: {VERSION}\nBuild Version: {VERSION}.1\nSystem Type: {self.model}\n"
                    "Architecture: x86_64\nUp Time: 1 day 02:03:04\n")
        if args[:2] == ["interface", "status"]:
            out = ["-" * 98, "Port            Description     Status   Speed    Duplex   Mode Vlan Tagged-Vlans", "-" * 98]
            up = {e.port for e in sw.lldp}      # a cable of the lab plugged in (vlanroute.lab.linkdown)
            for name, p in sw.state.ports.items():
                mode = "T" if p.mode == "trunk" else ("A" if p.mode == "access" else "")
                vlan = str(p.access_vlan or "")
                status, speed = ("up", "10G") if name in up else ("down", "--")
                out.append(f"Eth {name.removeprefix('ethernet'):<11} {'':<15} {status:<8} {speed:<8} --       "
                           f"{mode:<4} {vlan:<4} {format_vlan_list(sorted(p.allowed))}")
            return "\n".join(out) + "\n"
        if args == ["mac", "address-table"]:
            rows = ["Codes: pv <vlan-id> - private vlan where the mac is originally learnt",
                    "VlanId        Mac Address         Type        Interface"]
            rows += [f"{e.vlan:<13} {e.mac:<19} dynamic     {e.port}"
                     for e in sorted(sw.state.mac_table, key=lambda e: (e.vlan, e.mac))]
            return "\n".join(rows) + "\n"
        if args == ["lldp", "neighbors"]:
            return lldp_neighbors(sw.lldp)
        if args == ["lldp", "neighbors", "detail"]:
            return lldp_neighbors_detail(sw.lldp)
        if args == ["spanning-tree", "active"]:
            return spanning_tree_active(sw.state, sw.lldp, self.stp_blocking)
        raise Rejected(INVALID)

    # -- configuration ------------------------------------------------------------------
    def _anywhere(self, words: list[str]) -> Reply | None:
        if words == ["end"]:
            self.mode, self.targets, self.block = "priv", [], None
            return Reply()
        if words[0] == "do" and len(words) > 1:
            reply = self._exec(words[1:])
            if reply is None:
                raise Rejected(INVALID)
            if words[1:] == ["commit"]:
                pass                              # still in configuration mode
            return reply
        return None

    def _config(self, words: list[str], text: str, line: str) -> Reply | None:
        st = self.state
        if words == ["exit"]:
            self.mode = "priv"
            return Reply()
        if m := re.fullmatch(r"(no )?interface vlan ?(\d+)", text):
            vid = self._int(m.group(2), 1, 4093)
            if m.group(1):
                if vid == 1:
                    raise Rejected("% Error: Default vlan cannot be deleted.")
                if self.in_transaction and _membership(st, vid) != _membership(self.switch.state, vid):
                    raise Rejected(RANGE_CONFLICT)
                st.delete_vlan(vid)
                return Reply()
            st.vlans.setdefault(vid, [])
            self.mode, self.vlan_id = "vlan", vid
            return Reply()
        if words[:2] == ["no", "load-balancing"]:
            st.lag_hash = []
            return Reply()
        if text == "spanning-tree disable":
            st.stp_disabled = True
            return Reply()
        if text == "no spanning-tree disable":
            st.stp_disabled = False
            return Reply()
        if words[0] == "load-balancing":
            # The IP + L4 hash is the default: a real S4112F-ON prints no line for it [GC].
            st.lag_hash = [] if text == HASH_DEFAULT else [text]
            return Reply()
        return None

    def _mode_vlan(self, words: list[str], line: str) -> Reply:
        if (reply := self._anywhere(words)) is not None:
            return reply
        if words == ["exit"] or (self.seeding and line[:1] not in (" ", "\t")) or words[0] == "interface":
            self.mode = "config"
            return Reply() if words == ["exit"] else self._mode_config(words, line)
        text = " ".join(words)
        if text in ("no shutdown", "shutdown"):
            return Reply()
        self.state.vlans[self.vlan_id].append(text)   # an address, a description ...: kept
        return Reply()

    def _interface(self, arg: str) -> Reply:
        if arg.startswith("breakout "):
            self.state.head.append([f"interface {arg}"])        # a global line, no sub-mode [GC]
            return Reply()
        return super()._interface(arg)

    def _bad_interface(self, arg: str) -> str:
        return "% Error: Invalid interface." if arg.startswith("ethernet") else INVALID

    def _new_lag(self) -> Os10Port:
        return Os10Port(flow_receive=False)

    def _need_vlans(self, ids: list[int]) -> None:
        missing = [v for v in ids if v not in self.state.vlans]
        if missing and not self.seeding:
            raise Rejected(f"% Error: vlan {missing[0]} does not exist")   # (assumed text)

    def _if_command(self, target: str, p: Os10Port, text: str) -> None:
        if text == "no channel-group" and not target.startswith("Po") and p.channel_group is not None:
            # Back to the factory port, access in VLAN 1 (assumed: no source shows it).
            p.channel_group, p.mode, p.access_vlan = None, "access", 1
            return
        super()._if_command(target, p, text)

    def _if_family(self, target: str, p: Os10Port, text: str) -> None:
        is_lag = target.startswith("Po")
        if m := re.fullmatch(r"switchport mode (access|trunk)", text):
            p.mode = m.group(1)
            if p.mode == "access":
                p.allowed = set()
                p.access_vlan = p.access_vlan or 1
        elif m := re.fullmatch(r"switchport access vlan (\S+)", text):
            vid = self._int(m.group(1), 1, 4093)
            self._need_vlans([vid])
            if p.mode == "trunk" and vid in p.allowed and not self.seeding:
                raise Rejected(ACCESS_AND_TRUNK_REVERSE)
            p.access_vlan = vid
        elif text == "no switchport access vlan":
            p.access_vlan = None if p.mode == "trunk" else 1
        elif m := re.fullmatch(r"(no )?switchport trunk allowed vlan (\S+)", text):
            if p.mode != "trunk":
                raise Rejected("% Error: Interface is not in trunk mode.")   # (assumed text)
            ids = self._vlans(m.group(2))
            if m.group(1):
                p.allowed -= set(ids)
            else:
                self._need_vlans(ids)
                if p.access_vlan in ids and not self.seeding:
                    raise Rejected(ACCESS_AND_TRUNK)
                p.allowed |= set(ids)               # additive [UG]
        elif m := re.fullmatch(r"channel-group (\S+)( mode (on|active|passive))?", text):
            if is_lag:
                raise Rejected(INVALID)
            lag_id = self._int(m.group(1), 1, self.spec.lag_max)
            p.channel_group, p.channel_mode = lag_id, m.group(3) or "on"
            p.mode, p.allowed = "routed", set()      # printed `no switchport` [GC]
            self.state.lags.setdefault(lag_id, self._new_lag())

        elif text == "spanning-tree disable":
            p.stp_disabled = True
        elif text == "no spanning-tree disable":
            p.stp_disabled = False
        elif m := re.fullmatch(r"flowcontrol (receive|transmit) (on|off)", text):
            if is_lag:
                raise Rejected(INVALID)
            setattr(p, f"flow_{m.group(1)}", m.group(2) == "on")
        elif _KEPT_IF.fullmatch(text):
            p.extra.append(text)
        else:
            raise Rejected(INVALID)


def load(text: str, ports, hostname: str, model: str, source: str = "config") -> Os10State:  # type: ignore[no-untyped-def]
    """The state a running configuration describes (a seed): its lines executed in
    configuration mode. ValueError names a refused line."""
    data = Os10SwitchData(Os10State.factory_default(tuple(ports)), [])
    cli = Os10Interpreter(hostname, data, model=model, seeding=True)
    load_lines(cli, text, source=source, switch_name="OS10")
    # A printed trunk block without an access line has no untagged VLAN (OS10 prints the
    # access VLAN whenever one is set, 1 included [GC], [UG]).
    for header, body in _printed_blocks(text):
        if "switchport mode trunk" in body and not any(b.startswith("switchport access vlan") for b in body):
            m = re.fullmatch(r"interface (port-channel|ethernet)(\S+)", header)
            if m:
                port = data.state.lags.get(int(m.group(2))) if m.group(1) == "port-channel" \
                    else data.state.ports.get(f"ethernet{m.group(2)}")
                if port is not None:
                    port.access_vlan = None
    return data.state


def _printed_blocks(text: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        if raw.startswith("interface "):
            out.append((raw.strip(), []))
        elif raw[:1] == " " and out:
            out[-1][1].append(raw.strip())
        elif raw.strip() and not raw.startswith(" "):
            out.append(("", []))
    return [(h, b) for h, b in out if h]
