"""Platform descriptors: one record per switch model, one dispatcher table by name.

A platform is the hardware: its port names and the limits a plan is checked against. Its
`family` names the configuration language it speaks (vlanroute.drivers: template, parser,
SSH dialog, push and audit support, capabilities such as EEE and LAG hash modes), shared
by every model of that family. What the models of a family share (port names' shape, VLAN
ids, aging, LAG limits, stacking, firmware, and their sources) is written once, in its
`Family` record; a model states only its own ports, MAC table and name (`Family.model`).
Each fact carries its confidence:
C = confirmed in a source, P = partly confirmed, U = unconfirmed (see the evidence page of
each family, docs/platforms/<family>.md, and the template headers).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
import re
from typing import Any

from vlanroute.model.portlist import (MAX_PORTS, PortListError, format_port_list, parse_port_list,
                                      stack_units, unit_of)


@dataclass(frozen=True)
class Platform:
    name: str
    family: str                      # template/parser family, e.g. "powerconnect-62xx"
    description: str
    ports: tuple[str, ...]           # every port name, all stack units, in panel order
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
    # The default pool: the ports the planner assigns on its own (hosts the lowest free,
    # inter-switch cables the highest free), in panel order; None = every port. The others
    # (e.g. 10G module ports) carry a host or a cable only where the inventory names them.
    auto_ports: tuple[str, ...] | None = None
    max_units: int = 1               # stack units it can have; 1: not stackable
    # The shape of a port name this platform's CLI knows (checked for inventory port lists).
    port_shape: str = r"\S+"
    # What push's pre-flight expects the switch to say it is (regexes, case-insensitive):
    # its model name and firmware version. Empty: not checked.
    model_pattern: str = ""
    firmware_pattern: str = ""
    # Capabilities the inventory confirmed for this platform (keys of its family's
    # `confirmable`, drivers/family.py).
    confirmed: tuple[str, ...] = ()
    # Gb/s of its regular (default pool) ports: the link speed the throughput model uses
    # for host links and cables unless told otherwise (`report`, facts["link_gbps"]).
    link_gbps: float = 1.0

    def port_index(self, port: str) -> int:
        """Panel order: unit after unit, each unit's ports in the order of its descriptor."""
        return self._index[port]

    def has_port(self, port: str) -> bool:
        return port in self._index

    @property
    def pool(self) -> tuple[str, ...]:
        """The default pool (auto_ports, or every port)."""
        return self.ports if self.auto_ports is None else self.auto_ports

    def in_pool(self, port: str) -> bool:
        return self.auto_ports is None or port in self._pool_set

    def port_list(self) -> str:
        """Every port as a pattern (`1/g1-1/g48,1/xg1-1/xg4`)."""
        return format_port_list(self.ports)

    # Computed once per instance (a derived platform is a new instance: its own index).
    @cached_property
    def _index(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self.ports)}

    @cached_property
    def _pool_set(self) -> frozenset[str]:
        return frozenset(self.pool)

@dataclass(frozen=True)
class Family:
    """What every model of a family shares, written once: its port names' shape, VLAN ids,
    aging range, LAG limits, stacking and firmware, with their sources (`facts`). A model
    (`model`) adds only its own: name, ports, MAC table, how it names itself. The defaults
    are the values assumed where no source of the family says otherwise (802.1Q's ids
    2..4094, an aging range of 10..1,000,000 s, 300 s by default); `facts` says which are."""

    family: str
    port_shape: str
    max_vlans: int
    max_lags: int
    max_lag_members: int
    vid_min: int = 2
    vid_max: int = 4094
    aging_min: int = 10
    aging_max: int = 1_000_000
    aging_default: int = 300
    max_units: int = 1
    firmware_pattern: str = ""
    facts: dict[str, str] = field(default_factory=dict)

    def model(self, name: str, description: str, ports: tuple[str, ...], *, mac_capacity: int,
              facts: dict[str, str], auto_ports: tuple[str, ...] | None = None,
              model_pattern: str = "", link_gbps: float = 1.0) -> Platform:
        """A model of this family: the family's facts and the model's own (which win)."""
        return Platform(name=name, family=self.family, description=description, ports=ports, link_gbps=link_gbps,
                        auto_ports=auto_ports, mac_capacity=mac_capacity, model_pattern=model_pattern,
                        facts={**self.facts, **facts}, port_shape=self.port_shape,
                        max_vlans=self.max_vlans, vid_min=self.vid_min, vid_max=self.vid_max,
                        aging_min=self.aging_min, aging_max=self.aging_max,
                        aging_default=self.aging_default, max_lags=self.max_lags,
                        max_lag_members=self.max_lag_members, max_units=self.max_units,
                        firmware_pattern=self.firmware_pattern)


