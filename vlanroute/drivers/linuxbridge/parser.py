"""Parser for Linux VLAN-aware bridge scripts (family `linux-bridge`).

The config is the POSIX sh script that templates/switch/linux-bridge.j2 renders: iproute2
commands, mostly in `ip -batch - <<EOF` / `bridge -batch - <<EOF` here-documents. Only
the iproute2 commands are parsed (strictly: an unknown one is an error naming the line);
the shell around them (checks, messages, `if`/`for`) is skipped. Shell variables are
resolved from their FIRST assignment, which is the bonding branch of the template: the
branch the emulator and any kernel with bonding take.

Linux semantics modelled (kernel bridge with vlan_filtering 1):
- a port enslaved to br0 starts as PVID 1, untagged member of VLAN 1 (default_pvid 1);
- `bridge vlan add dev P vid V|A-B [pvid] [untagged]` sets the flags of V (or of every VLAN
  A..B; `pvid` only with one VLAN) on P: re-adding the PVID
  VLAN without `pvid` clears the PVID; deleting the PVID VLAN leaves the port without
  one (pvid 0), and untagged frames are then dropped;
- ingress filtering is always on, every frame type is admitted;
- an interface that is not enslaved to br0 (directly or through its bond) or is left
  down does not forward; a bond `bondN` is LAG N.
"""

from __future__ import annotations

import re
import shlex

from vlanroute.model.bridge import DEFAULT_VLAN, PortConfig, SwitchConfig
from vlanroute.drivers.common import parse_error
from vlanroute.model.platforms import Platform

FAMILY = "linux-bridge"
BRIDGE = "br0"


def bond_name(lag_id: int) -> str:
    """LAG N is the bonding device `bondN` (the name `bridge fdb` shows for it)."""
    return f"bond{lag_id}"

_HEREDOC = re.compile(r"^\s*(ip|bridge)\s+-batch\s+-\s+<<-?\s*'?(\w+)'?\s*$")
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$")
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


class _Script:
    def __init__(self, cfg: SwitchConfig, platform: Platform, source: str) -> None:
        self.cfg = cfg
        self.platform = platform
        self.source = source
        self.vars: dict[str, str] = {}
        self.master: dict[str, str] = {}          # interface -> its master (br0 or bondN)
        self.up: dict[str, bool] = {}
        self.bridge_made = False

    def port(self, name: str, err) -> PortConfig:  # type: ignore[no-untyped-def]
        if name.startswith("bond") and (m := re.fullmatch(r"bond(\d+)", name)):
            lag_id = int(m.group(1))
            if not 1 <= lag_id <= self.platform.max_lags:
                raise err(f"bond{lag_id} outside LAG ids 1-{self.platform.max_lags} of {self.platform.name}")
            lag = self.cfg.lags.get(lag_id)
            if lag is None:
                raise err(f"{name} is used before `link add {name} type bond`")
            return lag
        if name not in self.cfg.ports:
            raise err(f"port {name} does not exist on {self.platform.name}")
        self.cfg.touched.add(name)
        return self.cfg.ports[name]


_COMMAND = re.compile(r"^\s*(ip|bridge)\s+(link (add|set|del(ete)?)|vlan (add|del(ete)?))\b(.*)$")


