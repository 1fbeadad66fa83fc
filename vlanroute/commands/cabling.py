"""`vlanroute cabling check OUTDIR`: are the cables where cabling.csv says? (docs/cabling.md)"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vlanroute.bundle.cables import HOST, INTER_SWITCH
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.reader import read_plan
from vlanroute.device.credentials import Credentials
from vlanroute.device.session import HostKeyPolicy
from vlanroute.device.targets import read_target_map
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.device.cablecheck import readable, run_check
from vlanroute.device.cabling import FAILED, OK, CablingReport, CableStatus
from vlanroute.device.credentials import load_credentials
from vlanroute.exitcodes import ExitCode
from vlanroute.natural import natsorted_items

if TYPE_CHECKING:
    from vlanroute.schemas.outputs import CablingCheckDocument


@click.group("cabling")
def command() -> None:
    """Check the physical cabling against OUTDIR/cabling.csv (LLDP)."""


@command.command("check")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@click.option("--all", "show_all", is_flag=True, help="List every cable, not only those that disagree.")
@json_option(doc="docs/cabling.md")
@quiet_option
def check(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
          workers: int, targets_file: Path | None, show_all: bool, as_json: bool, quiet: bool) -> int:
    """Read every switch's LLDP neighbour table and report each cable of OUTDIR/cabling.csv
    as ok, missing, swapped or unexpected, with the fix for the technician. Exit code 1 if
    any cable disagrees or a switch could not be read. Read-only: nothing is changed."""
    doc = read_plan(outdir)
    targets, skipped = readable(outdir, doc, switches, target_map(targets_file, quiet=quiet))
    creds = load_credentials()
    report = run_check(outdir, doc, targets, skipped, creds, host_key_policy(insecure, known_hosts), workers)
    if as_json:
        emit_document(report_json(report))
    elif not quiet:
        print_report(Console(), report, show_all)
    elif not report.ok:         # quiet: the failure is still an error, in one line (as audit's)
        wrong = sum(1 for c in report.cables if c.status in FAILED)
        click.echo(f"cabling: FAILED: {wrong} cable(s) disagree with cabling.csv, "
                   f"{len(report.unexpected)} unexpected, {len(report.errors)} switch(es) not read "
                   "(without --quiet: which, and the fixes)", err=True)
    return ExitCode.OK if report.ok else ExitCode.FAILED_CHECK


def report_json(report: CablingReport) -> CablingCheckDocument:
    from vlanroute.schemas.outputs import CablingCheckDocument

    return CablingCheckDocument.model_validate({
        "ok": report.ok,
        "cables": [{"cable": c.label, "kind": c.kind, "a": c.a, "a_port": c.a_port, "b": c.b,
                    "b_port": c.b_port, "status": c.status, "seen_a": c.seen_a,
                    **({"seen_b": c.seen_b} if c.kind == INTER_SWITCH else {}), "fixes": c.fixes}
                   for c in report.cables],
        "unexpected": [{"ends": list(u.ends), "fix": u.fix, "returned": u.returned} for u in report.unexpected],
        "fixes": report.fixes + [u.fix for u in report.unexpected],
        "not_read": report.errors,
    })


def print_report(out: Console, report: CablingReport, show_all: bool) -> None:
    rows = [c for c in report.cables if show_all or c.status not in (OK, "no-lldp")]
    if rows:
        table = Table(title="cables" if show_all else "cables that disagree with cabling.csv")
        for col in ("cable", "kind", "a end", "b end", "status", "a sees", "b sees"):
            table.add_column(col, overflow="fold")
        for c in rows:
            style = "green" if c.status == OK else "dim" if c.status == "no-lldp" else "bold red"
            table.add_row(c.label or "-", c.kind, f"{c.a} {c.a_port}", f"{c.b} {c.b_port}",
                          f"[{style}]{c.status}[/]", c.seen_a or "nothing",
                          (c.seen_b or "nothing") if c.kind == INTER_SWITCH else "")
        out.print(table)
    for u in report.unexpected:
        if u.returned:           # a cable of the published plan, back after a repair
            out.print(f"[bold yellow]returned[/] cable {escape(u.ends[0])} - {escape(u.ends[1])} "
                      "(of the published plan; the repair took it out)", highlight=False)
        else:
            out.print(f"[bold red]unexpected[/] cable {escape(u.ends[0])} - {escape(u.ends[1])}", highlight=False)
    fixes = report.fixes + [u.fix for u in report.unexpected]
    if fixes:
        out.print("[bold]fix:[/]")
        for i, fix in enumerate(fixes, start=1):
            out.print(f"  {i}. {fix}", highlight=False, markup=False)
    for switch, why in natsorted_items(report.errors):
        out.print(f"[red]{switch}: LLDP table not read: {why}[/]", highlight=False)
    by_kind = {kind: Counter(c.status for c in report.cables if c.kind == kind) for kind in (INTER_SWITCH, HOST)}
    isl = by_kind[INTER_SWITCH]
    out.print(f"{isl[OK]} of {sum(isl.values())} inter-switch cables ok", highlight=False)
    host = by_kind[HOST]
    if host:
        out.print(f"host cables: {host[OK]} ok, {host['no-lldp']} without LLDP (not checked), "
                  f"{sum(host.values()) - host[OK] - host['no-lldp']} wrong or unknown", highlight=False)
    out.print("cabling: OK" if report.ok else "cabling: FAILED", highlight=False)


def cabling_gate(outdir: Path, doc: PlanDocument, switches: tuple[str, ...], targets_file: Path | None,
                 creds: Credentials, policy: HostKeyPolicy, workers: int, *, skip: bool,
                 dry_run: bool, pushed: Collection[str], quiet: bool = False) -> tuple[bool, list[CableStatus]]:
    """Push's first step. Returns (go on, the unchecked cables): go on is False (push refuses,
    nothing changed) if an inter-switch cable disagrees with cabling.csv; with --dry-run the
    problems are only shown. The unchecked cables are the inter-switch cables of the `pushed`
    switches that neither end's LLDP table showed: push's pre-flight names a switch it cannot
    log in to, and refuses (device.cabling.unchecked_refusal) if it could log in to all of them, since then
    those cables would go without any check. `skip`: say loudly that nothing was checked.
    `quiet` (push -q): the all-good line is left out; warnings and problems stay."""
    err = Console(stderr=True)
    if skip:
        err.print("WARNING: --skip-cabling-check: the inter-switch cables were NOT checked against "
                  "cabling.csv. Spanning tree goes off on them: a swapped cable can make a loop "
                  "that nothing blocks.", style="bold red", highlight=False)
        return True, []
    tm = read_target_map(targets_file) if targets_file is not None else None
    targets, skipped = readable(outdir, doc, switches, tm)
    report = run_check(outdir, doc, targets, skipped, creds, policy, workers)
    bad = report.inter_switch_problems()
    extra = report.unexpected_inter_switch()
    unchecked = report.unchecked_inter_switch(pushed)
    if not bad and not extra:
        isl = sum(1 for c in report.cables if c.kind == INTER_SWITCH and c.status == OK)
        if not quiet or unchecked:
            err.print(f"cabling: {isl} inter-switch cables checked over LLDP: as in cabling.csv"
                      + (f"; {len(unchecked)} NOT checked (neither end's LLDP table was read)" if unchecked else ""),
                      highlight=False)
        for switch, why in natsorted_items(report.errors):
            # Push itself reports a switch it cannot reach; its cables were judged from the far end.
            err.print(f"cabling: {switch}: LLDP table not read: {why}", highlight=False)
        return True, unchecked
    print_report(err, report, show_all=False)
    if dry_run:
        err.print("cabling: the inter-switch cables disagree with cabling.csv; a push would be "
                  "refused", style="bold red", highlight=False)
        return True, unchecked
    err.print("push refused before any change: fix the cabling (see above, or run `vlanroute "
              "cabling check`), or override with --skip-cabling-check", style="bold red", highlight=False)
    return False, unchecked

