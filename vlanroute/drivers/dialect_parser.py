"""The one parser of line-oriented switch CLI configs whose ports have a "general"/"hybrid"-like
mode (PowerConnect 62xx, OS6, APRESIA AEOS): a per-family `Dialect` says how VLANs are
created, how ports are named, how membership is written and which few commands differ.

Platform defaults (802.1Q factory state): every port and LAG is an untagged member of
VLAN 1 with PVID 1, admits all frames, filters on ingress, runs spanning tree; the aging
time is the platform's default, flow control the family's firmware default
(`FirmwareDefaults`). A port in access mode forwards in its access VLAN only.

Two ways to read a text:
- `strict` (rendered configs, `verify`, `push --strict`): management-plane lines
  (hostname, users, SNMP, ...) are accepted and kept as context; anything else that is not
  understood is an error naming the file and line, because a line skipped silently could
  change forwarding;
- running configs (`push`): every line vlanroute does not model is kept as a
  `ContextLine`, in its block, classified: no effect on forwarding (a description), or a
  forwarding change on its port or in the VLANs it names (a trunk, port security, a routing
  interface); an unknown line on a port counts as a forwarding change. Push refuses a
  switch only when such a line touches a port or VLAN the plan manages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from vlanroute.drivers.common import parse_error, vlan_ids, vlan_ids_named
from vlanroute.drivers.family import FirmwareDefaults
from vlanroute.model.bridge import (DEFAULT_VLAN, ContextLine, Effect, LagPort, PortConfig, PortRef,
                                    SwitchConfig)
from vlanroute.model.platforms import Platform

ALL_VLANS = frozenset(range(1, 4095))


@dataclass(frozen=True)
class Membership:
    """How a dialect writes a port's VLAN membership and PVID (regexes of whole lines)."""

    add: str                           # group 1 = VLAN list, group 2 = " tagged"/" untagged" or None
    add_default: str                   # the kind when no keyword is given: "untagged" or "tagged"
    remove: str                        # group 1 = VLAN list
    pvid: str                          # group 1 = VLAN id
    no_pvid: str | None = None
    pvid_untagged: bool = False        # the PVID line also makes that VLAN untagged (a native VLAN)
    extra: bool = True                 # acceptable-frame-type and ingress-filtering commands


DELL_GENERAL = Membership(
    add=r"switchport general allowed vlan add (\S+)( tagged| untagged)?", add_default="untagged",
    remove=r"switchport general allowed vlan remove (\S+)", pvid=r"switchport general pvid (\d+)",
    no_pvid="no switchport general pvid")


@dataclass(frozen=True)
class Dialect:
    family: str
    title: str                         # in messages: "unsupported <title> command"
    mode_word: str                     # the port mode of host and inter-switch ports
    vlan_database: bool                # VLANs created under `vlan database` (62xx) or at global level
    aging: str                         # the global aging-time command, without the value
    # `interface ...` forms naming physical ports: regex with group 1 = the port list,
    # and a function turning one written port name into the platform's name (or None).
    phys_if: tuple[str, ...]
    port_name: Callable[[str], str | None]
    range_re: str                      # a port name split into (prefix, number)
    lag_label: Callable[[int], str]    # how the switch names a LAG in its output (messages)
    membership: Membership = DELL_GENERAL
    defaults: FirmwareDefaults = FirmwareDefaults()
    # `interface ...` forms naming LAGs: regex with group 1 = a LAG id list
    lag_if: tuple[str, ...] = (r"interface (?:range )?(?:port-channel|Po) ?(\S+)",)
    need_mode: bool = True             # mode commands rejected unless the port is in that mode
    eee: bool = False                  # `green-mode eee` per interface
    port_flow: tuple[str, str] | None = None   # per-port flow control (on, off) lines, else global
    global_lag_hash: str | None = None  # regex of a global hash command, group 1 = mode
    # Global lines that open a block closed by `exit` (kept whole as context), and the
    # blocks nested in an interface block.
    block_open: str = r"$^"
    if_block_open: str = r"$^"
    harmless_if: str = r"$^"           # interface lines that do not change forwarding
    indented: bool = False             # sub-mode lines are indented; an unindented line leaves
    trunk_all_vlans: bool = False      # `switchport mode trunk` without a list carries every VLAN