POWERCONNECT_62XX = Family(
    "powerconnect-62xx", r"\d+/x?g\d+", firmware_pattern=r"3(\.\d+)+",
    max_vlans=1024, vid_max=4093, max_lags=48, max_lag_members=8, max_units=12, facts={
        "max_vlans": "C: 'The Dell 62xx Series switch supports up to 1024 VLANs' (cloudstack-documentation network_setup.rst)",
        "vid_range": "C: configurable VLAN ids 2-4093, 4094 and 4095 reserved (PowerConnect 7000 User's Guide p.580 "
                     "and M6220/M6348 Owner's Manual p.577, 'Default VLAN Behavior'; docs/platforms/powerconnect-62xx.md)",
        "aging": "P: 'bridge aging-time' 10-1,000,000 s in FASTPATH CLI (Netgear M4300 manual); seed 001 quotes 11.6 days",
        "max_lags": "U: 48 LAGs x 8 members believed",
        "units": "P: stack units 2/g1, 2/xg1 in the fake-switches 62xx emulator; '2/g1-2/g48' in the "
                 "Crowbar guide; 12 units believed (the PowerConnect 7000 guide's figure), unconfirmed "
                 "for the 62xx",
        "firmware": "C: 62xx firmware ends at 3.3.x (PowerConnect 7000 CLI reference p.626: release 4.0 is 7000-series)",
    },
)

POWERCONNECT_6248 = POWERCONNECT_62XX.model(
    "powerconnect-6248", "Dell PowerConnect 6248 (48 x GbE, FW 3.x)",
    # 48 GbE ports (g45-g48 are the combo RJ-45/SFP ports) and the 10G module ports
    # xg1-xg4, which carry a cable only where the inventory names them.
    parse_port_list("1/g1-1/g48,1/xg1-1/xg4"),
    auto_ports=parse_port_list("1/g1-1/g48"),
    mac_capacity=8192,
    facts={
        "mac_capacity": "U: 8K learned addresses believed (seed 001 quotes about 8,000 learned); check 'show bridge address-table count'",
        "link_gbps": "C: 1 Gb/s, GbE ports (PowerConnect 6200 Series User's Guide, Introduction)",
        "ports": "C: 'interface ethernet 1/xg3' in a real 6248 running-config (r2lab switch-data.conf); "
                 "1/g1-1/g48 in the Crowbar guide's 6248 config; 48 GbE + 4 combo ports (PowerConnect "
                 "6200 Series User's Guide, Introduction)",
        "model": "C: the running config's header names it: '!System Description \"PowerConnect 6248, 3.3.7.3, VxWorks 6.5\"' "
                 "(r2lab 6248 capture; a 6248P prints 'PowerConnect 6248P')",
    },
    model_pattern=r"power ?connect 6248p?",
)

# The 6224 is the 6248 with half the GbE ports (its sources are the 6248's).
POWERCONNECT_6224 = replace(
    POWERCONNECT_6248,
    name="powerconnect-6224",
    description="Dell PowerConnect 6224 (24 x GbE, FW 3.x)",
    ports=parse_port_list("1/g1-1/g24,1/xg1-1/xg4"),
    auto_ports=parse_port_list("1/g1-1/g24"),
    model_pattern=r"power ?connect 6224[pf]?",
)

# The OS6 CLI: same SSH dialogue as the 62xx, other limits. Its VLAN ids, aging range and
# LAG size are the 62xx's (no OS6 source read gives them; the 8132 record was the 6248's
# with its own limits).
DELL_OS6 = Family(
    "dell-os6", r"(Te|Gi|Fo|Tw)\d+/\d+/\d+", firmware_pattern=r"[56](\.\d+)+",
    max_vlans=4093, vid_max=4093, max_lags=128, max_lag_members=8, max_units=6, facts={
        "max_vlans": "U: 4K VLANs believed for OS6",
        "lag": "C: port-channel 1-128, hashing-mode 1-7 (dellemc.os6 os6_lag README)",
        "eee": "U: 'green-mode eee' per interface",
    },
)

