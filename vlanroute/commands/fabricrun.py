"""What `vlanroute save` and `vlanroute rollback` share: the last push journal, the
switches to talk to, the results table and the JSON object."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vlanroute.bundle.reader import read_plan
from vlanroute.commands.output import emit_document
from vlanroute.commands.sshopts import target_map
from vlanroute.device.fabric import FabricResult
from vlanroute.bundle.document import PlanDocument
from vlanroute.device.journal import Journal, JournalView, last_journal, require_last_journal
from vlanroute.device.statedir import FabricState, lock_fabric
from vlanroute.device.targets import Target, check_loopback, select_targets


@dataclass
class FabricRun:
    journal: Journal | None
    view: JournalView | None
    targets: dict[str, Target]
    doc: PlanDocument
    state: FabricState
    outdir: Path

    def require_journal(self) -> Journal:
        """The last push's journal, or a new one for this run (a rollback --to with none).
        JournalWriteError when a new one cannot be written."""
        if self.journal is None:
            self.journal = Journal.create(self.state, outdir=str(self.outdir.resolve()), plan=self.doc.name,
                                          plan_sha256=None, save=True, switches=[])
        return self.journal


def open_fabric(outdir: Path, state_dir: Path | None, targets_file: Path | None,
                command: str, quiet: bool = False, tolerant: bool = False, need_journal: bool = True) -> FabricRun:
    """The last push journal of OUTDIR's fabric (`need_journal` False: if there is one) and
    every switch of its plan, checked against the loopback guard before anything connects."""
    doc = read_plan(outdir)
    state = FabricState.choose(state_dir, doc.name, outdir)
    # Before the journal is read: a push still writing it must finish first. A rollback runs
    # on a full or read-only state directory too (docs/push.md): its lock degrades.
    click.get_current_context().call_on_close(lock_fabric(state, command, degrade=command == "rollback").release)
    journal: Journal | None = None
    view: JournalView | None = None
    if need_journal or last_journal(state) is not None:
        journal, view = require_last_journal(state, outdir, doc.name, command, tolerant)
    selection = select_targets(outdir, doc, (), action="push", target_map=target_map(targets_file, quiet))
    check_loopback(selection.targets)
    return FabricRun(journal, view, {t.name: t for t in selection.targets}, doc, state, outdir)


def results_table(title: str, results: list[FabricResult], good: tuple[str, ...]) -> Table:
    table = Table(title=title)
    for col in ("switch", "result", "commands sent", "backup", "message"):
        table.add_column(col, overflow="fold")
    for r in results:
        style = "green" if r.result in good else "bold red"
        table.add_row(r.switch, f"[{style}]{r.result}[/]", str(r.commands_sent),
                      r.backup.name if r.backup else "-", escape(r.message))   # a message is text, not markup
    return table


def emit_json(command: str, run: FabricRun, results: list[FabricResult], code: int,
              **extra: object) -> None:
    """One JSON object on stdout, `schema` first (docs/push.md, "JSON output")."""
    from vlanroute.schemas.outputs import RollbackDocument, SaveDocument

    model: type[SaveDocument | RollbackDocument] = SaveDocument if command == "save" else RollbackDocument
    emit_document(model.model_validate({"journal": str(run.journal.path) if run.journal else "", **extra,
                                        "exit_code": int(code),
                                        "switches": [r.to_json() for r in results]}))


def human_console(as_json: bool, quiet: bool = False) -> Console:
    """Human text: stdout normally, stderr under --json (stdout holds only the object),
    nowhere under --quiet."""
    return Console(stderr=as_json, quiet=quiet)

