"""The routing VLANs of a plan: the routing's shared trees (routing/packing.py), each of
which becomes one VLAN with an id and a learning subnet."""

from __future__ import annotations

from dataclasses import dataclass, field

from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Routes, packing_of
from vlanroute.routing.packing import Link


@dataclass
class RoutingVlan:
    """One routing VLAN: the source switches whose frames travel in it, and the tree of
    inter-switch links (and the switches it spans) that all their routes share. A VLAN's
    links must form a tree: 802.1Q floods a broadcast to every member port of the VLAN,
    so a loop of members would circulate it for ever with spanning tree off."""

    sources: list[str]
    links: frozenset[Link]          # shared with the routing's packing, never changed
    switches: frozenset[str]
    id: int = 0
    learning_subnet: str = ""
    # A backup VLAN of the fast failover (plan/protection.py): per routing VLAN (its index in
    # the plan's VLANs until ids are given, then its id), the links of its tree this one
    # avoids. Empty for a routing VLAN.
    protects: dict[int, frozenset[Link]] = field(default_factory=dict)
    # Routing below the switch: the sources that send only some of their hosts in this
    # VLAN, with how many (routing/packing.py); every other source sends all its hosts.
    shares: dict[str, int] = field(default_factory=dict)


def pack_vlans(routes: Routes, topo: Topology, host_count: dict[str, int]) -> list[RoutingVlan]:
    """One VLAN per shared tree, ordered by each VLAN's first source in switch order."""
    return [RoutingVlan(sources=list(t.sources), links=t.links, switches=t.switches, shares=dict(t.shares))
            for t in packing_of(routes, topo, host_count)]
