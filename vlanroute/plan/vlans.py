"""The routing VLANs of a plan: the routing's shared trees (routing/packing.py), each of
which becomes one VLAN with an id and a learning subnet."""

from __future__ import annotations

from dataclasses import dataclass

from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Routes
from vlanroute.routing.packing import Link, packing_of


@dataclass
class VlanGroup:
    sources: list[str]
    links: frozenset[Link]          # shared with the routing's packing, never changed
    switches: frozenset[str]
    id: int = 0
    learning_subnet: str = ""


def pack_vlans(routes: Routes, topo: Topology, host_count: dict[str, int]) -> list[VlanGroup]:
    """One VLAN per shared tree, ordered by each VLAN's first source in switch order."""
    return [VlanGroup(sources=list(t.sources), links=t.links, switches=t.switches)
            for t in packing_of(routes, topo, host_count)]
