"""Build the Jinja2 context of every rendered file from the plan document (docs/plan-format.md),
re-checking on the way the rules a rendered config must obey.

The document's names and types were validated when it was made (vlanroute.bundle.document).
The plan was verified when it was built; the rule checks here are defence in depth against
a planner bug or a plan document edited by hand, because a wrong membership on an
inter-switch port with spanning tree off is a broadcast storm. A violated rule raises
VerificationError, a setting the inventory asked for but the platform cannot do raises
UserError. The contexts are documented in templates/README.md; keep the two in step.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from vlanroute import names as safe
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.learning import DEFAULT_INTERFACE_PREFIX
from vlanroute.drivers import family_of
from vlanroute.drivers.family import Family
from vlanroute.errors import UserError, VerificationError
from vlanroute.hostside.table import HostRow, VlanRow
from vlanroute.model.bridge import HostMembership, host_port_membership
from vlanroute.model.platforms import Platform
from vlanroute.plan.schedule import Schedule, schedule_for
from vlanroute.vlanlist import format_vlan_list as compress

# Where hosts/install.sh puts the host program and its tables; the refresh jobs call it there.
HOST_SCRIPT_PATH = "/usr/local/sbin/vlanroute-host"
HOST_TABLE_DIR = "/etc/vlanroute"
# How the hosts send the learning frames: `system` with the host's own sh and ip (and ping);
# the others with `vlanroute learn` (sub-interfaces by ip link or vconfig, or none: raw).
LEARNING_METHODS = ("system", "ip-link", "vconfig", "raw")
# Who owns the learning sub-interfaces: the host program itself, or the network stack
# (files the host program writes once from the table).
HOST_NETWORKS = ("script", "networkd", "networkmanager", "netplan")


@dataclass(frozen=True)
class HostPort:
    port: str
    host: str
    pvid: int
    untagged: list[int]        # untagged: every routing VLAN; trunk: the host's own only
    untagged_list: str
    tagged: list[int] = field(default_factory=list)   # trunk: every other routing VLAN
    tagged_list: str = ""


@dataclass(frozen=True)
class Link:
    """A single cable to a neighbour switch (not part of a LAG)."""
    port: str
    neighbor: str
    tagged: list[int]
    tagged_list: str
    remove: list[int]          # VLANs to take off the port: 1 plus this switch's other VLANs
    remove_list: str


@dataclass(frozen=True)
class Lag:
    id: int
    neighbor: str
    members: list[str]
    tagged: list[int]
    tagged_list: str
    remove: list[int]
    remove_list: str


@dataclass(frozen=True)
class SwitchSettings:
    aging_time: int
    flow_control: bool
    eee: bool
    lag_hash: str
    lag_hash_mode: str         # the platform's own keyword or number for lag_hash


@dataclass(frozen=True)
class SwitchContext:
    switch: str
    platform: Platform
    family: Family             # .capabilities (e.g. .eee), .title
    plan_name: str
    mgmt: str | None
    vlans: list[int]
    vlan_list: str
    routing_vlans: list[int]
    host_attachment: str       # untagged | trunk (vlanroute.model.bridge HOST_ATTACHMENTS)
    host_ports: list[HostPort]
    links: list[Link]
    lags: list[Lag]
    reserved_ports: list[str]
    managed_ports: list[str]   # every port this config touches, panel order (EEE is set on these)
    settings: SwitchSettings
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HostSide:
    """Everything the host side is rendered from: the program's constants and the two tables."""
    plan_name: str
    method: str                # one of LEARNING_METHODS
    network: str               # one of HOST_NETWORKS
    prefix: str                # learning sub-interfaces are prefix + VLAN id (vr101)
    script_path: str           # where the program is installed on a host
    table_dir: str             # where its tables are installed
    hosts: list[HostRow]       # inventory order (= host index order)
    vlans: list[VlanRow]       # VLAN id order


@dataclass(frozen=True)
class RefreshContext:
    plan_name: str
    script_path: str
    table_dir: str
    network: str               # who owns the sub-interfaces (HOST_NETWORKS)
    schedule: Schedule
    aging_time: int            # the shortest aging time of any switch, seconds