POWERCONNECT_8132 = DELL_OS6.model(
    "powerconnect-8132", "Dell PowerConnect 8132 (24 x 10GBASE-T, DNOS/OS6 CLI)",
    # The 24 fixed ports. The optional module slot (OS6 names module ports by slot 1/1,
    # e.g. Te1/1/1) is not built in: no source shows an 8132's module ports.
    parse_port_list("Te1/0/1-Te1/0/24"),
    mac_capacity=131072,
    facts={
        "ports": "C: Te1/0/N (OS6 running-configs and show output: dellemc.os6 N4064F fixture, napalm-dellos6 N4032 captures)",
        "units": "C: 'stack PowerConnect 8000-series and 8100-series switches up to six switches high' "
                 "(PowerConnect 8024/8100 User's Guide, Stacking Features); Te2/0/N on a 2-unit N4032 "
                 "stack (napalm-dellos6 captures)",
        "mac_capacity": "U: 128K believed",
        "link_gbps": "P: 10 Gb/s, its Te (TenGigabitEthernet) ports, 10GBASE-T on the 8132",
        "model": "U: how an 8132 names itself in 'show version' (System Model ID / Machine Type) is not in a source",
    },
    model_pattern=r"(power ?connect |dell networking |pct?)8132f?",
    link_gbps=10.0,
)

APRESIA_AEOS = Family(
    "apresia-aeos", r"\d+/\d+", max_vlans=4094, max_lags=64, max_lag_members=8, facts={
        "save": "P: 'write memory' (field automation script)",
        "everything_else": "U: no public AEOS command reference was readable",
    },
)

APRESIA_15000_64XL = APRESIA_AEOS.model(
    "apresia-15000-64xl", "APRESIA Apresia15000-64XL-PSR (AEOS 8) - CLI syntax largely UNCONFIRMED",
    parse_port_list("1/1-1/64"),
    mac_capacity=131072,
    facts={"ports": "P: 'interface port 1/1' seen in a field script for Apresia13200",
           "link_gbps": "U: 10 Gb/s believed (the 64XL's ports)"},
    link_gbps=10.0,
)

ARISTA_EOS = Family(
    "arista-eos", r"Ethernet\d+(/\d+)?", firmware_pattern=r"4\.\d+\.\S+",
    max_vlans=4094, max_lags=128, max_lag_members=16, facts={
        "vid_range": "C: 'VLAN number (1-4094)', VLAN 1 exists by default (EOS User Manual, Virtual LANs)",
        "aging": "C: mac address-table aging-time 10-1,000,000 s, 0 turns aging off (aristanetworks/avd "
                 "eos_designs schema, mac_address_table.aging_time); default 300 s (`show running-config all` "
                 "of vEOS 4.13.7M, arista-eosplus/pyeapi fixture; the same schema)",
        "max_lags": "U: 128 port-channels x 16 members assumed",
        "model": "C: 'show version' starts 'Arista <model>' (ntc-templates arista_eos show_version)",
    },
)

ARISTA_7050SX_64 = ARISTA_EOS.model(
    "arista-7050sx-64", "Arista DCS-7050SX-64 (48 x 10G SFP+, 4 x 40G QSFP+, EOS)",
    # 48 SFP+ ports, then the QSFP+ ports (one 40G lane each, `EthernetN/1`), which carry a
    # cable only where the inventory names them.
    parse_port_list("Ethernet1-Ethernet48") + ("Ethernet49/1", "Ethernet50/1", "Ethernet51/1",
                                               "Ethernet52/1"),
    auto_ports=parse_port_list("Ethernet1-Ethernet48"),
    mac_capacity=131072,
    facts={
        "ports": "C: Ethernet1-48 SFP+, Ethernet49/1-52/1 QSFP+, Management1 (netbox devicetype-library "
                 "Arista/DCS-7050SX-64.yaml)",
        "mac_capacity": "U: 128K believed; no datasheet text retrieved",
        "link_gbps": "C: 10 Gb/s, Ethernet1-48 are SFP+ (netbox devicetype-library Arista/DCS-7050SX-64.yaml)",
    },
    model_pattern=r"DCS-7050S?X-64(-\w+)?",
    link_gbps=10.0,
)

DELL_OS10 = Family(
    "dell-os10", r"ethernet\d+/\d+/\d+(:\d+)?", firmware_pattern=r"10\.\d+(\.\d+)*\S*",
    max_vlans=4093, vid_max=4093, aging_min=0, aging_default=1800, max_lags=128, max_lag_members=16, facts={
        "vid_range": "U: 4093 assumed as the highest VLAN id",
        "aging": "C: mac address-table aging-time 0-1,000,000 s, default 1800 s (Dell SmartFabric OS10 "
                 "User Guide)",
        "max_lags": "U: 128 port-channels x 16 members assumed",
    },
)

