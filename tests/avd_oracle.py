"""Arista's own configuration generator (AVD, PyPI `pyavd`) as an oracle for the EOS template.

From a plan.json (the vendor-neutral plan, not vlanroute's rendered text nor its render
context) this builds, for one switch, the `eos_cli_config_gen` structured configuration an
AVD user would write for the same intent (the keys AVD's own `eos_designs` sets for an L2
trunk: `switchport: {enabled: true, mode: trunk, trunk: {allowed_vlan, native_vlan}}`,
pyavd `_eos_designs/structured_config/underlay/port_channel_interfaces.py`), has pyavd
validate and render it, and compares AVD's text with vlanroute's block by block.

The intent is derived here on its own, from the plan's VLAN trees, cabling and hosts:

- a VLAN exists on a switch that has hosts (all routing VLANs: EOS host ports are trunks)
  or whose tree uses one of its cables;
- an inter-switch port (or its LAG, `a_lag`/`b_lag` in plan.cabling) is a trunk allowed
  exactly the VLANs whose tree uses that pair of switches (`none` for no VLAN), with BPDU
  filtering on; a LAG member is `channel-group N mode on`;
- a host port is a trunk with the host's VLAN native and every routing VLAN allowed;
- flow control is set on every port the plan uses, the aging time globally.

The comparison is insensitive to the order EOS does not care about: the blocks of a config
(`interface X`, `vlan N`, a global line) form a mapping, a block given twice is one block
(EOS enters the same interface again), and the lines of a block form a set. Comments (`!`),
`configure`, `exit` and `end` only move between modes and are left out.

Differences that are known and kept are listed with their reasons on
docs/platforms/arista-eos.md ("Arista's generator as a check"); the test reads that table,
and KNOWN below gives each row's lines for one switch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyavd import get_device_config, validate_structured_config
from pyavd.j2filters import list_compress, natural_sort

# Trunk-attached hosts on named ports of a custom fabric: QSFP ports (EthernetN/1), a LAG of
# three cables, single cables, a cable no VLAN's tree uses (allowed `none`: the budget of two
# VLANs leaves some out), a switch without hosts on some VLANs, a reserved port, host
# interfaces other than eth0, flow control off and an aging time of its own.
TRUNK_HOSTS = {
    "name": "eos-trunk-hosts",
    "platform": "arista-7050sx-64",
    "topology": {
        "kind": "custom",
        "switches": ["core1", "core2", "leaf1", "leaf2", "leaf3"],
        "links": [
            {"a": "core1", "b": "core2", "count": 3,
             "ports": [["Ethernet49/1", "Ethernet49/1"], ["Ethernet50/1", "Ethernet50/1"],
                       ["Ethernet51/1", "Ethernet51/1"]]},
            {"a": "core1", "b": "leaf1"}, {"a": "core1", "b": "leaf2"}, {"a": "core2", "b": "leaf2"},
            {"a": "core2", "b": "leaf3"}, {"a": "leaf1", "b": "leaf3", "ports": [["Ethernet52/1", "Ethernet52/1"]]},
            {"a": "leaf1", "b": "leaf2"},
        ]},
    "hosts": {"list": [
        {"name": "gpu01", "switch": "leaf1", "mac": "00:1e:c9:00:00:01"},
        {"name": "gpu02", "switch": "leaf1", "port": "Ethernet7", "mac": "00:1e:c9:00:00:02"},
        {"name": "gpu03", "switch": "leaf2", "port": "Ethernet10", "mac": "00:1e:c9:00:00:03"},
        {"name": "gpu04", "switch": "leaf3", "mac": "00:1e:c9:00:00:04", "interface": "ens1f0"},
        {"name": "login1", "switch": "core1", "mac": "00:1e:c9:00:00:05"}]},
    "routing": {"algorithm": "budget", "max_vlans": 2},
    "switches": {"core1": {"mgmt": "192.0.2.21", "reserved_ports": ["Ethernet1"]}, "core2": {"mgmt": "192.0.2.22"},
                 "leaf1": {"mgmt": "192.0.2.23"}, "leaf2": {"mgmt": "192.0.2.24"}, "leaf3": {"mgmt": "192.0.2.25"}},
    "settings": {"flow_control": False, "aging_time": 86400, "host_attachment": "trunk"},
}


# What a structured config holds for a plan's switch, derived without vlanroute's code.


@dataclass
class Intent:
    switch: str
    vlans: set[int] = field(default_factory=set)
    trunks: dict[str, set[int]] = field(default_factory=dict)         # inter-switch port or Port-ChannelN
    members: dict[str, int] = field(default_factory=dict)             # LAG member port -> LAG id
    host_ports: dict[str, int] = field(default_factory=dict)          # port -> native (the host's) VLAN
    routing: list[int] = field(default_factory=list)
    flow_control: bool = False
    aging_time: int = 0

    @property
    def managed_ports(self) -> list[str]:
        singles = [p for p in self.trunks if not p.startswith("Port-Channel")]
        return [*singles, *self.members, *self.host_ports]

    @property
    def has_lags(self) -> bool:
        return bool(self.members)


def intent(plan: dict[str, Any], switch: str) -> Intent:
    """One switch's intent from plan.json's vlans, cabling, hosts and settings."""
    routing = sorted(v["id"] for v in plan["vlans"])
    pair_vlans: dict[frozenset[str], set[int]] = {}
    for v in plan["vlans"]:
        for a, b in v["links"]:
            pair_vlans.setdefault(frozenset((a, b)), set()).add(v["id"])
    out = Intent(switch, routing=routing)
    for c in plan["cabling"]:
        for me, port, lag, far in ((c["a"], c["a_port"], c["a_lag"], c["b"]), (c["b"], c["b_port"], c["b_lag"], c["a"])):
            if me != switch:
                continue
            allowed = pair_vlans.get(frozenset((me, far)), set())
            if lag is None:
                out.trunks[port] = allowed
            else:
                out.trunks[f"Port-Channel{lag}"] = allowed
                out.members[port] = lag
            out.vlans |= allowed
    for h in plan["hosts"].values():
        if h["switch"] == switch:
            out.host_ports[h["port"]] = h["vlan"]
            out.vlans |= set(routing)
    settings = plan["settings"]
    platform = plan["platforms"][plan["switches"][switch]["platform"]]
    out.flow_control = settings["flow_control"] is not False
    out.aging_time = settings["aging_time"] if settings["aging_time"] is not None else platform["aging_max"]
    return out


def allowed(vlans: set[int]) -> str:
    return list_compress(sorted(vlans)) if vlans else "none"


def structured_config(i: Intent) -> dict[str, Any]:
    """AVD's eos_cli_config_gen structured configuration of the intent."""
    flow = {"received": "on" if i.flow_control else "off"}
    ethernet: list[dict[str, Any]] = []
    port_channels: list[dict[str, Any]] = []
    for port, vlans in i.trunks.items():
        item = {"name": port, "switchport": {"enabled": True, "mode": "trunk", "trunk": {"allowed_vlan": allowed(vlans)}},
                "spanning_tree_bpdufilter": "enabled"}
        if port.startswith("Port-Channel"):
            port_channels.append(item)
        else:
            ethernet.append({**item, "flowcontrol": flow})
    for port, lag in i.members.items():
        ethernet.append({"name": port, "channel_group": {"id": lag, "mode": "on"}, "flowcontrol": flow})
    for port, native in i.host_ports.items():
        ethernet.append({"name": port, "flowcontrol": flow,
                         "switchport": {"enabled": True, "mode": "trunk",
                                        "trunk": {"native_vlan": native, "allowed_vlan": allowed(set(i.routing))}}})
    return {
        "vlans": [{"id": v} for v in sorted(i.vlans)],
        "ethernet_interfaces": natural_sort(ethernet, sort_key="name"),
        "port_channel_interfaces": natural_sort(port_channels, sort_key="name"),
        "mac_address_table": {"aging_time": i.aging_time},
    }


