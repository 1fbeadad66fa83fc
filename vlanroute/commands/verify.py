"""`vlanroute verify OUTDIR`: parse the rendered configs back and simulate 802.1Q frames."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.errors import VerificationError
from vlanroute.verify.configs import verify_outdir


@click.command("verify")
@click.argument("outdir", type=click.Path(path_type=Path))
@click.option("--tables", is_flag=True, help="Also print every switch's learned-table size.")
def command(outdir: Path, tables: bool) -> int:
    """Check OUTDIR (written by `vlanroute render`) by parsing and simulating it.

    Exit status 0 when everything holds, 3 with the first violations when not,
    2 when OUTDIR or a file in it cannot be read.
    """
    report = verify_outdir(outdir)
    for line in report.summary:
        click.echo(line)
    if tables:
        for sw, (n, cap) in report.table_sizes.items():
            click.echo(f"  {sw}: {n} learned MAC entries of {cap}")
    if not report.ok:
        for kind, n in sorted(report.counts.items()):
            click.echo(f"{n} {kind} violations", err=True)
        raise VerificationError(report.violations)
    click.echo(f"{outdir}: OK")
    return 0
