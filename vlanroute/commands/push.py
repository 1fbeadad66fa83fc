"""`vlanroute push OUTDIR`: apply the rendered configs over SSH (see vlanroute.device.push)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
import sys
import threading

import click
from rich.console import Console
from rich.table import Table

from vlanroute.commands.output import Say, emit, json_option, quiet_option
from vlanroute.commands.progress import CountsBar, wanted
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute import api
from vlanroute.api import PushRun, push_exit_code
from vlanroute.device.credentials import load_credentials
from vlanroute.device.push import NEEDS_A_PERSON, SUCCESS, PushUI, SwitchResult
from vlanroute.errors import UserError
from vlanroute.commands.cabling import cabling_gate
from vlanroute.exitcodes import ExitCode


class AggregateUI(PushUI):
    """Push progress on one bar for the whole run (vlanroute.commands.progress.CountsBar);
    diffs and command lists are printed above it as each switch finishes."""

    def __init__(self, bar: CountsBar, out: Console, show_diff: bool, show_commands: bool) -> None:
        self._bar, self._out = bar, out
        self._show_diff, self._show_commands = show_diff, show_commands
        self._lock = threading.Lock()

    def begin(self, switch: str) -> None:
        self._bar.state(switch, "waiting")

    def status(self, switch: str, text: str) -> None:
        self._bar.state(switch, text)

    def done(self, result: SwitchResult) -> None:
        self._bar.state(result.switch, result.result, done=True)
        with self._lock:
            if self._show_diff:
                print_diff(self._out, result)
            if self._show_commands:
                print_commands(self._out, result)


def print_diff(out: Console, result: SwitchResult) -> None:
    if not result.diff:
        return
    out.print(f"[bold]{result.switch}[/]: changes (backup {result.backup})", highlight=False)
    for line in result.diff:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(line, style=style, highlight=False, markup=False)


def print_commands(out: Console, result: SwitchResult) -> None:
    """The exact lines sent (or that would be sent) to the switch, in send order."""
    if not result.commands:
        return
    out.print(f"[bold]{result.switch}[/]: {len(result.commands)} commands in send order", highlight=False)
    for line in result.commands:
        out.print(line, highlight=False, markup=False, soft_wrap=True)


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


exit_code = push_exit_code          # the documented mapping lives in vlanroute.api


def _interactive() -> bool:
    """Can the push ask for confirmation? Only with a person at a terminal."""
    return sys.stdin.isatty()


def _run(run_push: Callable[[PushUI], PushRun], err: Console, out: Console, show_diff: bool,
         show_commands: bool, bar: bool) -> PushRun:
    with CountsBar("push", err, bar) as counts:
        return run_push(AggregateUI(counts, out, show_diff, show_commands))


@click.command("push")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@click.option("--dry-run", is_flag=True, help="Fetch, back up, run the read-only pre-flight and show the changes; change nothing.")
@click.option("--show-commands", is_flag=True,
              help="Also list, per switch, the exact command lines push sends (or would send) in send order.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation before changing switches "
                                          "(needed when not at a terminal).")
@click.option("--keep-going", is_flag=True,
              help="Continue with the other switches after a switch failed.")
@click.option("--skip-cabling-check", "skip_cabling", is_flag=True,
              help="DANGEROUS: push without first checking the inter-switch cables against "
                   "cabling.csv over LLDP (`vlanroute cabling check`).")
@click.option("--strict", is_flag=True,
              help="Refuse a switch whose running config has any line vlanroute does not know "
                   "(default: keep such lines, refuse only those touching what the plan manages).")
@json_option
@quiet_option
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None, dry_run: bool, show_commands: bool, yes: bool,
            keep_going: bool, skip_cabling: bool, strict: bool, as_json: bool, quiet: bool) -> int:
    """Push OUTDIR/switches/*.cfg to the switches in OUTDIR/plan.json over SSH.

    Credentials: VLANROUTE_SSH_USER, VLANROUTE_SSH_PASSWORD or VLANROUTE_SSH_KEY, else asked.
    Every switch is backed up to OUTDIR/backups/ first; a failed switch is rolled back.
    Exit codes: docs/exit-codes.md (0 ok, 1 nothing changed and a switch failed, 2 usage,
    3 partial, 4 rollback failed).
    """
    say = Say(as_json, quiet)
    if not dry_run and not yes and (as_json or not _interactive()):
        why = "--json" if as_json else "not at a terminal (stdin is not a TTY)"
        raise UserError(f"push would ask for confirmation, but it runs {why}",
                        field="--yes", fix="add --yes to push without asking, or --dry-run to only show the changes")
    selected = api.select(outdir, "push", switches=switches, dry_run=dry_run,
                          targets=target_map(targets_file))   # refusals before credentials
    for note in selected.notes:
        say.note(f"note: {note}")
    creds = load_credentials()
    policy = host_key_policy(insecure, known_hosts)   # says loudly when host keys are not checked
    out = Console(quiet=not say.human)
    err = Console(stderr=True)
    if not cabling_gate(outdir, selected.doc, switches, targets_file, creds, policy, workers,
                        skip=skip_cabling, dry_run=dry_run):
        if as_json:
            emit("push", {"outdir": str(outdir), "dry_run": dry_run, "exit_code": int(ExitCode.FAILED_CHECK),
                          "counts": {}, "switches": [], "not_pushed": [],
                          "refused": "the inter-switch cables disagree with cabling.csv (vlanroute cabling check)"})
        return ExitCode.FAILED_CHECK
    bar = wanted(err, as_json, quiet)
    common = dict(known_hosts=known_hosts, insecure_no_host_key_check=insecure, selected=selected,
                  workers=workers, keep_going=keep_going, strict=strict)
    # Without --yes the first pass is a preview (a dry run); the push follows confirmation.
    run = _run(lambda ui: api.push(outdir, creds, dry_run=dry_run or not yes, ui=ui, **common),  # type: ignore[arg-type]
               err, out, True, show_commands, bar)
    results = run.results
    preview: list[SwitchResult] = []
    if not dry_run and not yes:
        failed = [r for r in results if r.result not in SUCCESS]
        changing = [r for r in results if r.result in SUCCESS and r.diff]
        if failed and not keep_going:
            out.print(results_table(results))
            return ExitCode.FAILED_CHECK
        if not changing:
            out.print(results_table(results))
            out.print("nothing to change")
            return ExitCode.FAILED_CHECK if failed else ExitCode.OK
        names = ", ".join(r.switch for r in changing)
        if not click.confirm(f"Change {len(changing)} switch(es): {names}?", err=True):
            click.echo("not confirmed: nothing changed", err=True)
            return ExitCode.FAILED_CHECK
        expected = {r.switch: r.running_canonical for r in changing}
        preview = results
        run = _run(lambda ui: api.push(outdir, creds, dry_run=False, expected=expected, ui=ui, **common),  # type: ignore[arg-type]
                   err, out, False, False, bar)
        results = run.results
    out.print(results_table(results))
    code = run.exit_code
    if as_json:
        pushed = {r.switch for r in results}
        emit("push", {**run.to_json(), "dry_run": dry_run,
                      "not_pushed": [r.to_json() for r in preview if r.switch not in pushed]})
    for r in results:
        if r.result in NEEDS_A_PERSON or (r.result not in SUCCESS and not say.human):
            click.echo(f"{r.switch}: {r.result}: {r.message}", err=True)
    return code
