"""What must hold on the switches once a plan is pushed, per switch, in plain JSON: OUTDIR/checks.json
(every family; docs/checks.md). The Arista EOS switches get the same checks as an ANTA catalog
too (vlanroute.render.antacatalog).

Per switch: its cables as LLDP must show them (cable label, port, far switch and port; host
cables with the host's interface and MAC), the ports that must be up, the VLANs that must
exist, every inter-switch port or LAG with the VLANs it carries tagged and forwarding (spanning
tree off there), every host port with its PVID and memberships, the aging time and flow
control, and where the switch must have learned each host's MAC in each VLAN: what `vlanroute
cabling check` and `vlanroute audit` verify, for a site that checks with its own tools.

Everything comes from the switch contexts the configs were rendered from and the plan's
cables, so the checks and the configs cannot disagree.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vlanroute.bundle.cables import HOST, INTER_SWITCH, PlannedCable
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.learning import learning_ports
from vlanroute.model.bridge import LagPort
from vlanroute.natural import natsorted, natural_key
from vlanroute.render.context import SwitchContext
from vlanroute.vlanlist import format_vlan_list

CHECKS_FILE = "checks.json"
FORMAT = "vlanroute-checks/1"
# (switch, VLAN, host) entries of the learned-MAC expectations at most; above, they are left
# out (a 16x16 torus with 1,024 hosts of known MAC would list 33 million): audit computes
# them from plan.json itself.
LEARNED_LIMIT = 200_000


def vlans_text(ids: list[int] | set[int]) -> str:
    """A VLAN set as a VLAN list (`101-104,110`; "" for none): a 16x16 torus's host ports
    would otherwise list 130,000 ids."""
    return _text(tuple(sorted(ids)))


@lru_cache(maxsize=4096)
def _text(ids: tuple[int, ...]) -> str:
    """Memoised: every host port of a switch carries the same lists."""
    return format_vlan_list(ids) if ids else ""


@dataclass(frozen=True)
class SwitchChecks:
    """One switch's expectations (docs/checks.md gives each field's meaning)."""
    switch: str
    family: str
    platform: str
    mgmt: str | None
    vlans: list[int]
    aging_time: int
    flow_control: bool
    lldp: list[dict[str, Any]]           # inter-switch cable ends on this switch
    host_cables: list[dict[str, Any]]
    up: list[str]                        # every port the plan uses: must be up (link and protocol)
    trunks: list[dict[str, Any]]         # inter-switch ports and LAGs
    host_ports: list[dict[str, Any]]
    learned: list[dict[str, Any]] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        """VLAN sets (kept as sorted lists of ids here) written as VLAN lists."""
        def texts(entry: dict[str, Any]) -> dict[str, Any]:
            return {k: vlans_text(v) if k in ("tagged", "untagged") else v for k, v in entry.items()}
        return {"family": self.family, "platform": self.platform, "mgmt": self.mgmt,
                "vlans": vlans_text(self.vlans), "aging_time": self.aging_time, "flow_control": self.flow_control,
                "lldp": self.lldp, "host_cables": self.host_cables, "up": self.up,
                "trunks": [texts(t) for t in self.trunks], "host_ports": [texts(h) for h in self.host_ports],
                "learned": self.learned}


def _learned(doc: PlanDocument) -> tuple[dict[str, list[dict[str, Any]]] | None, str | None]:
    """Switch -> [{vlan, port or lag, hosts}] for the hosts with a MAC, or None and why."""
    with_mac = natsorted(h for h, d in doc.hosts.items() if d.mac)
    if not with_mac:
        return {}, None
    tree_sizes = sum(len(v.switches) for v in doc.vlans)
    if tree_sizes * len(with_mac) > LEARNED_LIMIT:
        return None, (f"{len(with_mac)} hosts x {len(doc.vlans)} VLANs on up to {len(doc.switches)} switches: "
                      f"more than {LEARNED_LIMIT:,} entries; `vlanroute audit` computes them from plan.json")
    grouped: dict[str, dict[tuple[int, str | int], list[str]]] = defaultdict(lambda: defaultdict(list))
    for e in learning_ports(doc, with_mac):
        key: str | int = e.port.id if isinstance(e.port, LagPort) else e.port
        grouped[e.switch][(e.vlan, key)].append(e.host)
    out: dict[str, list[dict[str, Any]]] = {}
    for sw, entries in grouped.items():
        rows = []
        for (vlan, key), hosts in sorted(entries.items(), key=lambda kv: (kv[0][0], isinstance(kv[0][1], int),
                                                                          natural_key(str(kv[0][1])))):
            where = {"lag": key} if isinstance(key, int) else {"port": key}
            rows.append({"vlan": vlan, **where, "hosts": hosts})
        out[sw] = rows
    return out, None


def switch_checks(doc: PlanDocument, contexts: Mapping[str, SwitchContext],
                  cables: list[PlannedCable]) -> tuple[dict[str, SwitchChecks], str | None]:
    """Every switch's checks, and why the learned-MAC expectations are left out (or None)."""
    ends: dict[str, list[dict[str, Any]]] = defaultdict(list)
    host_cables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cables:
        if c.kind == INTER_SWITCH:
            ends[c.a].append({"cable": c.label, "port": c.a_port, "neighbor": c.b, "neighbor_port": c.b_port})
            ends[c.b].append({"cable": c.label, "port": c.b_port, "neighbor": c.a, "neighbor_port": c.a_port})
        elif c.kind == HOST:
            host_cables[c.a].append({"cable": c.label, "port": c.a_port, "host": c.b, "interface": c.b_port,
                                     "mac": doc.hosts[c.b].mac})
    learned, left_out = _learned(doc)
    out: dict[str, SwitchChecks] = {}
    for name in natsorted(contexts):
        ctx = contexts[name]
        port_order = ctx.platform.port_index
        trunks: list[dict[str, Any]] = [
            {"lag": lag.id, "members": lag.members, "neighbor": lag.neighbor, "tagged": lag.tagged,
             "forwarding": True} for lag in ctx.lags]
        trunks += [{"port": link.port, "neighbor": link.neighbor, "tagged": link.tagged,
                    "forwarding": True} for link in ctx.links]
        host_ports = [{"port": hp.port, "host": hp.host, "pvid": hp.pvid, "untagged": hp.untagged,
                       "tagged": hp.tagged} for hp in ctx.host_ports]
        out[name] = SwitchChecks(
            switch=name, family=ctx.family.name, platform=ctx.platform.name, mgmt=ctx.mgmt, vlans=ctx.vlans,
            aging_time=ctx.settings.aging_time, flow_control=ctx.settings.flow_control,
            lldp=sorted(ends[name], key=lambda e: port_order(e["port"])),
            host_cables=sorted(host_cables[name], key=lambda e: port_order(e["port"])),
            up=list(ctx.managed_ports), trunks=trunks, host_ports=host_ports,
            learned=None if learned is None else learned.get(name, []))
    return out, left_out


def _compact(value: object) -> str:
    return json.dumps(value, separators=(", ", ": "))


def _switch_text(record: dict[str, Any]) -> str:
    """One switch's object: a key a line, a list of records one record a line."""
    lines = []
    for key, value in record.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n".join(f"    {_compact(v)}" for v in value)
            lines.append(f"   {_compact(key)}: [\n{items}\n   ]")
        else:
            lines.append(f"   {_compact(key)}: {_compact(value)}")
    return "{\n" + ",\n".join(lines) + "\n  }"


def checks_json(doc: PlanDocument, checks: Mapping[str, SwitchChecks], left_out: str | None) -> str:
    """OUTDIR/checks.json's text: plain JSON, laid out for reading and line-by-line diffs."""
    head = {"format": FORMAT, "plan": doc.name, "hosts_without_mac": sum(1 for h in doc.hosts.values() if not h.mac),
            "learned_left_out": left_out}
    switches = ",\n".join(f"  {_compact(name)}: {_switch_text(c.to_json())}" for name, c in checks.items())
    return ("{\n" + "".join(f" {_compact(k)}: {_compact(v)},\n" for k, v in head.items())
            + ' "switches": {\n' + switches + "\n }\n}\n")
