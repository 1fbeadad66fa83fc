"""`vlanroute push OUTDIR`: apply the rendered configs over SSH (see vlanroute.device.push)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
import signal
import threading

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from vlanroute.device.credentials import load_credentials
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.bundle.reader import read_plan
from vlanroute.bundle.manifest import require_intact
from vlanroute.bundle.reader import PLAN_FILE
from vlanroute.commands.stateopts import state_dir_option
from vlanroute.device.journal import Journal, require_last_journal, sha256_text
from vlanroute.device import journal as J
from vlanroute.device.push import (APPLIED, APPLIED_UNSAVED, CHANGED, NEEDS_A_PERSON, ROLLED_BACK, SUCCESS, UNCHANGED, PushOptions,
                                   PushUI, Pusher, SwitchResult)
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import Target, check_loopback, select_targets
from vlanroute.errors import UserError
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
    out.print(f"[bold]{result.switch}[/]: changes (backup {result.backup})", highlight=False,
              soft_wrap=True)
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


def fabric_summary(results: list[SwitchResult]) -> list[str]:
    """Which switches run the new config, which the old one, which were rolled back, and
    which need a person: the state the fabric is left in."""
    groups = [
        ("new config, saved", [r for r in results if r.result == APPLIED]),
        ("new config, NOT saved (`vlanroute save OUTDIR` commits, `vlanroute rollback OUTDIR` "
         "undoes)", [r for r in results if r.result == APPLIED_UNSAVED]),
        ("already as rendered", [r for r in results if r.result == UNCHANGED]),
        ("old config, rolled back to the backup", [r for r in results if r.result == ROLLED_BACK]),
        ("old config, untouched", [r for r in results if r.result not in SUCCESS
                                   and r.result not in (ROLLED_BACK, *NEEDS_A_PERSON)]),
        ("NEEDS A PERSON", [r for r in results if r.result in NEEDS_A_PERSON]),
    ]
    return [f"fabric: {what}: {', '.join(r.switch for r in rs)}" for what, rs in groups if rs]


def exit_code(results: list[SwitchResult], interrupted: bool) -> ExitCode:
    if any(r.result in NEEDS_A_PERSON for r in results):
        return ExitCode.ROLLBACK_FAILED
    if interrupted:
        return ExitCode.INTERRUPTED
    failed = any(r.result not in SUCCESS for r in results)
    if failed and any(r.result in CHANGED for r in results):
        return ExitCode.PARTIAL
    return ExitCode.FAILED_CHECK if failed else ExitCode.OK


@contextmanager
def first_interrupt_stops(pusher: Pusher, err: Console) -> Iterator[None]:
    """The first Ctrl-C (SIGINT) stops new switches from starting and lets those in progress
    finish or roll back; a second one raises KeyboardInterrupt as usual. Signal handlers
    can only be set in the main thread; elsewhere (an API caller's thread) Ctrl-C keeps its
    default behaviour."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        pusher.stop(interrupted=True)
        err.print("[bold red]interrupted[/]: no further switch will start; switches in progress "
                  "finish or roll back (Ctrl-C again to abort at once)")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(pusher: Pusher, targets: list[Target], previous: dict[str, SwitchResult] | None,
         err: Console, out: Console, show_diff: bool) -> list[SwitchResult]:
    progress = Progress(TextColumn("{task.description:>12}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=err)
    pusher.ui = RichUI(progress, out, show_diff)
    with first_interrupt_stops(pusher, err), progress:
        return pusher.run(targets, previous)


def _resume_selection(state: FabricState, outdir: Path, plan_name: str | None,
                      targets: list[Target], plan_sha: str) -> tuple[Journal, list[Target]]:
    """The switches the last push did not finish: not applied (saved or, with --no-save,
    left unsaved) and not unchanged. Refused when plan.json changed since that push."""
    journal, view = require_last_journal(state, outdir, plan_name, "push --resume")
    if view.header.get("plan_sha256") != plan_sha:
        raise UserError("plan.json changed since the push being resumed", file=str(outdir / PLAN_FILE),
                        fix="push the new plan with a plain `vlanroute push` (or roll back first)")
    done = {J.SAVED, J.UNCHANGED} | ({J.APPLIED} if not view.header.get("save", True) else set())
    finished = {name for name, h in view.switches.items() if h.state in done}
    in_journal = set(view.switches)
    return journal, [t for t in targets if t.name in in_journal and t.name not in finished]


@click.command("push")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@state_dir_option
@click.option("--dry-run", is_flag=True, help="Fetch, back up, run the read-only pre-flight and show the changes; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation before changing switches.")
@click.option("--keep-going", is_flag=True,
              help="Continue with the other switches after a switch failed during the push "
                   "(the pre-flight of every switch must still pass first).")
@click.option("--skip-cabling-check", "skip_cabling", is_flag=True,
              help="DANGEROUS: push without first checking the inter-switch cables against "
                   "cabling.csv over LLDP (`vlanroute cabling check`).")
@click.option("--strict", is_flag=True,
              help="Refuse a switch whose running config has any line vlanroute does not know "
                   "(default: keep such lines, refuse only those touching what the plan manages).")
@click.option("--no-save", is_flag=True,
              help="Apply and verify, but do not save: test the fabric, then `vlanroute save "
                   "OUTDIR` or `vlanroute rollback OUTDIR`.")
@click.option("--resume", is_flag=True,
              help="Continue the last push (from its journal) with the switches it did not finish.")
@click.option("--skip-manifest-check", is_flag=True,
              help="Push a bundle that differs from what render wrote (manifest.json).")
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None, state_dir: Path | None, dry_run: bool,
            yes: bool, keep_going: bool, skip_cabling: bool, strict: bool, no_save: bool, resume: bool,
            skip_manifest_check: bool) -> int:
    """Push OUTDIR/switches/*.cfg to the switches in OUTDIR/plan.json over SSH.

    Credentials: VLANROUTE_SSH_USER, VLANROUTE_SSH_PASSWORD or VLANROUTE_SSH_KEY, else asked.
    First every switch is logged in to, backed up (in the state directory) and checked; if
    any fails, nothing is changed anywhere. Then the switches are changed; the first failure
    stops new ones from starting (unless --keep-going) and a failed switch is rolled back.
    Ctrl-C stops new switches from starting, lets the others finish and prints the table.
    """
    doc = read_plan(outdir)                     # validated: no name in it becomes a path unchecked
    selection = select_targets(outdir, doc, switches, action="push", dry_run=dry_run,
                               target_map=target_map(targets_file))   # refuses non-push families
    targets = selection.targets
    check_loopback(targets)                     # before credentials, before any connection
    if skip_manifest_check:
        click.secho("WARNING: --skip-manifest-check: OUTDIR's files are NOT checked against its "
                    "manifest", fg="red", bold=True, err=True)
    else:
        require_intact(outdir, "push", "--skip-manifest-check")
    for note in selection.notes:
        click.echo(f"note: {note}", err=True)
    state = FabricState.choose(state_dir, doc.name, outdir)
    state.ensure()
    plan_sha = sha256_text((outdir / PLAN_FILE).read_text())
    journal: Journal | None = None
    if resume:
        journal, targets = _resume_selection(state, outdir, doc.name, targets, plan_sha)
        if not targets:
            click.echo("push --resume: the last push finished every switch; nothing to do", err=True)
            return ExitCode.OK
        click.echo(f"push --resume: {len(targets)} switch(es) left: "
                   + ", ".join(t.name for t in targets), err=True)
    creds = load_credentials()
    policy = host_key_policy(insecure, known_hosts)
    out, err = Console(), Console(stderr=True)
    if not cabling_gate(outdir, doc, switches, targets_file, creds, policy, workers,
                        skip=skip_cabling, dry_run=dry_run):
        return ExitCode.FAILED_CHECK
    # Pass 1, for every target and also under --yes: log in, check the host key, back up,
    # pre-flight, compute and show the changes. Nothing is changed unless all of them pass.
    preview = PushOptions(dry_run=True, workers=workers, keep_going=True, host_keys=policy,
                          strict=strict)
    pusher = Pusher(outdir, state, creds, preview, PushUI())
    results = _run(pusher, targets, None, err, out, show_diff=True)
    failed = [r for r in results if r.result not in SUCCESS]
    if pusher.interrupted or dry_run or failed:
        out.print(results_table(results))
        if pusher.interrupted:
            out.print("interrupted during the pre-flight: nothing was changed")
            return ExitCode.INTERRUPTED
        if failed and not dry_run:
            out.print(f"nothing was changed: {len(failed)} switch(es) failed the pre-flight "
                      f"({', '.join(r.switch for r in failed)}); every switch must pass it before "
                      "any switch is changed. Fix them, or leave them out with --switch.")
        return ExitCode.FAILED_CHECK if failed else ExitCode.OK
    changing = [r for r in results if r.diff]
    if not changing:
        out.print(results_table(results))
        out.print("nothing to change")
        return ExitCode.OK
    if not yes:
        names = ", ".join(r.switch for r in changing)
        if not click.confirm(f"Change {len(changing)} switch(es): {names}?", err=True):
            return ExitCode.FAILED_CHECK
    previous = {r.switch: r for r in changing}
    chosen = [t for t in targets if t.name in previous]
    if journal is None:
        journal = Journal.create(state, outdir=str(outdir.resolve()), plan=doc.name,
                                 plan_sha256=plan_sha, save=not no_save,
                                 switches=[t.name for t in chosen])
    else:
        journal.append("resume", switches=[t.name for t in chosen], save=not no_save)
    options = PushOptions(workers=workers, keep_going=keep_going, host_keys=policy,
                          strict=strict, save=not no_save)
    pusher = Pusher(outdir, state, creds, options, PushUI(), journal=journal)
    applied = {r.switch: r for r in _run(pusher, chosen, previous, err, out, show_diff=False)}
    journal.append("end", interrupted=pusher.interrupted)
    final = [applied.get(r.switch, r) for r in results]
    out.print(results_table(final))
    for line in fabric_summary(final):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(f"journal: {journal.path}", highlight=False, soft_wrap=True)
    if pusher.interrupted:
        out.print("interrupted: the switches above marked skipped were not started")
    return exit_code(final, pusher.interrupted)