def parse(text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
    """Parse a linux-bridge switch script into the vendor-neutral model."""
    cfg = SwitchConfig.with_defaults(name=switch, family=FAMILY, platform=platform.name,
                                     ports=platform.ports, aging_time=platform.aging_default,
                                     source=source)
    sc = _Script(cfg, platform, source)
    heredoc: tuple[str, str] | None = None     # (tool, terminator)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        def err(message: str, fix: str | None = None) -> Exception:
            return parse_error(source, lineno, raw, message, fix)

        if heredoc is not None:
            if raw.strip() == heredoc[1]:
                heredoc = None
                continue
            if raw.strip() and not raw.strip().startswith("#"):
                _command(sc, heredoc[0], _substitute(sc, raw, err), err)
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if m := _HEREDOC.match(raw):
            heredoc = (m.group(1), m.group(2))
            continue
        if m := _ASSIGN.match(raw):
            sc.vars.setdefault(m.group(1), m.group(2).strip("'\""))
            continue
        if m := _COMMAND.match(raw):
            _command(sc, m.group(1), _substitute(sc, raw.strip()[len(m.group(1)):], err), err)
            continue
        # any other shell line: checks, messages, control flow; no forwarding effect
    if heredoc is not None:
        raise parse_error(source, len(text.splitlines()), "", f"here-document not closed by {heredoc[1]}")
    if not sc.bridge_made:
        raise parse_error(source, 1, text.splitlines()[0] if text else "",
                          f"the script never creates bridge {BRIDGE}",
                          fix=f"`ip link add {BRIDGE} type bridge vlan_filtering 1 ...`")
    _finish(sc)
    return cfg


def _substitute(sc: _Script, line: str, err) -> str:  # type: ignore[no-untyped-def]
    if "$" not in line:
        return line
    def value(m: re.Match[str]) -> str:
        if m.group(1) not in sc.vars:
            raise err(f"shell variable ${m.group(1)} is never assigned")
        return sc.vars[m.group(1)]
    return _VAR.sub(value, line)


def _command(sc: _Script, tool: str, line: str, err) -> None:  # type: ignore[no-untyped-def]
    if "'" in line or '"' in line or "\\" in line:
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise err(f"cannot split the command: {exc}") from None
    else:
        words = line.split()              # the common case, and much faster than shlex
    if tool == "ip":
        _ip(sc, words, err)
    else:
        _bridge(sc, words, err)


def _options(words: list[str], start: int, err) -> dict[str, str]:  # type: ignore[no-untyped-def]
    rest = words[start:]
    if len(rest) % 2:
        raise err("options must come in KEY VALUE pairs")
    return dict(zip(rest[::2], rest[1::2]))


def _ip(sc: _Script, w: list[str], err) -> None:  # type: ignore[no-untyped-def]
    if len(w) < 3 or w[0] != "link":
        raise err("unsupported ip command", fix="the template uses `link add` and `link set` only")
    verb, dev = w[1], w[2]
    if verb == "add":
        if w[3:5] == ["type", "bridge"]:
            if dev != BRIDGE:
                raise err(f"only one bridge named {BRIDGE} is modelled")
            opts = _options(w, 5, err)
            if opts.get("vlan_filtering") != "1":
                raise err("the bridge must be created with vlan_filtering 1 (VLAN-unaware "
                          "bridges forward every VLAN everywhere)")
            sc.cfg.stp_global_enabled = opts.get("stp_state", "0") != "0"
            if "ageing_time" in opts:
                sc.cfg.aging_time = int(opts["ageing_time"]) // 100   # centiseconds
            unknown = set(opts) - {"vlan_filtering", "stp_state", "ageing_time", "vlan_default_pvid"}
            if unknown:
                raise err(f"unsupported bridge option(s) {', '.join(sorted(unknown))}")
            if opts.get("vlan_default_pvid", "1") != "1":
                raise err("only vlan_default_pvid 1 is modelled")
            sc.bridge_made = True
        elif w[3:5] == ["type", "bond"]:
            m = re.fullmatch(r"bond(\d+)", dev)
            if not m:
                raise err("bonds must be named bondN (LAG N)")
            opts = _options(w, 5, err)
            lag_id = int(m.group(1))
            sc.cfg.lags.pop(lag_id, None)          # `link add` creates the bond anew
            lag = sc.cfg.add_lag(lag_id, bond_name(lag_id))
            lag.hash_mode = opts.get("xmit_hash_policy")
        else:
            raise err("unsupported `link add`", fix="only `type bridge` and `type bond` are modelled")
    elif verb == "set":
        sc.port(dev, err) if dev != BRIDGE else None
        rest = w[3:]
        while rest:
            if rest[0] in ("up", "down"):
                sc.up[dev] = rest[0] == "up"
                rest = rest[1:]
            elif rest[0] == "master" and len(rest) > 1:
                if rest[1] != BRIDGE and not re.fullmatch(r"bond\d+", rest[1]):
                    raise err(f"unknown master {rest[1]}")
                sc.master[dev] = rest[1]
                rest = rest[2:]
            elif rest[0] == "nomaster":
                sc.master.pop(dev, None)
                rest = rest[1:]
            else:
                raise err(f"unsupported `link set` option {rest[0]!r}")
    elif verb in ("del", "delete"):
        sc.master.pop(dev, None)
        sc.up[dev] = False
    else:
        raise err("unsupported ip link command")


def _bridge(sc: _Script, w: list[str], err) -> None:  # type: ignore[no-untyped-def]
    if len(w) < 6 or w[0] != "vlan" or w[1] not in ("add", "del", "delete") or w[2] != "dev" or w[4] != "vid":
        raise err("unsupported bridge command",
                  fix="the template uses `vlan add|del dev PORT vid V [pvid] [untagged]` only")
    port = sc.port(w[3], err)
    ids = _vids(w[5], err)
    flags = set(w[6:])
    if flags - {"pvid", "untagged", "master", "self"}:
        raise err(f"unsupported flag(s) {', '.join(sorted(flags - {'pvid', 'untagged', 'master', 'self'}))}")
    if "self" in flags:
        raise err("VLANs on the bridge device itself (self) are not modelled")
    if "pvid" in flags and len(ids) > 1:
        raise err("pvid cannot be configured for a vlan range (iproute2 refuses it)",
                  fix="give the PVID VLAN its own `vlan add ... vid V pvid` command")
    # set operations over the whole range: a host port's range holds every routing VLAN
    if w[1] == "add":
        if "untagged" in flags:
            port.untagged.update(ids)
            port.tagged.difference_update(ids)
        else:
            port.tagged.update(ids)
            port.untagged.difference_update(ids)
        if "pvid" in flags:
            port.pvid = ids[0]                 # one VLAN: checked above
        elif port.pvid in ids:
            port.pvid = 0                      # re-added without `pvid`: no PVID any more
    else:
        port.untagged.difference_update(ids)
        port.tagged.difference_update(ids)
        if port.pvid in ids:
            port.pvid = 0


def _vids(text: str, err) -> range:  # type: ignore[no-untyped-def]
    """`vid V` or `vid A-B` as iproute2's bridge/vlan.c reads it: one VLAN, or one range
    whose end is above its start ("Invalid VLAN range" otherwise); no lists."""
    first, sep, last = text.partition("-")
    if not first.isdigit() or (sep and not last.isdigit()):
        raise err(f"bad VLAN id {text!r}", fix="`vid V` or `vid A-B`, one per command")
    lo = int(first)
    hi = int(last) if sep else lo
    if sep and hi <= lo:
        raise err(f"invalid VLAN range {text!r}: the end must be above the start")
    if lo < 1 or hi > 4094:
        raise err(f"VLAN {text!r} outside 1-4094")
    return range(lo, hi + 1)


def _finish(sc: _Script) -> None:
    cfg = sc.cfg
    for name, port in cfg.ports.items():
        master = sc.master.get(name)
        if master and master.startswith("bond"):
            port.lag = int(master[4:])
            cfg.lags[port.lag].members.append(name)
    for lag_id, lag in cfg.lags.items():
        lag.members.sort(key=sc.platform.port_index)
        name = bond_name(lag_id)
        lag.enabled = sc.master.get(name) == BRIDGE and sc.up.get(name, False)
    for name, port in cfg.ports.items():
        if port.lag is None:
            # not a bridge port: no forwarding at all; keep the factory VLAN view
            port.enabled = sc.master.get(name) == BRIDGE and sc.up.get(name, False)
        else:
            port.enabled = sc.up.get(name, False)
    # The bridge's VLANs are the union of its ports' VLANs (no separate VLAN table).
    cfg.vlans = {DEFAULT_VLAN}
    for port in list(cfg.ports.values()) + list(cfg.lags.values()):
        cfg.vlans.update(port.untagged)
        cfg.vlans.update(port.tagged)
    cfg.flow_control = None                    # per-NIC ethtool setting, not in this script