# Whole lines that carry no configuration: device chatter captured with the config.
_CHATTER = re.compile(
    r"^(Warning:|WARNING:|This operation may take|Management interfaces will not|"
    r"Are you sure you want to save|Configuration Saved|Building configuration|"
    r"Current Configuration|--More--)", re.IGNORECASE)

# Global-mode lines that do not affect 802.1Q forwarding (management plane, logging...):
# what `strict` accepts, unchanged from before running configs were read leniently.
_IGNORED_GLOBAL = re.compile(
    r"^(hostname|username|enable (password|secret)|snmp-server|sntp|clock|logging|"
    r"ip (address|default-gateway|domain|name-server|ssh|telnet|http)|ipv6 |crypto|"
    r"lldp|aaa|password|banner|no ip (domain|http|telnet)|service|terminal|"
    r"spanning-tree (mode|priority|forward-time|max-age|hello-time|bpdu)|"
    r"set description|system |switch \d+ provision|slot |application)\b")

# Interface-mode lines that do not affect 802.1Q forwarding (strict).
_IGNORED_IF = re.compile(
    r"^(description|name|speed|duplex|mtu|negotiation|no negotiation|lacp|"
    r"spanning-tree (portfast|cost|port-priority|edgeport|auto-portfast)|"
    r"no spanning-tree (portfast|cost|port-priority|edgeport|auto-portfast)|"
    r"lldp|no lldp|snmp|no snmp)\b")

# Blocks whose contents are management only: `stack` / `member 1 2`, `line console` ...
_IGNORED_BLOCK = re.compile(r"^(stack|line (console|telnet|ssh|vty.*)|interface (vlan|loopback) \d+|"
                            r"interface (out-of-band|oob|mgmt\S*))$")
_IGNORED_IN_BLOCK = re.compile(
    r"^(member|password|login|exec-timeout|serial|ip address|description|name|"
    r"no shutdown|shutdown|enable authentication|accounting)\b")

# VLAN ids an unmodelled line puts a port (or the switch) into; `remove` lists take away.
_VLAN_REFS = (re.compile(r"\ballowed vlan (?:add )?([0-9][0-9,-]*)"),
              re.compile(r"\baccess vlan ([0-9]+)"), re.compile(r"\bpvid ([0-9]+)"),
              re.compile(r"\bnative (?:vlan )?([0-9]+)"), re.compile(r"\btrunk add ([0-9][0-9,-]*)"),
              re.compile(r"\bvoice vlan ([0-9]+)"), re.compile(r"^vlan routing ([0-9]+)"),
              re.compile(r"^ip address vlan ([0-9]+)"))
_INTERFACE_VLAN = re.compile(r"interface vlan (\d+)")
# In an `interface vlan N` block only these leave VLAN N alone (a name, a description).
_VLAN_IF_HARMLESS = re.compile(r"^(name|description|no shutdown|exit)\b")


def _vlans_named(line: str, dialect: Dialect) -> frozenset[int]:
    if dialect.trunk_all_vlans and line == "switchport mode trunk":
        return ALL_VLANS
    return frozenset(vlan_ids_named(line, _VLAN_REFS))


@dataclass
class _Block:
    """An opaque block being read: its path and its depth of nested blocks."""

    path: str
    port: PortRef | None
    vlan: int | None                   # `interface vlan N`: the VLAN its lines act in
    effect: Effect                     # of lines in it that are not otherwise classified
    depth: int = 1


@dataclass
class _ParseState:
    cfg: SwitchConfig
    platform: Platform
    dialect: Dialect
    strict: bool
    access_vlan: dict[str, int] = field(default_factory=dict)   # port/LAG name -> VLAN
    flow: dict[str, bool] = field(default_factory=dict)         # per-port flow control
    eee: dict[str, bool] = field(default_factory=dict)          # per-port EEE
    global_hash: str | None = None

    def keep(self, lineno: int, raw: str, block: str | None = None, port: PortRef | None = None,
             effect: Effect = "none", vlans: frozenset[int] = frozenset()) -> None:
        self.cfg.context.append(ContextLine(lineno, raw.rstrip("\r\n"), block, port, effect, vlans))


