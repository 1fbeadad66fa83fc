"""The vendor-neutral view of a fabric's forwarding state, as far as loops and delivery go.

A fabric is switches joined by cables (`Wire`). What matters of a switch is what each end
of a cable, and each host port, forwards: its 802.1Q member sets, PVID, ingress rules and
whether spanning tree runs there (`End`). A switch whose config cannot be read is `None`:
the worst case, every cable end of it forwards every VLAN with spanning tree off (a dead
switch keeps a config nobody can see, and may come back at any moment).

Ends are read from a parsed config (`SwitchConfig`): a port in a LAG forwards by its LAG's
settings, so two cables whose ends are one LAG at each side are one link, and cables that
are a LAG at one side only are separate links (a loop, if both carry a VLAN: the side
without the LAG floods one cable's frames out of the other).

A cable counts whatever its link state: a cable reported down may come back at any moment,
so it is as active as a live one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vlanroute.model.bridge import PortRef, SwitchConfig


@dataclass(frozen=True, order=True)
class Wire:
    """One inter-switch cable, by its two ends (switch, port)."""

    a: str
    a_port: str
    b: str
    b_port: str

    def label(self) -> str:
        return f"{self.a} {self.a_port} - {self.b} {self.b_port}"

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a, self.a_port), (self.b, self.b_port)


@dataclass(frozen=True)
class End:
    """What one cable end or host port forwards (IEEE 802.1Q, as its switch is configured)."""

    port: PortRef                  # the bridge port: the LAG of a member, else the port itself
    tagged: frozenset[int]         # egress tagged
    untagged: frozenset[int]       # egress untagged
    pvid: int                      # VLAN of untagged frames received; 0: dropped
    filtering: bool = True         # ingress filtering: frames of other VLANs dropped
    takes_tagged: bool = True      # acceptable frame types allow tagged frames
    takes_untagged: bool = True    # ... and untagged ones
    stp: bool = False              # spanning tree runs on this port (and on the switch)

    @property
    def egress(self) -> frozenset[int]:
        return self.tagged | self.untagged

    def accepts(self, vid: int) -> bool:
        """A frame tagged `vid` received here goes on in `vid`."""
        return self.takes_tagged and (vid in self.tagged or vid in self.untagged or not self.filtering)

    def untagged_into(self) -> int | None:
        """The VLAN an untagged frame received here goes on in, or None (dropped)."""
        if not self.takes_untagged or self.pvid <= 0:
            return None
        if self.filtering and self.pvid not in self.egress:
            return None
        return self.pvid


# physical port -> what it forwards; only the ports that matter (cable ends, host ports)
SwitchView = Mapping[str, End]
# switch -> its view; None: the switch could not be read (worst case, module docstring)
FabricView = Mapping[str, SwitchView | None]


def end_of(cfg: SwitchConfig, port: str) -> End:
    """What physical port `port` of `cfg` forwards (its LAG's settings if it is a member)."""
    eff = cfg.effective(port) if port in cfg.ports else None
    if eff is None:
        # A port the config does not have (another stack unit, a typo in a hand edit):
        # the factory state is all anyone can assume.
        return End(port=port, tagged=frozenset(), untagged=frozenset({1}), pvid=1, stp=cfg.stp_global_enabled)
    members = eff.members_of
    return End(port=cfg.logical_port(port), tagged=frozenset(eff.tagged & members),
               untagged=frozenset(eff.untagged & members), pvid=eff.pvid, filtering=eff.ingress_filtering,
               takes_tagged=eff.acceptable != "untagged-only", takes_untagged=eff.acceptable != "tagged-only",
               stp=cfg.stp_global_enabled and eff.stp_enabled)


def view_of(cfg: SwitchConfig, ports: Iterable[str]) -> dict[str, End]:
    """The view of `cfg` on the named physical ports."""
    return {p: end_of(cfg, p) for p in ports}


@dataclass(frozen=True)
class HostAt:
    """A host and the switch port it is cabled to."""

    name: str
    switch: str
    port: str


@dataclass(frozen=True)
class Fabric:
    """The cables and host ports a transition is checked on."""

    wires: tuple[Wire, ...]
    hosts: tuple[HostAt, ...] = ()

    def ports_of(self, switch: str) -> list[str]:
        """Every port of `switch` that is a cable end or a host port, each once."""
        out: dict[str, None] = {}
        for w in self.wires:
            for s, p in w.ends():
                if s == switch:
                    out[p] = None
        for h in self.hosts:
            if h.switch == switch:
                out[h.port] = None
        return list(out)

    @property
    def switches(self) -> list[str]:
        seen: dict[str, None] = {}
        for w in self.wires:
            seen[w.a] = seen[w.b] = None
        for h in self.hosts:
            seen[h.switch] = None
        return list(seen)


def universe(views: Iterable[SwitchView | None]) -> frozenset[int]:
    """Every VLAN any known end forwards or takes in: what an unknown switch may carry."""
    out: set[int] = set()
    for view in views:
        for end in (view or {}).values():
            out |= end.egress
            if end.pvid > 0:
                out.add(end.pvid)
    return frozenset(out)


def merged(base: FabricView, changes: Mapping[str, SwitchView | None]) -> dict[str, SwitchView | None]:
    out = dict(base)
    out.update(changes)
    return out
