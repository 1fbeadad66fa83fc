"""Where every switch must learn every host's MAC, in every VLAN: one answer for audit
(the real switches' tables) and emulate (the kernel bridges' tables).

A switch learns a source MAC on the bridge port the frame arrived on. The learning
broadcast of host H in VLAN v travels along v's tree from H's switch, so a switch S of
that tree learns H on the port towards H's switch: H's own port on H's switch, else the
inter-switch port (or LAG, as one bridge port) to S's neighbour on the tree path to H.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vlanroute.model.bridge import LagPort, PortRef

if TYPE_CHECKING:      # annotations only: the emulation in the VM imports this module without pydantic
    from vlanroute.bundle.document import PlanDocument

# The learning sub-interfaces' name prefix when the inventory sets none (vr<VLAN>); here, not
# in vlanroute.render, so that the emulation in the VM finds it without importing the renderer.
DEFAULT_INTERFACE_PREFIX = "vr"


@dataclass(frozen=True)
class LearnedAt:
    switch: str
    vlan: int
    host: str
    port: PortRef


def uplink_ports(doc: PlanDocument) -> dict[tuple[str, str], PortRef]:
    """(switch, neighbour) -> the bridge port towards the neighbour: its LAG, or its cable."""
    out: dict[tuple[str, str], PortRef] = {}
    for sw, spec in doc.switches.items():
        for name, port in sorted(spec.ports.items()):
            if port.role != "host" and port.neighbor is not None and (sw, port.neighbor) not in out:
                out[(sw, port.neighbor)] = LagPort(port.lag) if port.lag is not None else name
    return out


def learning_ports(doc: PlanDocument, hosts: Iterable[str] | None = None) -> Iterator[LearnedAt]:
    """For every VLAN, every host (default: all, in name order) and every switch of the
    VLAN's tree connected to the host's switch: the port the host's MAC is learned on."""
    # The pipeline's tree walks live in routing/trees.py (standard library only).
    from vlanroute.routing.trees import tree_parents

    names = sorted(doc.hosts) if hosts is None else list(hosts)
    uplinks = uplink_ports(doc)
    for vlan in doc.vlans:
        links = vlan.link_pairs()
        towards: dict[str, dict[str, str]] = {}       # host switch -> each switch's next hop
        for host in names:
            h = doc.hosts[host]
            parent = towards.get(h.switch)
            if parent is None:
                parent = towards[h.switch] = tree_parents(links, h.switch)
            for s in vlan.switches:
                if s == h.switch:
                    yield LearnedAt(s, vlan.id, host, h.port)
                elif s in parent:
                    yield LearnedAt(s, vlan.id, host, uplinks[(s, parent[s])])
