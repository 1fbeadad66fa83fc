"""`vlanroute render INVENTORY -o OUTDIR`: plan, render, verify, publish atomically."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.commands.common import set_option
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir


@click.command("render")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--outdir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory; replaced as a whole only once everything rendered and verified.")
@click.option("--learning-method", type=click.Choice(["ip-link", "vconfig", "raw"]), default=None,
              help="Override settings.learning.method for the host scripts "
                   "(raw: no sub-interfaces, tagged frames from a raw socket).")
@click.option("--no-verify", is_flag=True,
              help="Publish without re-parsing and simulating the rendered configs (not recommended).")
@click.option("--force", is_flag=True,
              help="Replace OUTDIR even if it holds files no render wrote (they are deleted).")
@set_option
def command(inventory: str, outdir: Path, learning_method: str | None, no_verify: bool,
            force: bool, sets: tuple[str, ...]) -> int:
    """Write switch configs, host scripts, the refresh jobs, plan.json, cabling.csv and
    manifest.json (the sha256 of every file, checked by verify, push and emulate)."""
    plan = plan_from_file(inventory, sets)
    result = render_to_dir(plan.to_document(), outdir,
                           RenderOptions(learning_method=learning_method, verify=not no_verify,
                                         force=force))
    for w in plan.warnings:
        click.echo(f"warning: {w}", err=True)
    for w in result.warnings:
        click.echo(f"warning: {w}", err=True)
    if no_verify:
        click.echo("warning: --no-verify: the rendered configs were NOT verified", err=True)
    state = "verified" if result.verified else "NOT verified"
    click.echo(f"{outdir}: {result.files} files, {result.bytes} bytes, {state}")
    return 0