def _ints(value: object, what: str, lo: int = 2, hi: int = 4094,
          checked: dict[tuple, list[int]] | None = None) -> list[int]:
    """`value` as a sorted list of distinct VLAN ids in lo..hi, else VerificationError.

    `checked` remembers lists already found valid (the returned list is shared; callers
    do not change it): every host port of a switch carries the same routing VLANs, which
    is 2,560 ports x 256 ids on the 16x16 hyper-crossbar."""
    if not isinstance(value, list):
        raise VerificationError([f"{what}: expected a list of VLAN ids, got {value!r}"])
    key = (tuple(value), lo, hi)
    # only plain ints reuse a result: True == 1 would otherwise pass as VLAN 1
    if checked is not None and key in checked and set(map(type, value)) <= {int}:
        return checked[key]
    out = [safe.vid(v, what, lo, hi) for v in value]
    if len(set(out)) != len(out):
        raise VerificationError([f"{what}: duplicate VLAN ids in {value!r}"])
    out.sort()
    if checked is not None:
        checked[key] = out
    return out


def _tree_vlans(doc: PlanDocument) -> dict[frozenset[str], set[int]]:
    """Neighbour pair -> the VLANs whose tree uses it, from plan.vlans[].links."""
    out: dict[frozenset[str], set[int]] = {}
    for v in doc.vlans:
        for a, b in v.links:
            out.setdefault(frozenset((a, b)), set()).add(v.id)
    return out


@dataclass(frozen=True)
class DocIndex:
    """Plan-wide facts every per-switch and per-host context needs; computed once per render
    (the 16x16 hyper-crossbar has 256 VLAN trees and 2,560 x 256 learning addresses)."""
    routing_ids: list[int]
    pair_vlans: dict[frozenset[str], set[int]]
    subnets: dict[int, tuple[int, int, int]]     # VLAN -> (network int, broadcast int, prefix length)
    # memos shared by the switches' contexts: VLAN lists found valid, and their CLI text
    checked: dict[tuple, list[int]] = field(default_factory=dict)
    texts: dict[tuple[int, ...], str] = field(default_factory=dict)

    def vlan_text(self, ids: list[int]) -> str:
        """compress(ids), computed once per distinct list."""
        key = tuple(ids)
        got = self.texts.get(key)
        if got is None:
            got = self.texts[key] = compress(ids)
        return got

    @classmethod
    def of(cls, doc: PlanDocument) -> DocIndex:
        subnets = {}
        for v in sorted(doc.vlans, key=lambda v: v.id):
            net = safe.ipv4_network(v.learning_subnet, f"plan.vlans[{v.id}].learning_subnet")
            subnets[v.id] = (int(net.network_address), int(net.broadcast_address), net.prefixlen)
        return cls(routing_ids=_ints([v.id for v in doc.vlans], "plan.vlans[].id"),
                   pair_vlans=_tree_vlans(doc), subnets=subnets)


