"""`vlanroute report INVENTORY -o report.html`: one self-contained page to review a plan."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.exitcodes import ExitCode

from vlanroute.commands.common import set_option
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.pictures.extra import require_draw_extra
from vlanroute.pictures.options import REPORT_MAX_VLANS
from vlanroute.plan.build import plan_from_file


@click.command("report")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (replaced in one rename once complete).")
@click.option("--max-vlans", type=int, default=REPORT_MAX_VLANS, show_default=True,
              help="Include a picture of its own for at most this many VLANs (0 = every VLAN); "
                   "all VLANs are always in the overview picture and the VLAN table.")
@click.option("--compare", multiple=True, type=click.Path(dir_okay=False), metavar="INVENTORY",
              help="Also chart this inventory's throughput next to INVENTORY's (repeatable; --set applies "
                   "to each), as in vlanroute analyze --patterns.")
@json_option
@quiet_option
@set_option
def command(inventory: str, output: Path, max_vlans: int, compare: tuple[str, ...], as_json: bool, quiet: bool,
            sets: tuple[str, ...]) -> int:
    """Write an HTML page with the plan's metrics, VLANs, pictures and per-switch port plan."""
    require_draw_extra("report")
    from vlanroute.pictures.report import write_report   # matplotlib: imported only when drawing

    plan = plan_from_file(inventory, sets)
    others = tuple(plan_from_file(other, sets) for other in compare)
    size = write_report(plan, output, max_vlans=max_vlans, sets=sets, compare=others)
    Say(as_json, quiet).line(f"{output}: {size} bytes, self-contained (open it in any browser, no network needed)")
    if as_json:
        from vlanroute.schemas.outputs import ReportDocument
        emit_document(ReportDocument(output=str(output), bytes=size, name=plan.name))
    return ExitCode.OK
