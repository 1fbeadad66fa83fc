"""Write a rendered plan back to Nautobot (docs/import.md, "Writing the plan back"): its
cables as planned cables, its VLANs in a VLAN group of their own, and each planned port's
802.1Q role on the interface (mode, untagged VLAN, tagged VLANs, LAG membership).

One pass reads what Nautobot has and lists every change the plan needs (`Change`); a
difference the plan cannot settle alone (an interface cabled elsewhere, a switch or port
Nautobot does not have) is a conflict, and with any conflict nothing is written. Then the
changes are applied in dependency order: the VLAN group, the VLANs, the LAG interfaces, the
interfaces, the cables. A second run finds nothing to change; `dry_run` lists the changes and
writes nothing.

How the plan maps onto Nautobot's interface model: a host port the switch makes an untagged
member of every routing VLAN (vlanroute's host attachment `untagged`) is mode `access` with
its PVID as untagged VLAN, the only one Nautobot's model can hold (plan.json and the config
have the other memberships); a trunk-attached host port is mode `tagged` with its tagged
VLANs; an inter-switch cable's port is mode `tagged` with the VLANs whose tree uses it, on
the LAG interface where the plan bundles cables (named as the switch names it, the family's
`lag_label`), the members only joining it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vlanroute.bundle.cables import HOST, planned_cables
from vlanroute.bundle.document import PlanDocument
from vlanroute.drivers import family_named
from vlanroute.errors import UserError
from vlanroute.model.nautobot import BATCH, Selection, call
from vlanroute.natural import natural_key

PLANNED = "Planned"
GROUP_PREFIX = "vlanroute-"


@dataclass
class Change:
    kind: str                      # "VLAN group", "VLAN", "LAG", "interface", "cable"
    action: str                    # "create" or "update"
    what: str                      # for people: the object and the change
    data: dict[str, Any] = field(default_factory=dict)
    ref: str = ""                  # the Nautobot id of an updated object
    device: str = ""               # an interface's device (name)


@dataclass
class WriteBack:
    changes: list[Change]
    conflicts: list[str]
    notes: list[str]
    written: bool = False
    # What the read found, for the writes that follow it.
    group_id: str | None = None
    vlan_ids: dict[int, str] = field(default_factory=dict)                  # vid -> VLAN id
    iface_ids: dict[tuple[str, str], str] = field(default_factory=dict)     # (device, interface) -> id

    def of(self, key: str) -> list[Change]:
        return [c for c in self.changes if f"{c.action} {c.kind}" == key]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.changes:
            key = f"{c.action} {c.kind}"
            out[key] = out.get(key, 0) + 1
        return out


@dataclass(frozen=True)
class _Want:
    """An interface's wanted 802.1Q state, VLANs by id and the LAG by name."""
    mode: str
    untagged: int | None
    tagged: tuple[int, ...]
    lag: str | None


def group_name(doc: PlanDocument) -> str:
    return f"{GROUP_PREFIX}{doc.name}"[:100]


def vlan_name(vid: int) -> str:
    return f"vlanroute-{vid}"


def _batches(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), BATCH):
        yield items[i:i + BATCH]


def _id(ref: Any) -> str | None:
    if isinstance(ref, dict):
        return str(ref["id"]) if ref.get("id") else None
    if hasattr(ref, "id"):
        return str(ref.id)
    return str(ref) if ref else None


def wanted_ports(doc: PlanDocument) -> dict[tuple[str, str], _Want]:
    """(device, interface) -> its wanted state, for every planned port and LAG interface."""
    out: dict[tuple[str, str], _Want] = {}
    for s, switch in doc.switches.items():
        record = doc.platforms.get(switch.platform)
        family = family_named(switch.family or (record.family if record else ""), field=f"switches.{s}.family")
        for port, p in switch.ports.items():
            if p.role == "host":
                if switch.host_attachment == "trunk":
                    out[(s, port)] = _Want("tagged", None, tuple(sorted(p.tagged or [])), None)
                else:
                    out[(s, port)] = _Want("access", p.pvid, (), None)
            elif p.role == "inter-switch":
                out[(s, port)] = _Want("tagged", p.pvid, tuple(sorted(p.tagged or [])), None)
            else:
                assert p.lag is not None
                out[(s, port)] = _Want("", None, (), family.lag_label(p.lag))
        for lag_id in switch.lag_ids():
            lag = switch.lags[str(lag_id)]
            out[(s, family.lag_label(lag_id))] = _Want("tagged", None, tuple(sorted(lag.tagged)), None)
    return out