def parse_with(dialect: Dialect, text: str, *, switch: str, platform: Platform,
               source: str = "", strict: bool = True) -> SwitchConfig:
    """Parse config text of `dialect` into the vendor-neutral model (module docstring)."""
    cfg = SwitchConfig.with_defaults(name=switch, family=dialect.family, platform=platform.name,
                                     ports=platform.ports, aging_time=platform.aging_default,
                                     source=source, flow_control=dialect.defaults.flow_control)
    state = _ParseState(cfg=cfg, platform=platform, dialect=dialect, strict=strict)
    context = "global"                 # global | vlandb | vlan | if | opaque
    targets: list[tuple[PortRef, PortConfig]] = []
    if_header = ""                     # the interface line of the block being read
    if_port: PortRef | None = None
    block: _Block | None = None        # the opaque block being read (context "opaque")
    nested: _Block | None = None       # a block nested in an interface block
    vlan_block = ""
    aging_re = re.compile(re.escape(dialect.aging) + r" (\d+)")
    block_open = re.compile(dialect.block_open)
    if_block_open = re.compile(dialect.if_block_open)
    harmless_if = re.compile(dialect.harmless_if)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = " ".join(raw.split())
        if not line or line.startswith("!") or _CHATTER.match(line):
            continue
        if "!" in line and '"' not in line and "'" not in line:
            line = re.sub(r"\s+!.*$", "", line)       # `slot 1/0 5    ! N4064F`: a trailing comment

        def err(message: str, fix: str | None = None) -> Exception:
            return parse_error(source, lineno, raw, message, fix)

        if dialect.indented and context in ("if", "vlan") and raw[:1] not in (" ", "\t") \
                and line not in ("exit", "end"):
            context, targets = "global", []    # AEOS: an unindented line leaves the sub-mode
        if line in ("configure", "config", "configure terminal"):
            continue

        if context == "opaque":
            assert block is not None
            if line == "exit":
                block.depth -= 1
                state.keep(lineno, raw, block.path)
                if block.depth == 0:
                    context, block = "global", None
                continue
            if block_open.fullmatch(line):
                block.depth += 1
            effect, vlans = _in_block_effect(block, line, dialect)
            if strict and _IGNORED_BLOCK.match(block.path) and not _IGNORED_IN_BLOCK.match(line) \
                    and block.depth == 1:
                raise err("unsupported command in a management block",
                          fix="remove it, or teach the parser in vlanroute/drivers/")
            state.keep(lineno, raw, block.path, block.port, effect, vlans)
            continue
        if nested is not None:
            if line == "exit":
                nested.depth -= 1
                state.keep(lineno, raw, nested.path, nested.port)
                if nested.depth == 0:
                    nested = None
                continue
            if strict:
                raise err(f"unsupported {dialect.title} interface command")
            if if_block_open.fullmatch(line):
                nested.depth += 1
            state.keep(lineno, raw, nested.path, nested.port, nested.effect)
            continue

        if line in ("end", "exit"):
            # In a sub-mode `exit` goes back to global; at global it leaves config mode
            # (the last line of `show running-config`).
            context, targets = "global", []
            continue
        if context == "vlandb":
            _vlan_line(state, line, err, database=True, lineno=lineno, raw=raw)
            continue
        if context == "vlan":
            if not re.fullmatch(r"name .*", line) and strict:
                raise err("unsupported command in VLAN mode")
            state.keep(lineno, raw, vlan_block)
            continue
        if line.startswith("interface "):
            opened = _open_interface(state, line, err)
            if isinstance(opened, _Block):
                if strict and not _IGNORED_BLOCK.match(line):
                    raise err("unsupported interface", fix="see the family's template for the "
                                                           "interface forms")
                block, context = opened, "opaque"
                state.keep(lineno, raw, None, None, "none")
                continue
            targets, if_header = opened, line
            if_port = targets[0][0] if len(targets) == 1 else None
            context = "if"
            continue
        if context == "if":
            if if_block_open.fullmatch(line):
                if strict:
                    raise err(f"unsupported {dialect.title} interface command")
                path = f"{if_header} > {line}"
                nested = _Block(path, if_port, None, "none")
                state.keep(lineno, raw, if_header, if_port)
                continue
            for ref, port in targets:
                handled = _interface_line(state, port, line, err)
                if handled:
                    continue
                if strict and not _IGNORED_IF.match(line):
                    raise err(f"unsupported {dialect.title} interface command",
                              fix="check the line; the supported subset is in docs/outdir-layout.md "
                                  "and the family's template")
                if_effect: Effect = "none" if harmless_if.match(line) or _IGNORED_IF.match(line) \
                    else "forwarding"
                state.keep(lineno, raw, if_header, ref, if_effect, _vlans_named(line, dialect))
            continue

        # Global mode.
        if line == "vlan database" and dialect.vlan_database:
            context = "vlandb"
        elif not dialect.vlan_database and re.fullmatch(r"(no )?vlan [0-9][0-9,-]*", line):
            _vlan_line(state, line, err, database=False, lineno=lineno, raw=raw)
            if not line.startswith("no "):
                context, vlan_block = "vlan", line
        elif line == "no spanning-tree":
            cfg.stp_global_enabled = False
        elif line == "spanning-tree":
            cfg.stp_global_enabled = True
        elif m := aging_re.fullmatch(line):
            value = int(m.group(1))
            if not platform.aging_min <= value <= platform.aging_max:
                raise err(f"aging time {value} outside {platform.aging_min}-{platform.aging_max} s "
                          f"of {platform.name}")
            cfg.aging_time = value
        elif line == f"no {dialect.aging}":
            cfg.aging_time = platform.aging_default
        elif line in ("flowcontrol", "no flowcontrol") and dialect.port_flow is None:
            cfg.flow_control = line == "flowcontrol"
        elif dialect.global_lag_hash and (m := re.fullmatch(dialect.global_lag_hash, line)):
            state.global_hash = m.group(1)
        elif block_open.fullmatch(line) or _IGNORED_BLOCK.match(line):
            if strict and not _IGNORED_BLOCK.match(line):
                raise err(f"unsupported {dialect.title} command",
                          fix="check the line; the supported subset is in docs/outdir-layout.md "
                              "and the family's template")
            block, context = _Block(line, None, None, "none"), "opaque"
            state.keep(lineno, raw)
        elif _IGNORED_GLOBAL.match(line) or not strict:
            vlans = _vlans_named(line, dialect)
            state.keep(lineno, raw, effect="forwarding" if vlans else "none", vlans=vlans)
        else:
            raise err(f"unsupported {dialect.title} command",
                      fix="check the line; the supported subset is in docs/outdir-layout.md "
                          "and the family's template")
    _finish(state)
    return cfg


