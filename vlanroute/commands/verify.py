"""`vlanroute verify OUTDIR`: parse the rendered configs back and simulate 802.1Q frames."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.bundle.manifest import check_manifest
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.exitcodes import ExitCode
from vlanroute import api
from vlanroute.bundle.reader import check_outdir

SHOWN_VIOLATIONS = 10


@click.command("verify")
@click.argument("outdir", type=click.Path(path_type=Path))
@click.option("--tables", is_flag=True, help="Also print every switch's learned-table size.")
@json_option
@quiet_option
def command(outdir: Path, tables: bool, as_json: bool, quiet: bool) -> int:
    """Check OUTDIR (written by `vlanroute render`) by parsing and simulating it, and every
    file against OUTDIR/manifest.json (modified, missing or extra files).

    Exit status 0 when everything holds, 1 with the first violations when not,
    2 when OUTDIR or a file in it cannot be read (docs/exit-codes.md).
    """
    say = Say(as_json, quiet)
    check_outdir(outdir)                  # before the manifest: a name too long is a clear error
    problems = [f"manifest: {p}" for p in check_manifest(outdir).problems()]
    for problem in problems:
        click.echo(problem, err=True)     # first: a read error below must not hide them
    report = api.verify(outdir)
    for line in report.summary:
        say.line(line)
    if tables:
        for sw, (n, cap) in report.table_sizes.items():
            say.line(f"  {sw}: {n} learned MAC entries of {cap}")
    if as_json:
        from vlanroute.schemas.outputs import TableSize, VerifyDocument
        emit_document(VerifyDocument(
            outdir=str(outdir), ok=report.ok and not problems, summary=report.summary,
            violation_counts=dict(sorted(report.counts.items())), violations=problems + report.violations,
            tables={sw: TableSize(learned=n, capacity=cap) for sw, (n, cap) in report.table_sizes.items()}))
    if not report.ok or problems:
        for kind, n in sorted(report.counts.items()):
            click.echo(f"{n} {kind} violations", err=True)
        # The manifest's problems were printed above: listed once, counted here.
        violations = report.violations
        shown = violations[:SHOWN_VIOLATIONS]
        more = len(violations) - len(shown)
        total = len(problems) + len(violations)
        click.echo(f"error: verification failed ({total} violations"
                   + (f", {len(problems)} of them the manifest's, above" if problems else "") + ")"
                   + "".join(f"\n  {v}" for v in shown) + (f"\n  ... and {more} more" if more > 0 else ""), err=True)
        return ExitCode.FAILED_CHECK
    say.line(f"{outdir}: OK")
    return ExitCode.OK
