"""`vlanroute audit OUTDIR`: compare the switches' learned-MAC tables with the plan."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from vlanroute import api
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.commands.progress import CountsBar, wanted
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.device.audit import findings_by_switch, require_something_to_check
from vlanroute.device.credentials import load_credentials
from vlanroute.exitcodes import ExitCode
from vlanroute.natural import natsorted_items


@click.command("audit")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@json_option
@quiet_option
@click.option("-v", "--verbose", is_flag=True,
              help="List every missing or misplaced MAC entry (default: a summary per switch).")
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None, as_json: bool, quiet: bool, verbose: bool) -> int:
    """Report every (VLAN, host MAC) the plan needs that a switch has not learned, or has
    learned on the wrong port. Exit code 1 if anything is missing or a switch is unreadable;
    2 (before connecting) if there is nothing to check: no host of the selected switches has
    a MAC in the inventory."""
    say = Say(as_json, quiet)
    selected = api.select(outdir, "audit", switches=switches, targets=target_map(targets_file, quiet))
    targets = selected.targets
    require_something_to_check(selected.doc, targets, outdir)
    for note in selected.notes:
        say.note(f"note: {note}")
    creds = load_credentials()
    policy = host_key_policy(insecure, known_hosts)     # says loudly when host keys are not checked
    err = Console(stderr=True)
    with CountsBar("audit", err, wanted(err, as_json, quiet)) as bar:
        for t in targets:
            bar.state(t.name, "waiting")
        report = api.audit(outdir, creds, known_hosts=known_hosts, insecure_no_host_key_check=insecure,
                           ssh_config=policy.ssh_config_file, ssh_agent=policy.allow_agent,
                           workers=workers, selected=selected,
                           on_done=lambda name, ok: bar.state(name, "read" if ok else "not read", done=True))
    code = ExitCode.OK if report.ok else ExitCode.FAILED_CHECK
    if as_json:
        from vlanroute.schemas.outputs import AuditDocument
        emit_document(AuditDocument.model_validate({"outdir": str(outdir), **report.to_json()}))
        return code
    out = Console(quiet=quiet)
    if report.findings and not verbose:
        # A summary: on a large fabric the rows run to tens of thousands (-v or --json lists them).
        for switch, (missing, wrong) in findings_by_switch(report.findings).items():
            out.print(f"{switch}: {missing} MAC entries missing, {wrong} on the wrong port", highlight=False)
        out.print("(every entry: audit -v, or --json)", highlight=False)
    if report.findings and verbose:
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
    for switch, why in natsorted_items(report.errors):
        out.print(f"{switch}: not read: {why}", style="red", highlight=False, markup=False)
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
