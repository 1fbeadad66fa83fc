"""`vlanroute analyze INVENTORY...`: the metrics of several inventories side by side."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from vlanroute.commands.tables import table_console
from vlanroute.commands.common import set_option
from vlanroute.commands.output import emit, json_option, quiet_option
from vlanroute.exitcodes import ExitCode
from vlanroute.errors import UserError
from vlanroute.plan.build import plan_from_file

# Each limit next to what the plan uses of it (issue 7): VLANs / budget, max load / its
# lower bound (any routing, and any routing within the VLAN budget), mean stretch, MAC
# entries / capacity.
HEADERS = ["switches", "hosts", "cables", "diameter", "mean hops", "VLANs / budget", "max load", "load / bound",
           "load / budget bound", "stretch", "non-minimal", "MAC / capacity", "deadlock-free"]


def _cells(m: dict[str, Any], budget: int) -> list[str]:
    bound = m["link_load_lower_bound"]
    within = m["link_load_lower_bound_budget"]
    return [str(m["switches"]), str(m["hosts"]), str(m["inter_switch_links"]), str(m["diameter"]),
            f"{m['mean_hops']:g}", f"{m['vlan_count']} / {budget}", f"{m['max_link_load']:g}",
            f"{m['max_link_load'] / bound:.3f}" if bound else "-",
            f"{m['max_link_load'] / within:.3f}" if within else "-", f"{m['mean_stretch']:.3f}",
            str(m["non_minimal_routes"]), f"{m['max_mac_entries']} / {m['mac_capacity']}",
            "yes" if m["deadlock_free"] else "no"]


@click.command("analyze")
@click.argument("inventories", nargs=-1, required=True, type=click.Path(dir_okay=False))
@json_option
@quiet_option
@set_option
def command(inventories: tuple[str, ...], as_json: bool, quiet: bool, sets: tuple[str, ...]) -> int:
    """Compare the plans of several INVENTORIES in one table (--set applies to each)."""
    table = Table(title="vlanroute analyze" + (f" (--set {' '.join(sets)})" if sets else ""))
    table.add_column("inventory")
    for title in HEADERS:
        table.add_column(title, justify="right")
    failures = 0
    rows: list[dict[str, Any]] = []
    for path in inventories:
        try:
            plan = plan_from_file(path, sets)
        except UserError as exc:
            failures += 1
            click.echo(f"error: {exc.render()}", err=True)
            table.add_row(path, *(["-"] * (len(HEADERS) - 1)), "no plan")
            rows.append({"inventory": path, "ok": False, "error": exc.render()})
            continue
        metrics = plan.metrics.to_json()
        table.add_row(path, *_cells(metrics, plan.budget.max_vlans))
        rows.append({"inventory": path, "ok": True, "name": plan.name, "max_vlans": plan.budget.max_vlans,
                     "metrics": metrics, "warnings": list(plan.warnings)})
    if as_json:
        emit("analyze", {"sets": list(sets), "inventories": rows})
    elif not quiet:             # an inventory without a plan was named on stderr above
        table_console(pipe_width=240).print(table)
    return ExitCode.USAGE if failures else ExitCode.OK
