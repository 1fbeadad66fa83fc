"""`vlanroute draw INVENTORY -o DIR`: pictures of the topology, each VLAN's tree and the link load,
of an inventory's plan or of a rendered bundle's (commands/sources.py)."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.exitcodes import ExitCode

from vlanroute.commands.common import set_option
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.commands.sources import plan_or_bundle, require_outside
from vlanroute.pictures.extra import require_draw_extra
from vlanroute.pictures.options import DEFAULT_MAX_VLANS, FORMATS, INDEX_FILE


@click.command("draw")
@click.argument("inventory", type=click.Path())
@click.option("-o", "--outdir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory; replaced as a whole only once every picture is drawn.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="png", show_default=True,
              help="Picture file format.")
@click.option("--max-vlans", type=int, default=DEFAULT_MAX_VLANS, show_default=True,
              help="Draw a picture of its own for at most this many VLANs (0 = every VLAN); "
                   "all VLANs are always in vlans-overview.")
@click.option("--vlans", "vlan_ids", metavar="LIST", default=None,
              help="Draw pictures of these VLANs only, e.g. 101,105-110 (instead of the first --max-vlans).")
@json_option
@quiet_option
@set_option
def command(inventory: str, outdir: Path, fmt: str, max_vlans: int, vlan_ids: str | None,
            as_json: bool, quiet: bool, sets: tuple[str, ...]) -> int:
    """Draw the physical topology, one picture per VLAN and the link load of INVENTORY's plan.
    INVENTORY is an inventory, or a rendered bundle (OUTDIR or OUTDIR/plan.json: the plan
    as it will be pushed, e.g. a repair's, checked against its manifest first)."""
    require_draw_extra("draw")
    from vlanroute.pictures.draw import draw_to_dir   # matplotlib: imported only when drawing

    require_outside(outdir, "-o/--outdir", [inventory])
    plan = plan_or_bundle(inventory, sets, "draw")
    result = draw_to_dir(plan, outdir, fmt, max_vlans, vlan_ids)
    say = Say(as_json, quiet)
    for f in result.files:
        say.line(f"{outdir / f}")
    for s in result.left_out:
        say.line(f"left out: {s}")
    say.line(f"{outdir}: {len(result.files)} pictures (list in {outdir / INDEX_FILE})")
    if as_json:
        from vlanroute.schemas.outputs import DrawDocument
        emit_document(DrawDocument(outdir=str(outdir), format=fmt, files=[str(f) for f in result.files],
                                   left_out=list(result.left_out), index=INDEX_FILE))
    return ExitCode.OK
