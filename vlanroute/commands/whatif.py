"""`vlanroute whatif INVENTORY`: every single pair and switch failure, repaired in turn.

A verb of its own rather than `analyze --what-if`: analyze puts several inventories side by
side, one row each; the what-if is one inventory with one row per failure, and its JSON
has another shape (docs/failures.md)."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from vlanroute import api
from vlanroute.bundle.repaired import trees_of
from vlanroute.commands.common import set_option
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.exitcodes import ExitCode
from vlanroute.routing.repair import link
from vlanroute.routing.whatif import FailureRow, what_if

HEADERS = ["failure", "host pairs cut", "hosts lost", "trees to repair", "links added", "max load after",
           "bound", "load / bound"]


def _cells(r: FailureRow) -> list[str]:
    load = "cut off" if r.max_load is None else f"{r.max_load:g}"
    ratio = "-" if r.max_load is None or not r.bound else f"{r.max_load / r.bound:.3f}"
    name = f"pair {r.name.replace(':', '-')}" if r.kind == "pair" else f"switch {r.name}"
    return [name, str(r.pairs_cut), str(r.hosts_lost), str(r.trees), str(r.links_added), load,
            f"{r.bound:.6g}", ratio]


@click.command("whatif")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("--top", type=click.IntRange(0, 1_000_000), default=0,
              help="Show only the N failures that cut the most host pairs (0: every failure).")
@json_option(doc="docs/failures.md")
@quiet_option
@set_option
def command(inventory: str, top: int, as_json: bool, quiet: bool, sets: tuple[str, ...]) -> int:
    """For every single failure of a neighbour pair (all its cables) and of a switch: the
    host pairs it cuts before any repair, the trees to repair, the links the minimal
    repair (`vlanroute repair`) adds, and the max link load after it against a lower bound."""
    plan = api.plan(inventory, sets)
    doc = plan.to_document()
    cables: dict[tuple[str, str], int] = {}
    for c in doc.cabling:
        key = link(c.a, c.b)
        cables[key] = cables.get(key, 0) + 1
    hosts = {s: 0 for s in doc.switches}
    for h in doc.hosts.values():
        hosts[h.switch] += 1
    rows = what_if(trees_of(doc), cables, hosts, list(doc.switches), bool(doc.metrics.get("deadlock_free")))
    shown = sorted(rows, key=lambda r: -r.pairs_cut)[:top] if top else rows
    if as_json:
        payload: dict[str, Any] = {"inventory": inventory, "sets": list(sets), "name": doc.name,
                                   "max_link_load": doc.metrics.get("max_link_load"),
                                   "failures": [r.to_json() for r in shown]}
        from vlanroute.schemas.outputs import WhatifDocument
        emit_document(WhatifDocument.model_validate(payload))
    elif not quiet:
        table = Table(title=f"vlanroute whatif {doc.name}: every single failure, repaired with the fewest links "
                            f"(intact max load {doc.metrics.get('max_link_load'):g})")
        for i, title in enumerate(HEADERS):
            table.add_column(title, justify="left" if i == 0 else "right")
        for r in shown:
            table.add_row(*_cells(r))
        Console(width=200).print(table)
    return ExitCode.OK
