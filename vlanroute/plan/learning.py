"""Learning subnets (seed 001, section 3.2.2); the refresh schedule itself is in schedule.py.

Every host gets, in every routing VLAN, an address in a per-VLAN subnet used only to send
the learning broadcast. The subnets come from a configurable pool, are sized for the host
count and must not overlap any network the inventory declares.
"""

from __future__ import annotations

import ipaddress
import math

from vlanroute.errors import PlanError
from vlanroute.model.hosts import Host
from vlanroute.model.inventory import LoadedInventory
from vlanroute.plan.vlans import RoutingVlan


def assign_learning_addresses(inv: LoadedInventory, hosts: list[Host], vlans: list[RoutingVlan],
                              mgmt: list[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> int:
    """Give every VLAN a subnet and every host an address in it. Returns the prefix length."""
    pool = inv.spec.settings.learning.pool
    host_bits = max(2, math.ceil(math.log2(len(hosts) + 2)))
    prefix = 32 - host_bits
    if prefix < pool.prefixlen:
        raise PlanError(f"{len(hosts)} hosts do not fit one subnet of the pool {pool}", file=inv.file,
                        field="settings.learning.pool", fix=f"use a pool of at least /{prefix}")
    available = 2 ** (prefix - pool.prefixlen)
    if len(vlans) > available:
        need = prefix - math.ceil(math.log2(len(vlans)))
        raise PlanError(f"{len(vlans)} VLANs need {len(vlans)} subnets of /{prefix} but the pool {pool} holds {available}",
                        file=inv.file, field="settings.learning.pool", fix=f"use a pool of /{need} or larger")
    for net in inv.spec.settings.reserved_networks:
        if net.overlaps(pool):
            raise PlanError(f"the learning pool {pool} overlaps the reserved network {net}", file=inv.file,
                            field="settings.learning.pool", fix="choose a pool that no other network of the cluster uses")
    for addr in mgmt:
        if addr in pool:
            raise PlanError(f"the learning pool {pool} contains the management address {addr}", file=inv.file,
                            field="settings.learning.pool", fix="choose a pool apart from the management network")
    subnets = pool.subnets(new_prefix=prefix)
    for v in vlans:
        v.learning_subnet = str(next(subnets))
    return prefix


def learning_address(subnet: str, host_index: int) -> str:
    """Host number `host_index` (0-based, inventory order) in a VLAN's learning subnet.

    Computed on demand: a large plan has hosts x VLANs of them (8.4 million on a 32x32
    torus with 16 hosts per switch), too many to keep.
    """
    net = ipaddress.IPv4Network(subnet)
    return str(ipaddress.IPv4Address(int(net.network_address) + 1 + host_index))