def _in_block_effect(block: _Block, line: str, dialect: Dialect) -> tuple[Effect, frozenset[int]]:
    """A line inside an opaque block: in `interface vlan N` it acts in VLAN N (an address,
    routing) unless it only names the VLAN; elsewhere it counts by the VLANs it names."""
    if block.vlan is not None:
        if _VLAN_IF_HARMLESS.match(line):
            return "none", frozenset()
        return "forwarding", frozenset({block.vlan})
    vlans = _vlans_named(line, dialect)
    if block.port is not None or vlans:
        return "forwarding", vlans
    return block.effect, vlans


def _ids(text: str, err) -> set[int]:  # type: ignore[no-untyped-def]
    try:
        return vlan_ids(text)
    except ValueError as exc:
        raise err(str(exc), fix="VLAN lists are ids and N-M ranges separated by commas, "
                            "without spaces") from None


def _vlan_line(state: _ParseState, line: str, err, *, database: bool, lineno: int, raw: str) -> None:  # type: ignore[no-untyped-def]
    if m := re.fullmatch(r"(no )?vlan (\S+)", line):
        ids = _ids(m.group(2), err)
        bad = sorted(v for v in ids if v != DEFAULT_VLAN
                     and not state.platform.vid_min <= v <= state.platform.vid_max)
        if bad:
            raise err(f"VLAN {bad[0]} outside the configurable range "
                      f"{state.platform.vid_min}-{state.platform.vid_max} of {state.platform.name}")
        if m.group(1):
            if DEFAULT_VLAN in ids:
                raise err("VLAN 1 is the default VLAN and cannot be deleted")
            state.cfg.vlans -= ids
        else:
            state.cfg.vlans |= ids
    elif database and re.fullmatch(r"vlan (name|association|makestatic) .*", line):
        state.keep(lineno, raw, "vlan database")   # names and IP/MAC associations: no L2 effect
    elif database and not state.strict:
        vlans = _vlans_named(line, state.dialect)    # `vlan routing 103 1`: routing in VLAN 103
        state.keep(lineno, raw, "vlan database", effect="forwarding" if vlans else "none", vlans=vlans)
    else:
        raise err("unsupported command in `vlan database`")


