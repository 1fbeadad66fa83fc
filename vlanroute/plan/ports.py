"""Per-switch port plan: which physical port carries which host or cable, and the LAGs.

Deterministic from the inventory: explicit ports first; inter-switch cables take the
switch's `inter_switch_ports` in their order if it has such a list, else the highest free
ports of the platform's default pool (neighbours in switch order); hosts take the lowest
free pool ports. Ports outside the pool (a 6248's 10G module ports) carry a host or a cable
only where the inventory names them. Reserved ports are never used. VLAN memberships are filled in by `apply_vlans` once the VLANs exist.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from vlanroute.drivers import FAMILIES
from vlanroute.drivers.family import HOST_UNTAGGED
from vlanroute.errors import PlanError, UserError
from vlanroute.model.bridge import HostAttachment, host_port_membership
from vlanroute.model.hosts import Host
from vlanroute.model.inventory import LoadedInventory
from vlanroute.model.platforms import PLATFORMS, Platform, derive_platform
from vlanroute.model.portlist import PortListError, format_port_list
from vlanroute.names import NAME_PATTERN
from vlanroute.model.topology import Topology
from vlanroute.plan.vlans import RoutingVlan


@dataclass
class PortPlan:
    name: str
    role: str                       # host | inter-switch | lag-member
    host: str | None = None
    neighbor: str | None = None
    lag: int | None = None
    pvid: int | None = None
    untagged: list[int] = field(default_factory=list)
    tagged: list[int] = field(default_factory=list)


@dataclass
class LagPlan:
    id: int
    neighbor: str
    members: list[str]
    tagged: list[int] = field(default_factory=list)


@dataclass
class SwitchPlan:
    name: str
    platform: Platform
    mgmt: str | None
    ssh_port: int
    coord: tuple[int, ...] | None
    reserved: list[str]
    ports: dict[str, PortPlan] = field(default_factory=dict)
    lags: dict[int, LagPlan] = field(default_factory=dict)
    host_attachment: HostAttachment = "untagged"
    attachment_reason: str = ""     # why, for `vlanroute plan`


@dataclass
class Cable:
    a: str
    a_port: str
    b: str
    b_port: str
    a_lag: int | None = None
    b_lag: int | None = None


def resolve_platforms(inv: LoadedInventory, topo: Topology) -> dict[str, Platform]:
    """Each switch's platform: built in, derived under `platforms:`, or a switch's own ports
    (`switches.<name>.ports`, `auto_ports`, `units`), which derive a platform named
    `<platform>.<switch>`."""
    spec = inv.spec
    derived = {name: _derived(inv, name, PLATFORMS[d.base], f"platforms.{name}", count=d.port_count(),
                              ports=d.port_list(), auto=d.auto_ports, units=d.units, limits=d.limits(),
                              confirmed=tuple(d.confirm))
               for name, d in spec.platforms.items()}
    table = {**PLATFORMS, **derived}
    known = ", ".join(sorted(table))

    def get(name: str, field_path: str) -> Platform:
        if name not in table:
            raise UserError(f"unknown platform '{name}'", file=inv.file, field=field_path,
                            fix=f"use one of: {known}, or define it under platforms:")
        platform = table[name]
        family = FAMILIES.get(platform.family)
        if family is None:
            raise UserError(f"platform '{name}' is of family '{platform.family}', which vlanroute "
                            "has no driver for", file=inv.file, field=field_path,
                            fix=f"use one of: {known}")
        return platform

    default = get(spec.platform, "platform")
    out = {}
    for gen_name, final in topo.generated_names.items():
        ov = spec.switches.get(gen_name)
        platform = get(ov.platform, f"switches.{gen_name}.platform") if ov and ov.platform else default
        if ov and (ov.ports is not None or ov.auto_ports is not None or ov.units is not None):
            own = f"{platform.name}.{final}"
            if own in table or not re.fullmatch(NAME_PATTERN, own):
                raise UserError(f"switch '{final}' gives its own ports, which make a platform named "
                                f"'{own}', but " + ("that name is taken" if own in table else
                                                    "that name is too long"),
                                file=inv.file, field=f"switches.{gen_name}.ports",
                                fix="define the platform under platforms: (base, ports, auto_ports, "
                                    f"units) and set switches.{gen_name}.platform to it")
            platform = _derived(inv, own, platform, f"switches.{gen_name}", count=None, ports=ov.ports,
                                auto=ov.auto_ports, units=ov.units, limits={})
        out[final] = platform
    return out


def choose_attachment(inv: LoadedInventory, platform: Platform) -> tuple[HostAttachment, str]:
    """The host attachment of a switch of `platform` (vlanroute.model.bridge) and why.

    settings.host_attachment auto: `untagged` where the family (or the inventory's
    confirmation for its platform) can make a host port an untagged member of several
    VLANs, `trunk` otherwise, since a trunk whose native VLAN is the host's own is what
    every 802.1Q switch can do. Forcing `untagged` on a platform that cannot is refused."""
    wanted = inv.spec.settings.host_attachment
    family = FAMILIES[platform.family]
    able = family.host_untagged_in_many_vlans(platform)
    if wanted == "trunk":
        return "trunk", "settings.host_attachment: trunk"
    if able:
        why = ("settings.host_attachment: untagged" if wanted == "untagged" else
               f"{family.title} host ports can be untagged members of every routing VLAN")
        return "untagged", why
    question = family.confirmable.get(HOST_UNTAGGED)
    fact = (f"{family.title}: {question}" if question else
            f"{family.title} cannot make a host port an untagged member of several VLANs")
    if wanted == "auto":
        return "trunk", (f"{fact}; host ports are trunks (native VLAN = the host's own, the other "
                         "routing VLANs tagged, received on the host's VLAN sub-interfaces)")
    base = platform.base or platform.name
    fix = "use settings.host_attachment: trunk (or auto), which every 802.1Q switch can do"
    if question:
        fix += (f"; or, if your switch can (check its command reference), confirm it for your platform: "
                f"platforms: {{my-{base}: {{base: {base}, confirm: [{HOST_UNTAGGED}]}}}} and use "
                f"platform my-{base}")
    raise PlanError(f"untagged host attachment asked for, but platform '{platform.name}' ({fact}); an "
                    "untagged host port must be an untagged member of every routing VLAN",
                    file=inv.file, field="settings.host_attachment", fix=fix)


def _check_vid_range(inv: LoadedInventory, base: Platform, where: str, limits: dict[str, object]) -> None:
    """A derived platform may narrow its base's VLAN id range, never widen it: the range is
    what the switch's CLI accepts (a PowerConnect 62xx refuses 4094, which it reserves),
    and a switch refusing `vlan 4094` half-way through a push is worse than a plan refused."""
    model = base.base or base.name
    source = base.facts.get("vid_range", "its platform record, vlanroute/model/platforms.py")
    for key, beyond in (("vid_max", lambda v: v > base.vid_max), ("vid_min", lambda v: v < base.vid_min)):
        value = limits.get(key)
        if isinstance(value, int) and beyond(value):
            raise UserError(f"{key} {value} is outside the VLAN ids a {model} accepts, {base.vid_min}-{base.vid_max} "
                            f"({source})", file=inv.file, field=f"{where}.{key}",
                            fix=f"use a {key} within {base.vid_min}-{base.vid_max}, or leave it out")


def _derived(inv: LoadedInventory, name: str, base: Platform, where: str, *, count: int | None,
             ports: tuple[str, ...] | None, auto: tuple[str, ...] | None, units: int | None,
             limits: dict[str, object], confirmed: tuple[str, ...] = ()) -> Platform:
    """derive_platform step by step, so that a problem names the field that caused it."""
    _check_vid_range(inv, base, where, limits)
    try:
        platform = derive_platform(name, base, count, limits, ports=ports, confirmed=confirmed)
    except PortListError as exc:
        raise UserError(str(exc), file=inv.file, field=f"{where}.ports",
                        fix=f"list ports the way {base.base or base.name} names them: its own are "
                            f"{base.port_list()}") from None
    if auto is not None:
        try:
            platform = derive_platform(name, platform, None, {}, auto_ports=auto)
        except PortListError as exc:
            raise UserError(str(exc), file=inv.file, field=f"{where}.auto_ports",
                            fix="list some of the platform's ports (those the planner may assign "
                                "on its own)") from None
    if units is not None:
        try:
            platform = derive_platform(name, platform, None, {}, units=units)
        except PortListError as exc:
            raise UserError(str(exc), file=inv.file, field=f"{where}.units",
                            fix=f"use at most {base.max_units} unit" + ("s" if base.max_units > 1 else "")
                                + " with unit 1's ports only, or list every unit's ports in ports") from None
    return platform


def build_port_plan(inv: LoadedInventory, topo: Topology, hosts: list[Host],
                    platforms: dict[str, Platform]) -> tuple[dict[str, SwitchPlan], list[Cable]]:
    file = inv.file
    overrides = {topo.generated_names[k]: (k, v) for k, v in inv.spec.switches.items()}
    switches: dict[str, SwitchPlan] = {}
    mgmt_seen: dict[str, str] = {}
    for s in topo.switches:
        key, ov = overrides.get(s, (s, None))
        plat = platforms[s]
        reserved = list(ov.reserved_ports) if ov else []
        for p in reserved:
            if not plat.has_port(p):
                raise UserError(f"port '{p}' does not exist on {plat.name}", file=file,
                                field=f"switches.{key}.reserved_ports", fix=_ports_are(plat))
        if len(set(reserved)) != len(reserved):
            raise UserError("a reserved port is listed twice", file=file, field=f"switches.{key}.reserved_ports")
        mgmt = str(ov.mgmt) if ov and ov.mgmt else None
        if mgmt:
            if mgmt.lower() in mgmt_seen:       # DNS names are case-insensitive
                raise UserError(f"management address {mgmt} is also given to '{mgmt_seen[mgmt.lower()]}'",
                                file=file, field=f"switches.{key}.mgmt",
                                fix="every switch needs its own management address")
            mgmt_seen[mgmt.lower()] = s
        attachment, why = choose_attachment(inv, plat)
        switches[s] = SwitchPlan(s, plat, mgmt, ov.ssh_port if ov else 22, topo.coords[s], reserved,
                                 host_attachment=attachment, attachment_reason=why)

    edges = sorted(topo.graph.edges(keys=True, data=True),
                   key=lambda e: (min(topo.index(e[0]), topo.index(e[1])), max(topo.index(e[0]), topo.index(e[1])), e[2]))
    isl = _inter_switch_ports(inv, topo, switches, overrides)
    _check_capacity(inv, topo, hosts, switches, edges, isl)

    used: dict[str, dict[str, str]] = {s: {p: "reserved" for p in switch.reserved} for s, switch in switches.items()}

    def take(s: str, port: str, what: str, field_path: str) -> None:
        plat = switches[s].platform
        if not plat.has_port(port):
            raise UserError(f"port '{port}' does not exist on {plat.name} (switch '{s}')", file=file, field=field_path,
                            fix=_ports_are(plat))
        if port in used[s]:
            raise UserError(f"port {s}:{port} is given to both {used[s][port]} and {what}", file=file,
                            field=field_path, fix="give each port to one host or cable, and never a reserved port")
        used[s][port] = what

    # Explicit ports.
    for a, b, _key, data in edges:
        if "ports" in data:
            take(a, data["ports"][a], f"the cable {a}-{b}", "topology.links")
            take(b, data["ports"][b], f"the cable {a}-{b}", "topology.links")
    for h in hosts:
        if h.port:
            take(h.switch, h.port, f"host '{h.name}'", f"hosts (host '{h.name}')")

    # Cables: the switch's inter-switch ports in their order if it has a list, else the
    # highest free pool ports; hosts: the lowest free pool ports, never one of that list.
    def cable_port(s: str) -> str:
        if s in isl:
            port = next(p for p in isl[s][0] if p not in used[s])   # capacity was checked
        else:
            port = _highest_free(switches[s].platform, used[s])
        return port

    cable_ports: list[tuple[str, str, str, str]] = []
    for a, b, _key, data in edges:
        if "ports" in data:
            port_a, port_b = data["ports"][a], data["ports"][b]
        else:
            port_a = cable_port(a)
            used[a][port_a] = f"the cable {a}-{b}"
            port_b = cable_port(b)
            used[b][port_b] = f"the cable {a}-{b}"
        if topo.index(a) > topo.index(b):
            a, b, port_a, port_b = b, a, port_b, port_a
        cable_ports.append((a, port_a, b, port_b))
    for s, (ports, _) in isl.items():
        for p in ports:
            used[s].setdefault(p, "inter-switch cables")      # set aside: never a host's
    for h in hosts:
        if not h.port:
            h.port = _lowest_free(switches[h.switch].platform, used[h.switch])
            used[h.switch][h.port] = f"host '{h.name}'"
        switches[h.switch].ports[h.port] = PortPlan(h.port, "host", host=h.name)

    # LAGs: one per neighbour with more than one cable, numbered in neighbour order.
    per_pair: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, port_a, b, port_b in cable_ports:
        per_pair.setdefault((a, b), []).append((port_a, port_b))
    lag_ids: dict[tuple[str, str], int] = {}
    for s in topo.switches:
        switch = switches[s]
        neighbours = sorted(set(topo.graph.neighbors(s)), key=topo.index)
        next_id = 1
        for n in neighbours:
            pair = (s, n) if topo.index(s) < topo.index(n) else (n, s)
            members = [c[0] if pair[0] == s else c[1] for c in per_pair[pair]]
            members.sort(key=switch.platform.port_index)
            if len(members) > 1:
                if next_id > switch.platform.max_lags:
                    raise PlanError(f"switch '{s}' needs more than {switch.platform.max_lags} LAGs", file=file,
                                    field="topology", fix="use fewer neighbours per switch or one cable per pair")
                if len(members) > switch.platform.max_lag_members:
                    raise PlanError(f"switch '{s}' would bundle {len(members)} cables to '{n}' but a {switch.platform.name} "
                                    f"LAG takes at most {switch.platform.max_lag_members}", file=file,
                                    field="topology.links_per_pair", fix="use fewer parallel cables")
                switch.lags[next_id] = LagPlan(next_id, n, members)
                lag_ids[(s, n)] = next_id
                for m in members:
                    switch.ports[m] = PortPlan(m, "lag-member", neighbor=n, lag=next_id)
                next_id += 1
            else:
                switch.ports[members[0]] = PortPlan(members[0], "inter-switch", neighbor=n)
    cables = [Cable(a, port_a, b, port_b, lag_ids.get((a, b)), lag_ids.get((b, a)))
              for a, port_a, b, port_b in cable_ports]
    cables.sort(key=lambda c: (topo.index(c.a), switches[c.a].platform.port_index(c.a_port)))
    for switch in switches.values():
        switch.ports = dict(sorted(switch.ports.items(), key=lambda kv: switch.platform.port_index(kv[0])))
    return switches, cables


def _ports_are(plat: Platform) -> str:
    return f"{plat.name} ports are {plat.port_list()}"


def _inter_switch_ports(inv: LoadedInventory, topo: Topology, switches: dict[str, SwitchPlan],
                        overrides: Mapping[str, tuple[str, object]]) -> dict[str, tuple[tuple[str, ...], str]]:
    """Each switch's ordered list of ports for its inter-switch cables, with the field that
    gave it: `switches.<name>.inter_switch_ports`, else `topology.inter_switch_ports`."""
    common = inv.spec.topology.inter_switch_ports
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    for s in topo.switches:
        key, ov = overrides.get(s, (s, None))
        own = getattr(ov, "inter_switch_ports", None)
        if own is not None:
            out[s] = (own, f"switches.{key}.inter_switch_ports")
        elif common is not None:
            out[s] = (common, "topology.inter_switch_ports")
        else:
            continue
        ports, field_path = out[s]
        switch = switches[s]
        for p in ports:
            if not switch.platform.has_port(p):
                raise UserError(f"port '{p}' does not exist on {switch.platform.name} (switch '{s}')",
                                file=inv.file, field=field_path, fix=_ports_are(switch.platform))
            if p in switch.reserved:
                raise UserError(f"port {s}:{p} is reserved and listed for inter-switch cables",
                                file=inv.file, field=field_path,
                                fix="remove it from one of the two lists")
    return out


def _check_capacity(inv: LoadedInventory, topo: Topology, hosts: list[Host],
                    switches: dict[str, SwitchPlan], edges: list, isl: dict) -> None:  # type: ignore[type-arg]
    """Enough ports on every switch, before any is assigned, so that the message names the
    switch and the counts. Hosts and cables without a port take pool ports (or, for cables,
    the switch's inter-switch list); what the inventory places outside the pool (e.g. on a
    10G module port) does not count against it."""
    file = inv.file
    explicit: dict[str, list[str]] = {s: [] for s in switches}      # ports named for cables/hosts
    auto_cables = {s: 0 for s in switches}
    for a, b, _key, data in edges:
        for s in (a, b):
            if "ports" in data:
                explicit[s].append(data["ports"][s])
            else:
                auto_cables[s] += 1
    auto_hosts = {s: 0 for s in switches}
    named_hosts = {s: 0 for s in switches}
    for h in hosts:
        if h.port:
            explicit[h.switch].append(h.port)
            named_hosts[h.switch] += switches[h.switch].platform.in_pool(h.port)
        else:
            auto_hosts[h.switch] += 1
    for s, switch in switches.items():
        plat = switch.platform
        named_cables = sum(plat.in_pool(p) for p in explicit[s]) - named_hosts[s]
        aside = 0
        if s in isl:
            ports, field_path = isl[s]
            taken = set(explicit[s])
            free = [p for p in ports if p not in taken]
            if auto_cables[s] > len(free):
                raise PlanError(f"switch '{s}' has {auto_cables[s]} inter-switch cables to place but "
                                f"{field_path} lists {len(free)} free port{'s' if len(free) != 1 else ''}"
                                + (f" ({format_port_list(free)})" if free else ""),
                                file=file, field=field_path,
                                fix="list more ports, or use fewer cables per pair")
            aside = sum(plat.in_pool(p) for p in free)
            cables = named_cables
        else:
            cables = named_cables + auto_cables[s]
        host_count = auto_hosts[s] + named_hosts[s]
        reserved = sum(plat.in_pool(p) for p in switch.reserved)
        need = host_count + cables + reserved + aside
        if need > len(plat.pool):
            what = (f"{host_count} hosts + {cables} inter-switch cables + {reserved} reserved"
                    + (f" + {aside} set aside for inter-switch cables" if aside else ""))
            raise PlanError(
                f"switch '{s}' needs {need} ports ({what}) but a {plat.name} has {len(plat.pool)}",
                file=file, field="topology.links_per_pair" if inv.spec.topology.kind != "custom" else "topology.links",
                fix="use fewer cables per pair or fewer hosts on that switch, or a platform with more ports")


def _highest_free(plat: Platform, used: dict[str, str]) -> str:
    for p in reversed(plat.pool):
        if p not in used:
            return p
    raise AssertionError("capacity was checked before")


def _lowest_free(plat: Platform, used: dict[str, str]) -> str:
    for p in plat.pool:
        if p not in used:
            return p
    raise AssertionError("capacity was checked before")


def apply_vlans(switches: dict[str, SwitchPlan], hosts: list[Host], vlans: list[RoutingVlan]) -> None:
    """Fill in PVIDs and memberships: host ports as their switch's host attachment says
    (vlanroute.model.bridge.host_port_membership), links tagged where their trees use them."""
    all_ids = frozenset(v.id for v in vlans)
    every = sorted(all_ids)
    vlan_of_host = host_vlans(hosts, vlans)
    # The VLANs of each link as the VLANs store it (one orientation); a port looks up both
    # orientations of its neighbour pair (half the entries of a map keyed both ways).
    by_link: dict[tuple[str, str], list[int]] = {}
    for v in vlans:
        for link in v.links:
            got = by_link.get(link)
            if got is None:
                by_link[link] = [v.id]
            else:
                got.append(v.id)

    def tagged(a: str, b: str) -> list[int]:
        return sorted(by_link.get((a, b), []) + by_link.get((b, a), []))

    host_by_name = {h.name: h for h in hosts}
    for switch in switches.values():
        for port in switch.ports.values():
            if port.role == "host":
                h = host_by_name[port.host]  # type: ignore[index]
                h.vlan = vlan_of_host[h.name]
                member = host_port_membership(switch.host_attachment, h.vlan, all_ids)
                port.pvid = member.pvid
                # the common case shares one list between all host ports (read, never changed)
                port.untagged = every if len(member.untagged) == len(every) else sorted(member.untagged)
                port.tagged = sorted(member.tagged)
            else:
                port.tagged = tagged(switch.name, port.neighbor)  # type: ignore[arg-type]
        for lag in switch.lags.values():
            lag.tagged = tagged(switch.name, lag.neighbor)


def host_vlans(hosts: list[Host], vlans: list[RoutingVlan]) -> dict[str, int]:
    """Each host's VLAN (its port's PVID): its switch's VLAN, or where the switch's hosts
    send in several (routing below the switch, `RoutingVlan.shares`), its hosts in inventory
    order fill those VLANs in id order, each with its share."""
    whole: dict[str, int] = {}
    quota: dict[str, list[list[int]]] = {}         # split switch -> [[VLAN id, hosts left], ...]
    for v in sorted(vlans, key=lambda v: v.id):
        for s in v.sources:
            if s in v.shares:
                quota.setdefault(s, []).append([v.id, v.shares[s]])
            else:
                whole[s] = v.id
    out: dict[str, int] = {}
    for h in sorted(hosts, key=lambda h: h.index):
        left = quota.get(h.switch)
        if left is None:
            out[h.name] = whole[h.switch]
            continue
        while len(left) > 1 and left[0][1] <= 0:
            left.pop(0)
        out[h.name] = left[0][0]
        left[0][1] -= 1
    return out


def mgmt_addresses(switches: dict[str, SwitchPlan]) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The switches' management addresses (the learning pool must not contain any)."""
    out = []
    for switch in switches.values():
        try:
            out.append(ipaddress.ip_address(switch.mgmt or ""))
        except ValueError:
            pass            # a DNS name: not resolved when planning (push resolves it)
    return out
