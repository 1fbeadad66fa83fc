"""`vlanroute render INVENTORY -o OUTDIR`: plan, render, verify, publish atomically."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.commands.common import set_option
from vlanroute.plan.build import plan_from_file
from vlanroute.render.context import HOST_NETWORKS, LEARNING_METHODS
from vlanroute.render.write import RenderOptions, render_to_dir


@click.command("render")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--outdir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory; replaced as a whole only once everything rendered and verified.")
@click.option("--learning-method", type=click.Choice(list(LEARNING_METHODS)), default=None,
              help="Override settings.learning.method: system (default: the hosts' own sh and ip, "
                   "nothing to install), or ip-link, vconfig, raw (frames from `vlanroute learn`, "
                   "which every host then needs; raw: no sub-interfaces).")
@click.option("--host-network", type=click.Choice(list(HOST_NETWORKS)), default="script", show_default=True,
              help="Who owns the learning sub-interfaces on the hosts: the host program itself (script), "
                   "or systemd-networkd, NetworkManager or netplan (files the host program writes "
                   "from its table once, so they survive reboots).")
@click.option("--per-host-scripts", is_flag=True,
              help="Also write hosts/per-host/<host>.sh: the host program with that host's row inside.")
@click.option("--no-verify", is_flag=True,
              help="Publish without re-parsing and simulating the rendered configs (not recommended).")
@click.option("--force", is_flag=True,
              help="Replace OUTDIR even if it holds files no render wrote (they are deleted).")
@set_option
def command(inventory: str, outdir: Path, learning_method: str | None, host_network: str,
            per_host_scripts: bool, no_verify: bool, force: bool,
            sets: tuple[str, ...]) -> int:
    """Write switch configs, the host program and its tables, the refresh jobs, plan.json, cabling.csv and
    manifest.json (the sha256 of every file, checked by verify, push and emulate)."""
    plan = plan_from_file(inventory, sets)
    result = render_to_dir(plan.to_document(), outdir,
                           RenderOptions(learning_method=learning_method, host_network=host_network,
                                         per_host_scripts=per_host_scripts, verify=not no_verify,
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