def switch_context(doc: PlanDocument, name: str, platform: Platform,
                   index: DocIndex | None = None) -> SwitchContext:
    index = index or DocIndex.of(doc)
    sw = doc.switches[name]
    family = family_of(platform)
    where = f"plan.switches.{name}"
    safe.name(platform.name, f"{where}.platform")    # printed in the config's header comment
    errors: list[str] = []
    panel = frozenset(platform.ports)
    lo, hi = platform.vid_min, platform.vid_max
    routing = _ints(index.routing_ids, "plan.vlans[].id", lo, hi)
    memberships: dict[tuple[str, int], HostMembership] = {}    # (attachment, PVID) -> membership
    pair_vlans = index.pair_vlans
    reserved = [safe.port(p, f"{where}.reserved_ports") for p in sw.reserved_ports]

    host_ports: list[HostPort] = []
    singles: list[tuple[str, str, list[int]]] = []
    member_of: dict[str, int] = {}
    for port_name, p in sw.ports.items():
        pw = f"{where}.ports.{port_name}"
        safe.port(port_name, pw, panel)
        if port_name in reserved:
            errors.append(f"{pw}: the port is reserved and must not be touched")
        untagged = _ints(p.untagged, f"{pw}.untagged", lo, hi, index.checked)
        tagged = _ints(p.tagged, f"{pw}.tagged", lo, hi, index.checked)
        if p.role == "host":
            host = p.host
            assert host is not None                    # the document checks each role's fields
            pvid = safe.vid(p.pvid, f"{pw}.pvid", lo, hi)
            h = doc.hosts.get(host)
            if h is None or h.switch != name or h.port != port_name:
                errors.append(f"{pw}: host {host} is not recorded on this port in plan.hosts")
            elif h.vlan != pvid:
                errors.append(f"{pw}: PVID {pvid} differs from plan.hosts.{host}.vlan {h.vlan}")
            attachment = sw.host_attachment
            if pvid not in routing:
                errors.append(f"{pw}: PVID {pvid} is not a routing VLAN")
            else:
                want = memberships.get((attachment, pvid))
                if want is None:
                    want = memberships[(attachment, pvid)] = host_port_membership(attachment, pvid, routing)
                for label, got, need in (("untagged", untagged, want.untagged), ("tagged", tagged, want.tagged)):
                    if len(got) != len(need) or not need.issuperset(got):     # got has no duplicates
                        errors.append(f"{pw}: a host port of a {attachment} attachment must be {label} in "
                                      f"{compress(sorted(need)) if need else 'no VLAN'}, not "
                                      f"{compress(got) if got else 'none'}")
            host_ports.append(HostPort(port_name, host, pvid, untagged, index.vlan_text(untagged),
                                       tagged, index.vlan_text(tagged) if tagged else ""))
        else:
            neighbor = p.neighbor
            assert neighbor is not None
            if untagged or p.pvid is not None:
                errors.append(f"{pw}: an inter-switch port must not be untagged in any VLAN or have a PVID")
            if p.role == "inter-switch":
                if p.lag is not None:
                    errors.append(f"{pw}: role inter-switch but lag {p.lag} is set")
                singles.append((port_name, neighbor, tagged))
            else:
                member_of[port_name] = safe.integer(p.lag, f"{pw}.lag", 1, platform.max_lags)

    lags: list[Lag] = []
    switch_vlans: set[int] = set()
    for hp in host_ports:
        switch_vlans.update(hp.untagged)
        switch_vlans.update(hp.tagged)
    lag_defs: list[tuple[int, str, list[str], list[int]]] = []
    for lag_id in sw.lag_ids():
        lag = sw.lags[str(lag_id)]
        lw = f"{where}.lags.{lag_id}"
        safe.integer(lag_id, lw, 1, platform.max_lags)
        neighbor = lag.neighbor
        members = [safe.port(m, f"{lw}.members", panel) for m in lag.members]
        if len(members) < 2 or len(members) > platform.max_lag_members:
            errors.append(f"{lw}: {len(members)} members, expected 2..{platform.max_lag_members}")
        tagged = _ints(lag.tagged, f"{lw}.tagged", lo, hi)
        for m in members:
            mp = sw.ports.get(m)
            if mp is None or member_of.get(m) != lag_id:
                errors.append(f"{lw}: member {m} is not listed as a lag-member of LAG {lag_id}")
            elif mp.neighbor != neighbor or sorted(mp.tagged) != tagged:
                errors.append(f"{lw}: member {m} disagrees with the LAG on neighbour or tagged VLANs")
        lag_defs.append((lag_id, neighbor, sorted(members, key=platform.port_index), tagged))
    for m, lag_id in member_of.items():
        if sw.lag(lag_id) is None:
            errors.append(f"{where}.ports.{m}: member of LAG {lag_id}, which is not defined")

    # Exactly the VLANs whose tree uses the neighbour pair, and one bundle per neighbour:
    # two unbundled cables to one neighbour in the same VLAN would be a loop.
    seen_neighbors: dict[str, str] = {}
    uplinks = [(f"port {p}", neighbor, t) for p, neighbor, t in singles] + \
              [(f"port-channel {i}", neighbor, t) for i, neighbor, _, t in lag_defs]
    for label, neighbor, tagged in uplinks:
        # A port to a switch no longer in the plan (dead, repaired around: bundle/repaired.py)
        # may stay, carrying no VLAN, so that it carries none when the switch comes back.
        if (neighbor not in doc.switches and tagged) or neighbor == name:
            errors.append(f"{where}: {label} goes to unknown neighbour {neighbor!r}")
        if neighbor in seen_neighbors:
            errors.append(f"{where}: {label} and {seen_neighbors[neighbor]} both go to {neighbor} "
                          "without one LAG (a loop)")
        seen_neighbors[neighbor] = label
        expected = sorted(pair_vlans.get(frozenset((name, neighbor)), set()))
        if tagged != expected:
            errors.append(f"{where}: {label} to {neighbor} is tagged in {compress(tagged) or 'none'} "
                          f"but the VLAN trees using {name}-{neighbor} are {compress(expected) or 'none'}")
        switch_vlans.update(tagged)
    if errors:
        raise VerificationError(errors)

    vlans = sorted(switch_vlans)

    def removal(tagged: list[int]) -> list[int]:
        keep = set(tagged)
        return [1] + [v for v in vlans if v not in keep]

    text = index.vlan_text
    links = [Link(p, neighbor, t, text(t), r, text(r))
             for p, neighbor, t in sorted(singles, key=lambda s: platform.port_index(s[0]))
             for r in (removal(t),)]
    lags = [Lag(i, neighbor, ms, t, text(t), r, text(r))
            for i, neighbor, ms, t in sorted(lag_defs) for r in (removal(t),)]
    host_ports.sort(key=lambda hp: platform.port_index(hp.port))
    managed = sorted(sw.ports, key=platform.port_index)
    return SwitchContext(
        switch=name, platform=platform, family=family, plan_name=_plan_name(doc), mgmt=sw.mgmt,
        vlans=vlans, vlan_list=compress(vlans) if vlans else "", routing_vlans=routing,
        host_attachment=sw.host_attachment, host_ports=host_ports, links=links, lags=lags, reserved_ports=reserved,
        managed_ports=managed, settings=_switch_settings(doc, platform, family, name),
    )