DELL_S5248F_ON = DELL_OS10.model(
    "dell-s5248f-on", "Dell EMC S5248F-ON (48 x 25G SFP28, 2 x 200G QSFP28-DD, 4 x 100G QSFP28, OS10)",
    # The SFP28 ports, then the uplinks (1/1/49-52: the two QSFP28-DD cages, two ports each;
    # 1/1/53-56 the QSFP28 ports), which carry a cable only where the inventory names them.
    parse_port_list("ethernet1/1/1-ethernet1/1/48,ethernet1/1/49-ethernet1/1/52,"
                    "ethernet1/1/53-ethernet1/1/56"),
    auto_ports=parse_port_list("ethernet1/1/1-ethernet1/1/48"),
    mac_capacity=131072,
    facts={
        "ports": "C: 1/1/1-48 SFP28, 1/1/49-52 in the two QSFP28-DD cages, 1/1/53-56 QSFP28 (netbox "
                 "devicetype-library Dell/Networking_s5248f-on-os10.yaml lists 1/1/49 and 1/1/51 only; "
                 "a real S5248F-ON's LLDP neighbours on ethernet1/1/50 and ethernet1/1/52, microsoft/arc-switch "
                 "testdata); printed ethernet1/1/N (OS10 running-configs)",
        "model": "C: 'System Type: S5248F-ON' in show version (microsoft/arc-switch testdata)",
        "mac_capacity": "U: 128K believed",
        "link_gbps": "C: 25 Gb/s, 1/1/1-48 are SFP28 (netbox devicetype-library Dell/Networking_s5248f-on-os10.yaml)",
    },
    model_pattern=r"S5248F-ON",
    link_gbps=25.0,
)

LINUX_BRIDGE = Family("linux-bridge", r"p\d+", max_vlans=4094, max_lags=512, max_lag_members=16).model(
    "linux-bridge", "Linux VLAN-aware bridge (iproute2); also the emulation target",
    parse_port_list("p1-p512"),
    mac_capacity=2**31 - 1,          # no fixed limit unless fdb_max_learned is set
    facts={"ports": "synthetic port names p1..p512; real interface names are mapped at emulation time"},
)

# The single dispatcher table: platform name -> descriptor.
PLATFORMS: dict[str, Platform] = {
    p.name: p for p in (POWERCONNECT_6248, POWERCONNECT_6224, POWERCONNECT_8132,
                        APRESIA_15000_64XL, ARISTA_7050SX_64, DELL_S5248F_ON,
                        LINUX_BRIDGE)
}

# Limits an inventory may change when it derives its own platform from a built-in one.
OVERRIDABLE_LIMITS = ("description", "max_vlans", "vid_min", "vid_max", "mac_capacity",
                      "aging_min", "aging_max", "aging_default", "max_lags", "max_lag_members")


def port_range(prefix: str, first: int, last: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(first, last + 1))


class PlatformLimitError(ValueError):
    """A derived platform's limit its base cannot have (a VLAN id its CLI refuses)."""


