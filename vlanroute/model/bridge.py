"""Vendor-neutral IEEE 802.1Q model of one switch, as parsed back from its config.

Every platform parser fills these records; the simulator and `verify` read only these.
The records hold the *configured* state, platform defaults already applied: a parser
starts from `SwitchConfig.with_defaults(...)` and then changes what the text says.

Membership is kept as the two 802.1Q sets per port: `untagged` (egress without a tag)
and `tagged`; a VLAN is in at most one of them. A LAG is one logical bridge port: its
members keep their own `PortConfig` for reporting, but forwarding uses the LAG's.

Bridge ports are named neutrally: a physical port by its platform name (`1/g5`, `p5`), a
LAG by `LagPort(id)`. How a family spells a LAG (`port-channel 1` in config, `ch1` or
`Po1` in show output, `bond1` on Linux) is the family's business (vlanroute.drivers).

A switch's running config holds much more than vlanroute manages (host name, users, SNMP,
IGMP snooping, routing interfaces, trunks to the site network ...). A parser reading a
running config keeps every line it does not model as a `ContextLine`, untouched: push
never changes such a line, compares only the modelled view, and refuses a switch only when
a context line touches what the plan manages (vlanroute.device.conflicts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Acceptable = Literal["all", "tagged-only", "untagged-only"]

DEFAULT_VLAN = 1


@dataclass(frozen=True, order=True)
class LagPort:
    """A LAG as one bridge port. A typed key, so that no port name can be mistaken for it."""

    id: int

    def __str__(self) -> str:
        return f"lag{self.id}"


# A logical bridge port: a physical port's name, or a LAG.
PortRef = str | LagPort

# What a line vlanroute does not model may do: nothing to forwarding (a host name, a port
# description), or change forwarding on its port or in its VLANs (a trunk, port security,
# a routing interface), or unknown, which push treats like a forwarding change.
Effect = Literal["none", "forwarding"]


@dataclass(frozen=True)
class ContextLine:
    """One line of a running config that vlanroute does not model, kept as it was read."""

    lineno: int                           # 1-based, in the text that was parsed
    text: str                             # exactly as read, without the line end
    block: str | None = None              # the block it is in ("interface ethernet 1/g5",
                                          # "router bgp 11 > address-family ipv6"), None: global
    port: PortRef | None = None           # the platform port or LAG of its interface block
    effect: Effect = "none"
    vlans: frozenset[int] = frozenset()   # VLANs the line puts something into


@dataclass
class PortConfig:
    """One physical port or one LAG (then `members` lists its physical ports)."""

    name: str
    pvid: int = DEFAULT_VLAN              # 0: no PVID (Linux), untagged frames are dropped
    untagged: set[int] = field(default_factory=lambda: {DEFAULT_VLAN})
    tagged: set[int] = field(default_factory=set)
    acceptable: Acceptable = "all"
    ingress_filtering: bool = True
    stp_enabled: bool = True
    enabled: bool = True                  # False after `shutdown`
    mode: str = "access"                  # CLI mode; 802.1Q behaviour is in the sets above
    lag: int | None = None                # physical port: the LAG it is a member of
    members: list[str] = field(default_factory=list)   # LAG: member ports, config order
    hash_mode: str | None = None          # LAG: platform's hash selector as written
    # IEEE 802.3x flow control set on this port, where a CLI sets it per port (Arista EOS,
    # Dell OS10); None: not set, or the firmware default. SwitchConfig.flow_control sums it up.
    flow_control: bool | None = None
    forbidden: set[int] = field(default_factory=set)    # VLANs the port may never join
    is_lag: bool = False                  # this record is a LAG, not a physical port

    @property
    def members_of(self) -> set[int]:
        """Every VLAN this port is a member of (egress), tagged or untagged."""
        return (self.untagged | self.tagged) - self.forbidden

    def is_default(self) -> bool:
        """True if nothing forwarding-relevant differs from the 802.1Q factory state."""
        return (self.pvid == DEFAULT_VLAN and self.untagged == {DEFAULT_VLAN} and not self.tagged
                and self.acceptable == "all" and self.ingress_filtering and self.stp_enabled
                and self.enabled and self.lag is None and not self.forbidden)


@dataclass
class SwitchConfig:
    """One switch: the VLANs it has created, its ports and LAGs, and global settings."""

    name: str
    family: str
    platform: str
    vlans: set[int] = field(default_factory=lambda: {DEFAULT_VLAN})
    ports: dict[str, PortConfig] = field(default_factory=dict)   # physical ports
    lags: dict[int, PortConfig] = field(default_factory=dict)     # LAG id -> LAG
    stp_global_enabled: bool = True
    aging_time: int = 300
    aging_default: int = 300              # the platform's factory setting (printed by no switch)
    flow_control: bool | None = None      # None: the config does not say
    eee: bool | None = None
    source: str = ""                      # file the config came from, for messages
    touched: set[str] = field(default_factory=set)  # physical ports any command addressed
    # Running configs only (Family.parse_running): every line not modelled, in text order.
    context: list[ContextLine] = field(default_factory=list)
    # Where a modelled setting was read, for messages: (port, "lag") -> "line 12: channel-group 3 mode auto".
    origin: dict[tuple[PortRef, str], str] = field(default_factory=dict)

    @classmethod
    def with_defaults(cls, *, name: str, family: str, platform: str, ports: tuple[str, ...],
                      aging_time: int, source: str = "",
                      flow_control: bool | None = None) -> SwitchConfig:
        """The factory state: every port an untagged member of VLAN 1 with PVID 1; the
        firmware's flow-control default if the family knows it (None: unknown)."""
        return cls(name=name, family=family, platform=platform, aging_time=aging_time,
                   aging_default=aging_time, ports={p: PortConfig(name=p) for p in ports},
                   source=source, flow_control=flow_control)

    def add_lag(self, lag_id: int, label: str) -> PortConfig:
        """The record of LAG `lag_id`, created in the factory state if new; `label` is how
        the family names it in messages."""
        lag = self.lags.get(lag_id)
        if lag is None:
            lag = self.lags[lag_id] = PortConfig(name=label, is_lag=True)
        return lag

    def effective(self, port: str) -> PortConfig:
        """The config that forwards frames of a physical port: its LAG's if it has one."""
        cfg = self.ports[port]
        if cfg.lag is not None and cfg.lag in self.lags:
            return self.lags[cfg.lag]
        return cfg

    def logical_port(self, port: str) -> PortRef:
        """The bridge port of a physical port: its LAG if it is a member, else itself."""
        cfg = self.ports[port]
        return LagPort(cfg.lag) if cfg.lag is not None else port

    def bridge_ports(self) -> dict[PortRef, PortConfig]:
        """Logical bridge ports: every physical port not in a LAG, then every LAG."""
        out: dict[PortRef, PortConfig] = {}
        for name, cfg in self.ports.items():
            if cfg.lag is None:
                out[name] = cfg
        for lag_id, lag in sorted(self.lags.items()):
            out[LagPort(lag_id)] = lag
        return out

    @property
    def lag_hash(self) -> str | None:
        """The hash selector shared by all LAGs, or None if none is set or they differ."""
        modes = {lag.hash_mode for lag in self.lags.values()}
        return modes.pop() if len(modes) == 1 else None


