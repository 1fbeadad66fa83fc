"""The hosts of the cluster: generated from a count or taken from a list or a CSV file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vlanroute.errors import UserError
from vlanroute.model.inventory import MAX_HOSTS, NAME_PATTERN, LoadedInventory
from vlanroute.model.topology import Topology


@dataclass
class Host:
    name: str
    switch: str
    port: str | None
    mac: str | None
    interface: str
    index: int                     # global order, used for learning addresses
    vlan: int = 0
    attributes: dict[str, str] = field(default_factory=dict)   # extra hosts CSV columns


def build_hosts(inv: LoadedInventory, topo: Topology) -> list[Host]:
    spec = inv.spec.hosts
    file = inv.file
    counts: dict[str, int] | None = None
    if spec.per_switch is not None:
        if isinstance(spec.per_switch, int):
            counts = {s: spec.per_switch for s in topo.switches}
        else:
            counts = {s: 0 for s in topo.switches}
            for key, n in spec.per_switch.items():
                sw = _resolve_switch(key, topo)
                if sw is None:
                    raise UserError(f"unknown switch '{key}'", file=file, field=f"hosts.per_switch.{key}",
                                    fix="use a switch name of the topology")
                counts[sw] = n
    elif spec.count is not None:
        # Spread evenly in switch order: the first (count mod switches) get one more.
        q, r = divmod(spec.count, len(topo.switches))
        counts = {s: q + (1 if i < r else 0) for i, s in enumerate(topo.switches)}

    hosts: list[Host] = []
    csv_lines: list[int] | None = None        # the line of each hosts CSV row, for messages
    if counts is not None and sum(counts.values()) > MAX_HOSTS:
        field = "hosts.per_switch" if spec.per_switch is not None else "hosts.count"
        raise UserError(f"{sum(counts.values()):,} hosts; vlanroute plans at most {MAX_HOSTS:,}",
                        file=file, field=field, fix="plan a smaller cluster")
    if counts is not None:
        n = 0
        for s in topo.switches:
            for i in range(counts[s]):
                n += 1
                try:
                    name = spec.name.format(n=n, i=i + 1, switch=s)
                except (KeyError, IndexError, ValueError) as exc:
                    raise UserError(f"bad pattern '{spec.name}': {exc}", file=file, field="hosts.name",
                                    fix="use the placeholders {n} (global), {i} (per switch) and {switch}") from None
                if not re.match(NAME_PATTERN, name):
                    raise UserError(f"pattern gives the host name '{name}', which is not allowed", file=file,
                                    field="hosts.name", fix="names: letters, digits, '_', '.', '-', starting with a letter")
                hosts.append(Host(name, s, None, None, spec.interface, len(hosts)))
        where = "hosts.name"
    else:
        entries = inv.hosts_csv if spec.csv else spec.entries
        assert entries is not None
        where = f"{spec.csv}" if spec.csv else "hosts.list"
        csv_lines = inv.hosts_csv_lines if spec.csv else None
        for k, e in enumerate(entries):
            sw = _resolve_switch(e.switch, topo)
            if sw is None:
                # A CSV row by its line number, as the CSV's own errors name it.
                raise UserError(f"host '{e.name}' is on unknown switch '{e.switch}'", file=file,
                                field=f"{spec.csv} line {csv_lines[k]}: switch" if csv_lines
                                else f"{where}.{k}.switch",
                                fix="use a switch name of the topology")
            hosts.append(Host(e.name, sw, e.port, e.mac, e.interface or spec.interface, len(hosts),
                              attributes=dict(e.attributes)))

    seen: dict[str, int] = {}
    macs: dict[str, str] = {}
    for h in hosts:
        # In a hosts CSV: the line of the second row (h.index is the row's position).
        here = f"{spec.csv} line {csv_lines[h.index]}" if csv_lines else where
        if h.name in seen:
            raise UserError(f"host name '{h.name}' is used twice", file=file, field=here,
                            fix="give every host a different name")
        seen[h.name] = h.index
        if h.mac:
            if h.mac in macs:
                raise UserError(f"MAC {h.mac} is given to both '{macs[h.mac]}' and '{h.name}'", file=file,
                                field=here, fix="every host needs its own MAC address")
            macs[h.mac] = h.name
    if not hosts:
        raise UserError("the inventory has no hosts", file=file, field="hosts", fix="give hosts.per_switch or a host list")
    return hosts


def _resolve_switch(key: str, topo: Topology) -> str | None:
    if key in topo.graph:
        return key
    return topo.generated_names.get(key)
