"""One engine for the line-oriented switch CLIs whose ports have a "general"/"hybrid" mode
(PowerConnect 62xx, OS6, APRESIA AEOS): a per-family `Dialect` says how VLANs are
created, how ports are named, and which few commands differ.

Platform defaults (802.1Q factory state): every port and LAG is an untagged member of
VLAN 1 with PVID 1, admits all frames, filters on ingress, runs spanning tree; the aging
time is the platform's default. A port in access mode forwards in its access VLAN only.

Lines that only touch the management plane (hostname, users, SNMP, ...) are accepted and
ignored; anything else that is not understood is an error naming the file and line,
because a line skipped silently could change forwarding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from vlanroute.model.bridge import DEFAULT_VLAN, PortConfig, SwitchConfig
from vlanroute.drivers.common import parse_error, vlan_ids
from vlanroute.model.platforms import Platform


@dataclass(frozen=True)
class Dialect:
    family: str
    title: str                         # in messages: "unsupported <title> command"
    mode_word: str                     # "general" (Dell) or "hybrid" (AEOS)
    vlan_database: bool                # VLANs created under `vlan database` (62xx) or at global level
    aging: str                         # the global aging-time command, without the value
    # `interface ...` forms naming physical ports: regex with group 1 = the port list,
    # and a function turning one written port name into the platform's name (or None).
    phys_if: tuple[str, ...]
    port_name: Callable[[str], str | None]
    range_re: str                      # a port name split into (prefix, number)
    lag_label: Callable[[int], str]    # how the switch names a LAG in its output (messages)
    # `interface ...` forms naming LAGs: regex with group 1 = a LAG id list
    lag_if: tuple[str, ...] = (r"interface (?:range )?(?:port-channel|Po) ?(\S+)",)
    need_mode: bool = True             # mode commands rejected unless the port is in that mode
    eee: bool = False                  # `green-mode eee` per interface
    per_port_flowcontrol: bool = False  # `flowcontrol on|off` per interface
    global_lag_hash: str | None = None  # regex of a global hash command, group 1 = mode


# Whole lines that carry no configuration: device chatter captured with the config.
_CHATTER = re.compile(
    r"^(Warning:|WARNING:|This operation may take|Management interfaces will not|"
    r"Are you sure you want to save|Configuration Saved|Building configuration|"
    r"Current Configuration|--More--)", re.IGNORECASE)

# Global-mode lines that do not affect 802.1Q forwarding (management plane, logging...).
_IGNORED_GLOBAL = re.compile(
    r"^(hostname|username|enable (password|secret)|snmp-server|sntp|clock|logging|"
    r"ip (address|default-gateway|domain|name-server|ssh|telnet|http)|ipv6 |crypto|"
    r"lldp|aaa|password|banner|no ip (domain|http|telnet)|service|terminal|"
    r"spanning-tree (mode|priority|forward-time|max-age|hello-time|bpdu)|"
    r"set description|system |switch \d+ provision|slot |application)\b")

# Interface-mode lines that do not affect 802.1Q forwarding.
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


@dataclass
class _State:
    cfg: SwitchConfig
    platform: Platform
    dialect: Dialect
    access_vlan: dict[str, int] = field(default_factory=dict)   # port/LAG name -> VLAN
    flow: dict[str, bool] = field(default_factory=dict)         # per-port flow control
    eee: dict[str, bool] = field(default_factory=dict)          # per-port EEE
    global_hash: str | None = None


def parse_with(dialect: Dialect, text: str, *, switch: str, platform: Platform,
               source: str = "") -> SwitchConfig:
    """Parse config text of `dialect` into the vendor-neutral model."""
    cfg = SwitchConfig.with_defaults(name=switch, family=dialect.family, platform=platform.name,
                                     ports=platform.ports, aging_time=platform.aging_default,
                                     source=source)
    st = _State(cfg=cfg, platform=platform, dialect=dialect)
    context = "global"                 # global | vlandb | vlan | if | ignored
    targets: list[PortConfig] = []
    aging_re = re.compile(re.escape(dialect.aging) + r" (\d+)")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = " ".join(raw.split())
        if not line or line.startswith("!") or _CHATTER.match(line):
            continue

        def err(message: str, fix: str | None = None) -> Exception:
            return parse_error(source, lineno, raw, message, fix)

        if line in ("configure", "config", "configure terminal"):
            continue
        if line in ("end", "exit"):
            # In a sub-mode `exit` goes back to global; at global it leaves config mode
            # (the last line of `show running-config`).
            context, targets = "global", []
            continue
        if context == "vlandb":
            _vlan_line(st, line, err, database=True)
            continue
        if context == "vlan":
            if not re.fullmatch(r"name .*", line):
                raise err("unsupported command in VLAN mode")
            continue
        if context == "ignored":
            if not _IGNORED_IN_BLOCK.match(line):
                raise err("unsupported command in a management block",
                          fix="remove it, or teach the parser in vlanroute/drivers/")
            continue
        if line.startswith("interface "):
            if _IGNORED_BLOCK.match(line):
                context, targets = "ignored", []
                continue
            targets = _interface_targets(st, line, err)
            context = "if"
            continue
        if context == "if":
            for port in targets:
                _interface_line(st, port, line, err)
            continue

        # Global mode.
        if line == "vlan database" and dialect.vlan_database:
            context = "vlandb"
        elif not dialect.vlan_database and re.fullmatch(r"(no )?vlan [0-9][0-9,-]*", line):
            _vlan_line(st, line, err, database=False)
            if not line.startswith("no "):
                context = "vlan"
        elif _IGNORED_BLOCK.match(line):
            context = "ignored"
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
        elif line in ("flowcontrol", "no flowcontrol") and not dialect.per_port_flowcontrol:
            cfg.flow_control = line == "flowcontrol"
        elif dialect.global_lag_hash and (m := re.fullmatch(dialect.global_lag_hash, line)):
            st.global_hash = m.group(1)
        elif _IGNORED_GLOBAL.match(line):
            pass
        else:
            raise err(f"unsupported {dialect.title} command",
                      fix="check the line; the supported subset is in docs/outdir-layout.md "
                          "and the family's template")
    _finish(st)
    return cfg


def _ids(text: str, err) -> set[int]:  # type: ignore[no-untyped-def]
    try:
        return vlan_ids(text)
    except ValueError as exc:
        raise err(str(exc), fix="VLAN lists are ids and N-M ranges separated by commas, "
                            "without spaces") from None


def _vlan_line(st: _State, line: str, err, *, database: bool) -> None:  # type: ignore[no-untyped-def]
    if m := re.fullmatch(r"(no )?vlan (\S+)", line):
        ids = _ids(m.group(2), err)
        bad = sorted(v for v in ids if v != DEFAULT_VLAN
                     and not st.platform.vid_min <= v <= st.platform.vid_max)
        if bad:
            raise err(f"VLAN {bad[0]} outside the configurable range "
                      f"{st.platform.vid_min}-{st.platform.vid_max} of {st.platform.name}")
        if m.group(1):
            if DEFAULT_VLAN in ids:
                raise err("VLAN 1 is the default VLAN and cannot be deleted")
            st.cfg.vlans -= ids
        else:
            st.cfg.vlans |= ids
    elif database and re.fullmatch(r"vlan (name|association|makestatic) .*", line):
        pass                                   # names and IP/MAC associations: no L2 effect
    else:
        raise err("unsupported command in `vlan database`")


def _expand_ports(st: _State, text: str, err) -> list[str]:  # type: ignore[no-untyped-def]
    d = st.dialect
    if text == "all":
        return list(st.platform.ports)
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
            if not st.platform.has_port(name):
                raise err(f"port {name} does not exist on {st.platform.name}")
        out.extend(names)
    return out


def _lag(st: _State, lag_id: int, err) -> PortConfig:  # type: ignore[no-untyped-def]
    if not 1 <= lag_id <= st.platform.max_lags:
        raise err(f"port-channel {lag_id} outside 1-{st.platform.max_lags} of {st.platform.name}")
    return st.cfg.add_lag(lag_id, st.dialect.lag_label(lag_id))


def _interface_targets(st: _State, line: str, err) -> list[PortConfig]:  # type: ignore[no-untyped-def]
    for pattern in st.dialect.lag_if:
        if m := re.fullmatch(pattern, line):
            return [_lag(st, i, err) for i in sorted(_ids(m.group(1), err))]
    for pattern in st.dialect.phys_if:
        if m := re.fullmatch(pattern, line):
            names = _expand_ports(st, m.group(1), err)
            st.cfg.touched.update(names)
            return [st.cfg.ports[p] for p in names]
    raise err("unsupported interface", fix="see the family's template for the interface forms")


def _interface_line(st: _State, port: PortConfig, line: str, err) -> None:  # type: ignore[no-untyped-def]
    d = st.dialect
    w = d.mode_word
    is_lag = port.is_lag

    def need_mode() -> None:
        if d.need_mode and port.mode != w:
            raise err(f"{port.name} is not in {w} mode; the switch rejects this "
                      f"('Port is not {w} port.')", fix=f"put `switchport mode {w}` first")

    if m := re.fullmatch(r"switchport mode (\S+)", line):
        if m.group(1) not in (w, "access"):
            raise err(f"switchport mode {m.group(1)} is not modelled by vlanroute verify",
                      fix=f"use `switchport mode {w}` as the templates do")
        port.mode = m.group(1)
    elif line == "no switchport mode":
        port.mode = "access"
    elif m := re.fullmatch(r"switchport access vlan (\d+)", line):
        st.access_vlan[port.name] = int(m.group(1))
    elif line == "no switchport access vlan":
        st.access_vlan.pop(port.name, None)
    elif m := re.fullmatch(rf"switchport {w} pvid (\d+)", line):
        need_mode()
        port.pvid = int(m.group(1))
    elif line == f"no switchport {w} pvid":
        need_mode()
        port.pvid = DEFAULT_VLAN
    elif m := re.fullmatch(rf"switchport {w} allowed vlan add (\S+)( tagged| untagged)?", line):
        need_mode()
        ids = _ids(m.group(1), err)
        if (m.group(2) or " untagged").strip() == "tagged":
            port.tagged |= ids
            port.untagged -= ids
        else:                              # the keyword defaults to untagged (62xx)
            port.untagged |= ids
            port.tagged -= ids
    elif m := re.fullmatch(rf"switchport {w} allowed vlan remove (\S+)", line):
        need_mode()
        ids = _ids(m.group(1), err)
        port.tagged -= ids
        port.untagged -= ids
    elif line == f"switchport {w} acceptable-frame-type tagged-only":
        need_mode()
        port.acceptable = "tagged-only"
    elif line == f"no switchport {w} acceptable-frame-type tagged-only":
        need_mode()
        port.acceptable = "all"
    elif line == f"switchport {w} ingress-filtering disable":
        need_mode()
        port.ingress_filtering = False
    elif line == f"no switchport {w} ingress-filtering disable":
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
        _lag(st, int(m.group(1)), err)
        port.lag = int(m.group(1))
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
        st.eee[port.name] = not line.startswith("no ")
    elif d.per_port_flowcontrol and (m := re.fullmatch(r"flowcontrol (on|off)", line)):
        st.flow[port.name] = m.group(1) == "on"
    elif not d.per_port_flowcontrol and line in ("flowcontrol", "no flowcontrol"):
        pass                                   # per-port pause: no forwarding effect
    elif _IGNORED_IF.match(line):
        pass
    else:
        raise err(f"unsupported {d.title} interface command",
                  fix="check the line; the supported subset is in docs/outdir-layout.md "
                      "and the family's template")


def _finish(st: _State) -> None:
    """Access-mode membership, LAG member lists in port order, switch-wide settings."""
    cfg = st.cfg
    for port in list(cfg.ports.values()) + list(cfg.lags.values()):
        if port.mode == "access":
            vid = st.access_vlan.get(port.name, DEFAULT_VLAN)
            port.pvid, port.untagged, port.tagged = vid, {vid}, set()
    for name, port in cfg.ports.items():
        if port.lag is not None:
            cfg.lags[port.lag].members.append(name)
    for lag in cfg.lags.values():
        lag.members.sort(key=st.platform.port_index)
        if lag.hash_mode is None and st.global_hash is not None:
            lag.hash_mode = st.global_hash
    # Per-port settings summarised per switch: a value only if every port that sets it agrees.
    for values, attr in ((st.flow, "flow_control"), (st.eee, "eee")):
        seen = set(values.values())
        if len(seen) == 1:
            setattr(cfg, attr, seen.pop())
