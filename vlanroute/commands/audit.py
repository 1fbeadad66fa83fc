"""`vlanroute audit OUTDIR`: compare the switches' learned-MAC tables with the plan."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vlanroute.device.audit import run_audit
from vlanroute.commands.sshopts import host_key_policy, ssh_options
from vlanroute.device.credentials import load_credentials
from vlanroute.device.targets import check_loopback, load_plan, select_targets


@click.command("audit")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int) -> int:
    """Report every (VLAN, host MAC) the plan needs that a switch has not learned, or has
    learned on the wrong port. Exit code 1 if anything is missing or a switch is unreadable."""
    plan = load_plan(outdir)
    targets = select_targets(outdir, plan, switches, need_config=False)
    check_loopback(targets)
    creds = load_credentials()
    report = run_audit(plan, targets, creds, host_key_policy(insecure, known_hosts), workers)
    out = Console()
    if report.findings:
        table = Table(title="MAC entries missing or on the wrong port")
        for col in ("switch", "vlan", "host", "mac", "expected port", "found"):
            table.add_column(col)
        for f in report.findings:
            e = f.expected
            table.add_row(e.switch, str(e.vlan), e.host, e.mac, e.port, f.problem)
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