def _expand_ports(state: _ParseState, text: str, err) -> list[str] | None:  # type: ignore[no-untyped-def]
    """The platform's names of the ports written; None (running configs only) if a port
    the platform does not have is named, so the block is kept as context."""
    d = state.dialect
    if text == "all":
        return list(state.platform.ports)
    out: list[str] = []
    for part in text.split(","):
        first, sep, last = part.partition("-")
        name1 = d.port_name(first)
        if name1 is None:
            raise err(f"bad port name {first!r}")
        if not sep:
            names = [name1]
        else:
            m1 = re.fullmatch(d.range_re, name1)
            name2 = d.port_name(last) if not last.isdigit() else (m1.group(1) + last if m1 else None)
            m2 = re.fullmatch(d.range_re, name2) if name2 else None
            if not m1 or not m2 or m1.group(1) != m2.group(1) or int(m1.group(2)) > int(m2.group(2)):
                raise err(f"bad port range {part!r}")
            names = [f"{m1.group(1)}{i}" for i in range(int(m1.group(2)), int(m2.group(2)) + 1)]
        for name in names:
            if not state.platform.has_port(name):
                if not state.strict:
                    return None
                raise err(f"port {name} does not exist on {state.platform.name}")
        out.extend(names)
    return out


def _lag(state: _ParseState, lag_id: int, err) -> PortConfig:  # type: ignore[no-untyped-def]
    if not 1 <= lag_id <= state.platform.max_lags:
        raise err(f"port-channel {lag_id} outside 1-{state.platform.max_lags} of {state.platform.name}")
    return state.cfg.add_lag(lag_id, state.dialect.lag_label(lag_id))


def _open_interface(state: _ParseState, line: str, err) -> list[tuple[PortRef, PortConfig]] | _Block:  # type: ignore[no-untyped-def]
    """The ports and LAGs an `interface` line enters, or the opaque block it opens (a VLAN
    interface, out-of-band, a port the platform does not have, an unknown form)."""
    if m := _INTERFACE_VLAN.fullmatch(line):
        return _Block(line, None, int(m.group(1)), "none")
    for pattern in state.dialect.lag_if:
        if m := re.fullmatch(pattern, line):
            return [(LagPort(i), _lag(state, i, err)) for i in sorted(_ids(m.group(1), err))]
    for pattern in state.dialect.phys_if:
        if m := re.fullmatch(pattern, line):
            names = _expand_ports(state, m.group(1), err)
            if names is None:
                return _Block(line, None, None, "forwarding")
            state.cfg.touched.update(names)
            return [(p, state.cfg.ports[p]) for p in names]
    if state.strict and not _IGNORED_BLOCK.match(line):
        raise err("unsupported interface", fix="see the family's template for the interface forms")
    return _Block(line, None, None, "none")