def _plan_name(doc: PlanDocument) -> str:
    return safe.name(doc.name, "plan.name")      # None (a document without one) is refused


def _switch_settings(doc: PlanDocument, platform: Platform, family: Family, name: str) -> SwitchSettings:
    s = doc.settings
    aging = s.aging_time
    if aging is None:
        aging = platform.aging_max
    if not platform.aging_min <= aging <= platform.aging_max:
        raise UserError(f"aging time {aging!r} s is outside what {platform.name} accepts "
                        f"({platform.aging_min}..{platform.aging_max} s) on switch {name}",
                        field="settings.aging_time",
                        fix=f"set settings.aging_time within {platform.aging_min}..{platform.aging_max}, "
                            "or leave it out for the platform maximum")
    modes = family.capabilities.lag_hash_modes
    mode = modes.get(s.lag_hash)
    if mode is None:
        raise UserError(f"platform {platform.name} (switch {name}) has no LAG hash '{s.lag_hash}'",
                        field="settings.lag_hash",
                        fix=f"use one of: {', '.join(sorted(modes)) or '(none)'}")
    return SwitchSettings(aging_time=aging, flow_control=s.flow_control is not False,
                          eee=s.eee, lag_hash=s.lag_hash,
                          lag_hash_mode=safe.token(mode, f"family {family.name} lag hash"))


def learning_method(doc: PlanDocument, override: str | None) -> str:
    method = override or doc.settings.learning.method or "system"
    if method not in LEARNING_METHODS:
        raise UserError(f"unknown learning method {method!r}", field="settings.learning.method",
                        fix="use " + ", ".join(LEARNING_METHODS) + " (system is the default)")
    trunk = sorted(s for s, sw in doc.switches.items() if sw.host_attachment == "trunk")
    if method == "raw" and trunk:
        raise UserError(f"learning method raw makes no VLAN sub-interfaces, but the hosts of {', '.join(trunk[:3])}"
                        f"{' ...' if len(trunk) > 3 else ''} are trunk-attached and receive the other VLANs "
                        "on them (docs/method.md)", field="settings.learning.method",
                        fix="use another learning method (system is the default)")
    return method


