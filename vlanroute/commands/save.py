"""`vlanroute save OUTDIR`: save the switches the last `push --no-save` left applied and
unsaved (vlanroute.device.fabric)."""

from __future__ import annotations

from pathlib import Path

import click

from vlanroute.commands.fabricrun import emit_json, human_console, open_fabric, results_table
from vlanroute.commands.output import json_option, quiet_option, report_failures
from vlanroute.commands.sshopts import connection_options, host_key_policy, known_hosts_option, targets_option
from vlanroute.commands.stateopts import state_dir_option
from vlanroute.device.credentials import load_credentials
from vlanroute.device.fabric import SAVE_UNCERTAIN, SAVED, save_fabric, unsaved
from vlanroute.exitcodes import ExitCode


@click.command("save")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@known_hosts_option
@connection_options
@targets_option
@state_dir_option
@click.option("--strict", is_flag=True, help="Read running configs as push --strict does.")
@json_option(doc="docs/push.md")
@quiet_option
def command(outdir: Path, known_hosts: Path | None, targets_file: Path | None,
            state_dir: Path | None, strict: bool, as_json: bool, quiet: bool) -> int:
    """Save the switches the last `push --no-save` applied and left unsaved.

    Each one's running config must still be the one the push verified; a switch changed
    since then is not saved. Exit 0 when every such switch was saved.
    """
    run = open_fabric(outdir, state_dir, targets_file, "save", quiet)
    assert run.journal is not None and run.view is not None      # need_journal: refused before
    out = human_console(as_json, quiet)
    pending = unsaved(run.view)
    if not pending:
        out.print(f"nothing to save: the last push ({run.journal.path.name}) left no switch "
                  "applied and unsaved", highlight=False)
        if as_json:
            emit_json("save", run, [], ExitCode.OK)
        return ExitCode.OK
    run.journal.append("save", switches=[h.switch for h in pending])
    results = save_fabric(run.view, run.journal, run.targets, load_credentials(),
                          host_key_policy(False, known_hosts), strict)
    run.journal.append("end", interrupted=False)
    if any(r.result == SAVE_UNCERTAIN for r in results):
        code = ExitCode.ROLLBACK_FAILED
    elif all(r.result == SAVED for r in results):
        code = ExitCode.OK
    else:
        code = ExitCode.PARTIAL if any(r.result == SAVED for r in results) else ExitCode.FAILED_CHECK
    out.print(results_table("save", results, (SAVED,)))
    if quiet:
        report_failures(results, (SAVED,))
    if as_json:
        emit_json("save", run, results, code)
    return code
