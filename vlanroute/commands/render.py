"""`vlanroute render INVENTORY -o OUTDIR`: plan, render, verify, publish atomically."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from vlanroute import api
from vlanroute.commands.common import set_option
from vlanroute.commands.output import Say, emit, json_option, quiet_option
from vlanroute.commands.progress import phases, wanted
from vlanroute.exitcodes import ExitCode


@click.command("render")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--outdir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory; replaced as a whole only once everything rendered and verified.")
@click.option("--learning-method", type=click.Choice(["ip-link", "vconfig", "raw"]), default=None,
              help="Override settings.learning.method for the host scripts "
                   "(raw: no sub-interfaces, tagged frames from a raw socket).")
@click.option("--no-verify", is_flag=True,
              help="Publish without re-parsing and simulating the rendered configs (not recommended).")
@click.option("--strict", is_flag=True,
              help="Treat warnings (deadlock risk, syntax no public source confirms) as failures: "
                   "write nothing and exit 1.")
@json_option
@quiet_option
@set_option
def command(inventory: str, outdir: Path, learning_method: str | None, no_verify: bool, strict: bool,
            as_json: bool, quiet: bool, sets: tuple[str, ...]) -> int:
    """Write switch configs, host scripts, the refresh jobs, plan.json and cabling.csv."""
    say = Say(as_json, quiet)
    err = Console(stderr=True)
    with phases(f"planning {inventory}", wanted(err, as_json, quiet), err):
        plan = api.plan(inventory, sets)
    try:
        with phases(f"rendering {outdir}" + ("" if no_verify else " and verifying it"),
                    wanted(err, as_json, quiet), err):
            result = api.render(plan, outdir, learning_method=learning_method, verify=not no_verify,
                                strict=strict)
    except api.StrictRefused as exc:
        # Known before anything is written, so --strict leaves OUTDIR as it was.
        for w in exc.warnings:
            say.warn(w)
        click.echo(f"error: {exc.message}", err=True)
        if as_json:
            emit("render", {"outdir": str(outdir), "written": False, "files": 0, "bytes": 0,
                            "verified": False, "warnings": exc.warnings})
        return ExitCode.FAILED_CHECK
    for w in result.warnings:
        say.warn(w)
    state = "verified" if result.verified else "NOT verified"
    say.line(f"{outdir}: {result.files} files, {result.bytes} bytes, {state}")
    if as_json:
        emit("render", {"outdir": str(outdir), "written": True, "files": result.files, "bytes": result.bytes,
                        "verified": result.verified, "warnings": result.warnings})
    return ExitCode.OK
