"""`vlanroute push OUTDIR`: apply the rendered configs over SSH (see vlanroute.device.push)."""

from __future__ import annotations

from pathlib import Path
import threading

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from vlanroute.device.credentials import load_credentials
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.bundle.reader import read_plan
from vlanroute.device.push import NEEDS_A_PERSON, SUCCESS, PushOptions, PushUI, Pusher, SwitchResult
from vlanroute.device.targets import check_loopback, select_targets
from vlanroute.commands.cabling import cabling_gate
from vlanroute.exitcodes import ExitCode


class RichUI(PushUI):
    """One progress bar per switch on stderr; diffs are printed above the bars."""

    def __init__(self, progress: Progress, out: Console, show_diff: bool) -> None:
        self._p, self._out, self._show_diff = progress, out, show_diff
        self._tasks: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def begin(self, switch: str) -> None:
        self._tasks[switch] = self._p.add_task(switch, total=None, status="waiting")

    def total(self, switch: str, commands: int) -> None:
        self._p.update(self._tasks[switch], total=commands, completed=0)

    def status(self, switch: str, text: str) -> None:
        self._p.update(self._tasks[switch], status=text)

    def advance(self, switch: str) -> None:
        self._p.advance(self._tasks[switch])

    def done(self, result: SwitchResult) -> None:
        task = self._tasks[result.switch]
        self._p.update(task, status=result.result, total=1 if self._p.tasks[task].total is None
                       else self._p.tasks[task].total)
        if self._show_diff:
            with self._lock:
                print_diff(self._out, result)


def print_diff(out: Console, result: SwitchResult) -> None:
    if not result.diff:
        return
    out.print(f"[bold]{result.switch}[/]: changes (backup {result.backup})", highlight=False)
    for line in result.diff:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(line, style=style, highlight=False, markup=False)


def results_table(results: list[SwitchResult]) -> Table:
    table = Table(title="push")
    for col in ("switch", "result", "commands sent", "time", "backup", "message"):
        table.add_column(col, overflow="fold")
    for r in results:
        style = "green" if r.result in SUCCESS else "bold red"
        table.add_row(r.switch, f"[{style}]{r.result}[/]", str(r.commands_sent),
                      f"{r.seconds:.1f} s",
                      f"{r.backup.parent.name}/{r.backup.name}" if r.backup else "-", r.message)
    return table


def _run(pusher: Pusher, targets, expected, err: Console, out: Console,  # type: ignore[no-untyped-def]
         show_diff: bool) -> list[SwitchResult]:
    progress = Progress(TextColumn("{task.description:>12}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=err)
    pusher.ui = RichUI(progress, out, show_diff)
    with progress:
        return pusher.run(targets, expected)


@click.command("push")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@click.option("--dry-run", is_flag=True, help="Fetch, back up, run the read-only pre-flight and show the changes; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation before changing switches.")
@click.option("--keep-going", is_flag=True,
              help="Continue with the other switches after a switch failed.")
@click.option("--skip-cabling-check", "skip_cabling", is_flag=True,
              help="DANGEROUS: push without first checking the inter-switch cables against "
                   "cabling.csv over LLDP (`vlanroute cabling check`).")
@click.option("--strict", is_flag=True,
              help="Refuse a switch whose running config has any line vlanroute does not know "
                   "(default: keep such lines, refuse only those touching what the plan manages).")
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None, dry_run: bool, yes: bool, keep_going: bool,
            skip_cabling: bool, strict: bool) -> int:
    """Push OUTDIR/switches/*.cfg to the switches in OUTDIR/plan.json over SSH.

    Credentials: VLANROUTE_SSH_USER, VLANROUTE_SSH_PASSWORD or VLANROUTE_SSH_KEY, else asked.
    Every switch is backed up to OUTDIR/backups/ first; a failed switch is rolled back.
    """
    doc = read_plan(outdir)                     # validated: no name in it becomes a path unchecked
    selection = select_targets(outdir, doc, switches, action="push", dry_run=dry_run,
                               target_map=target_map(targets_file))   # refuses non-push families
    targets = selection.targets
    check_loopback(targets)                     # before credentials, before any connection
    for note in selection.notes:
        click.echo(f"note: {note}", err=True)
    creds = load_credentials()
    policy = host_key_policy(insecure, known_hosts)
    out, err = Console(), Console(stderr=True)
    if not cabling_gate(outdir, doc, switches, targets_file, creds, policy, workers,
                        skip=skip_cabling, dry_run=dry_run):
        return ExitCode.FAILED_CHECK
    options = PushOptions(dry_run=dry_run or not yes, workers=workers, keep_going=keep_going,
                          host_keys=policy, strict=strict)
    pusher = Pusher(outdir, creds, options, PushUI())
    results = _run(pusher, targets, None, err, out, show_diff=True)
    if not dry_run and not yes:
        # First pass was a preview: confirm, then push what changes, if nothing moved since.
        failed = [r for r in results if r.result not in SUCCESS]
        changing = [r for r in results if r.result in SUCCESS and r.diff]
        if failed and not keep_going:
            out.print(results_table(results))
            return 1
        if not changing:
            out.print(results_table(results))
            out.print("nothing to change")
            return 1 if failed else 0
        names = ", ".join(r.switch for r in changing)
        if not click.confirm(f"Change {len(changing)} switch(es): {names}?", err=True):
            return 1
        expected = {r.switch: r.running_canonical for r in changing}
        pusher = Pusher(outdir, creds, PushOptions(workers=workers, keep_going=keep_going,
                                                   host_keys=policy, strict=strict), PushUI())
        chosen = [t for t in targets if t.name in expected]
        results = _run(pusher, chosen, expected, err, out, show_diff=False)
    out.print(results_table(results))
    if any(r.result in NEEDS_A_PERSON for r in results):
        return 4
    return 0 if all(r.result in SUCCESS for r in results) else 1
