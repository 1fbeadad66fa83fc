"""`vlanroute render INVENTORY -o OUTDIR`: plan, render, verify, publish atomically."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from vlanroute.commands.common import set_option
from vlanroute.commands.output import Say, emit, json_option, quiet_option
from vlanroute.commands.progress import phases, wanted
from vlanroute.exitcodes import ExitCode
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, platforms_of, render_to_dir, syntax_warnings


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
        plan = plan_from_file(inventory, sets)
        doc = plan.to_document()
    if strict:
        # Known before anything is written, so --strict leaves OUTDIR as it was.
        found = list(plan.warnings) + syntax_warnings({p.name: p for p in platforms_of(doc).values()}.values())
        if found:
            for w in found:
                say.warn(w)
            click.echo(f"error: --strict: {len(found)} warning(s); {outdir} not written", err=True)
            if as_json:
                emit("render", {"outdir": str(outdir), "written": False, "files": 0, "bytes": 0,
                                "verified": False, "warnings": found})
            return ExitCode.FAILED_CHECK
    with phases(f"rendering {outdir}" + ("" if no_verify else " and verifying it"),
                wanted(err, as_json, quiet), err):
        result = render_to_dir(doc, outdir, RenderOptions(learning_method=learning_method, verify=not no_verify))
    warnings = list(plan.warnings) + list(result.warnings)
    if no_verify:
        warnings.append("--no-verify: the rendered configs were NOT verified")
    for w in warnings:
        say.warn(w)
    state = "verified" if result.verified else "NOT verified"
    say.line(f"{outdir}: {result.files} files, {result.bytes} bytes, {state}")
    if as_json:
        emit("render", {"outdir": str(outdir), "written": True, "files": result.files, "bytes": result.bytes,
                        "verified": result.verified, "warnings": warnings})
    return ExitCode.OK
