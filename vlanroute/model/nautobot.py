"""Read a fabric from Nautobot: switches, inter-switch cables, LAG membership and hosts of
one location or tag, through Nautobot's REST API with its Python client, pynautobot.

What is read (Nautobot 2.x data model, docs/import.md):
- switches: the devices of the selection whose role is one of the switch roles; their name,
  their vlanroute platform (the Nautobot platform's or device type's name, or a mapping the
  user gives) and their management address (the primary IPv4 address, else the IPv6 one);
- cables: every cable on a switch interface, followed through patch panels to its far
  interface (Nautobot's cable path, `connected_endpoint`); a far interface on another switch
  is an inter-switch cable with both ports, on a host it is that host's port;
- LAG membership (an interface's `lag`): checked against vlanroute's rule, which bundles all
  the cables between two switches into one LAG;
- hosts: the other devices of the selection (or those of the host roles): the switch port
  their one cabled interface reaches, that interface's name and MAC.

`read_fabric` fetches; `interpret` turns what was fetched (plain mappings, as the API sends
them) into an inventory mapping, each problem a line naming the Nautobot object and the fix;
the caller validates the mapping with the same code as a YAML inventory. The token comes from
the environment only, and no message or log line carries it.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from vlanroute.errors import UserError
from vlanroute.model.inventory import normalise_mac
from vlanroute.model.platforms import PLATFORMS
from vlanroute.names import NAME_PATTERN, PORT_PATTERN, management_address
from vlanroute.natural import natural_key

TOKEN_ENV = "NAUTOBOT_TOKEN"
URL_ENV = "NAUTOBOT_URL"
# Devices (and their interfaces, cables) are asked for in batches of this many ids: a query
# string of 100 UUIDs stays well below the URL lengths servers accept.
BATCH = 100
T = TypeVar("T")


@dataclass(frozen=True)
class Selection:
    """Which devices of a Nautobot server make the fabric."""
    location: str | None = None
    tag: str | None = None
    switch_roles: tuple[str, ...] = ("switch",)
    host_roles: tuple[str, ...] = ()           # empty: every device of the selection that is no switch
    platform_map: Mapping[str, str] = field(default_factory=dict)   # Nautobot platform or device type -> vlanroute

    def describe(self) -> str:
        parts = ([f"location '{self.location}'"] if self.location else []) + ([f"tag '{self.tag}'"] if self.tag else [])
        return " and ".join(parts)


@dataclass
class Fetched:
    """What the API answered for a selection, as plain mappings: related objects as
    `{"id": ...}` with the name, model or address where one is needed."""
    devices: list[dict[str, Any]]
    interfaces: list[dict[str, Any]]
    outside: dict[str, str]                    # device id -> name, for far ends outside the selection


@dataclass
class Imported:
    inventory: dict[str, Any]                  # a vlanroute inventory, YAML-ready
    problems: list[str]                        # each names the Nautobot object and the fix
    notes: list[str]                           # what was seen and not used
    origin: dict[str, str]                     # inventory path -> the Nautobot object it came from


def source_label(url: str, selection: Selection) -> str:
    return f"Nautobot {url.rstrip('/')} ({selection.describe()})"


# --------------------------------------------------------------------------- the connection


def server_url(url: str | None) -> str:
    url = url or os.environ.get(URL_ENV)
    if not url:
        raise UserError("no Nautobot server given", field="--url",
                        fix=f"give --url https://nautobot.example.org or set {URL_ENV}")
    if not re.match(r"^https?://[^\s/]+", url):
        raise UserError(f"'{url[:100]}' is not an http(s) URL", field="--url",
                        fix="give the server's address, e.g. https://nautobot.example.org")
    return url.rstrip("/")


def connect(url: str) -> Any:
    """A pynautobot API object for `url`, with the token from $NAUTOBOT_TOKEN."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise UserError(f"${TOKEN_ENV} is not set", field=TOKEN_ENV,
                        fix=f"export {TOKEN_ENV}=... with an API token of a Nautobot user who may read (and, to "
                            "write back, change) devices, interfaces, cables and VLANs; it is never read from a file")
    try:
        import pynautobot
    except ImportError:
        raise UserError("the Nautobot client (pynautobot) is not installed",
                        fix="pip install 'vlanroute[nautobot]'") from None
    return pynautobot.api(url, token=token)


