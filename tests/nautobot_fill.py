"""Fill a real Nautobot server (tests/nautobot_server.py) through its REST API with pynautobot,
as a site would: a location, a device type and platform, switch and host devices with their
interfaces, management addresses, LAGs and cables (tests/test_nautobot.py).

`Fabric` is the site's data in plain form (switches with ports, cables, hosts with port and
MAC); `fill` creates it in one location, in bulk requests.

The switch's device type has an interface template per port, as a site that imports its
device types from a library has: Nautobot makes a new switch's ports itself when the switch
is created (one insert for all of them), where creating them through the API took Nautobot
about 50 ms each (its change log, its signals: about 55 s of the seed torus's fill).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MODEL = "PowerConnect 6248"          # the device type; the platform is Dell's OS name, as sites keep it
PLATFORM = "Dell PowerConnect"


@dataclass
class Fabric:
    switches: dict[str, str]                          # name -> management address ("" for none)
    ports: list[str]                                  # every switch's interfaces
    cables: list[tuple[str, str, str, str]]           # switch, port, switch, port
    hosts: dict[str, tuple[str, str, str | None]]     # host -> (switch, port, MAC)
    lags: dict[tuple[str, str], str] = field(default_factory=dict)   # (switch, port) -> LAG interface name
    extra_ports: dict[str, list[str]] = field(default_factory=dict)  # switch -> interfaces beyond `ports`
    loose_hosts: list[str] = field(default_factory=list)             # hosts without a cable


def _one(endpoint: Any, **match: Any) -> Any:
    return endpoint.get(**match)


def _get_or_create(endpoint: Any, match: dict[str, Any], extra: dict[str, Any] | None = None) -> Any:
    found = endpoint.get(**match)
    return found if found is not None else endpoint.create({**match, **(extra or {})})


class Base:
    """The objects every location shares: statuses, roles, location type, device type (with an
    interface template per port of `ports`), platform."""

    def __init__(self, nb: Any, ports: list[str]) -> None:
        self.nb = nb
        self.active = _one(nb.extras.statuses, name="Active").id
        self.connected = _one(nb.extras.statuses, name="Connected").id
        self.location_type = _get_or_create(nb.dcim.location_types, {"name": "Site"}, {
            "content_types": ["dcim.device", "ipam.vlan", "ipam.vlangroup", "ipam.prefix"]}).id
        self.roles = {r: _get_or_create(nb.extras.roles, {"name": r}, {"content_types": ["dcim.device"]}).id
                      for r in ("switch", "host", "patch panel")}
        maker = _get_or_create(nb.dcim.manufacturers, {"name": "Dell"}).id
        self.device_type = _get_or_create(nb.dcim.device_types, {"model": MODEL}, {"manufacturer": maker}).id
        have = {t.name for t in nb.dcim.interface_templates.filter(device_type=self.device_type)}
        if [p for p in ports if p not in have]:
            nb.dcim.interface_templates.create([{"device_type": self.device_type, "name": p, "type": "1000base-t"}
                                                for p in ports if p not in have])
        self.ports = have | set(ports)          # every switch has these from its device type
        self.panel_type = _get_or_create(nb.dcim.device_types, {"model": "Patch panel 24"}, {"manufacturer": maker}).id
        self.server_type = _get_or_create(nb.dcim.device_types, {"model": "Server"}, {"manufacturer": maker}).id
        self.platform = _get_or_create(nb.dcim.platforms, {"name": PLATFORM}, {"network_driver": "dell_powerconnect"}).id
        self.namespace = _one(nb.ipam.namespaces, name="Global").id

    def location(self, name: str) -> str:
        return str(_get_or_create(self.nb.dcim.locations, {"name": name},
                                  {"location_type": self.location_type, "status": self.active}).id)


def fill(nb: Any, base: Base, location: str, fabric: Fabric, prefix: str | None = None) -> dict[str, Any]:
    """Create the fabric's devices, interfaces, addresses, LAGs and cables in `location`;
    returns the devices by name."""
    loc = base.location(location)
    if fabric.switches and not base.ports <= set(fabric.ports):
        raise ValueError(f"the switches' device type has ports the fabric {location!r} does not list: "
                         f"{sorted(base.ports - set(fabric.ports))}")
    devices: dict[str, Any] = {}
    specs = [{"name": s, "device_type": base.device_type, "role": base.roles["switch"], "platform": base.platform,
              "location": loc, "status": base.active} for s in fabric.switches]
    specs += [{"name": h, "device_type": base.server_type, "role": base.roles["host"], "location": loc,
               "status": base.active} for h in list(fabric.hosts) + fabric.loose_hosts]
    for d in nb.dcim.devices.create(specs):
        devices[d.name] = d
    # Interfaces: the switch ports the device type does not give, a management interface, the
    # LAGs; one NIC per host.
    lag_names = sorted(set(fabric.lags.values()))
    ifaces = [{"device": devices[s].id, "name": p, "type": "1000base-t", "status": base.active}
              for s in fabric.switches for p in fabric.ports + fabric.extra_ports.get(s, []) if p not in base.ports]
    ifaces += [{"device": devices[s].id, "name": "vlan1", "type": "virtual", "status": base.active}
               for s in fabric.switches]
    ifaces += [{"device": devices[s].id, "name": lag, "type": "lag", "status": base.active}
               for s in fabric.switches for lag in lag_names if any(k[0] == s and v == lag for k, v in fabric.lags.items())]
    ifaces += [{"device": devices[h].id, "name": "eth0", "type": "1000base-t", "status": base.active,
                **({"mac_address": mac} if mac else {})} for h, (_, _, mac) in fabric.hosts.items()]
    ifaces += [{"device": devices[h].id, "name": "eth0", "type": "1000base-t", "status": base.active}
               for h in fabric.loose_hosts]
    name_of = {str(d.id): n for n, d in devices.items()}
    by_key = {}
    if fabric.switches:
        for i in nb.dcim.interfaces.filter(device_id=[devices[s].id for s in fabric.switches], exclude_m2m=True):
            by_key[(name_of[str(i.device.id)], i.name)] = i
    for chunk in range(0, len(ifaces), 500):
        for i in nb.dcim.interfaces.create(ifaces[chunk:chunk + 500]):
            by_key[(name_of[str(i.device.id)], i.name)] = i
    members = [{"id": by_key[key].id, "lag": by_key[(key[0], lag)].id} for key, lag in fabric.lags.items()]
    if members:
        nb.dcim.interfaces.update(members)
    # Management addresses: a prefix, an address per switch on its vlan1, the primary IPv4.
    if prefix:
        _get_or_create(nb.ipam.prefixes, {"prefix": prefix, "namespace": base.namespace},
                       {"status": base.active, "type": "network"})
        addresses = [{"address": f"{a}/{prefix.split('/')[1]}", "namespace": base.namespace, "status": base.active}
                     for s, a in fabric.switches.items() if a]
        created = {str(ip.address).split("/")[0]: ip for ip in nb.ipam.ip_addresses.create(addresses)}
        nb.ipam.ip_address_to_interface.create([{"ip_address": created[a].id, "interface": by_key[(s, "vlan1")].id}
                                               for s, a in fabric.switches.items() if a])
        nb.dcim.devices.update([{"id": devices[s].id, "primary_ip4": created[a].id}
                                for s, a in fabric.switches.items() if a])
    cables = [(a, pa, b, pb) for a, pa, b, pb in fabric.cables]
    cables += [(s, p, h, "eth0") for h, (s, p, _) in fabric.hosts.items() if p]
    nb.dcim.cables.create([{"termination_a_type": "dcim.interface", "termination_a_id": by_key[(a, pa)].id,
                            "termination_b_type": "dcim.interface", "termination_b_id": by_key[(b, pb)].id,
                            "status": base.connected} for a, pa, b, pb in cables])
    return devices
