"""The front door of routing: one interface that every routing engine implements.

The model is OpenSM's: one module per routing engine behind one engine structure, and a
table of engines (`routing/registry.py`) that `routing.algorithm` names one of. An engine
declares what it is (its name, a one-line summary, whether its routes are minimal,
whether it is deadlock-free by construction, which topologies it refuses and why), turns
the inventory's routing settings into its own typed parameters, and routes a topology.

What it returns is the same for every engine: for every source switch, a tree of paths to
every other switch (a parent map, see routing/trees.py), because VLAN routing sends all
frames of a host in one VLAN (its port's PVID) and a VLAN must be loop-free; and a typed
record of the choices it made, which becomes the `routing` section of plan.json. An engine
may route below the switch: the hosts of one switch then send on several trees
(`Routes.splits`), each host on one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from vlanroute.routing.packing import SharedTree, pack
from vlanroute.routing.trees import ParentMap, Share, senders

if TYPE_CHECKING:
    from vlanroute.model.topology import Topology


class Choices(Protocol):
    """What an engine chose (dimension order, tie rule, root, ...), typed per engine."""

    def record(self) -> dict[str, object]:
        """The keys of plan.json's `routing` section after `algorithm`, in their order."""
        ...


@dataclass(frozen=True)
class Routes:
    """The result of an engine: one tree per source, and the choices that made them."""

    algorithm: str                          # the engine's name, plan.json's routing.algorithm
    parents: dict[str, ParentMap]           # source switch -> its tree (every switch a source)
    choices: Choices
    # The grouping of the sources into VLANs, when the engine already computed it while
    # choosing between candidate routings (routing/packing.py; it is deterministic, so
    # the plan would compute the same). None: the plan packs.
    packing: tuple[SharedTree, ...] | None = field(default=None, compare=False, repr=False)
    # Routing below the switch: switch -> the trees its hosts send on, each with how many of
    # its hosts send on it (at least two trees; the hosts add up to the switch's). A switch
    # absent here sends all its hosts on parents[switch]; for one present, parents[switch]
    # is the first of its trees.
    splits: Mapping[str, tuple[Share, ...]] = field(default_factory=dict)
    # With splits: the max load per cable and the VLANs of the engine's plan with one tree
    # per switch, which routing below the switch improved on (what `plan` shows it cost).
    unspread: tuple[float, int] | None = field(default=None, compare=False)

    def senders(self, host_count: Mapping[str, int]) -> list[tuple[str, ParentMap, int]]:
        """(source switch, tree, hosts sending on it) for every tree that carries traffic."""
        return senders(self.parents, host_count, self.splits)


@dataclass(frozen=True)
class Options:
    """The inventory's routing section as the engines see it (no file, no YAML)."""

    dimension_order: tuple[int, ...] | None = None   # routing.dimension_order; None: auto
    root: str | None = None                          # routing.root
    max_vlans: int = 4094                            # the VLAN budget (plan/limits.py)
    # The default's search (no routing.algorithm, routing/choose.py): an engine with a large
    # search runs a smaller one, fixed in counts (never in time), so plans stay deterministic.
    quick: bool = False
    # ...and the max load above which the default will not take a plan (its best so far
    # times its deadlock-free allowance): a search may skip steps that cannot get under it.
    worth_below: float | None = None


@dataclass(frozen=True)
class Refusal:
    """Why an engine cannot route a topology, and what the user can do instead."""

    reason: str
    fix: str


P = TypeVar("P")


class Engine(ABC, Generic[P]):
    """One routing engine. Subclasses set the class attributes and implement the methods.

    `params` and `route` raise UserError (without a file: the plan adds it) for settings
    that do not fit the topology, naming the inventory field, e.g. routing.root.
    """

    name: ClassVar[str]                     # the value of routing.algorithm
    summary: ClassVar[str]                  # one line, for `vlanroute algorithms`
    minimal: ClassVar[bool]                 # every route is a shortest path in hops
    deadlock_free: ClassVar[bool]           # acyclic channel dependencies on every topology
    reads: ClassVar[frozenset[str]] = frozenset()      # the Options fields it reads
    refused: ClassVar[Mapping[str, Refusal]] = {}      # topology kind -> why not

    def refuses(self, topo: Topology) -> Refusal | None:
        """Why this engine cannot route `topo`, or None if it can."""
        return self.refused.get(topo.kind)

    @abstractmethod
    def params(self, topo: Topology, options: Options) -> P:
        """This engine's typed parameters from the inventory's settings, checked against `topo`."""

    @abstractmethod
    def route(self, topo: Topology, host_count: dict[str, int], params: P) -> Routes:
        """One tree per switch of `topo`; `host_count`: hosts per switch (the traffic)."""


def packing_of(routes: Routes, topo: Topology, host_count: dict[str, int]) -> tuple[SharedTree, ...]:
    """The VLANs `routes` need: the engine's own packing if it made one, else packed here."""
    if routes.packing is not None:
        return routes.packing
    order = {s: i for i, s in enumerate(topo.switches)}
    return pack(routes.parents, {s for s, n in host_count.items() if n}, order, routes.splits)