def call(url: str, what: str, fn: Callable[[], T]) -> T:
    """Run one API request; a refused or failed request is a UserError (never the token)."""
    import pynautobot
    import requests
    try:
        return fn()
    except pynautobot.RequestError as exc:
        status = getattr(getattr(exc, "req", None), "status_code", None)
        detail = str(getattr(exc, "error", "") or exc)[:300]
        if status in (401, 403):
            raise UserError(f"Nautobot refused the token while {what} (HTTP {status}): {detail}", file=url,
                            fix=f"check ${TOKEN_ENV}: a valid token of a user with permission for it") from None
        raise UserError(f"Nautobot answered HTTP {status} while {what}: {detail}", file=url,
                        fix="check the names given and the server's version (Nautobot 2.x)") from None
    except requests.exceptions.RequestException as exc:
        raise UserError(f"cannot reach Nautobot while {what}: {type(exc).__name__}: {str(exc)[:200]}", file=url,
                        fix="check --url and that the server is up (and reachable from here)") from None
    except ValueError as exc:            # a body that is not JSON: not a Nautobot API
        raise UserError(f"the answer while {what} is not Nautobot's API: {str(exc)[:200]}", file=url,
                        fix="give the server's base URL (without /api)") from None


def _plain(record: Any) -> dict[str, Any]:
    return dict(record)


def _batches(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), BATCH):
        yield items[i:i + BATCH]


def read_fabric(api: Any, url: str, selection: Selection) -> Fetched:
    """Fetch the selection's devices, their interfaces (with cable paths) and the names of
    the devices their cables reach outside the selection.

    Everything is asked for at depth 0 (related objects as ids) and without many-to-many
    fields, then the few names needed are looked up once (roles, platforms, device types,
    addresses, far ends): on a busy server that is several times faster than depth 1. The
    mappings are completed as depth 1 would give them (`{"id": ..., "name": ...}`)."""
    if not selection.location and not selection.tag:
        raise UserError("no selection given", field="--location/--tag",
                        fix="name the site's location (--location) or a tag on the fabric's devices (--tag)")
    filters: dict[str, Any] = {}
    if selection.location:
        location = call(url, f"looking up location '{selection.location}'",
                        lambda: api.dcim.locations.get(name=selection.location))
        if location is None:
            raise UserError(f"Nautobot has no location named '{selection.location}'", file=url, field="--location",
                            fix="give a location's name exactly as Nautobot shows it")
        filters["location"] = location.id
    if selection.tag:
        tag = call(url, f"looking up tag '{selection.tag}'", lambda: api.extras.tags.get(name=selection.tag))
        if tag is None:
            raise UserError(f"Nautobot has no tag named '{selection.tag}'", file=url, field="--tag",
                            fix="give a tag's name exactly as Nautobot shows it")
        filters["tags"] = selection.tag
    devices = [_plain(d) for d in call(url, "reading the devices", lambda: list(
        api.dcim.devices.filter(depth=0, exclude_m2m=True, **filters)))]
    names = {
        "role": {str(r.id): {"name": r.name} for r in call(url, "reading the roles", lambda: list(
            api.extras.roles.all(depth=0, exclude_m2m=True)))},
        "platform": {str(r.id): {"name": r.name} for r in call(url, "reading the platforms", lambda: list(
            api.dcim.platforms.all(depth=0, exclude_m2m=True)))},
        "device_type": {str(r.id): {"model": r.model} for r in call(url, "reading the device types", lambda: list(
            api.dcim.device_types.all(depth=0, exclude_m2m=True)))},
    }
    ips = sorted({ip for d in devices for k in ("primary_ip4", "primary_ip6") if (ip := _id(d.get(k)))})
    for batch in _batches(ips):
        names.setdefault("ip", {}).update({str(r.id): {"address": r.address} for r in call(
            url, "reading the management addresses",
            lambda: list(api.ipam.ip_addresses.filter(id=batch, depth=0, exclude_m2m=True)))})
    for d in devices:
        for key in ("role", "platform", "device_type", "primary_ip4", "primary_ip6"):
            ref = _id(d.get(key))
            table = names.get("ip" if key.startswith("primary") else key, {})
            d[key] = {"id": ref, **table.get(ref, {})} if ref else None
    ids = [str(d["id"]) for d in devices]
    interfaces: list[dict[str, Any]] = []
    for batch in _batches(ids):
        interfaces += [_plain(i) for i in call(url, "reading the interfaces", lambda: list(
            api.dcim.interfaces.filter(device_id=batch, depth=0, exclude_m2m=True)))]
    by_id = {str(i["id"]): i for i in interfaces}
    # Far ends: interfaces of the selection are known; the others are read, with their device's name.
    far = sorted({f for i in interfaces if i.get("connected_endpoint_type") == "dcim.interface"
                  and (f := _id(i.get("connected_endpoint"))) and f not in by_id})
    others: dict[str, dict[str, Any]] = {}
    for batch in _batches(far):
        others.update({str(r.id): _plain(r) for r in call(url, "reading the interfaces the cables reach", lambda: list(
            api.dcim.interfaces.filter(id=batch, depth=0, exclude_m2m=True)))})
    outside: dict[str, str] = {}
    known = set(ids)
    for batch in _batches(sorted({dev for r in others.values() if (dev := _id(r.get("device"))) and dev not in known})):
        for found in call(url, "reading the devices the cables reach", lambda: list(
                api.dcim.devices.filter(id=batch, depth=0, exclude_m2m=True))):
            outside[str(found.id)] = str(found.name)
    for i in interfaces:
        if i.get("connected_endpoint_type") == "dcim.interface":
            f = _id(i.get("connected_endpoint"))
            i["connected_endpoint"] = by_id.get(f or "") or others.get(f or "") or i["connected_endpoint"]
        elif i.get("cable") and isinstance(i.get("cable_peer"), dict):
            i["cable_peer"] = {**i["cable_peer"], "name": _peer_name(api, url, i)}
    return Fetched(devices, interfaces, outside)


