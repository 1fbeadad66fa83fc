"""`vlanroute push OUTDIR`: apply the rendered configs over SSH (see vlanroute.device.push)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
import os
from pathlib import Path
import signal
import sys
import threading

import click
from rich.console import Console
from rich.table import Table

from vlanroute.api import PushRun, push_exit_code
from vlanroute.commands import output
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option, report_failures
from vlanroute.commands.progress import CountsBar, wanted
from vlanroute.device.credentials import load_credentials
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.bundle.manifest import require_intact
from vlanroute.bundle.reader import PLAN_FILE
from vlanroute.commands.stateopts import state_dir_option
from vlanroute.device.bundlegate import check_bundle, read_bundle
from vlanroute.device.journal import Journal, sha256_text
from vlanroute.device.resume import resume_selection
from vlanroute.device import pushflow
from vlanroute.device.change import observers
from vlanroute.device.push import (APPLIED, APPLIED_UNSAVED, NEEDS_A_PERSON, PARTLY_APPLIED, ROLLED_BACK, SUCCESS,
                                   UNCHANGED, PushOptions, PushUI, Pusher, SwitchResult)
from vlanroute.device.statedir import FabricState, lock_fabric
from vlanroute.device.repairpush import down_cables, relearn_note
from vlanroute.device.targets import check_loopback, select_targets
from vlanroute.natural import natural_key
from vlanroute.transition.report import lines as transition_lines, to_json as transition_to_json
from vlanroute.errors import UserError
from vlanroute.commands.cabling import cabling_gate
from vlanroute.device.cabling import unchecked_refusal
from vlanroute.exitcodes import ExitCode


class AggregateUI(PushUI):
    """Push progress on one bar for the whole run (vlanroute.commands.progress.CountsBar).
    Diffs and command lists are printed once the pass is over, in the switches' natural
    order: printed as each switch finished, their order changed from run to run."""

    def __init__(self, bar: CountsBar) -> None:
        self._bar = bar

    def begin(self, switch: str) -> None:
        self._bar.state(switch, "waiting")

    def status(self, switch: str, text: str) -> None:
        self._bar.state(switch, text)

    def done(self, result: SwitchResult) -> None:
        self._bar.state(result.switch, result.result, done=True)


def print_diff(out: Console, result: SwitchResult) -> None:
    """The change on the parsed model, then every command line that will be sent: the model
    diff alone hides lines it does not model (a `username` line, say), so nothing that
    reaches the switch is left out of what the person confirms."""
    if not result.diff:
        return
    out.print(f"[bold]{result.switch}[/]: changes (backup {result.backup})", highlight=False,
              soft_wrap=True)
    for line in result.diff:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(line, style=style, highlight=False, markup=False)
    print_commands(out, result)


def print_commands(out: Console, result: SwitchResult) -> None:
    """The exact lines sent (or that would be sent) to the switch, in send order."""
    if not result.commands:
        return
    out.print(f"[bold]{result.switch}[/]: {len(result.commands)} commands in send order, "
              "every one that is sent", highlight=False)
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


def fabric_summary(results: list[SwitchResult]) -> list[str]:
    """Which switches run the new config, which the old one, which were rolled back, and
    which need a person: the state the fabric is left in."""
    groups = [
        ("new config, saved", [r for r in results if r.result == APPLIED]),
        ("new config, NOT saved (`vlanroute save OUTDIR` commits, `vlanroute rollback OUTDIR` "
         "undoes)", [r for r in results if r.result == APPLIED_UNSAVED]),
        ("already as rendered", [r for r in results if r.result == UNCHANGED]),
        ("removals applied, the rest not (loop-free as it stands; `vlanroute push OUTDIR --resume` finishes, "
         "`vlanroute rollback OUTDIR` undoes)", [r for r in results if r.result == PARTLY_APPLIED]),
        ("old config, rolled back to the backup", [r for r in results if r.result == ROLLED_BACK]),
        ("old config, untouched", [r for r in results if r.result not in SUCCESS
                                   and r.result not in (ROLLED_BACK, PARTLY_APPLIED, *NEEDS_A_PERSON)]),
        ("NEEDS A PERSON", [r for r in results if r.result in NEEDS_A_PERSON]),
    ]
    return [f"fabric: {what}: {', '.join(r.switch for r in rs)}" for what, rs in groups if rs]


exit_code = push_exit_code          # the documented mapping lives in vlanroute.api


def _interactive() -> bool:
    """Can the push ask for confirmation? Only with a person at a terminal."""
    return sys.stdin.isatty()


def confirm(question: str) -> bool:
    """Ask on the terminal; Ctrl-C there ends the command (exit 130), whatever SIGINT handler
    the process inherited or a library left installed: the default handler is put back for
    the question (the race of issue 24: a Ctrl-C typed the instant the question appeared
    could reach a handler that only asked the preview pass to stop)."""
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if previous is not None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return click.confirm(question, err=True)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _abort_at_once(pusher: Pusher, err: Console) -> None:
    """The second Ctrl-C: end the process now, as a crash would. A KeyboardInterrupt would
    only reach the main thread: the worker threads would go on changing their switches (and
    save them) while the process waits for them at exit. Every step is in the journal before
    it is taken, so `rollback` and `push --resume` know where each switch was left."""
    if pusher.options.dry_run or pusher.journal is None:
        what = "nothing was changed"
    else:
        what = (f"switches in progress were stopped where they were and may be half-applied; the "
                f"journal {pusher.journal.path} names them: `vlanroute rollback OUTDIR` restores "
                "them, `vlanroute push OUTDIR --resume` continues")
    err.show_cursor(True)       # a progress bar may have hidden it
    err.print(f"[bold red]aborted[/]: {what}", highlight=False)
    if output.json_mode():      # as any other error under --json: one object on stdout
        output.emit_error(f"aborted: {what}", int(ExitCode.INTERRUPTED))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(ExitCode.INTERRUPTED)


@contextmanager
def first_interrupt_stops(pusher: Pusher, err: Console) -> Iterator[None]:
    """The first Ctrl-C (SIGINT) stops new switches from starting and lets those in progress
    finish or roll back; a second one ends the process at once (_abort_at_once). Signal
    handlers can only be set in the main thread; elsewhere (an API caller's thread) Ctrl-C
    keeps its default behaviour."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, lambda *_: _abort_at_once(pusher, err))
        pusher.stop(interrupted=True)
        err.print("[bold red]interrupted[/]: no further switch will start; switches in progress "
                  "finish or roll back (Ctrl-C again to abort at once)")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@click.command("push")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@ssh_options
@state_dir_option
@click.option("--dry-run", is_flag=True, help="Fetch, back up, run the read-only pre-flight, plan the loop-free "
                                              "transition and show it; change nothing.")
@click.option("--show-commands", is_flag=True,
              help="Also show, per switch, the change on the parsed config and every command line push "
                   "sends (or would send) in send order (by default: one summary line per switch).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation before changing switches "
                                          "(needed when not at a terminal).")
@click.option("--keep-going", is_flag=True,
              help="After a switch failed, plan the steps left again around it and run them if they are "
                   "loop-free too (the pre-flight of every switch must still pass first).")
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
@json_option
@quiet_option
def command(outdir: Path, switches: tuple[str, ...], known_hosts: Path | None, insecure: bool,
            workers: int, targets_file: Path | None, state_dir: Path | None, dry_run: bool,
            show_commands: bool, yes: bool, keep_going: bool, skip_cabling: bool, strict: bool,
            no_save: bool, resume: bool, skip_manifest_check: bool, as_json: bool, quiet: bool) -> int:
    """Push OUTDIR/switches/*.cfg to the switches in OUTDIR/plan.json over SSH.

    Credentials: VLANROUTE_SSH_USER, VLANROUTE_SSH_PASSWORD or VLANROUTE_SSH_KEY, else asked.
    First every switch of the fabric is logged in to, backed up (in the state directory) and
    checked; if any switch to change fails, nothing is changed anywhere. From what the
    switches run now, push plans a transition whose every state (after every step, and after
    every line where a switch applies lines one by one) keeps every VLAN loop-free, shows it,
    and runs it step by step; the first failure stops every later step (unless --keep-going)
    and a failed step is rolled back. Ctrl-C stops new steps from starting.
    Exit codes: docs/exit-codes.md (0 ok, 1 nothing changed and a switch failed or no
    loop-free transition exists, 2 usage, 3 partial, 4 rollback failed, 130 interrupted).
    """
    say = Say(as_json, quiet)
    if not dry_run and not yes and (as_json or not _interactive()):
        why = "--json" if as_json else "not at a terminal (stdin is not a TTY)"
        raise UserError(f"push would ask for confirmation, but it runs {why}",
                        field="--yes", fix="add --yes to push without asking, or --dry-run to only show the changes")
    # Read once: everything below checks, shows and sends this snapshot (device.bundlegate).
    bundle = read_bundle(outdir)
    doc = bundle.doc                            # validated: no name in it becomes a path unchecked
    tmap = target_map(targets_file, quiet)
    selection = select_targets(outdir, doc, switches, action="push", dry_run=dry_run,
                               target_map=tmap)   # refuses non-push families
    targets = selection.targets
    down_cables(outdir)         # a repaired bundle's repair.json, checked before anything connects
    check_loopback(targets)                     # before credentials, before any connection
    if skip_manifest_check:
        click.secho("WARNING: --skip-manifest-check: OUTDIR's files are NOT checked against its "
                    "manifest, nor against a new render of plan.json, nor verified",
                    fg="red", bold=True, err=True)
    else:
        require_intact(outdir, "push", "--skip-manifest-check")
    check_bundle(bundle, "push", exact=not skip_manifest_check)
    configs = bundle.configs([t.name for t in targets])
    for note in selection.notes:
        say.note(f"note: {note}")
    state = FabricState.choose(state_dir, doc.name, outdir)
    state.ensure()
    if not dry_run:     # held until the command ends: one push, save or rollback per fabric
        click.get_current_context().call_on_close(lock_fabric(state, "push").release)
    plan_sha = sha256_text(bundle.snapshot.text(PLAN_FILE))
    journal: Journal | None = None
    resave: frozenset[str] = frozenset()
    if resume:
        journal, targets, resave = resume_selection(state, outdir, doc.name, targets, plan_sha)
        resave = resave if not no_save else frozenset()
        if not targets:
            click.echo("push --resume: the last push finished every switch; nothing to do", err=True)
            return ExitCode.OK
        click.echo(f"push --resume: {len(targets)} switch(es) left: "
                   + ", ".join(t.name for t in targets), err=True)
    else:
        # A plain push after one that did not finish (a crash, --no-save, a save that did not
        # confirm): those switches' running configs may not be saved. Found already as
        # rendered they are saved now, never reported done while a reboot would undo them.
        last, pending = pushflow.left_unfinished(state, doc.name)
        mine = {t.name for t in targets}
        pending = {n: st for n, st in pending.items() if n in mine}
        if pending:
            what = ", ".join(f"{n} ({st})" for n, st in sorted(pending.items(), key=lambda x: natural_key(x[0])))
            if no_save:
                say.note(f"note: the last push ({last.name if last else '?'}) left {what} unfinished; with "
                         "--no-save they stay unsaved: `vlanroute save OUTDIR` or `vlanroute rollback OUTDIR`")
            else:
                resave = frozenset(pending)
                say.note(f"note: the last push ({last.name if last else '?'}) left {what} unfinished (the "
                         "startup config may not hold the running one): this push saves each one it finds as "
                         "rendered, and pushes the others")
    # The plan's other switches are read too (read only): a change is loop-free only together
    # with what they run.
    others, unreadable = observers(outdir, doc, targets, tmap)
    check_loopback(others)
    creds = load_credentials()
    policy = host_key_policy(insecure, known_hosts)
    out, err = Console(quiet=not say.human), Console(stderr=True)
    bar = wanted(err, as_json, quiet)

    def report(results: list[SwitchResult], code: ExitCode, **extra: object) -> ExitCode:
        if as_json:
            run = PushRun(outdir, dry_run, results, selection.notes)
            from vlanroute.schemas.outputs import PushDocument
            emit_document(PushDocument.model_validate({**run.to_json(), "exit_code": int(code), **extra}))
        return code

    cabling_ok, unchecked = cabling_gate(outdir, doc, switches, targets_file, creds, policy, workers,
                                         skip=skip_cabling, dry_run=dry_run,
                                         pushed=[t.name for t in targets], quiet=quiet)
    if not cabling_ok:
        return report([], ExitCode.FAILED_CHECK,
                      refused="the inter-switch cables disagree with cabling.csv (vlanroute cabling check)")
    # Pass 1, for every switch and also under --yes: log in, check the host key, back up,
    # pre-flight, compute the changes, plan the transition. Nothing is changed unless all pass.
    preview_options = PushOptions(dry_run=True, workers=workers, keep_going=True, host_keys=policy,
                                  strict=strict, save=not no_save)     # the listed commands: save or not
    pusher = Pusher(outdir, state, creds, preview_options, PushUI(), configs=configs)
    with CountsBar("push", err, bar) as counts, first_interrupt_stops(pusher, err):
        pusher.ui = AggregateUI(counts)
        view = pushflow.preview(pusher, outdir, doc, state, targets, others, unreadable, configs, strict, workers)
    results = view.results
    print_changes(out, results, show_commands)
    failed = view.failed
    # A resumed push also saves what the interrupted one applied but did not save.
    to_save = [r for r in results if not r.diff and r.switch in resave and r.result == UNCHANGED]
    for r in to_save:
        r.message = "applied by the interrupted push, NOT saved: the resumed push saves it"
    transition_json = transition_to_json(view.transition) if view.transition is not None else None
    extra: dict[str, object] = {"transition": transition_json} if transition_json is not None else {}
    if view.transition is not None and not failed and not view.interrupted:
        for line in transition_lines(view.transition, detail=show_commands):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
    if pusher.interrupted or dry_run or failed:
        out.print(results_table(results))
        if pusher.interrupted:
            out.print("interrupted during the pre-flight: nothing was changed")
            return report(results, ExitCode.INTERRUPTED, **extra)
        if failed and not dry_run:
            out.print(f"nothing was changed: {len(failed)} switch(es) failed the pre-flight "
                      f"({', '.join(r.switch for r in failed)}); every switch must pass it before "
                      "any switch is changed. Fix them, or leave them out with --switch.")
        if view.refused is not None:
            _print_refusal(err, view.refused)
            return report(results, ExitCode.FAILED_CHECK, refused=view.refused.render(), **extra)
        return report(results, ExitCode.FAILED_CHECK if failed else ExitCode.OK, **extra)
    if view.refused is not None:
        out.print(results_table(results))
        _print_refusal(err, view.refused)
        return report(results, ExitCode.FAILED_CHECK, refused=view.refused.render())
    changing = view.changing + to_save
    if not changing:
        out.print(results_table(results))
        out.print("nothing to change")
        return report(results, ExitCode.OK, **extra)
    if unchecked:       # every switch logged in, yet these cables were never seen: no check at all
        out.print(results_table(results))
        why = unchecked_refusal(unchecked)
        err.print(why, style="bold red", highlight=False, markup=False)
        return report(results, ExitCode.FAILED_CHECK, refused=why)
    if not yes:
        names = ", ".join(r.switch for r in changing)
        if not confirm(f"Change {len(changing)} switch(es) in the {len(view.transition.steps) if view.transition else 0} "
                       f"steps above: {names}?"):
            click.echo("not confirmed: nothing changed", err=True)
            return ExitCode.FAILED_CHECK
    bundle.require_unchanged("push")            # what was shown is what is sent
    options = PushOptions(workers=workers, keep_going=keep_going, host_keys=policy,
                          strict=strict, save=not no_save, resave=resave)
    header = {"outdir": str(outdir.resolve()), "plan": doc.name, "plan_sha256": plan_sha, "save": not no_save,
              "switches": [r.switch for r in changing]}
    pusher = Pusher(outdir, state, creds, replace(options, keep_going=False), PushUI(), configs=configs)
    planned_notes = len(view.transition.notes) if view.transition else 0
    with CountsBar("push", err, bar) as counts, first_interrupt_stops(pusher, err):
        pusher.ui = AggregateUI(counts)
        outcome = pushflow.execute(view, pusher, state, journal, header, options, to_save)
    final = outcome.results
    out.print(results_table(final))
    for line in fabric_summary(final):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(f"journal: {outcome.journal.path}", highlight=False, soft_wrap=True)
    if outcome.after is not None:
        out.print(f"fabric state recorded: before {outcome.before.id if outcome.before else '?'}, after "
                  f"{outcome.after.id} (`vlanroute rollback OUTDIR --to STATE` goes back to either)",
                  highlight=False, soft_wrap=True)
    for note in view.transition.notes[planned_notes:] if view.transition else []:     # what the run added
        out.print(f"note: {note}", highlight=False, soft_wrap=True)
    if any(r.result in (APPLIED, APPLIED_UNSAVED) for r in final):
        relearn = relearn_note(outdir)          # a repair: the hosts re-learn (docs/failures.md)
        if relearn:
            out.print(relearn, highlight=False, markup=False, soft_wrap=True)
    if outcome.interrupted:
        out.print("interrupted: the switches above marked skipped were not started")
    for problem in outcome.problems:
        err.print(f"[bold red]journal[/]: {problem}; the switch's state is as the table says",
                  highlight=False)
    code = exit_code(final, outcome.interrupted)
    if not say.human:
        report_failures(final, SUCCESS)
    return report(final, code, journal=str(outcome.journal.path), **extra)


def print_changes(out: Console, results: list[SwitchResult], show_commands: bool) -> None:
    """Per switch, in the results' (the targets', natural) order: one summary line, or with
    --show-commands the change on the parsed model and every command line."""
    for result in results:
        if show_commands and result.diff:
            print_diff(out, result)             # lists the commands too
        elif show_commands:
            print_commands(out, result)
        elif result.diff:
            out.print(summary_line(result), highlight=False, soft_wrap=True)


def summary_line(result: SwitchResult) -> str:
    """One line per switch to change: how much, and where the details are."""
    changes = sum(1 for line in result.diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    config = len(result.prep.commands) if result.prep is not None else len(result.commands)
    return (f"{result.switch}: {changes} setting line(s) change, {config} commands "
            f"(backup {result.backup.name if result.backup else '-'}; --show-commands shows both)")


def _print_refusal(err: Console, refused: UserError) -> None:
    err.print(f"[bold red]refused[/]: nothing was changed: {refused.render()}", highlight=False, soft_wrap=True)