def compute(api: Any, url: str, doc: PlanDocument, selection: Selection) -> WriteBack:
    """Every change the plan needs in Nautobot, and every conflict (nothing is written)."""
    changes: list[Change] = []
    conflicts: list[str] = []
    notes: list[str] = []
    filters: dict[str, Any] = {}
    location_id: str | None = None
    if selection.location:
        location = call(url, f"looking up location '{selection.location}'",
                        lambda: api.dcim.locations.get(name=selection.location))
        if location is None:
            raise UserError(f"Nautobot has no location named '{selection.location}'", file=url, field="--location",
                            fix="give a location's name exactly as Nautobot shows it")
        location_id = str(location.id)
        filters["location"] = location_id
    if selection.tag:
        filters["tags"] = selection.tag
    if not filters:
        raise UserError("no selection given", field="--location/--tag",
                        fix="name the location (--location) or tag (--tag) of the fabric's devices in Nautobot")
    names = sorted(set(doc.switches) | set(doc.hosts), key=natural_key)
    devices: dict[str, str] = {}        # name -> id
    for batch in _batches(names):
        for d in call(url, "reading the devices",
                      lambda: list(api.dcim.devices.filter(name=batch, depth=0, **filters))):
            devices[str(d.name)] = str(d.id)
    missing_switches = [s for s in sorted(doc.switches, key=natural_key) if s not in devices]
    for s in missing_switches:
        conflicts.append(f"switch '{s}' of the plan is not a device of {selection.describe()} in Nautobot")
    missing_hosts = [h for h in sorted(doc.hosts, key=natural_key) if h not in devices]
    if missing_hosts:
        notes.append(f"{len(missing_hosts)} host(s) of the plan are not devices in Nautobot, their cables are not "
                     f"written: {', '.join(missing_hosts[:10])}" + (" ..." if len(missing_hosts) > 10 else ""))
    ifaces: dict[tuple[str, str], dict[str, Any]] = {}
    by_id: dict[str, tuple[str, str]] = {}
    name_of = {v: k for k, v in devices.items()}
    for batch in _batches(sorted(devices.values())):
        for i in call(url, "reading the interfaces",
                      lambda: list(api.dcim.interfaces.filter(device_id=batch, depth=0))):
            rec = dict(i)
            key = (name_of[str(_id(rec["device"]))], str(rec["name"]))
            ifaces[key] = rec
            by_id[str(rec["id"])] = key

    # The VLAN group and its VLANs.
    gname = group_name(doc)
    group = call(url, "reading the VLAN groups", lambda: api.ipam.vlan_groups.get(name=gname))
    current_vlans: dict[int, dict[str, Any]] = {}
    if group is None:
        changes.append(Change("VLAN group", "create", f"VLAN group '{gname}'",
                              {"name": gname, **({"location": location_id} if location_id else {}),
                               "description": f"vlanroute plan {doc.name}: the routing VLANs"}))
    else:
        for v in call(url, "reading the VLANs", lambda: list(api.ipam.vlans.filter(vlan_group=group.id, depth=0))):
            current_vlans[int(v.vid)] = dict(v)
    vlan_by_id = {str(v["id"]): vid for vid, v in current_vlans.items()}
    for vlan in doc.vlans:
        description = f"routes from {', '.join(vlan.sources)}"[:200]
        have = current_vlans.get(vlan.id)
        if have is None:
            changes.append(Change("VLAN", "create", f"VLAN {vlan.id} '{vlan_name(vlan.id)}' in '{gname}' ({description})",
                                  {"vid": vlan.id, "name": vlan_name(vlan.id), "description": description}))
        elif have.get("name") != vlan_name(vlan.id) or have.get("description") != description:
            changes.append(Change("VLAN", "update", f"VLAN {vlan.id}: name '{vlan_name(vlan.id)}', {description}",
                                  {"name": vlan_name(vlan.id), "description": description}, ref=str(have["id"])))
    stale = sorted(set(current_vlans) - {v.id for v in doc.vlans})
    if stale:
        notes.append(f"VLANs {', '.join(map(str, stale))} of '{gname}' are not in the plan; left as they are")

    # LAG interfaces and interface states.
    wanted = wanted_ports(doc)
    lag_names = {(d, w.lag) for (d, _), w in wanted.items() if w.lag}
    for (dev, name), want in sorted(wanted.items(), key=lambda kv: (natural_key(kv[0][0]), natural_key(kv[0][1]))):
        if dev not in devices:
            continue
        have_if = ifaces.get((dev, name))
        is_lag = (dev, name) in lag_names
        if have_if is None:
            if is_lag:
                changes.append(Change("LAG", "create", f"LAG interface {dev} {name}",
                                      {"device": devices[dev], "name": name, "type": "lag"}))
                have_if = {"mode": None, "untagged_vlan": None, "tagged_vlans": [], "lag": None}
            else:
                conflicts.append(f"device '{dev}' has no interface '{name}' in Nautobot (the plan uses it)")
                continue
        elif is_lag and have_if.get("type", {}).get("value", have_if.get("type")) != "lag":
            conflicts.append(f"device '{dev}' interface '{name}' is not a LAG in Nautobot, but the plan's LAG is "
                             f"named so on this switch")
            continue
        update = _interface_update(have_if, want, vlan_by_id, by_id)
        if update:
            what = ", ".join(_describe(k, v) for k, v in update.items())
            changes.append(Change("interface", "update", f"interface {dev} {name}: {what}", update,
                                  ref=str(have_if.get("id", "")), device=dev))

    # Cables.
    for cable in planned_cables(doc):
        ends = cable.ends()
        if cable.kind == HOST and cable.b not in devices:
            continue
        missing = [e for e in ends if e[0] in devices and e not in ifaces]
        if missing or any(e[0] not in devices for e in ends):
            for dev, name in missing:
                if (dev, name) not in wanted:          # a planned port's absence is reported above
                    conflicts.append(f"device '{dev}' has no interface '{name}' in Nautobot (cable {cable.label})")
            continue
        a, b = ifaces[ends[0]], ifaces[ends[1]]
        peers = [_id(a.get("cable_peer")), _id(b.get("cable_peer"))]
        if peers == [str(b["id"]), str(a["id"])]:
            continue                                            # already cabled so (whatever its status)
        wrong = [f"{e[0]} {e[1]} is cabled to {' '.join(by_id.get(str(p), ('another object', '')))}".rstrip()
                 for e, rec, p in zip(ends, (a, b), peers) if rec.get("cable")]
        if wrong:
            conflicts.append(f"cable {cable.label} {ends[0][0]} {ends[0][1]} - {ends[1][0]} {ends[1][1]}: in Nautobot "
                             + "; ".join(wrong))
            continue
        changes.append(Change("cable", "create", f"cable {cable.label}: {ends[0][0]} {ends[0][1]} - {ends[1][0]} "
                              f"{ends[1][1]} (planned)",
                              {"termination_a_type": "dcim.interface", "termination_a_id": str(a["id"]),
                               "termination_b_type": "dcim.interface", "termination_b_id": str(b["id"]),
                               "label": cable.label}))
    order = ("VLAN group", "VLAN", "LAG", "interface", "cable")       # the order they are written in
    changes.sort(key=lambda c: order.index(c.kind))
    return WriteBack(changes, conflicts, notes, group_id=str(group.id) if group is not None else None,
                     vlan_ids={vid: str(v["id"]) for vid, v in current_vlans.items()},
                     iface_ids={key: str(rec["id"]) for key, rec in ifaces.items()})