# A cable end that is no interface, by its type: the endpoint to read its name from.
_PEER_ENDPOINTS = {"dcim.frontport": ("dcim", "front_ports"), "dcim.rearport": ("dcim", "rear_ports"),
                   "dcim.consoleport": ("dcim", "console_ports"), "dcim.consoleserverport": ("dcim", "console_server_ports"),
                   "dcim.powerport": ("dcim", "power_ports"), "dcim.poweroutlet": ("dcim", "power_outlets"),
                   "circuits.circuittermination": ("circuits", "circuit_terminations")}


def _peer_name(api: Any, url: str, iface: Mapping[str, Any]) -> str | None:
    """The name of a cable's other end that is no interface (for the message about it)."""
    where = _PEER_ENDPOINTS.get(str(iface.get("cable_peer_type")))
    ref = _id(iface.get("cable_peer"))
    if where is None or ref is None:
        return None
    endpoint = getattr(getattr(api, where[0]), where[1])
    found = call(url, "reading a cable's other end", lambda: endpoint.get(ref))
    return str(getattr(found, "name", "") or getattr(found, "display", "")) or None


def _id(ref: Any) -> str | None:
    if isinstance(ref, dict):
        return str(ref["id"]) if ref.get("id") else None
    return str(ref) if ref else None


def _device_of(endpoint: Mapping[str, Any]) -> Any:
    return endpoint.get("device")


def _name(ref: Any, key: str = "name") -> str | None:
    return ref.get(key) if isinstance(ref, dict) else None


# --------------------------------------------------------------------------- interpretation


@dataclass
class _End:
    device: str                     # device id
    iface: str                      # interface name
    iface_id: str


