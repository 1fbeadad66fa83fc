"""`vlanroute render INVENTORY -o OUTDIR`: plan, render, verify, publish atomically."""

from __future__ import annotations

import gc
from pathlib import Path

import click
from rich.console import Console

from vlanroute import api
from vlanroute.commands.common import set_option
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.commands.progress import phases, wanted
from vlanroute.exitcodes import ExitCode
from vlanroute.render.context import HOST_NETWORKS, LEARNING_METHODS


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
@click.option("--strict", is_flag=True,
              help="Treat warnings (deadlock risk, syntax no public source confirms) as failures: "
                   "write nothing and exit 1.")
@json_option
@quiet_option
@set_option
def command(inventory: str, outdir: Path, learning_method: str | None, host_network: str,
            per_host_scripts: bool, no_verify: bool, force: bool, strict: bool, as_json: bool, quiet: bool,
            sets: tuple[str, ...]) -> int:
    """Write switch configs, the host program and its tables, the refresh jobs, plan.json, cabling.csv and
    manifest.json (the sha256 of every file, checked by verify, push and emulate)."""
    say = Say(as_json, quiet)
    err = Console(stderr=True)
    with phases(f"planning {inventory}", wanted(err, as_json, quiet), err):
        plan = api.plan(inventory, sets)
        doc, plan_warnings = plan.to_document(), list(plan.warnings)
        # The document is all render needs: let the planner's state (routes, loads, graphs:
        # a third of a GB for 1,024 switches) go before verification builds its own.
        del plan
        gc.collect()
    try:
        with phases(f"rendering {outdir}" + ("" if no_verify else " and verifying it"),
                    wanted(err, as_json, quiet), err):
            result = api.render(doc, outdir, plan_warnings=plan_warnings, learning_method=learning_method, host_network=host_network,
                                per_host_scripts=per_host_scripts, verify=not no_verify, strict=strict,
                                force=force)
    except api.StrictRefused as exc:
        # Known before anything is written, so --strict leaves OUTDIR as it was.
        for w in exc.warnings:
            say.warn(w)
        click.echo(f"error: {exc.message}", err=True)
        if as_json:
            from vlanroute.schemas.outputs import RenderDocument
            emit_document(RenderDocument(outdir=str(outdir), written=False, files=0, bytes=0,
                                         verified=False, warnings=exc.warnings))
        return ExitCode.FAILED_CHECK
    for w in result.warnings:
        say.warn(w)
    state = "verified" if result.verified else "NOT verified"
    say.line(f"{outdir}: {result.files} files, {result.bytes} bytes, {state}")
    if as_json:
        from vlanroute.schemas.outputs import RenderDocument
        emit_document(RenderDocument(outdir=str(outdir), written=True, files=result.files, bytes=result.bytes,
                                     verified=result.verified, warnings=result.warnings))
    return ExitCode.OK
