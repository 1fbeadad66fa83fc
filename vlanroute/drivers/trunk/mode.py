"""One config reader for the CLIs whose ports are access or trunk ports only (Arista EOS,
Dell OS10): no general/hybrid mode, so a port has at most one untagged VLAN, its native
VLAN, and carries the VLANs of its trunk allowed list tagged.

802.1Q meaning of the two modes, as the families' evidence pages state it:
- access port: PVID = access VLAN (default 1), untagged member of it, nothing tagged;
- trunk port: PVID = native VLAN, untagged member of the native VLAN if the trunk carries it,
  tagged member of every other VLAN of its allowed list. The native VLAN is written
  `switchport trunk native vlan N` on EOS (default 1) and `switchport access vlan N` on OS10
  (`no switchport access vlan`: no native VLAN, untagged frames are dropped, PVID 0).
  The allowed list is replaced by `switchport trunk allowed vlan LIST` on EOS (default: all
  VLANs) and added to by it on OS10 (default: none; `no switchport trunk allowed vlan LIST`
  removes).

Both CLIs print sub-mode lines indented under their `interface`/`vlan` line. Rendered
files and push's command lists may also write them unindented, closed by `exit`, as typed
into the CLI: a block whose first sub-line is indented ends at the next unindented line;
one whose first sub-line is not ends at `exit`, `end` or the next `interface`/`vlan` line.

Two ways to read a text (as vlanroute.drivers.dialect_parser): `strict` (rendered configs)
refuses every line it does not know; a running config keeps such lines as classified
`ContextLine`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from vlanroute.drivers.common import parse_error, vlan_ids, vlan_ids_named
from vlanroute.drivers.family import FirmwareDefaults
from vlanroute.model.bridge import (DEFAULT_VLAN, ContextLine, Effect, LagPort, PortConfig, PortRef,
                                    SwitchConfig)
from vlanroute.model.platforms import Platform

ALL_VLANS = frozenset(range(1, 4095))


@dataclass(frozen=True)
class TrunkDialect:
    family: str
    title: str
    port_name: Callable[[str], str | None]      # `interface X` argument -> platform port name
    lag_if: str                                  # regex of an interface line naming a LAG (group 1 = id)
    phys_if: str                                 # regex of an interface line naming a port (group 1)
    native_is_access: bool                       # OS10: `switchport access vlan N` is a trunk's native VLAN
    allowed_additive: bool                       # OS10: `allowed vlan LIST` adds to the list
    trunk_default_all: bool                      # EOS: a trunk without a list carries every VLAN
    vlan_global: bool                            # EOS: `vlan LIST` at global level creates VLANs
    vlan_if: str | None                          # OS10: regex of `interface vlanN` (creates VLAN N)
    port_stp_off: tuple[str, ...]                # per-port lines that turn spanning tree off
    port_stp_on: tuple[str, ...]                 # ... and back on (the default)
    global_stp_off: str                          # the global line that turns spanning tree off
    global_stp_on: str                           # regex of global lines that turn it on
    aging: str                                   # global aging command, without the value
    lag_hashes: dict[str, str]                   # global LAG hash line -> the family's hash keyword
    flow_lines: dict[str, tuple[str, bool]]      # per-port flow-control line -> (direction, on)
    flow_defaults: dict[str, bool]               # each direction's state when no line says (assumed where unknown)
    defaults: FirmwareDefaults
    lag_label: Callable[[int], str]
    harmless_if: str                             # interface lines without forwarding effect
    harmless_global: str                         # global lines accepted by strict (management plane)
    heredoc: str = r"$^"                         # global lines whose text runs until `EOF`
    # The port-channel numbers the CLI takes: a number is a name, not a count, so this is
    # the CLI's range, not the platform's max_lags (how many LAGs a plan may use).
    lag_id_max: int = 128


# VLAN ids an unmodelled line names (a trunk to the site, a VLAN interface, a spanning-tree
# VLAN list, ...): push refuses the switch if one of them is a routing VLAN.
_VLAN_REFS = (re.compile(r"\bvlan(?:-id)? (?:add )?([0-9][0-9,-]*)"),
              re.compile(r"\bvlan ?([0-9]+)$"), re.compile(r"^interface vlan ?([0-9]+)", re.I))


def vlans_named(line: str) -> frozenset[int]:
    return frozenset(vlan_ids_named(line, _VLAN_REFS))


@dataclass
class _PortState:
    """What the text said about one port or LAG, before it becomes 802.1Q sets."""

    mode: str = "access"                 # access | trunk | routed
    access_vlan: int | None = DEFAULT_VLAN   # None: `no switchport access vlan` (OS10 trunk: no native)
    native: int = DEFAULT_VLAN           # EOS `switchport trunk native vlan`
    allowed: set[int] | None = None      # None: never given (EOS: all VLANs, OS10: none)
    flow: dict[str, bool] = field(default_factory=dict)


@dataclass
class _Block:
    kind: str                            # if | vlan | opaque
    header: str
    style: str = ""                      # "" until the first sub-line; "indented" | "typed"
    targets: list[tuple[PortRef, PortConfig, _PortState]] = field(default_factory=list)
    vlan: int | None = None              # `interface vlanN` / `vlan N` block: its VLAN
    vlans: frozenset[int] = frozenset()  # EOS `vlan A,B` block: its VLANs
    port: PortRef | None = None
    saw_access: bool = False             # an access-VLAN line was read in this block


def _closed(d: TrunkDialect, block: _Block | None) -> None:
    """A block ends. OS10 prints a port's access VLAN whenever it has one, 1 included
    [GC], [UG]: a printed (indented) port block without that line has none, which on a
    trunk means no untagged VLAN. A typed block only changes what it names."""
    if block is not None and block.kind == "if" and d.native_is_access and block.style == "indented" \
            and not block.saw_access:
        for _, _, st in block.targets:
            st.access_vlan = None


def parse_trunk(d: TrunkDialect, text: str, *, switch: str, platform: Platform,
                source: str = "", strict: bool = True) -> SwitchConfig:
    """Config text of dialect `d` -> the vendor-neutral model (module docstring)."""
    cfg = SwitchConfig.with_defaults(name=switch, family=d.family, platform=platform.name,
                                     ports=platform.ports, aging_time=platform.aging_default,
                                     source=source, flow_control=d.defaults.flow_control)
    states: dict[str, _PortState] = {}
    global_hash: str | None = None
    block: _Block | None = None
    heredoc = False
    aging_re = re.compile(re.escape(d.aging) + r" (\d+)")

    def keep(lineno: int, raw: str, blk: str | None = None, port: PortRef | None = None,
             effect: Effect = "none", vlans: frozenset[int] = frozenset()) -> None:
        cfg.context.append(ContextLine(lineno, raw.rstrip("\r\n"), blk, port, effect, vlans))

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = " ".join(raw.split())
        indented = raw[:1] in (" ", "\t")

        def err(message: str, fix: str | None = None) -> Exception:
            return parse_error(source, lineno, raw, message, fix)

        if heredoc:
            keep(lineno, raw, "heredoc")
            heredoc = line != "EOF"
            continue
        if not line:
            continue
        if line.startswith("!"):
            if not indented:
                _closed(d, block)             # `!` between stanzas
                block = None
            continue
        if line in ("configure", "configure terminal", "config"):
            continue
        if line in ("end", "exit"):
            _closed(d, block)
            block = None
            continue
        # Does the line belong to the open block?
        if block is not None:
            if block.style == "":
                # Only the sub-modes vlanroute types into (ports, VLANs) take unindented
                # sub-lines; any other block is what the switch printed, indented.
                block.style = "indented" if indented or block.kind == "opaque" else "typed"
            if block.style == "indented" and not indented:
                _closed(d, block)
                block = None
            elif block.style == "typed" and re.match(r"(interface|vlan) ", line, re.I):
                _closed(d, block)
                block = None
        if block is not None:
            _sub_line(d, cfg, platform, block, line, raw, lineno, strict, err, keep)
            continue

        # Global level.
        if re.fullmatch(d.heredoc, line):
            if strict:
                raise err(f"unsupported {d.title} command")
            keep(lineno, raw)
            heredoc = True
            continue
        if line.lower().startswith("interface "):
            _closed(d, block)
            block = _open_interface(d, cfg, platform, states, line, err, strict)
            creates_vlan = bool(d.vlan_if and re.fullmatch(d.vlan_if, line, re.IGNORECASE))
            if block.kind == "opaque" and strict and not creates_vlan:
                raise err("unsupported interface", fix="see the family's template for the interface forms")
            if block.kind == "opaque" and not creates_vlan:
                keep(lineno, raw, None, None, "forwarding" if block.vlan is not None else "none",
                     frozenset({block.vlan}) if block.vlan is not None else frozenset())
            continue
        if d.vlan_global and (m := re.fullmatch(r"(no )?vlan ([0-9][0-9,-]*)", line)):
            ids = _ids(m.group(2), err)
            _check_vlans(platform, ids, err)
            if m.group(1):
                if DEFAULT_VLAN in ids:
                    raise err("VLAN 1 is the default VLAN and cannot be deleted")
                cfg.vlans -= ids
            else:
                cfg.vlans |= ids
                block = _Block("vlan", line, vlans=frozenset(ids))
            continue
        if d.vlan_if and (m := re.fullmatch(r"no interface vlan ?(\d+)", line, re.IGNORECASE)):
            ids = {int(m.group(1))}
            _check_vlans(platform, ids, err)
            cfg.vlans -= ids - {DEFAULT_VLAN}
            continue
        if line == d.global_stp_off:
            cfg.stp_global_enabled = False
            continue
        if re.fullmatch(d.global_stp_on, line):
            cfg.stp_global_enabled = True
            keep(lineno, raw)                # the mode itself is not modelled
            continue
        if m := aging_re.fullmatch(line):
            value = int(m.group(1))
            if not platform.aging_min <= value <= platform.aging_max:
                raise err(f"aging time {value} outside {platform.aging_min}-{platform.aging_max} s "
                          f"of {platform.name}")
            cfg.aging_time = value
            continue
        if line == f"no {d.aging}":
            cfg.aging_time = platform.aging_default
            continue
        if line in d.lag_hashes:
            global_hash = d.lag_hashes[line]
            continue
        if line.startswith("no ") and line[3:] in d.lag_hashes:
            global_hash = None
            continue
        if m := re.fullmatch(r"no " + d.lag_if[:-len(r" ?(\d+)")] + r" ?(\d+)", line, re.IGNORECASE):
            lag_id = int(m.group(1))
            cfg.lags.pop(lag_id, None)
            states.pop(d.lag_label(lag_id), None)
            for port in cfg.ports.values():
                if port.lag == lag_id:
                    port.lag = None
            continue
        if strict and not re.match(d.harmless_global, line):
            raise err(f"unsupported {d.title} command",
                      fix="check the line; the supported subset is the family's template")
        vlans = vlans_named(line)
        keep(lineno, raw, effect="forwarding" if vlans else "none", vlans=vlans)
        # Any other unindented line may open a block of its own (router bgp, mlag configuration ...).
        block = _Block("opaque", line)

    _closed(d, block)
    _finish(d, cfg, states, platform, global_hash)
    return cfg


def _sub_line(d: TrunkDialect, cfg: SwitchConfig, platform: Platform, block: _Block, line: str, raw: str, lineno: int,
              strict: bool, err, keep) -> None:  # type: ignore[no-untyped-def]
    if block.kind == "opaque":
        if block.vlan is not None:
            harmless = re.match(r"(description|name|no shutdown|shutdown|mtu)\b", line)
            keep(lineno, raw, block.header, None, "none" if harmless else "forwarding",
                 frozenset() if harmless else frozenset({block.vlan}))
        else:
            vlans = vlans_named(line)
            effect: Effect = "forwarding" if vlans or block.port is not None else "none"
            keep(lineno, raw, block.header, block.port, effect, vlans)
        return
    if block.kind == "vlan":
        if re.fullmatch(r"name \S.*", line):
            keep(lineno, raw, block.header)
            return
        if strict:
            raise err(f"unsupported {d.title} command in VLAN mode")
        # `trunk group X`, `state suspend` ...: the VLAN's forwarding changes.
        keep(lineno, raw, block.header, None, "forwarding", block.vlans)
        return
    if re.fullmatch(r"(no )?switchport access vlan( \d+)?", line):
        block.saw_access = True
    for ref, port, st in block.targets:
        if _interface_line(d, cfg, platform, port, st, line, err):
            continue
        harmless = re.match(d.harmless_if, line)
        if strict and not harmless:
            raise err(f"unsupported {d.title} interface command",
                      fix="check the line; the supported subset is the family's template")
        keep(lineno, raw, block.header, ref, "none" if harmless else "forwarding", vlans_named(line))


def _ids(text: str, err) -> set[int]:  # type: ignore[no-untyped-def]
    try:
        return vlan_ids(text)
    except ValueError as exc:
        raise err(str(exc), fix="VLAN lists are ids and N-M ranges separated by commas, "
                                "without spaces") from None


def _check_vlans(platform: Platform, ids: set[int], err) -> None:  # type: ignore[no-untyped-def]
    bad = sorted(v for v in ids if v != DEFAULT_VLAN and not platform.vid_min <= v <= platform.vid_max)
    if bad:
        raise err(f"VLAN {bad[0]} outside the configurable range "
                  f"{platform.vid_min}-{platform.vid_max} of {platform.name}")


def _open_interface(d: TrunkDialect, cfg: SwitchConfig, platform: Platform, states: dict[str, _PortState], line: str,
                    err, strict: bool) -> _Block:  # type: ignore[no-untyped-def]
    if d.vlan_if and (m := re.fullmatch(d.vlan_if, line, re.IGNORECASE)):
        vid = int(m.group(1))
        if vid != DEFAULT_VLAN:
            cfg.vlans.add(vid)
        # The VLAN interface of OS10 is how a VLAN is made; its sub-lines (an address,
        # routing) act in that VLAN.
        return _Block("opaque", line, vlan=vid)
    if m := re.fullmatch(r"interface vlan ?(\d+)", line, re.IGNORECASE):
        return _Block("opaque", line, vlan=int(m.group(1)))
    if m := re.fullmatch(d.lag_if, line, re.IGNORECASE):
        lag_id = int(m.group(1))
        if not 1 <= lag_id <= d.lag_id_max:
            raise err(f"port-channel {lag_id} outside {d.title}'s 1-{d.lag_id_max}")
        lag = cfg.add_lag(lag_id, d.lag_label(lag_id))
        st = states.setdefault(lag.name, _PortState())
        return _Block("if", line, targets=[(LagPort(lag_id), lag, st)], port=LagPort(lag_id))
    if m := re.fullmatch(d.phys_if, line, re.IGNORECASE):
        name = d.port_name(m.group(1))
        if name is None:
            raise err(f"bad port name {m.group(1)!r}")
        if name not in cfg.ports:
            if strict:
                raise err(f"port {name} does not exist on {cfg.platform}")
            return _Block("opaque", line)          # another model's port: kept as it is
        cfg.touched.add(name)
        st = states.setdefault(name, _PortState())
        return _Block("if", line, targets=[(name, cfg.ports[name], st)], port=name)
    return _Block("opaque", line)


def _interface_line(d: TrunkDialect, cfg: SwitchConfig, platform: Platform, port: PortConfig, st: _PortState, line: str,
                    err) -> bool:  # type: ignore[no-untyped-def]
    """Apply one modelled interface line; False if vlanroute does not model it."""
    if m := re.fullmatch(r"switchport mode (access|trunk)", line):
        st.mode = m.group(1)
    elif line == "no switchport mode":
        st.mode = "access"
    elif line == "switchport":
        if st.mode == "routed":
            st.mode = "access"
    elif m := re.fullmatch(r"switchport access vlan (\d+)", line):
        st.access_vlan = next(iter(_ids(m.group(1), err)))
    elif line == "no switchport access vlan":
        st.access_vlan = None if d.native_is_access else DEFAULT_VLAN
    elif not d.native_is_access and (m := re.fullmatch(r"switchport trunk native vlan (\d+)", line)):
        st.native = next(iter(_ids(m.group(1), err)))
    elif not d.native_is_access and line == "no switchport trunk native vlan":
        st.native = DEFAULT_VLAN
    elif m := re.fullmatch(r"switchport trunk allowed vlan (add |remove |except )?(\S+)", line):
        how, what = (m.group(1) or "").strip(), m.group(2)
        if what in ("none", "all") and not how:
            st.allowed = set() if what == "none" else set(ALL_VLANS)
            return True
        ids = _ids(what, err)
        current = st.allowed if st.allowed is not None else \
            (set(ALL_VLANS) if d.trunk_default_all else set())
        if how == "add" or (not how and d.allowed_additive):
            st.allowed = current | ids
        elif how == "remove":
            st.allowed = current - ids
        elif how == "except":
            st.allowed = set(ALL_VLANS) - ids
        else:
            st.allowed = set(ids)
    elif m := re.fullmatch(r"no switchport trunk allowed vlan( \S+)?", line):
        if m.group(1) and d.allowed_additive:
            current = st.allowed if st.allowed is not None else set()
            st.allowed = current - _ids(m.group(1).strip(), err)
        else:
            st.allowed = None                        # back to the default list
    elif m := re.fullmatch(r"channel-group (\d+)( mode (on|active|passive))?", line):
        if port.is_lag:
            raise err("channel-group is a command for a physical port, not a port-channel")
        lag_id = int(m.group(1))
        if not 1 <= lag_id <= d.lag_id_max:
            raise err(f"port-channel {lag_id} outside {d.title}'s 1-{d.lag_id_max}")
        cfg.add_lag(lag_id, d.lag_label(lag_id))
        port.lag = lag_id
        cfg.origin[(port.name, "lag")] = line
        if m.group(3) in ("active", "passive"):
            return False                             # LACP: kept as context, a forwarding change
    elif line == "no channel-group":
        port.lag = None
    elif line in d.port_stp_off:
        port.stp_enabled = False
    elif line in d.port_stp_on:
        port.stp_enabled = True
    elif line == "shutdown":
        port.enabled = False
    elif line == "no shutdown":
        port.enabled = True
    elif line in d.flow_lines:
        direction, on = d.flow_lines[line]
        st.flow[direction] = on
    elif line == "no switchport":
        st.mode = "routed"
        return port.lag is not None                  # a LAG member's own L3 state: no effect
    else:
        return False
    return True


def _finish(d: TrunkDialect, cfg: SwitchConfig, states: dict[str, _PortState], platform: Platform,
            global_hash: str | None) -> None:
    """802.1Q sets from the modes, LAG members, the switch-wide summaries."""
    ports = {**{p.name: p for p in cfg.ports.values()}, **{l.name: l for l in cfg.lags.values()}}
    for name, st in states.items():
        port = ports[name]
        if st.mode == "routed" and name in cfg.ports and cfg.ports[name].lag is not None:
            # OS10 prints `no switchport` on every static LAG member [GC]: the member's own
            # L2 state has no effect (the LAG forwards), so it reads as the default.
            st.mode, st.access_vlan = "access", DEFAULT_VLAN
        port.mode = st.mode
        if st.mode in ("access", "routed") and st.access_vlan is None:
            st.access_vlan = DEFAULT_VLAN        # an access port is always in a VLAN
        if st.mode == "access":
            vid = st.access_vlan if st.access_vlan is not None else DEFAULT_VLAN
            port.pvid, port.untagged, port.tagged = vid, {vid}, set()
        elif st.mode == "trunk":
            allowed = st.allowed if st.allowed is not None else \
                (set(ALL_VLANS) if d.trunk_default_all else set())
            native: int = (st.access_vlan or 0) if d.native_is_access else st.native   # 0: none
            port.pvid = native
            if d.native_is_access:
                # OS10: the access VLAN of a trunk is its untagged VLAN, list or not.
                port.untagged = {native} if native else set()
            else:
                port.untagged = {native} & allowed
            port.tagged = allowed - {native}
        else:                                        # routed: no bridge membership
            port.pvid, port.untagged, port.tagged = 0, set(), set()
        values = {st.flow.get(k, on) for k, on in d.flow_defaults.items()}
        if st.flow and len(values) == 1:
            on = values.pop()
            # A value equal to a known firmware default is what the switch prints no line for.
            port.flow_control = None if on == d.defaults.flow_control else on
    for name, port in cfg.ports.items():
        if port.lag is not None:
            cfg.lags[port.lag].members.append(name)
    for lag in cfg.lags.values():
        lag.members.sort(key=platform.port_index)
        if global_hash is not None:
            lag.hash_mode = global_hash
    # Per-port flow control summed up per switch: a value only if every port that sets
    # one agrees; none set: the firmware default (SwitchConfig.with_defaults).
    seen = {p.flow_control for p in cfg.ports.values() if p.flow_control is not None}
    if len(seen) == 1:
        cfg.flow_control = seen.pop()
    elif seen:
        cfg.flow_control = None