class AvdRefused(AssertionError):
    pass


def avd_config(i: Intent) -> str:
    """pyavd's rendered EOS config of the intent (validated against its schema first)."""
    result = validate_structured_config(structured_config(i))
    problems = [f"{'.'.join(map(str, v.path))}: {v.message}" for v in result.validation_result.violations]
    if problems or result.validated_data is None:
        raise AvdRefused(f"pyavd refuses the structured config of {i.switch}: {problems}")
    return get_device_config(result.validated_data)


# The block structure of an EOS config, order left out where EOS leaves it out.

SKIPPED = re.compile(r"(!.*|configure|exit|end)")
# Where an indented line after `exit` lands: EOS runs it in global configuration mode.
OUTSIDE = "(global configuration mode, after exit)"


def blocks(text: str) -> dict[str, set[str]]:
    """Header line -> the set of its indented lines; a global line is a header without lines."""
    out: dict[str, set[str]] = {}
    current: set[str] | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or SKIPPED.fullmatch(line.strip()):
            if not raw.startswith(" "):
                current = None if line.strip() in ("exit", "end") else current
            continue
        if raw.startswith(" "):
            (out.setdefault(OUTSIDE, set()) if current is None else current).add(line.strip())
        else:
            current = out.setdefault(line, set())
    return out