def interpret(fetched: Fetched, selection: Selection, name: str) -> Imported:
    """The inventory mapping of a fetched selection, and every problem found (Nautobot's
    names in each). The mapping holds only what is consistent; with problems, it is not a
    complete inventory."""
    problems: list[str] = []
    notes: list[str] = []
    origin: dict[str, str] = {}
    switch_roles = {r.lower() for r in selection.switch_roles}
    host_roles = {r.lower() for r in selection.host_roles}
    by_id = {str(d["id"]): d for d in fetched.devices}
    dev_name = {i: str(d.get("name") or f"(unnamed device {i})") for i, d in by_id.items()}

    def role(d: Mapping[str, Any]) -> str:
        return (_name(d.get("role")) or "").lower()

    switch_ids = [i for i, d in by_id.items() if role(d) in switch_roles]
    host_ids = [i for i, d in by_id.items() if i not in switch_ids and (not host_roles or role(d) in host_roles)]
    ignored = [dev_name[i] for i in by_id if i not in switch_ids and i not in host_ids]
    if ignored:
        notes.append(f"{len(ignored)} device(s) of neither a switch nor a host role left out: "
                     + ", ".join(sorted(ignored, key=natural_key)[:10]) + (" ..." if len(ignored) > 10 else ""))
    if not switch_ids:
        roles = sorted({_name(d.get("role")) or "(none)" for d in by_id.values()})
        problems.append(f"no device of the selection has a switch role ({', '.join(selection.switch_roles)}); "
                        f"the roles there: {', '.join(roles[:10]) or 'none, the selection is empty'}\n"
                        "    fix: give the switches' role with --switch-role")

    def where(device_id: str, iface: str | None = None) -> str:
        return f"device '{dev_name.get(device_id) or fetched.outside.get(device_id, device_id)}'" + (
            f" interface '{iface}'" if iface else "")

    # Names: the switch and host names reach switch CLIs and scripts (names.py).
    for i in switch_ids + host_ids:
        if not re.match(NAME_PATTERN, dev_name[i]):
            problems.append(f"{where(i)}: '{dev_name[i][:80]}' is not a name vlanroute can use\n"
                            "    fix: rename the device in Nautobot: letters, digits, '_', '.', '-', starting "
                            "with a letter, at most 63 characters")
    switch_set, host_set = set(switch_ids), set(host_ids)

    # Platforms and management addresses.
    platforms: dict[str, str] = {}
    mgmt: dict[str, str] = {}
    unknown: dict[tuple[str | None, str | None], list[str]] = defaultdict(list)
    for i in switch_ids:
        d = by_id[i]
        platform_name = _name(d.get("platform"))
        model = _name(d.get("device_type"), "model")
        found = _platform(platform_name, model, selection.platform_map)
        if found is None:
            unknown[(platform_name, model)].append(dev_name[i])
        else:
            platforms[i] = found
    for (platform_name, model), names in unknown.items():
        # A vlanroute platform is a switch model (its ports): the device type is the natural key.
        key = model or platform_name or "DEVICE_TYPE"
        shown = ", ".join(f"'{n}'" for n in sorted(names, key=natural_key)[:5]) + (" ..." if len(names) > 5 else "")
        problems.append(f"device(s) {shown}: platform {platform_name!r}, device type {model!r}: not a vlanroute "
                        f"platform\n    fix: --platform-map '{key}=PLATFORM' with one of "
                        f"{', '.join(sorted(PLATFORMS))}")
    for i in switch_ids:
        address = _primary_address(by_id[i])
        if address is not None:
            try:
                mgmt[i] = management_address(address)
            except ValueError as exc:
                problems.append(f"{where(i)} primary IP: {exc}\n    fix: correct the device's primary IP in Nautobot")

    # Cables, from the switch side: each interface's far end through its cable path.
    interfaces_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for iface in fetched.interfaces:
        dev = _id(iface.get("device"))
        if dev is not None:
            interfaces_of[dev].append(iface)
    iface_by_id = {str(i["id"]): i for i in fetched.interfaces}
    pairs: dict[tuple[str, str], list[tuple[_End, _End]]] = defaultdict(list)
    host_ports: dict[str, list[tuple[_End, _End]]] = defaultdict(list)      # host id -> (host end, switch end)
    seen_cables: set[frozenset[str]] = set()
    for s in switch_ids:
        for iface in sorted(interfaces_of[s], key=lambda x: natural_key(str(x.get("name")))):
            if not iface.get("cable"):
                continue
            here = _End(s, str(iface["name"]), str(iface["id"]))
            far = iface.get("connected_endpoint")
            far_type = iface.get("connected_endpoint_type")
            if not isinstance(far, dict) or far_type != "dcim.interface":
                peer = iface.get("cable_peer")
                peer_type = iface.get("cable_peer_type") or "nothing"
                peer_text = f"{peer_type} '{_name(peer) or '?'}'" if isinstance(peer, dict) else peer_type
                problems.append(f"{where(s, here.iface)}: its cable reaches no interface (its other end: {peer_text}, "
                                f"and the cable path ends there)\n    fix: complete the cable in Nautobot (both ends "
                                "on interfaces, through patch panels if any), or delete it")
                continue
            far_dev = _id(_device_of(far))
            there = _End(str(far_dev), str(far.get("name")), str(far.get("id")))
            cable_ends = frozenset((here.iface_id, there.iface_id))
            if cable_ends in seen_cables:
                continue
            seen_cables.add(cable_ends)
            if there.device in switch_set:
                a, b = sorted((here, there), key=lambda e: natural_key(dev_name[e.device]))
                pairs[(a.device, b.device)].append((a, b))
            elif there.device in host_set:
                host_ports[there.device].append((there, here))
            else:
                what = "is not in the selection" if there.device not in by_id else "has neither a switch nor a host role"
                problems.append(f"{where(s, here.iface)}: its cable ends at {where(there.device, there.iface)}, which "
                                f"{what}\n    fix: add that device to the selection ({selection.describe()}), "
                                "or correct the cable in Nautobot")

    # LAG membership: vlanroute bundles every cable between two switches into one LAG.
    lag_of = {str(i["id"]): _name(i.get("lag")) or _lag_id(i.get("lag"), iface_by_id) for i in fetched.interfaces
              if i.get("lag")}
    problems += _check_lags(pairs, lag_of, fetched.interfaces, switch_set, host_ports, dev_name)

    # Hosts: one cabled interface each.
    hosts: list[dict[str, Any]] = []
    for h in sorted(host_ids, key=lambda i: natural_key(dev_name[i])):
        ends = host_ports.get(h, [])
        if not ends:
            problems.append(f"{where(h)}: no cable from any of its interfaces reaches a switch of the selection, so "
                            "it has no switch port\n    fix: cable its cluster interface to its switch port in "
                            "Nautobot, or leave the device out of the selection (--host-role, --tag)")
            continue
        if len(ends) > 1:
            ports = ", ".join(f"{dev_name[sw.device]} {sw.iface}" for _, sw in ends)
            problems.append(f"{where(h)}: cabled to {len(ends)} switch ports ({ports}); vlanroute attaches each host "
                            "by one port\n    fix: keep one cable to the fabric in Nautobot")
            continue
        host_end, switch_end = ends[0]
        entry: dict[str, Any] = {"name": dev_name[h], "switch": dev_name[switch_end.device], "port": switch_end.iface}
        iface = iface_by_id.get(host_end.iface_id, {})
        mac = iface.get("mac_address")
        if mac:
            try:
                entry["mac"] = normalise_mac(str(mac))
            except ValueError as exc:
                problems.append(f"{where(h, host_end.iface)} MAC: {exc}\n    fix: correct the interface's MAC "
                                "address in Nautobot")
                continue
        entry["interface"] = host_end.iface
        origin[f"hosts.list.{len(hosts)}"] = where(h, host_end.iface)
        hosts.append(entry)

    for s in switch_ids:
        for iface in interfaces_of[s]:
            if iface.get("cable") and not re.match(PORT_PATTERN, str(iface.get("name"))):
                problems.append(f"{where(s, str(iface.get('name')))}: not a port name vlanroute can use\n    fix: "
                                "name the interface as the switch's CLI does (e.g. 1/g1, Ethernet1)")

    switch_names = sorted((dev_name[i] for i in switch_ids), key=natural_key)
    links: list[dict[str, Any]] = []
    for (sa, sb), cables in sorted(pairs.items(), key=lambda kv: (natural_key(dev_name[kv[0][0]]),
                                                                  natural_key(dev_name[kv[0][1]]))):
        port_pairs = sorted(([x.iface, y.iface] for x, y in cables), key=lambda p: natural_key(p[0]))
        origin[f"topology.links.{len(links)}"] = f"the cables between '{dev_name[sa]}' and '{dev_name[sb]}'"
        links.append({"a": dev_name[sa], "b": dev_name[sb], "ports": port_pairs})
    counts = Counter(platforms.values())
    common = min(counts, key=lambda p: (-counts[p], p)) if counts else "powerconnect-6248"
    switches: dict[str, Any] = {}
    for i in sorted(switch_ids, key=lambda i: natural_key(dev_name[i])):
        entry = {}
        if i in mgmt:
            entry["mgmt"] = mgmt[i]
        if platforms.get(i, common) != common:
            entry["platform"] = platforms[i]
        if entry:
            switches[dev_name[i]] = entry
            origin[f"switches.{dev_name[i]}"] = where(i)
    no_mgmt = [dev_name[i] for i in switch_ids if i not in mgmt]
    if no_mgmt:
        notes.append(f"{len(no_mgmt)} switch(es) without a primary IP (no management address: push and audit "
                     f"need one): {', '.join(sorted(no_mgmt, key=natural_key)[:10])}")
    inventory: dict[str, Any] = {
        "name": name,
        "platform": common,
        "topology": {"kind": "custom", "switches": switch_names, "links": links},
        "hosts": {"list": hosts},
    }
    if switches:
        inventory["switches"] = switches
    return Imported(inventory, problems, notes, origin)