def _interface_update(have: Mapping[str, Any], want: _Want, vlan_by_id: Mapping[str, int],
                      by_id: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """The fields to change, VLANs by id ("vid:N" until they exist) and the LAG by name."""
    out: dict[str, Any] = {}
    mode = have.get("mode")
    mode = mode.get("value") if isinstance(mode, dict) else mode
    if (mode or "") != want.mode:
        out["mode"] = want.mode
    untagged = _id(have.get("untagged_vlan"))
    if (vlan_by_id.get(untagged) if untagged else None) != want.untagged or (untagged and untagged not in vlan_by_id):
        out["untagged_vlan"] = want.untagged
    tagged = [_id(v) for v in have.get("tagged_vlans") or []]
    if any(t not in vlan_by_id for t in tagged) or tuple(sorted(vlan_by_id[str(t)] for t in tagged)) != want.tagged:
        out["tagged_vlans"] = list(want.tagged)
    lag = _id(have.get("lag"))
    lag_name = by_id[lag][1] if lag and lag in by_id else None
    if lag_name != want.lag or (lag and lag not in by_id):
        out["lag"] = want.lag
    return out


def _describe(key: str, value: Any) -> str:
    if key == "mode":
        return f"mode {value or '(none)'}"
    if key == "untagged_vlan":
        return f"untagged VLAN {value if value is not None else '(none)'}"
    if key == "tagged_vlans":
        return "tagged VLANs " + (",".join(map(str, value)) or "(none)")
    return f"LAG {value or '(none)'}"


def apply(api: Any, url: str, doc: PlanDocument, selection: Selection) -> WriteBack:
    """Write every change, in dependency order, and return what was written: the VLAN group,
    the VLANs and the LAG interfaces first; then Nautobot is read again (`compute`), so that
    the interfaces and cables find those by id. A conflict found by the first read stops the
    run before any write."""
    first = compute(api, url, doc, selection)
    if first.conflicts or not first.changes:
        return first
    statuses = {s: call(url, f"looking up status '{s}'", lambda: api.extras.statuses.get(name=s)) for s in
                ("Active", PLANNED)}
    for name, status in statuses.items():
        if status is None:
            raise UserError(f"Nautobot has no status '{name}'", file=url,
                            fix=f"restore Nautobot's built-in status '{name}' (for cables, VLANs and interfaces)")
    active, planned = str(statuses["Active"].id), str(statuses[PLANNED].id)
    gname = group_name(doc)
    group_id = first.group_id
    for c in first.of("create VLAN group"):
        group_id = str(call(url, f"creating VLAN group '{gname}'", lambda: api.ipam.vlan_groups.create(c.data)).id)
    creates = [{**c.data, "vlan_group": group_id, "status": active} for c in first.of("create VLAN")]
    if creates:
        call(url, "creating the VLANs", lambda: api.ipam.vlans.create(creates))
    updates = [{"id": c.ref, **c.data} for c in first.of("update VLAN")]
    if updates:
        call(url, "updating the VLANs", lambda: api.ipam.vlans.update(updates))
    lags = [{**c.data, "status": active} for c in first.of("create LAG")]
    if lags:
        call(url, "creating the LAG interfaces", lambda: api.dcim.interfaces.create(lags))
    now = compute(api, url, doc, selection)
    payload = []
    for c in now.of("update interface"):
        body: dict[str, Any] = {"id": c.ref}
        for key, value in c.data.items():
            if key == "untagged_vlan":
                body[key] = now.vlan_ids[value] if value is not None else None
            elif key == "tagged_vlans":
                body[key] = [now.vlan_ids[v] for v in value]
            elif key == "lag":
                body[key] = now.iface_ids[(c.device, value)] if value else None
            else:
                body[key] = value
        payload.append(body)
    for i in range(0, len(payload), 500):
        chunk = payload[i:i + 500]
        call(url, "updating the interfaces", lambda: api.dcim.interfaces.update(chunk))
    cables = [{**c.data, "status": planned} for c in now.of("create cable")]
    for i in range(0, len(cables), 500):
        chunk = cables[i:i + 500]
        call(url, "creating the planned cables", lambda: api.dcim.cables.create(chunk))
    first.written = True
    return first
