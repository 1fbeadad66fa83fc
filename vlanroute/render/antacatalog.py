"""The post-push checks of the Arista EOS switches as an ANTA test catalog (Arista Network Test
Automation): OUTDIR/anta/catalog.yml, and OUTDIR/anta/inventory.yml with the switches'
management addresses (docs/checks.md).

The same expectations as checks.json (vlanroute.render.checks), in ANTA's public tests (ANTA
1.10): each test entry carries `filters: tags: [SWITCH]`, and ANTA tags every device with its
own name, so one catalog serves the whole fabric. Per EOS switch:

- `VerifyLLDPNeighbors`, one entry per inter-switch cable end, described by the cable's label
  (the label on the cable and on the cabling sheet);
- `VerifyInterfacesStatus`: the inter-switch ports and Port-Channels up; one entry per host
  cable, described by its label, for the host's port;
- `VerifyPortChannels`: no inactive member in the switch's Port-Channels;
- `VerifyVlanStatus`: every VLAN of the switch active;
- `VerifySTPBlockedPorts` and `VerifySTPForwardingPorts`: no port blocked, every port
  forwarding in every VLAN of the switch (spanning tree is off on the inter-switch ports);
- `VerifyRunningConfigLines`: each trunk's allowed list, each host port's native VLAN, BPDU
  filtering on the inter-switch ports, the LAG memberships and the aging time, as
  regular expressions over the running config, each line inside its interface block.

ANTA has no test of the learned-MAC table: `vlanroute audit` checks it (and checks.json lists it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from vlanroute.natural import natsorted
from vlanroute.render.checks import SwitchChecks, vlans_text

EOS_FAMILY = "arista-eos"
CATALOG_FILE = "anta/catalog.yml"
INVENTORY_FILE = "anta/inventory.yml"
_PLAIN = re.compile(r"[A-Za-z0-9 ,/-]*")      # needs no escaping in a regular expression


def _lag_name(lag_id: int) -> str:
    return f"Port-Channel{lag_id}"


def _literal(text: str) -> str:
    return text if _PLAIN.fullmatch(text) else re.escape(text)


def in_block(interface: str, line: str) -> str:
    """A pattern for `line` inside `interface`'s block of `show running-config` (EOS indents
    a block's lines by three spaces and starts the next block at column 0)."""
    return rf"^interface {_literal(interface)}\n(?:   .*\n)*?   {_literal(line)}$"