# --- host attachment ----------------------------------------------------------------------
# How a host port carries the routing VLANs (plan.json `host_attachment` of each switch):
# - "untagged": PVID = the host's own VLAN, untagged member of every routing VLAN (a Dell
#   "general" or AEOS "hybrid" port, per-VLAN untagged flags on a Linux bridge): a frame
#   from any source VLAN reaches the host untagged, on its main interface;
# - "trunk": PVID = the host's own VLAN, untagged member of that VLAN only, tagged member of
#   every other routing VLAN (a trunk whose native VLAN is the host's own, which every
#   802.1Q switch can do): a frame from another host reaches it tagged with the sender's
#   VLAN and is received on the host's sub-interface for that VLAN (vlanroute.hostside).
HostAttachment = Literal["untagged", "trunk"]
HOST_ATTACHMENTS: tuple[HostAttachment, ...] = ("untagged", "trunk")


@dataclass(frozen=True)
class HostMembership:
    """The 802.1Q membership of one host port: its PVID and its two member sets."""

    pvid: int
    untagged: frozenset[int]
    tagged: frozenset[int]


def host_port_membership(attachment: HostAttachment, own_vlan: int,
                         routing_vlans: frozenset[int] | set[int] | list[int]) -> HostMembership:
    """A host port's membership under `attachment` (see HOST_ATTACHMENTS above).

    In both, the host's untagged frames are classified into its own VLAN by the PVID
    (IEEE 802.1Q port-based VLAN classification) and every routing VLAN can reach the host;
    they differ only in whether the other VLANs egress untagged or tagged."""
    vlans = frozenset(routing_vlans)
    if own_vlan not in vlans:
        raise ValueError(f"VLAN {own_vlan} is not a routing VLAN")
    if attachment == "untagged":
        return HostMembership(own_vlan, vlans, frozenset())
    if attachment == "trunk":
        return HostMembership(own_vlan, frozenset({own_vlan}), vlans - {own_vlan})
    raise ValueError(f"unknown host attachment {attachment!r}")
