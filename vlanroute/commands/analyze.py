"""`vlanroute analyze INVENTORY...`: the metrics of several inventories side by side."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from vlanroute.commands.common import set_option
from vlanroute.errors import UserError
from vlanroute.plan import plan_from_file

COLUMNS = [
    ("switches", "switches"), ("hosts", "hosts"), ("cables", "inter_switch_links"), ("VLANs", "vlan_count"),
    ("diameter", "diameter"), ("mean hops", "mean_hops"), ("max load", "max_link_load"),
    ("lower bound", "link_load_lower_bound"), ("MAC entries", "max_mac_entries"), ("deadlock-free", "deadlock_free"),
]


@click.command("analyze")
@click.argument("inventories", nargs=-1, required=True, type=click.Path(dir_okay=False))
@set_option
def command(inventories: tuple[str, ...], sets: tuple[str, ...]) -> int:
    """Compare the plans of several INVENTORIES in one table (--set applies to each)."""
    table = Table(title="vlanroute analyze" + (f" (--set {' '.join(sets)})" if sets else ""))
    table.add_column("inventory")
    for title, _ in COLUMNS:
        table.add_column(title, justify="right")
    table.add_column("load / bound", justify="right")
    failures = 0
    for path in inventories:
        try:
            m = plan_from_file(path, sets).metrics.to_json()
        except UserError as exc:
            failures += 1
            click.echo(f"error: {exc.render()}", err=True)
            table.add_row(path, *(["-"] * len(COLUMNS)), "no plan")
            continue
        cells = []
        for _, key in COLUMNS:
            v = m[key]
            cells.append("yes" if v is True else "no" if v is False else f"{v:g}" if isinstance(v, float) else str(v))
        bound = m["link_load_lower_bound"]
        cells.append(f"{m['max_link_load'] / bound:.3f}" if bound else "-")
        table.add_row(path, *cells)
    Console(width=200).print(table)
    return 2 if failures else 0
