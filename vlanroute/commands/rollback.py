"""`vlanroute rollback OUTDIR`: put every switch the last push touched back to its backup
(vlanroute.device.fabric)."""

from __future__ import annotations

from pathlib import Path
import sys

import click

from vlanroute.commands.fabricrun import emit_json, human_console, open_fabric, results_table
from vlanroute.commands.output import json_option, quiet_option, report_failures
from vlanroute.commands.sshopts import connection_options, host_key_policy, known_hosts_option, targets_option
from vlanroute.commands.stateopts import state_dir_option
from vlanroute.device.credentials import load_credentials
from vlanroute.device.fabric import RESTORED, WOULD_RESTORE, rollback_fabric, rollback_order
from vlanroute.device.journal import JournalWriteError
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode


@click.command("rollback")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@known_hosts_option
@connection_options
@targets_option
@state_dir_option
@click.option("--dry-run", is_flag=True,
              help="Log in, show what each switch would get back, change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--strict", is_flag=True, help="Read running configs as push --strict does.")
@json_option(doc="docs/push.md")
@quiet_option
def command(outdir: Path, known_hosts: Path | None, targets_file: Path | None,
            state_dir: Path | None, dry_run: bool, yes: bool, strict: bool, as_json: bool,
            quiet: bool) -> int:
    """Restore every switch the last push touched to the backup taken before it.

    The last switch started is restored first; on each, spanning tree comes back on before
    any VLAN membership changes. A switch the push had saved is saved again afterwards.
    Exit 0 when every switch equals its backup, 4 when one could not be restored.
    """
    run = open_fabric(outdir, state_dir, targets_file, "rollback", quiet, tolerant=True)
    # After OUTDIR and the journal are read (their errors first), before anything is shown.
    if not dry_run and not yes and (as_json or not sys.stdin.isatty()):
        why = "--json" if as_json else "not at a terminal (stdin is not a TTY)"
        raise UserError(f"rollback would ask for confirmation, but it runs {why}", field="--yes",
                        fix="add --yes to roll back without asking, or --dry-run to only show what it would do")
    out = human_console(as_json, quiet)
    order = rollback_order(run.view)
    if not order:
        out.print(f"nothing to roll back: the last push ({run.journal.path.name}) changed no switch",
                  highlight=False)
        if as_json:
            emit_json("rollback", run, [], ExitCode.OK, dry_run=dry_run)
        return ExitCode.OK
    names = ", ".join(h.switch for h in order)
    if not dry_run and not yes and not click.confirm(
            f"Restore {len(order)} switch(es) to their backups, in this order: {names}?", err=True):
        return ExitCode.FAILED_CHECK
    for bad in run.view.bad_lines:
        click.echo(f"warning: {bad}", err=True)
    if not dry_run:
        run.journal.append("rollback", switches=[h.switch for h in order])   # refused if the disk is full
    creds, policy = load_credentials(), host_key_policy(False, known_hosts)
    problems: list[str] = []
    results = rollback_fabric(run.view, None if dry_run else run.journal, run.targets, creds,
                              policy, dry_run=dry_run, strict=strict, journal_problems=problems)
    if not dry_run:
        try:
            run.journal.append("end", interrupted=False)
        except JournalWriteError as exc:
            problems.append(f"end not recorded: {exc.message}")
    for problem in problems:
        click.echo(f"journal: {problem}", err=True)
    if dry_run:
        for r in results:
            for line in r.diff or []:
                out.print(line, markup=False, highlight=False,
                          style="green" if line.startswith("+") else "red" if line.startswith("-") else "dim")
    good = (WOULD_RESTORE,) if dry_run else (RESTORED,)
    out.print(results_table("rollback" + (" (dry run)" if dry_run else ""), results, good))
    # A damaged journal line may have named a switch this rollback does not know of.
    ok = all(r.result in good for r in results) and not run.view.bad_lines
    if quiet:
        report_failures(results, good)
    code = ExitCode.OK if ok else (ExitCode.FAILED_CHECK if dry_run else ExitCode.ROLLBACK_FAILED)
    if as_json:
        emit_json("rollback", run, results, code, dry_run=dry_run)
    return code
