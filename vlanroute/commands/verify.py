"""`vlanroute verify OUTDIR`: parse the rendered configs back and simulate 802.1Q frames."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.commands.output import Say, emit, json_option, quiet_option
from vlanroute.exitcodes import ExitCode
from vlanroute import api

SHOWN_VIOLATIONS = 10


@click.command("verify")
@click.argument("outdir", type=click.Path(path_type=Path))
@click.option("--tables", is_flag=True, help="Also print every switch's learned-table size.")
@json_option
@quiet_option
def command(outdir: Path, tables: bool, as_json: bool, quiet: bool) -> int:
    """Check OUTDIR (written by `vlanroute render`) by parsing and simulating it.

    Exit status 0 when everything holds, 1 with the first violations when not,
    2 when OUTDIR or a file in it cannot be read (docs/exit-codes.md).
    """
    say = Say(as_json, quiet)
    report = api.verify(outdir)
    for line in report.summary:
        say.line(line)
    if tables:
        for sw, (n, cap) in report.table_sizes.items():
            say.line(f"  {sw}: {n} learned MAC entries of {cap}")
    if as_json:
        emit("verify", {"outdir": str(outdir), "ok": report.ok, "summary": report.summary,
                        "violation_counts": dict(sorted(report.counts.items())),
                        "violations": report.violations,
                        "tables": {sw: {"learned": n, "capacity": cap}
                                   for sw, (n, cap) in report.table_sizes.items()}})
    if not report.ok:
        for kind, n in sorted(report.counts.items()):
            click.echo(f"{n} {kind} violations", err=True)
        shown = report.violations[:SHOWN_VIOLATIONS]
        more = len(report.violations) - len(shown)
        click.echo(f"error: verification failed ({len(report.violations)} violations):\n  "
                   + "\n  ".join(shown) + (f"\n  ... and {more} more" if more > 0 else ""), err=True)
        return ExitCode.FAILED_CHECK
    say.line(f"{outdir}: OK")
    return ExitCode.OK