Difference = tuple[str, str, str]       # (block, side "vlanroute"/"avd", line or "" for the whole block)


def differences(vlanroute: str, avd: str) -> set[Difference]:
    mine, theirs = blocks(vlanroute), blocks(avd)
    found: set[Difference] = set()
    for header in mine.keys() | theirs.keys():
        if header not in theirs:
            found.add((header, "vlanroute", ""))
        elif header not in mine:
            found.add((header, "avd", ""))
        found |= {(header, "vlanroute", line) for line in mine.get(header, set()) - theirs.get(header, set())}
        found |= {(header, "avd", line) for line in theirs.get(header, set()) - mine.get(header, set())}
    return found


# The known differences, one entry per row of docs/platforms/arista-eos.md's table: the
# lines that row accounts for on one switch. Both sides' whole blocks count too: a block
# only one side has appears with its lines.

HASH_LINE = "port-channel load-balance trident fields ip source-ip destination-ip source-port destination-port"


def _switchport(i: Intent) -> set[Difference]:
    return {(f"interface {p}", "avd", "switchport") for p in [*i.trunks, *i.host_ports]}


def _flowcontrol_send(i: Intent) -> set[Difference]:
    word = "on" if i.flow_control else "off"
    return {(f"interface {p}", "vlanroute", f"flowcontrol send {word}") for p in i.managed_ports}


def _lag_hash(i: Intent) -> set[Difference]:
    return {(HASH_LINE, "vlanroute", "")} if i.has_lags else set()


KNOWN: dict[str, Callable[[Intent], set[Difference]]] = {
    "avd-1": _switchport,
    "avd-2": _flowcontrol_send,
    "avd-3": _lag_hash,
}


def expected_differences(i: Intent) -> dict[str, set[Difference]]:
    return {key: rule(i) for key, rule in KNOWN.items()}


def shown(d: Difference) -> str:
    header, side, line = d
    where = "only vlanroute has" if side == "vlanroute" else "only AVD has"
    return f"{header!r}: {where} the block" if not line else f"{header!r}: {where} {line!r}"


@dataclass
class Comparison:
    switch: str
    unexplained: list[str]                # differences no row of the table accounts for
    absent: list[str]                     # lines a row accounts for that did not differ
    seen: set[str]                        # the rows that accounted for a difference here

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.absent


def compare(vlanroute: str, avd: str, i: Intent) -> Comparison:
    found = differences(vlanroute, avd)
    expected = expected_differences(i)
    explained = set().union(*expected.values())
    return Comparison(
        switch=i.switch,
        unexplained=sorted(shown(d) for d in found - explained),
        absent=sorted(f"{shown(d)} (documented, not seen)" for d in explained - found),
        seen={key for key, ds in expected.items() if ds & found})


# AVD's own ANTA catalog generator (pyavd.get_device_test_catalog) on the same intent, with each
# cabled Ethernet port's far end as AVD's `metadata.peer` / `peer_interface` (what AVD's
# VerifyLLDPNeighbors input factory reads) and every switch deployed.

def avd_catalogs(plan: dict[str, Any]) -> dict[str, Any]:
    """Switch -> the AntaCatalog pyavd generates for it."""
    from pyavd import get_device_test_catalog
    from pyavd.api.anta import AVDFabricData

    peers: dict[str, dict[str, tuple[str, str]]] = {}
    for c in plan["cabling"]:
        peers.setdefault(c["a"], {})[c["a_port"]] = (c["b"], c["b_port"])
        peers.setdefault(c["b"], {})[c["b_port"]] = (c["a"], c["a_port"])
    configs = {}
    for sw in plan["switches"]:
        sc = structured_config(intent(plan, sw))
        sc["hostname"] = sw
        sc["metadata"] = {"is_deployed": True}
        for e in sc["ethernet_interfaces"]:
            if e["name"] in peers.get(sw, {}):
                far, far_port = peers[sw][e["name"]]
                e["metadata"] = {"peer": far, "peer_interface": far_port}
        result = validate_structured_config(sc)
        if result.validated_data is None:
            raise AvdRefused(f"pyavd refuses the structured config of {sw}: {result.validation_result.violations}")
        configs[sw] = result.validated_data
    fabric = AVDFabricData.from_structured_configs(configs)
    return {sw: get_device_test_catalog(sw, configs[sw], fabric) for sw in configs}
