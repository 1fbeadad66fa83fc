"""Parser for Dell PowerConnect 62xx configs (family `powerconnect-62xx`).

Reads both what `templates/` renders and what the switch prints in `show running-config`
(docs/outdir-layout.md lists the command subset). Platform defaults (FW 3.x): every port
and LAG is an untagged member of VLAN 1 with PVID 1, admits all frames, filters on
ingress, runs spanning tree; aging time 300 s. A port in access mode forwards in its
access VLAN only; `switchport general ...` lines are rejected on a port that is not in
general mode, as the switch does ("Port is not general port.").

Lines that only touch the management plane (hostname, users, SNMP, ...) are accepted and
ignored; anything else that is not understood is an error naming the line, because a
line we skip silently could change forwarding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vlanroute.bridge_model import DEFAULT_VLAN, PortConfig, SwitchConfig
from vlanroute.parsers.common import parse_error, vlan_ids
from vlanroute.platforms import Platform

FAMILY = "powerconnect-62xx"

# Whole lines that carry no configuration: device chatter captured with the config.
_CHATTER = re.compile(
    r"^(Warning:|WARNING:|This operation may take|Management interfaces will not|"
    r"Are you sure you want to save|Configuration Saved|Building configuration|"
    r"Current Configuration|--More--)", re.IGNORECASE)

# Global-mode lines that do not affect 802.1Q forwarding (management plane, logging...).
_IGNORED_GLOBAL = re.compile(
    r"^(hostname|username|enable (password|secret)|snmp-server|sntp|clock|logging|"
    r"ip (address|default-gateway|domain|name-server|ssh|telnet|http)|ipv6 |crypto|"
    r"lldp|aaa|password|banner|no ip (domain|http|telnet)|service|"
    r"spanning-tree (mode|priority|forward-time|max-age|hello-time|bpdu)|"
    r"set description|system |switch \d+ provision|application)\b")

# Interface-mode lines that do not affect 802.1Q forwarding.
_IGNORED_IF = re.compile(
    r"^(description|name|speed|duplex|mtu|negotiation|no negotiation|lacp|"
    r"spanning-tree (portfast|cost|port-priority|edgeport|auto-portfast)|"
    r"no spanning-tree (portfast|cost|port-priority|edgeport|auto-portfast)|"
    r"lldp|no lldp|snmp|no snmp)\b")

# Blocks whose contents are management only: `stack` / `member 1 2`, `line console` ...
_IGNORED_BLOCK = re.compile(r"^(stack|line (console|telnet|ssh)|interface (vlan|loopback) \d+)$")
_IGNORED_IN_BLOCK = re.compile(
    r"^(member|password|login|exec-timeout|serial|ip address|description|name|"
    r"no shutdown|shutdown|enable authentication|accounting)\b")

_PORT = re.compile(r"^(\d+)/(g|xg)(\d+)$")


@dataclass
class _State:
    cfg: SwitchConfig
    platform: Platform
    source: str
    access_vlan: dict[str, int] = field(default_factory=dict)   # port/LAG key -> VLAN


def parse(text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
    """Parse PowerConnect 62xx config text into the vendor-neutral model."""
    cfg = SwitchConfig.with_defaults(name=switch, family=FAMILY, platform=platform.name,
                                     ports=platform.ports, aging_time=platform.aging_default,
                                     source=source)
    st = _State(cfg=cfg, platform=platform, source=source)
    context: str = "global"                 # global | vlandb | if | ignored
    targets: list[PortConfig] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = " ".join(raw.split())
        if not line or line.startswith("!") or _CHATTER.match(line):
            continue

        def err(message: str, fix: str | None = None) -> Exception:
            return parse_error(source, lineno, raw, message, fix)

        if line in ("configure", "config", "configure terminal"):
            continue
        if line == "end":
            context, targets = "global", []
            continue
        if line == "exit":
            # In a sub-mode `exit` goes back to global; at global it leaves config mode
            # (the last line of `show running-config`).
            context, targets = "global", []
            continue

        if context == "vlandb":
            _vlan_db_line(st, line, err)
            continue
        if context == "ignored":
            if not _IGNORED_IN_BLOCK.match(line):
                raise err("unsupported command in a management block",
                          fix="remove it, or teach vlanroute/parsers/powerconnect.py")
            continue
        if line.startswith("interface ") and context in ("global", "if"):
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
        if line == "vlan database":
            context = "vlandb"
        elif _IGNORED_BLOCK.match(line):
            context = "ignored"
        elif line == "no spanning-tree":
            cfg.stp_global_enabled = False
        elif line == "spanning-tree":
            cfg.stp_global_enabled = True
        elif m := re.fullmatch(r"bridge aging-time (\d+)", line):
            value = int(m.group(1))
            if not platform.aging_min <= value <= platform.aging_max:
                raise err(f"aging time {value} outside {platform.aging_min}-{platform.aging_max} s "
                          f"of {platform.name}")
            cfg.aging_time = value
        elif line == "no bridge aging-time":
            cfg.aging_time = platform.aging_default
        elif line == "flowcontrol":
            cfg.flow_control = True
        elif line == "no flowcontrol":
            cfg.flow_control = False
        elif _IGNORED_GLOBAL.match(line):
            pass
        else:
            raise err("unsupported PowerConnect 62xx command",
                      fix="check the line; the supported subset is in docs/outdir-layout.md")
    _finish(st)
    return cfg


def _vlan_db_line(st: _State, line: str, err) -> None:  # type: ignore[no-untyped-def]
    if m := re.fullmatch(r"(no )?vlan (\S+)", line):
        ids = _ids(st, m.group(2), err)
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
    elif re.fullmatch(r"vlan (name|association|makestatic) .*", line):
        pass                                   # names and IP/MAC associations: no L2 effect
    else:
        raise err("unsupported command in `vlan database`")


def _ids(st: _State, text: str, err) -> set[int]:  # type: ignore[no-untyped-def]
    try:
        return vlan_ids(text)
    except ValueError as exc:
        raise err(str(exc), fix="VLAN lists are ids and N-M ranges separated by commas, "
                            "without spaces") from None


def _expand_ports(st: _State, text: str, err) -> list[str]:  # type: ignore[no-untyped-def]
    if text == "all":
        return list(st.platform.ports)
    out: list[str] = []
    for part in text.split(","):
        first, sep, last = part.partition("-")
        m1 = _PORT.match(first)
        if m1 is None:
            raise err(f"bad port name {first!r}", fix="62xx ports are named like 1/g5 or 1/xg1")
        if not sep:
            names = [first]
        else:
            m2 = _PORT.match(last) or (re.fullmatch(r"\d+", last) and _PORT.match(
                f"{m1.group(1)}/{m1.group(2)}{last}"))
            if not m2 or m2.group(1) != m1.group(1) or m2.group(2) != m1.group(2):
                raise err(f"bad port range {part!r}")
            lo, hi = int(m1.group(3)), int(m2.group(3))
            if lo > hi:
                raise err(f"bad port range {part!r}")
            names = [f"{m1.group(1)}/{m1.group(2)}{i}" for i in range(lo, hi + 1)]
        for name in names:
            if not st.platform.has_port(name):
                raise err(f"port {name} does not exist on {st.platform.name}")
        out.extend(names)
    return out


def _lag(st: _State, lag_id: int, err) -> PortConfig:  # type: ignore[no-untyped-def]
    if not 1 <= lag_id <= st.platform.max_lags:
        raise err(f"port-channel {lag_id} outside 1-{st.platform.max_lags} of {st.platform.name}")
    lag = st.cfg.lags.get(lag_id)
    if lag is None:
        lag = st.cfg.lags[lag_id] = PortConfig(name=st.cfg.lag_name(lag_id))
    return lag


def _interface_targets(st: _State, line: str, err) -> list[PortConfig]:  # type: ignore[no-untyped-def]
    if m := re.fullmatch(r"interface (?:range )?ethernet (\S+)", line):
        return [st.cfg.ports[p] for p in _expand_ports(st, m.group(1), err)]
    if m := re.fullmatch(r"interface (?:range )?port-channel (\S+)", line):
        return [_lag(st, i, err) for i in sorted(_ids(st, m.group(1), err))]
    if m := re.fullmatch(r"interface (ch\d+)", line):
        return [_lag(st, int(m.group(1)[2:]), err)]
    raise err("unsupported interface", fix="use `interface ethernet 1/gN`, "
              "`interface range ethernet LIST` or `interface port-channel N`")


def _interface_line(st: _State, port: PortConfig, line: str, err) -> None:  # type: ignore[no-untyped-def]
    is_lag = port.name.startswith("ch")
    key = port.name

    def need_general() -> None:
        if port.mode != "general":
            raise err(f"{port.name} is not in general mode; the switch rejects this with "
                      "'Port is not general port.'", fix="put `switchport mode general` first")

    if m := re.fullmatch(r"switchport mode (general|access|trunk)", line):
        if m.group(1) == "trunk":
            raise err("trunk mode is not modelled by vlanroute verify",
                      fix="use `switchport mode general` as the templates do")
        port.mode = m.group(1)
    elif line == "no switchport mode":
        port.mode = "access"
    elif m := re.fullmatch(r"switchport access vlan (\d+)", line):
        st.access_vlan[key] = int(m.group(1))
    elif line == "no switchport access vlan":
        st.access_vlan.pop(key, None)
    elif m := re.fullmatch(r"switchport general pvid (\d+)", line):
        need_general()
        port.pvid = int(m.group(1))
    elif line == "no switchport general pvid":
        need_general()
        port.pvid = DEFAULT_VLAN
    elif m := re.fullmatch(r"switchport general allowed vlan add (\S+)( tagged| untagged)?", line):
        need_general()
        ids = _ids(st, m.group(1), err)
        if (m.group(2) or " untagged").strip() == "tagged":
            port.tagged |= ids
            port.untagged -= ids
        else:                              # the keyword defaults to untagged on 62xx
            port.untagged |= ids
            port.tagged -= ids
    elif m := re.fullmatch(r"switchport general allowed vlan remove (\S+)", line):
        need_general()
        ids = _ids(st, m.group(1), err)
        port.tagged -= ids
        port.untagged -= ids
    elif line == "switchport general acceptable-frame-type tagged-only":
        need_general()
        port.acceptable = "tagged-only"
    elif line == "no switchport general acceptable-frame-type tagged-only":
        need_general()
        port.acceptable = "all"
    elif line == "switchport general ingress-filtering disable":
        need_general()
        port.ingress_filtering = False
    elif line == "no switchport general ingress-filtering disable":
        need_general()
        port.ingress_filtering = True
    elif m := re.fullmatch(r"switchport forbidden vlan (add|remove) (\S+)", line):
        ids = _ids(st, m.group(2), err)
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
    elif line in ("flowcontrol", "no flowcontrol"):
        pass                                   # per-port pause: no forwarding effect
    elif _IGNORED_IF.match(line):
        pass
    else:
        raise err("unsupported PowerConnect 62xx interface command",
                  fix="check the line; the supported subset is in docs/outdir-layout.md")


def _finish(st: _State) -> None:
    """Apply the access-mode membership and keep LAG member lists in port order."""
    every = list(st.cfg.ports.values()) + list(st.cfg.lags.values())
    for port in every:
        if port.mode == "access":
            vid = st.access_vlan.get(port.name, DEFAULT_VLAN)
            port.pvid, port.untagged, port.tagged = vid, {vid}, set()
    for name, port in st.cfg.ports.items():
        if port.lag is not None:
            st.cfg.lags[port.lag].members.append(name)
    for lag in st.cfg.lags.values():
        lag.members.sort(key=st.platform.port_index)