class _Flow(dict[str, Any]):
    """A small mapping written on one line (`{name: Ethernet1, status: up}`)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Flow, lambda dumper, data: dumper.represent_mapping(
    "tag:yaml.org,2002:map", data.items(), flow_style=True))


def _test(name: str, switch: str, description: str | None = None, **inputs: Any) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if description:
        body["result_overwrite"] = _Flow(description=description)
    body["filters"] = _Flow(tags=[switch])
    body.update(inputs)
    return {name: body}


def _config_patterns(c: SwitchChecks) -> list[str]:
    patterns = []
    for t in c.trunks:
        name = _lag_name(t["lag"]) if "lag" in t else t["port"]
        patterns.append(in_block(name, f"switchport trunk allowed vlan {vlans_text(t['tagged']) or 'none'}"))
        patterns.append(in_block(name, "spanning-tree bpdufilter enable"))
        for member in t.get("members", []):
            patterns.append(in_block(member, f"channel-group {t['lag']} mode on"))
    for hp in c.host_ports:
        allowed = vlans_text(set(hp["untagged"]) | set(hp["tagged"]))
        patterns.append(in_block(hp["port"], f"switchport trunk native vlan {hp['pvid']}"))
        patterns.append(in_block(hp["port"], f"switchport trunk allowed vlan {allowed}"))
    patterns.append(f"^mac address-table aging-time {c.aging_time}$")
    return patterns


def catalog(plan_name: str, checks: Mapping[str, SwitchChecks]) -> dict[str, list[dict[str, Any]]]:
    """ANTA's catalog (module -> test entries) for the EOS switches of `checks`."""
    eos = [checks[name] for name in natsorted(checks) if checks[name].family == EOS_FAMILY]
    out: dict[str, list[dict[str, Any]]] = {
        "anta.tests.connectivity": [], "anta.tests.interfaces": [], "anta.tests.vlan": [], "anta.tests.stp": [],
        "anta.tests.configuration": []}
    for c in eos:
        sw = c.switch
        for e in c.lldp:
            out["anta.tests.connectivity"].append(_test(
                "VerifyLLDPNeighbors", sw, f"cable {e['cable']}: {sw} {e['port']} to {e['neighbor']} {e['neighbor_port']}",
                require_fqdn=False,
                neighbors=[_Flow(port=e["port"], neighbor_device=e["neighbor"], neighbor_port=e["neighbor_port"])]))
        inter = [p for p in c.up if p not in {hc["port"] for hc in c.host_cables}]
        lags = [_lag_name(t["lag"]) for t in c.trunks if "lag" in t]
        if inter or lags:
            out["anta.tests.interfaces"].append(_test(
                "VerifyInterfacesStatus", sw, f"{sw}: inter-switch ports and Port-Channels up",
                interfaces=[_Flow(name=p, status="up") for p in [*inter, *lags]]))
        if lags:
            out["anta.tests.interfaces"].append(_test(
                "VerifyPortChannels", sw, f"{sw}: no inactive member in a Port-Channel", interfaces=lags))
        for hc in c.host_cables:
            out["anta.tests.interfaces"].append(_test(
                "VerifyInterfacesStatus", sw,
                f"host cable {hc['cable']}: {sw} {hc['port']} to {hc['host']} {hc['interface']}",
                interfaces=[_Flow(name=hc["port"], status="up")]))
        if c.vlans:
            out["anta.tests.vlan"].append(_test(
                "VerifyVlanStatus", sw, f"{sw}: VLANs of the plan active",
                vlans=[_Flow(vlan_id=v, status="active") for v in c.vlans]))
            out["anta.tests.stp"].append(_test(
                "VerifySTPForwardingPorts", sw, f"{sw}: every port forwarding in the plan's VLANs", vlans=c.vlans))
        out["anta.tests.stp"].append(_test("VerifySTPBlockedPorts", sw, f"{sw}: no port blocked by spanning tree"))
        out["anta.tests.configuration"].append(_test(
            "VerifyRunningConfigLines", sw, f"{sw}: trunk lists, native VLANs, BPDU filter, LAGs, aging time",
            regex_patterns=_config_patterns(c)))
    return {module: tests for module, tests in out.items() if tests}


HEADER = """\
# vlanroute {plan}: ANTA test catalog of the Arista EOS switches, generated; do not edit by hand.
# What must hold once the plan is pushed (docs/checks.md). Each test runs on the switch its
# filters.tags names (ANTA tags every device with its name). After a push, with ANTA 1.10:
#   anta nrfu --inventory anta/inventory.yml --catalog anta/catalog.yml --username USER --prompt table
"""


def catalog_yaml(plan_name: str, checks: Mapping[str, SwitchChecks]) -> str | None:
    """anta/catalog.yml's text, or None when the plan has no EOS switch."""
    data = catalog(plan_name, checks)
    if not data:
        return None
    return HEADER.format(plan=plan_name) + yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=1_000_000)


def inventory_yaml(plan_name: str, checks: Mapping[str, SwitchChecks]) -> str | None:
    """anta/inventory.yml's text (the EOS switches with a management address), or None."""
    eos = [checks[name] for name in natsorted(checks) if checks[name].family == EOS_FAMILY]
    hosts = [{"name": c.switch, "host": c.mgmt} for c in eos if c.mgmt]
    if not hosts:
        return None
    without = [c.switch for c in eos if not c.mgmt]
    note = f"# Not listed, no management address in the plan: {' '.join(without)}\n" if without else ""
    return (f"# vlanroute {plan_name}: ANTA inventory of the Arista EOS switches, generated; do not edit by hand.\n"
            "# ANTA reaches them over eAPI (HTTPS): `management api http-commands` / `no shutdown` on each.\n"
            + note + yaml.safe_dump({"anta_inventory": {"hosts": hosts}}, sort_keys=False))
