"""`vlanroute verify OUTDIR`: parse the rendered configs back and simulate 802.1Q frames."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.bundle.manifest import check_manifest
from vlanroute.errors import VerificationError
from vlanroute.verify.configs import verify_outdir


@click.command("verify")
@click.argument("outdir", type=click.Path(path_type=Path))
@click.option("--tables", is_flag=True, help="Also print every switch's learned-table size.")
def command(outdir: Path, tables: bool) -> int:
    """Check OUTDIR (written by `vlanroute render`) by parsing and simulating it, and every
    file against OUTDIR/manifest.json (modified, missing or extra files).

    Exit status 0 when everything holds, 3 with the first violations when not,
    2 when OUTDIR or a file in it cannot be read.
    """
    manifest = check_manifest(outdir) if outdir.is_dir() else None
    for problem in manifest.problems() if manifest else []:
        click.echo(f"manifest: {problem}", err=True)     # first: a read error below must not hide them
    report = verify_outdir(outdir)
    for line in report.summary:
        click.echo(line)
    if tables:
        for sw, (n, cap) in report.table_sizes.items():
            click.echo(f"  {sw}: {n} learned MAC entries of {cap}")
    problems = manifest.problems() if manifest else []
    if not report.ok or problems:
        for kind, n in sorted(report.counts.items()):
            click.echo(f"{n} {kind} violations", err=True)
        raise VerificationError(problems + report.violations)
    click.echo(f"{outdir}: OK")
    return 0