def host_network(method: str, network: str | None) -> str:
    """Who owns the sub-interfaces; the network stack can only own real VLAN sub-interfaces."""
    network = network or "script"
    if network not in HOST_NETWORKS:
        raise UserError(f"unknown host network {network!r}", field="--host-network",
                        fix="use " + ", ".join(HOST_NETWORKS))
    if network != "script" and method not in ("system", "ip-link"):
        raise UserError(f"--host-network {network} writes VLAN sub-interfaces for the network stack, "
                        f"but the learning method {method} " + ("makes none" if method == "raw" else
                                                                "makes them with vconfig"),
                        field="--host-network", fix="use --learning-method system (the default) or ip-link, "
                                                    "or --host-network script")
    return network


def host_side(doc: PlanDocument, method: str, network: str,
              index: DocIndex | None = None) -> HostSide:
    """The host tables from the plan. The host program computes each learning address by the
    rule first address of the VLAN's subnet + 1 + host index; checked here to stay inside
    every subnet (not its broadcast address) and to be one host's alone."""
    index = index or DocIndex.of(doc)
    plan_name = _plan_name(doc)
    prefix = doc.settings.learning.interface_prefix or DEFAULT_INTERFACE_PREFIX
    widest = max((str(v) for v in index.subnets), key=len, default="")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", prefix):
        raise VerificationError([f"plan.settings.learning.interface_prefix: unsafe prefix {prefix!r}"])
    if len(prefix) + len(widest) > safe.IFNAME_MAX:
        raise UserError(f"the learning sub-interface of VLAN {widest} would be named {prefix}{widest}, "
                        f"{len(prefix) + len(widest)} characters, but Linux interface names have at most "
                        f"{safe.IFNAME_MAX} (IFNAMSIZ 16 including the terminating NUL)",
                        field="settings.learning.interface_prefix",
                        fix=f"use a prefix of at most {safe.IFNAME_MAX - len(widest)} characters (default "
                            f"{DEFAULT_INTERFACE_PREFIX})")
    vlans = [VlanRow(vid, _network(first, prefix_len)) for vid, (first, _last, prefix_len) in index.subnets.items()]
    rows: list[HostRow] = []
    errors: list[str] = []
    taken: dict[int, str] = {}
    # addresses first+1 .. last-1 are the hosts' (last: the subnet's broadcast address)
    room, narrowest = min(((last - first, _network(first, plen)) for first, last, plen in index.subnets.values()),
                          key=lambda r: r[0], default=(2**32, None))
    for host, h in doc.hosts.items():
        where = f"plan.hosts.{host}"
        interface = safe.iface(h.interface or "eth0", f"{where}.interface")
        position = h.index
        if position + 1 >= room:
            errors.append(f"{where}.index: {position} gives no host address in the learning subnet "
                          f"{narrowest} (it has {max(room - 1, 0)}: index 0 to {room - 2})")
            continue
        if position in taken:
            errors.append(f"{where}.index: {position} is also the index of {taken[position]} (the learning "
                          "addresses would be the same)")
            continue
        taken[position] = host
        attachment = doc.switches[h.switch].host_attachment      # a Literal: safe in a shell word
        rows.append(HostRow(host, interface, h.mac, safe.vid(h.vlan, f"{where}.vlan"), position, attachment))
    if errors:
        raise VerificationError(errors)
    rows.sort(key=lambda r: r.index)
    return HostSide(plan_name=plan_name, method=method, network=network, prefix=prefix,
                    script_path=HOST_SCRIPT_PATH, table_dir=HOST_TABLE_DIR, hosts=rows, vlans=vlans)


def _network(first: int, prefix_len: int) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network((first, prefix_len))


def refresh_context(doc: PlanDocument, aging_times: list[int], network: str = "script") -> RefreshContext:
    """The shortest aging time of any switch decides how often the learning must repeat."""
    learning = doc.settings.learning
    sched = schedule_for(min(aging_times), learning.interval_s, learning.splay_s)
    return RefreshContext(plan_name=_plan_name(doc), script_path=HOST_SCRIPT_PATH, table_dir=HOST_TABLE_DIR,
                          network=network, schedule=sched, aging_time=min(aging_times))
