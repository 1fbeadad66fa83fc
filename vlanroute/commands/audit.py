"""`vlanroute audit OUTDIR`: compare the switches' learned-MAC tables with the plan."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vlanroute.bundle.reader import read_plan
from vlanroute.device.audit import run_audit
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.device.credentials import load_credentials
from vlanroute.device.targets import check_loopback, select_targets


@click.command("audit")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None) -> int:
    """Report every (VLAN, host MAC) the plan needs that a switch has not learned, or has
    learned on the wrong port. Exit code 1 if anything is missing or a switch is unreadable."""
    doc = read_plan(outdir)
    selection = select_targets(outdir, doc, switches, action="audit",
                               target_map=target_map(targets_file))
    targets = selection.targets
    check_loopback(targets)
    for note in selection.notes:
        click.echo(f"note: {note}", err=True)
    creds = load_credentials()
    report = run_audit(doc, targets, creds, host_key_policy(insecure, known_hosts), workers)
    out = Console()
    if report.findings:
        family = {t.name: t.family for t in targets}
        table = Table(title="MAC entries missing or on the wrong port")
        for col in ("switch", "vlan", "host", "mac", "expected port", "found"):
            table.add_column(col)
        for f in report.findings:
            e = f.expected
            label = family[e.switch].port_label
            found = "missing" if f.found_port is None else f"on {label(f.found_port)}"
            table.add_row(e.switch, str(e.vlan), e.host, e.mac, label(e.port), found)
        out.print(table)
    for switch, why in sorted(report.errors.items()):
        out.print(f"[red]{switch}: not read: {why}[/]", highlight=False)
    if report.no_mac:
        out.print(f"{len(report.no_mac)} host(s) have no MAC in the inventory and were not "
                  f"checked: {', '.join(report.no_mac[:10])}"
                  + (" ..." if len(report.no_mac) > 10 else ""), highlight=False)
    ok = report.checked - len(report.findings)
    out.print(f"{ok} of {report.checked} expected MAC entries present on the right port",
              highlight=False)
    return 1 if report.findings or report.errors else 0
