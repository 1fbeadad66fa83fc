"""`vlanroute rollback OUTDIR`: the fabric back to the state before the last push, or to any
recorded state (`--to`), by the same loop-free machinery as a push (vlanroute.device.rollback)."""

from __future__ import annotations

from pathlib import Path
import sys

import click

from rich.console import Console

from vlanroute.commands.fabricrun import FabricRun, emit_json, human_console, open_fabric, results_table
from vlanroute.commands.output import json_option, quiet_option, report_failures
from vlanroute.commands.sshopts import connection_options, host_key_policy, known_hosts_option, targets_option
from vlanroute.commands.stateopts import state_dir_option
from vlanroute.device.credentials import load_credentials
from vlanroute.device.fabric import RESTORED, WOULD_RESTORE, FabricResult
from vlanroute.device.history import find_state, list_states
from vlanroute.device.journal import Journal, JournalWriteError
from vlanroute.device.rollback import dry_results, make_pusher, plan_rollback, run_rollback, wanted_from_journal, \
    wanted_from_state
from vlanroute.device.statedir import FabricState
from vlanroute.bundle.reader import read_plan
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.transition.report import lines as transition_lines, to_json as transition_to_json


@click.command("rollback")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@known_hosts_option
@connection_options
@targets_option
@state_dir_option
@click.option("--dry-run", is_flag=True,
              help="Log in, plan the transition and show what each switch would get back; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--strict", is_flag=True, help="Read running configs as push --strict does.")
@click.option("--to", "to_state", metavar="STATE",
              help="Go back to a recorded state of the fabric instead: its id (or a unique beginning of it), "
                   "or a time such as 2026-11-29T10:15 (the newest state recorded at or before it).")
@click.option("--list", "list_only", is_flag=True, help="List the recorded states of the fabric and exit.")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Switches read at once, and steps of one wave run at once.")
@json_option(doc="docs/push.md")
@quiet_option
def command(outdir: Path, known_hosts: Path | None, targets_file: Path | None,
            state_dir: Path | None, dry_run: bool, yes: bool, strict: bool, to_state: str | None,
            list_only: bool, workers: int, as_json: bool, quiet: bool) -> int:
    """Restore every switch the last push touched to the backup taken before it, or the
    whole fabric to a recorded state (--to; --list shows them).

    Every switch is read first; the transition to the wanted configs is planned so that every
    VLAN stays loop-free after every step (and every line), shown, and run step by step. On
    each switch spanning tree comes back on before any VLAN membership changes. A switch
    whose startup config may hold something newer is saved again afterwards.
    Exit 0 when every switch equals what it had, 1 when no loop-free transition exists
    (nothing changed), 4 when one could not be restored.
    """
    if list_only:
        doc = read_plan(outdir)
        fstate = FabricState.choose(state_dir, doc.name, outdir)
        states = list_states(fstate)
        out = human_console(as_json, quiet)
        if not states:
            out.print(f"no fabric state is recorded in {fstate.path / 'states'}", highlight=False)
        for st in states:
            out.print(st.describe(), highlight=False, soft_wrap=True)
        return ExitCode.OK
    run = open_fabric(outdir, state_dir, targets_file, "rollback", quiet, tolerant=True, need_journal=to_state is None)
    # After OUTDIR and the journal are read (their errors first), before anything is shown.
    if not dry_run and not yes and (as_json or not sys.stdin.isatty()):
        why = "--json" if as_json else "not at a terminal (stdin is not a TTY)"
        raise UserError(f"rollback would ask for confirmation, but it runs {why}", field="--yes",
                        fix="add --yes to roll back without asking, or --dry-run to only show what it would do")
    out = human_console(as_json, quiet)
    if to_state is not None:
        record = find_state(run.state, to_state)
        wanted = wanted_from_state(run.state, record)
        what = f"state {record.id} ({record.kind} a {record.command})"
    else:
        assert run.view is not None
        wanted = wanted_from_journal(run.view)
        what = f"the state before the last push ({run.journal.path.name if run.journal else '?'})"
    if not wanted.order:
        out.print(f"nothing to roll back: the last push ({run.journal.path.name if run.journal else '?'}) "
                  "changed no switch", highlight=False)
        if as_json:
            emit_json("rollback", run, [], ExitCode.OK, dry_run=dry_run)
        return ExitCode.OK
    if run.view is not None:
        for bad in run.view.bad_lines:
            click.echo(f"warning: {bad}", err=True)
    creds, policy = load_credentials(), host_key_policy(False, known_hosts)
    pusher = make_pusher(outdir, run.state, creds, policy, workers, strict, None)
    plan = plan_rollback(pusher, run.doc, outdir, run.state, run.targets, wanted, workers, strict)
    if plan.transition is not None:
        for line in transition_lines(plan.transition):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
    extra: dict[str, object] = {"transition": transition_to_json(plan.transition)} if plan.transition else {}
    if plan.refused is not None:
        click.secho(f"refused: nothing was changed: {plan.refused.render()}", fg="red", err=True)
        results = dry_results(plan, run.targets)
        if as_json:
            emit_json("rollback", run, results, ExitCode.FAILED_CHECK, dry_run=dry_run, refused=plan.refused.render())
        return ExitCode.FAILED_CHECK
    if dry_run:
        results = dry_results(plan, run.targets)
        for r in results:
            for line in r.diff or []:
                out.print(line, markup=False, highlight=False,
                          style="green" if line.startswith("+") else "red" if line.startswith("-") else "dim")
        return _finish(out, run, results, WOULD_RESTORE, ExitCode.FAILED_CHECK, dry_run, as_json, quiet, extra)
    names = ", ".join(wanted.order)
    steps = len(plan.transition.steps) if plan.transition else 0
    if not yes and not click.confirm(f"Go back to {what}: {names}, in the {steps} steps above?", err=True):
        return ExitCode.FAILED_CHECK
    # The switches are restored whatever the disk holds: a record that cannot be written
    # (the state directory full or read-only) is named on stderr, never a reason to stop.
    problems: list[str] = []
    journal: Journal | None = None
    try:
        journal = run.require_journal()
        journal.append("rollback", switches=list(wanted.order), to=to_state)
    except JournalWriteError as exc:
        problems.append(f"rollback not recorded: {exc.message}")
    pusher.journal = journal
    results, more = run_rollback(plan, pusher, journal, run.state, run.doc, outdir, run.targets)
    problems += more
    try:
        if journal is not None:
            journal.append("end", interrupted=False)
    except JournalWriteError as exc:
        problems.append(f"end not recorded: {exc.message}")
    for problem in problems:
        click.echo(f"journal: {problem}", err=True)
    if plan.transition is not None:
        for note in plan.transition.notes:
            out.print(f"note: {note}", highlight=False, soft_wrap=True)
    return _finish(out, run, results, RESTORED, ExitCode.ROLLBACK_FAILED, dry_run, as_json, quiet, extra)


def _finish(out: Console, run: FabricRun, results: list[FabricResult], good: str, failed: ExitCode, dry_run: bool,
            as_json: bool, quiet: bool, extra: dict[str, object]) -> ExitCode:
    """The table, the failures under --quiet, the JSON object and the exit code."""
    out.print(results_table("rollback" + (" (dry run)" if dry_run else ""), results, (good,)))
    # A damaged journal line may have named a switch this rollback does not know of.
    ok = all(r.result == good for r in results) and not (run.view and run.view.bad_lines)
    if quiet:
        report_failures(results, (good,))
    code = ExitCode.OK if ok else failed
    if as_json:
        emit_json("rollback", run, results, code, dry_run=dry_run, **extra)
    return code