def _interface_line(state: _ParseState, port: PortConfig, line: str, err) -> bool:  # type: ignore[no-untyped-def]
    """Apply one modelled interface line to `port`; False if vlanroute does not model it."""
    d = state.dialect
    w = d.mode_word
    mb = d.membership
    is_lag = port.is_lag

    def need_mode() -> None:
        if d.need_mode and port.mode != w:
            raise err(f"{port.name} is not in {w} mode; the switch rejects this "
                      f"('Port is not {w} port.')", fix=f"put `switchport mode {w}` first")

    if m := re.fullmatch(r"switchport mode (\S+)", line):
        if m.group(1) not in (w, "access"):
            if not state.strict:
                return False                   # a trunk to the site: kept, classified
            raise err(f"switchport mode {m.group(1)} is not modelled by vlanroute verify",
                      fix=f"use `switchport mode {w}` as the templates do")
        port.mode = m.group(1)
    elif line == "no switchport mode":
        port.mode = "access"
    elif m := re.fullmatch(r"switchport access vlan (\d+)", line):
        state.access_vlan[port.name] = int(m.group(1))
    elif line == "no switchport access vlan":
        state.access_vlan.pop(port.name, None)
    elif m := re.fullmatch(mb.pvid, line):
        need_mode()
        port.pvid = int(m.group(1))
        if mb.pvid_untagged:
            port.untagged.add(port.pvid)
            port.tagged.discard(port.pvid)
    elif mb.no_pvid and line == mb.no_pvid:
        need_mode()
        port.pvid = DEFAULT_VLAN
    elif m := re.fullmatch(mb.add, line):
        need_mode()
        ids = _ids(m.group(1), err)
        if (m.group(2) or f" {mb.add_default}").strip() == "tagged":
            port.tagged |= ids
            port.untagged -= ids
        else:
            port.untagged |= ids
            port.tagged -= ids
    elif m := re.fullmatch(mb.remove, line):
        need_mode()
        ids = _ids(m.group(1), err)
        port.tagged -= ids
        port.untagged -= ids
    elif mb.extra and line == f"switchport {w} acceptable-frame-type tagged-only":
        need_mode()
        port.acceptable = "tagged-only"
    elif mb.extra and line == f"no switchport {w} acceptable-frame-type tagged-only":
        need_mode()
        port.acceptable = "all"
    elif mb.extra and line == f"switchport {w} ingress-filtering disable":
        need_mode()
        port.ingress_filtering = False
    elif mb.extra and line == f"no switchport {w} ingress-filtering disable":
        need_mode()
        port.ingress_filtering = True
    elif m := re.fullmatch(r"switchport forbidden vlan (add|remove) (\S+)", line):
        ids = _ids(m.group(2), err)
        if m.group(1) == "add":
            port.forbidden |= ids
        else:
            port.forbidden -= ids
    elif m := re.fullmatch(r"channel-group (\d+) mode (on|auto|active|passive)", line):
        if is_lag:
            raise err("channel-group is a command for a physical port, not a port-channel")
        _lag(state, int(m.group(1)), err)
        port.lag = int(m.group(1))
        state.cfg.origin[(port.name, "lag")] = line
    elif line == "no channel-group":
        port.lag = None
    elif m := re.fullmatch(r"hashing-mode (\d)", line):
        if not is_lag:
            raise err("hashing-mode belongs under `interface port-channel N`")
        if not 1 <= int(m.group(1)) <= 7:
            raise err("hashing-mode must be 1-7")
        port.hash_mode = m.group(1)
    elif line == "no hashing-mode":
        port.hash_mode = None
    elif line == "spanning-tree disable":
        port.stp_enabled = False
    elif line == "no spanning-tree disable":
        port.stp_enabled = True
    elif line == "shutdown":
        port.enabled = False
    elif line == "no shutdown":
        port.enabled = True
    elif d.eee and line in ("green-mode eee", "no green-mode eee"):
        state.eee[port.name] = not line.startswith("no ")
    elif d.port_flow is not None and line in d.port_flow:
        state.flow[port.name] = line == d.port_flow[0]
    elif d.port_flow is None and line in ("flowcontrol", "no flowcontrol"):
        return False                           # per-port pause: no forwarding effect (context)
    else:
        return False
    return True


def _finish(state: _ParseState) -> None:
    """Access-mode membership, LAG member lists in port order, switch-wide settings."""
    cfg = state.cfg
    if state.dialect.trunk_all_vlans:
        # A trunk with a list of its own (`switchport trunk allowed vlan 10,20`) carries that
        # list, not every VLAN: the mode line then names no VLAN.
        listed = {c.block for c in cfg.context
                  if re.fullmatch(r"switchport trunk allowed vlan [0-9][0-9,-]*", " ".join(c.text.split()))}
        cfg.context = [replace(c, vlans=frozenset()) if c.vlans == ALL_VLANS and c.block in listed else c
                       for c in cfg.context]
    for port in list(cfg.ports.values()) + list(cfg.lags.values()):
        if port.mode == "access":
            vid = state.access_vlan.get(port.name, DEFAULT_VLAN)
            port.pvid, port.untagged, port.tagged = vid, {vid}, set()
    for name, port in cfg.ports.items():
        if port.lag is not None:
            cfg.lags[port.lag].members.append(name)
    for lag in cfg.lags.values():
        lag.members.sort(key=state.platform.port_index)
        if lag.hash_mode is None and state.global_hash is not None:
            lag.hash_mode = state.global_hash
    # Per-port settings summarised per switch: a value only if every port that sets it agrees.
    for values, attr in ((state.flow, "flow_control"), (state.eee, "eee")):
        seen = set(values.values())
        if len(seen) == 1:
            setattr(cfg, attr, seen.pop())
