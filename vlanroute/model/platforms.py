"""Platform descriptors: one record per switch model, one dispatcher table by name.

A platform is the hardware: its port names and the limits a plan is checked against. Its
`family` names the configuration language it speaks (vlanroute.drivers: template, parser,
SSH dialog, push and audit support, capabilities such as EEE and LAG hash modes), shared
by every model of that family. Each fact carries its confidence:
C = confirmed in a source, P = partly confirmed, U = unconfirmed (see the evidence page of
each family, docs/platforms/<family>.md, and the template headers).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import re


@dataclass(frozen=True)
class Platform:
    name: str
    family: str                      # template/parser family, e.g. "powerconnect-62xx"
    description: str
    ports: tuple[str, ...]           # front-panel port names, in panel order
    max_vlans: int                   # VLANs the switch can hold, VLAN 1 included
    vid_min: int
    vid_max: int
    mac_capacity: int                # learned MAC entries
    aging_min: int                   # seconds
    aging_max: int                   # seconds
    aging_default: int               # seconds, the factory setting
    max_lags: int
    max_lag_members: int
    facts: dict[str, str] = field(default_factory=dict)  # limit name -> "C|P|U: source"
    synthetic: bool = False          # a modelling platform, not a product
    base: str | None = None          # the built-in platform an inventory derived this one from

    def port_index(self, port: str) -> int:
        return self._index()[port]

    def has_port(self, port: str) -> bool:
        return port in self._index()

    def _index(self) -> dict[str, int]:
        cached = _INDEX_CACHE.get(self.name)
        if cached is None or len(cached) != len(self.ports):
            cached = {p: i for i, p in enumerate(self.ports)}
            _INDEX_CACHE[self.name] = cached
        return cached


_INDEX_CACHE: dict[str, dict[str, int]] = {}

POWERCONNECT_6248 = Platform(
    name="powerconnect-6248",
    family="powerconnect-62xx",
    description="Dell PowerConnect 6248 (48 x GbE, FW 3.x)",
    ports=tuple(f"1/g{i}" for i in range(1, 49)),
    max_vlans=1024,
    vid_min=2,
    vid_max=4093,
    mac_capacity=8192,
    aging_min=10,
    aging_max=1_000_000,
    aging_default=300,
    max_lags=48,
    max_lag_members=8,
    facts={
        "max_vlans": "C: 'The Dell 62xx Series switch supports up to 1024 VLANs' (cloudstack-documentation network_setup.rst)",
        "vid_range": "C: configurable VLAN ids 2-4093 (PowerConnect 7000/M-series user guide, 'Default VLAN Behavior')",
        "mac_capacity": "U: 8K learned addresses believed (seed 001 quotes about 8,000 learned); check 'show bridge address-table count'",
        "aging": "P: 'bridge aging-time' 10-1,000,000 s in FASTPATH CLI (Netgear M4300 manual); seed 001 quotes 11.6 days",
        "max_lags": "U: 48 LAGs x 8 members believed",
    },
)

POWERCONNECT_6224 = replace(
    POWERCONNECT_6248,
    name="powerconnect-6224",
    description="Dell PowerConnect 6224 (24 x GbE, FW 3.x)",
    ports=tuple(f"1/g{i}" for i in range(1, 25)),
)

# The OS6 CLI (family dell-os6): same SSH dialogue as the 62xx, other limits.
POWERCONNECT_8132 = replace(
    POWERCONNECT_6248,
    name="powerconnect-8132",
    family="dell-os6",
    description="Dell PowerConnect 8132 (24 x 10GBASE-T, DNOS/OS6 CLI)",
    ports=tuple(f"Te1/0/{i}" for i in range(1, 25)),
    max_vlans=4093,
    mac_capacity=131072,
    max_lags=128,
    facts={
        "max_vlans": "U: 4K VLANs believed for OS6",
        "mac_capacity": "U: 128K believed",
        "lag": "C: port-channel 1-128, hashing-mode 1-7 (dellemc.os6 os6_lag README)",
        "eee": "U: 'green-mode eee' per interface",
    },
)

APRESIA_15000_64XL = Platform(
    name="apresia-15000-64xl",
    family="apresia-aeos",
    description="APRESIA Apresia15000-64XL-PSR (AEOS 8) - CLI syntax largely UNCONFIRMED",
    ports=tuple(f"1/{i}" for i in range(1, 65)),
    max_vlans=4094,
    vid_min=2,
    vid_max=4094,
    mac_capacity=131072,
    aging_min=10,
    aging_max=1_000_000,
    aging_default=300,
    max_lags=64,
    max_lag_members=8,
    facts={
        "ports": "P: 'interface port 1/1' seen in a field script for Apresia13200",
        "save": "P: 'write memory' (field automation script)",
        "everything_else": "U: no public AEOS command reference was readable",
    },
)

LINUX_BRIDGE = Platform(
    name="linux-bridge",
    family="linux-bridge",
    description="Linux VLAN-aware bridge (iproute2); also the emulation target",
    ports=tuple(f"p{i}" for i in range(1, 513)),
    max_vlans=4094,
    vid_min=2,
    vid_max=4094,
    mac_capacity=2**31 - 1,          # no fixed limit unless fdb_max_learned is set
    aging_min=10,
    aging_max=1_000_000,
    aging_default=300,
    max_lags=512,
    max_lag_members=16,
    facts={"ports": "synthetic port names p1..p512; real interface names are mapped at emulation time"},
)

# The single dispatcher table: platform name -> descriptor.
PLATFORMS: dict[str, Platform] = {
    p.name: p for p in (POWERCONNECT_6248, POWERCONNECT_6224, POWERCONNECT_8132,
                        APRESIA_15000_64XL, LINUX_BRIDGE)
}

# Limits an inventory may change when it derives its own platform from a built-in one.
OVERRIDABLE_LIMITS = ("description", "max_vlans", "vid_min", "vid_max", "mac_capacity",
                      "aging_min", "aging_max", "aging_default", "max_lags", "max_lag_members")


def port_range(prefix: str, first: int, last: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(first, last + 1))


def derive_platform(name: str, base: Platform, port_count: int | None,
                    limits: dict[str, object]) -> Platform:
    """A platform an inventory defines on top of a built-in one (e.g. a bigger MAC table)."""
    ports = base.ports
    if port_count is not None:
        prefix_match = re.match(r"^(.*?)(\d+)$", base.ports[0])
        assert prefix_match is not None
        ports = port_range(prefix_match.group(1), 1, port_count)
    return replace(base, name=name, ports=ports, synthetic=True, base=base.name, **limits)  # type: ignore[arg-type]


def platform_json(p: Platform) -> dict[str, object]:
    """A platform's limits as plan.json records them, so a derived platform can be rebuilt."""
    return {"base": p.base, "family": p.family, "ports": len(p.ports),
            **{k: getattr(p, k) for k in OVERRIDABLE_LIMITS}}


def platform_from_json(name: str, doc: dict[str, object]) -> Platform | None:
    """Rebuild an inventory-derived platform from plan.json's record; None if it is not one."""
    base = doc.get("base")
    if not isinstance(base, str) or base not in PLATFORMS:
        return None
    limits = {k: doc[k] for k in OVERRIDABLE_LIMITS if k in doc}
    ports = doc.get("ports")
    return derive_platform(name, PLATFORMS[base], ports if isinstance(ports, int) else None, limits)
