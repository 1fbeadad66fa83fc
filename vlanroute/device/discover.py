"""`vlanroute discover`: an inventory fragment (topology `kind: custom`) from the switches'
LLDP neighbour tables, for a site whose cabling exists before its inventory does.

A row is an inter-switch cable when its system name is one of the switches read (a switch
sends its host name as LLDP system name and its interface name as Port ID: the switch's
host name must be its name in the targets). A cable seen from both ends is one cable;
seen from one end only it still counts (LLDP may be off for receiving on the other).
Several cables between one pair of switches become one link with `count` and exact
`ports`, which the planner turns into a LAG. A row whose Port ID is a MAC, or whose
system name is not a switch read, is a host (lldpd sends the MAC as Port ID and the host
name as system name): it goes to `hosts.list` with its switch, port and MAC when its name
is a valid inventory name. Everything else is listed as a comment, never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
import re

from vlanroute.device.lldp import LldpTable
from vlanroute.drivers.common import normalize_mac
from vlanroute.names import NAME_PATTERN, PORT_PATTERN
from vlanroute.natural import natsorted, natural_key

# A MAC as the tables print it: 00:1E:C9:.. (Dell OS6, OS10), 00-1e-.., 001e.c9aa.bbcc (EOS).
_MAC = re.compile(r"^([0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{4}(\.[0-9A-Fa-f]{4}){2})$")
_NAME = re.compile(NAME_PATTERN)
_PORT = re.compile(PORT_PATTERN)


@dataclass
class Discovery:
    switches: list[str]
    links: list[dict[str, object]]                   # custom topology links
    hosts: list[dict[str, str]]
    notes: list[str] = field(default_factory=list)   # what was seen and not used, and why


def _natural_pair(pair: tuple[str, str]) -> tuple[tuple[str | int, ...], tuple[str | int, ...]]:
    """Two names, a (switch, port) end or a (switch, switch) link, in natural order: sw2
    before sw10, 1/g9 before 1/g10."""
    return natural_key(pair[0]), natural_key(pair[1])


def discover(tables: Mapping[str, LldpTable]) -> Discovery:
    names = natsorted(tables)               # sw2 before sw10: the order of the fragment's switches
    notes = [f"{s}: LLDP table not read: {tables[s].error}" for s in names if tables[s].error]
    cables: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    seen_ports: dict[tuple[str, str], tuple[str, str]] = {}
    hosts: dict[str, dict[str, str]] = {}
    lower = {n.lower(): n for n in names}
    for s in names:
        for row in tables[s].neighbors:
            here = (s, row.local_port)
            far_name = row.system_name
            far = lower.get(far_name.lower()) or lower.get(far_name.split(".")[0].lower()) if far_name else None
            if far is not None and not _MAC.match(row.port_id):
                if far == s:
                    notes.append(f"{s} {row.local_port}: a cable to itself ({row.port_id}) is ignored")
                    continue
                if not _PORT.match(row.port_id):
                    notes.append(f"{s} {row.local_port}: {far} port {row.port_id!r} is not a port name; ignored")
                    continue
                there = (far, row.port_id)
                for end, other in ((here, there), (there, here)):
                    if seen_ports.get(end, other) != other:
                        notes.append(f"{end[0]} {end[1]} is seen cabled to both {seen_ports[end][0]} "
                                     f"{seen_ports[end][1]} and {other[0]} {other[1]}; the second is ignored")
                        break
                else:
                    seen_ports[here], seen_ports[there] = there, here
                    cables.add((min(here, there, key=_natural_pair), max(here, there, key=_natural_pair)))
                continue
            host = far_name.split(".")[0] if far_name else ""
            mac = row.port_id if _MAC.match(row.port_id) else row.chassis_id if _MAC.match(row.chassis_id) else ""
            if host and _NAME.match(host) and host not in lower:
                if host in hosts:
                    notes.append(f"{s} {row.local_port}: host {host} is already on {hosts[host]['switch']} "
                                 f"{hosts[host]['port']}; ignored")
                    continue
                entry = {"name": host, "switch": s, "port": row.local_port}
                if mac:
                    entry["mac"] = normalize_mac(mac)
                hosts[host] = entry
            else:
                what = f"system name {far_name!r}" if far_name else "no system name"
                notes.append(f"{s} {row.local_port}: a neighbour with {what}, chassis {row.chassis_id}, "
                             f"port {row.port_id} (not a switch read, not a host name); not used")
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for (a, pa), (b, pb) in sorted(cables, key=lambda c: (_natural_pair(c[0]), _natural_pair(c[1]))):
        pairs[(a, b)].append((pa, pb))
    links: list[dict[str, object]] = []
    for (a, b), ports in sorted(pairs.items(), key=lambda kv: _natural_pair(kv[0])):
        link: dict[str, object] = {"a": a, "b": b}
        if len(ports) > 1:
            link["count"] = len(ports)
        link["ports"] = [list(p) for p in ports]
        links.append(link)
    cabled = {s for pair in pairs for s in pair}
    for s in names:
        if s not in cabled and not tables[s].error:
            notes.append(f"{s}: no cable to another switch read")
    return Discovery(names, links, sorted(hosts.values(), key=lambda h: natural_key(h["name"])), notes)


def fragment(d: Discovery, name: str, platform: str,
             addresses: Mapping[str, tuple[str, int]]) -> dict[str, object]:
    """The inventory fragment as a YAML-ready mapping (docs/cabling.md)."""
    out: dict[str, object] = {
        "name": name,
        "platform": platform,
        "topology": {"kind": "custom", "switches": d.switches, "links": d.links},
    }
    if d.hosts:
        out["hosts"] = {"list": d.hosts}
    out["switches"] = {s: ({"mgmt": addresses[s][0]} if addresses[s][1] == 22 else
                           {"mgmt": addresses[s][0], "ssh_port": addresses[s][1]}) for s in d.switches}
    return out