def _platform(platform: str | None, model: str | None, mapping: Mapping[str, str]) -> str | None:
    for key in (platform, model):
        if key and key in mapping:
            return mapping[key]
    for key in (platform, model):
        if key and key in PLATFORMS:
            return key
    return None


def _primary_address(device: Mapping[str, Any]) -> str | None:
    for key in ("primary_ip4", "primary_ip6"):
        ref = device.get(key)
        address = _name(ref, "address") or _name(ref, "host")
        if address:
            return str(address).split("/", 1)[0]
    return None


def _lag_id(ref: Any, iface_by_id: Mapping[str, Mapping[str, Any]]) -> str | None:
    found = iface_by_id.get(_id(ref) or "")
    return str(found.get("name")) if found else _id(ref)


def _check_lags(pairs: Mapping[tuple[str, str], list[tuple[_End, _End]]], lag_of: Mapping[str, str | None],
                interfaces: list[dict[str, Any]], switch_set: set[str],
                host_ports: Mapping[str, list[tuple[_End, _End]]], dev_name: Mapping[str, str]) -> list[str]:
    problems: list[str] = []
    neighbours: dict[tuple[str, str], set[str]] = defaultdict(set)     # (switch, lag) -> far switches
    for (a, b), cables in pairs.items():
        for side, other in ((0, b), (1, a)):
            own = {lag_of.get(c[side].iface_id) for c in cables}
            dev = cables[0][side].device
            for lag in own - {None}:
                neighbours[(dev, str(lag))].add(other)
            if len(own) > 1 and len(cables) > 1:
                shown = ", ".join(f"{c[side].iface} ({lag_of.get(c[side].iface_id) or 'no LAG'})" for c in cables)
                problems.append(f"device '{dev_name[dev]}': its {len(cables)} cables to '{dev_name[other]}' are not in "
                                f"one LAG: {shown}; vlanroute bundles all the cables between two switches into one "
                                "LAG\n    fix: put them all in one LAG in Nautobot, or none (vlanroute numbers its LAGs)")
    for host, ends in host_ports.items():
        for _, sw in ends:
            lag = lag_of.get(sw.iface_id)
            if lag:
                problems.append(f"device '{dev_name[sw.device]}' interface '{sw.iface}': member of LAG '{lag}' but "
                                f"cabled to host '{dev_name[host]}'; vlanroute attaches hosts by one port, no LAG\n"
                                "    fix: take the interface out of the LAG in Nautobot")
    for (dev, lag), far in sorted(neighbours.items()):
        if len(far) > 1:
            names = ", ".join(sorted((dev_name[f] for f in far), key=natural_key))
            problems.append(f"device '{dev_name[dev]}' LAG '{lag}': its members are cabled to {len(far)} switches "
                            f"({names}); a LAG reaches one neighbour\n    fix: correct the LAG membership in Nautobot")
    return problems
