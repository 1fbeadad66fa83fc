"""`vlanroute audit OUTDIR`: compare the switches' learned-MAC tables with the plan."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vlanroute.bundle.reader import read_plan
from vlanroute.commands.output import Say, emit, json_option, quiet_option
from vlanroute.commands.progress import CountsBar, wanted
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.device.audit import AuditReport, run_audit
from vlanroute.device.credentials import load_credentials
from vlanroute.device.targets import Target, check_loopback, select_targets
from vlanroute.exitcodes import ExitCode


def audit_json(report: AuditReport, targets: list[Target]) -> dict[str, object]:
    family = {t.name: t.family for t in targets}
    findings = []
    for f in report.findings:
        e = f.expected
        label = family[e.switch].port_label
        findings.append({"switch": e.switch, "vlan": e.vlan, "host": e.host, "mac": e.mac,
                         "expected_port": label(e.port),
                         "found_port": None if f.found_port is None else label(f.found_port)})
    return {"checked": report.checked, "present": report.checked - len(report.findings),
            "findings": findings, "errors": dict(sorted(report.errors.items())),
            "no_mac": report.no_mac}


@click.command("audit")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@json_option
@quiet_option
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None, as_json: bool, quiet: bool) -> int:
    """Report every (VLAN, host MAC) the plan needs that a switch has not learned, or has
    learned on the wrong port. Exit code 1 if anything is missing or a switch is unreadable."""
    say = Say(as_json, quiet)
    doc = read_plan(outdir)
    selection = select_targets(outdir, doc, switches, action="audit",
                               target_map=target_map(targets_file))
    targets = selection.targets
    check_loopback(targets)
    for note in selection.notes:
        say.note(f"note: {note}")
    creds = load_credentials()
    err = Console(stderr=True)
    with CountsBar("audit", err, wanted(err, as_json, quiet)) as bar:
        for t in targets:
            bar.state(t.name, "waiting")
        report = run_audit(doc, targets, creds, host_key_policy(insecure, known_hosts), workers,
                           on_done=lambda name, ok: bar.state(name, "read" if ok else "not read", done=True))
    code = ExitCode.FAILED_CHECK if report.findings or report.errors else ExitCode.OK
    if as_json:
        emit("audit", {"outdir": str(outdir), "ok": code == ExitCode.OK, **audit_json(report, targets)})
        return code
    out = Console(quiet=quiet)
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
    if quiet and code != ExitCode.OK:
        click.echo(f"audit: {len(report.findings)} MAC entries missing or misplaced, "
                   f"{len(report.errors)} switch(es) not read", err=True)
    return code
