"""`vlanroute report INVENTORY -o report.html`: one self-contained page to review a plan."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.exitcodes import ExitCode

from vlanroute.commands.common import link_speed_option, set_option
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.commands.sources import plan_or_bundle, require_outside
from vlanroute.pictures.extra import require_draw_extra
from vlanroute.pictures.options import REPORT_MAX_VLANS


@click.command("report")
@click.argument("inventory", type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (replaced in one rename once complete).")
@click.option("--max-vlans", type=int, default=REPORT_MAX_VLANS, show_default=True,
              help="Include a picture of its own for at most this many VLANs (0 = every VLAN); "
                   "all VLANs are always in the overview picture and the VLAN table.")
@click.option("--compare", multiple=True, type=click.Path(), metavar="INVENTORY",
              help="Also chart this inventory's (or bundle's) throughput next to INVENTORY's (repeatable; "
                   "--set applies to each inventory), as in vlanroute analyze --patterns.")
@link_speed_option(None, "Gb/s of every host link and cable in the throughput chart (default: the port "
                         "speed of the plan's platforms, e.g. 10 for an Arista 7050SX-64).")
@json_option
@quiet_option
@set_option
def command(inventory: str, output: Path, max_vlans: int, compare: tuple[str, ...], link_speed: float | None,
            as_json: bool, quiet: bool, sets: tuple[str, ...]) -> int:
    """Write an HTML page with the plan's metrics, VLANs, pictures and per-switch port plan.
    INVENTORY is an inventory, or a rendered bundle (OUTDIR or OUTDIR/plan.json: the plan
    as it will be pushed, e.g. a repair's, checked against its manifest first)."""
    require_draw_extra("report")
    from vlanroute.pictures.report import write_report   # matplotlib: imported only when drawing

    require_outside(output, "-o/--output", [inventory, *compare])
    plan = plan_or_bundle(inventory, sets, "report")
    others = tuple(plan_or_bundle(other, sets, "report") for other in compare)
    size = write_report(plan, output, max_vlans=max_vlans, sets=sets, compare=others, link_speed=link_speed)
    Say(as_json, quiet).line(f"{output}: {size} bytes, self-contained (open it in any browser, no network needed)")
    if as_json:
        from vlanroute.schemas.outputs import ReportDocument
        emit_document(ReportDocument(output=str(output), bytes=size, name=plan.name))
    return ExitCode.OK