def derive_platform(name: str, base: Platform, port_count: int | None,
                    limits: dict[str, Any], *, ports: tuple[str, ...] | None = None,
                    auto_ports: tuple[str, ...] | None = None,
                    units: int | None = None, confirmed: tuple[str, ...] = ()) -> Platform:
    """A platform defined on top of another (e.g. a bigger MAC table, its own ports).

    Ports: `port_count` N numbers the base's first prefix 1..N (`1/g1`..`1/gN`), every one
    in the default pool; `ports` lists them (panel order), all in the pool unless
    `auto_ports` says which; neither keeps the base's ports and pool. `units` repeats unit
    1's ports (and pool) for every stack unit. `confirmed`: capabilities the inventory
    confirmed (keys of its family's `confirmable`, drivers/family.py). PortListError says
    what does not fit."""
    model = base.base or base.name           # the built-in platform, named in messages
    # The VLAN ids are what the switch's CLI accepts: narrowed, never widened (a 62xx
    # reserves 4094), whoever derives it: an inventory, or a plan.json's record of one.
    for key, beyond in (("vid_max", lambda v: v > base.vid_max), ("vid_min", lambda v: v < base.vid_min)):
        value = limits.get(key)
        if isinstance(value, int) and beyond(value):
            raise PlatformLimitError(f"{key} {value} is outside the VLAN ids a {model} accepts, "
                                     f"{base.vid_min}-{base.vid_max}")
    new_ports, new_auto = base.ports, base.auto_ports
    if port_count is not None:
        prefix_match = re.match(r"^(.*?)(\d+)$", base.ports[0])
        assert prefix_match is not None
        new_ports, new_auto = port_range(prefix_match.group(1), 1, port_count), None
    if ports is not None:
        new_ports, new_auto = ports, None
    shape = re.compile(base.port_shape)
    for p in new_ports:
        if not shape.fullmatch(p):
            raise PortListError(f"{model} has no port named like {p!r} (its ports look like "
                                f"{base.ports[0]})")
    if auto_ports is not None:
        known = set(new_ports)
        missing = [p for p in auto_ports if p not in known]
        if missing:
            raise PortListError(f"auto_ports names {missing[0]}, which is not one of the ports")
        order = {p: i for i, p in enumerate(new_ports)}
        new_auto = tuple(sorted(auto_ports, key=order.__getitem__))
    if units is not None:
        if units > base.max_units:
            raise PortListError(f"{model} stacks at most {base.max_units} unit"
                                + ("s" if base.max_units > 1 else "") + f", not {units}")
    if units is not None and base.max_units > 1:
        # Unit 1's ports, repeated; a list that already holds other units must be such a stack.
        unit_one = [p for p in new_ports if unit_of(p) == 1]
        if set(new_ports) - set(stack_units(unit_one, base.max_units)):
            raise PortListError("with units, list the ports of unit 1 only (they are repeated "
                                "for every unit)")
        pool_one = None if new_auto is None else [p for p in new_auto if unit_of(p) == 1]
        new_ports = stack_units(unit_one, units)
        new_auto = None if pool_one is None else stack_units(pool_one, units)
    if new_auto is not None and not new_auto:
        raise PortListError("the default pool (auto_ports) would be empty")
    if len(new_ports) > MAX_PORTS:
        raise PortListError(f"{len(new_ports)} ports, more than {MAX_PORTS}")
    if new_auto is not None and set(new_auto) == set(new_ports):
        new_auto = None
    return replace(base, name=name, ports=new_ports, auto_ports=new_auto,
                   synthetic=True, base=base.base or base.name,
                   confirmed=tuple(sorted(set(base.confirmed) | set(confirmed))), **limits)


def platform_json(p: Platform) -> dict[str, object]:
    """A platform's limits as plan.json records them, so a derived platform can be rebuilt.
    `ports` counts the default pool; a derived platform whose ports cannot be rebuilt from
    that count (see `_ports_from_count`) also records `port_list` and `auto_ports`."""
    out: dict[str, object] = {"base": p.base, "family": p.family, "ports": len(p.pool),
                              **{k: getattr(p, k) for k in OVERRIDABLE_LIMITS}}
    if p.base in PLATFORMS:
        if _ports_from_count(PLATFORMS[p.base], len(p.pool)) != (p.ports, p.auto_ports):
            out["port_list"] = format_port_list(p.ports)
            out["auto_ports"] = format_port_list(p.pool)
    if p.confirmed:                  # only when the inventory confirmed a capability
        out["confirm"] = list(p.confirmed)
    return out


def _ports_from_count(base: Platform, count: int) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The ports of a derived platform recorded by its pool size alone (as every plan.json
    before port lists): the base's own if the size is the base's pool, else the base's
    first prefix numbered 1..count."""
    if count == len(base.pool):
        return base.ports, base.auto_ports
    p = derive_platform(base.name, base, count, {})
    return p.ports, p.auto_ports


def platform_from_json(name: str, doc: dict[str, object]) -> Platform | None:
    """Rebuild an inventory-derived platform from plan.json's record; None if it is not one."""
    base = doc.get("base")
    if not isinstance(base, str) or base not in PLATFORMS:
        return None
    limits = {k: doc[k] for k in OVERRIDABLE_LIMITS if k in doc}
    confirm = doc.get("confirm")
    confirmed = tuple(str(c) for c in confirm) if isinstance(confirm, (list, tuple)) else ()
    port_list, auto = doc.get("port_list"), doc.get("auto_ports")
    if isinstance(port_list, str):
        ports = parse_port_list(port_list)
        pool = parse_port_list(auto) if isinstance(auto, str) else None
        return derive_platform(name, PLATFORMS[base], None, limits, ports=ports, auto_ports=pool,
                               confirmed=confirmed)
    count = doc.get("ports")
    if isinstance(count, int):
        ports, pool = _ports_from_count(PLATFORMS[base], count)
        return derive_platform(name, PLATFORMS[base], None, limits, ports=ports, auto_ports=pool,
                               confirmed=confirmed)
    return derive_platform(name, PLATFORMS[base], None, limits, confirmed=confirmed)
