"""The push journal: one JSON object per line, one line per switch state change.

Each line is written and fsync'ed before the step it announces goes on (`applying` before
the first command is sent), so after a crash of the management host the journal still
names every switch that may have changed and the backup to restore it from. `save`,
`rollback` and `push --resume` read it and append to it. Format (docs/push.md):

    {"journal": "vlanroute-push-journal/1", "event": "push", "time": ..., "push": ID,
     "outdir": ..., "plan": NAME, "plan_sha256": ..., "save": true, "switches": [...]}
    {"time": ..., "event": "applying", "switch": "sw1", "backup": PATH, "backup_sha256": ...}
    {"time": ..., "event": "applied", "switch": "sw1", "saved": false, "running_sha256": ...}
    ...
    {"time": ..., "event": "end", "interrupted": false}

A last line cut short by a crash is ignored when reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, UTC
import hashlib
import json
import os
from pathlib import Path
import threading
from typing import Any

from vlanroute.device.statedir import FabricState, now_stamp
from vlanroute.errors import UserError

FORMAT = "vlanroute-push-journal/1"

# Events that change what a switch runs (or may run): its last one is its state.
APPLYING, APPLIED, SAVED, SAVE_UNCERTAIN = "applying", "applied", "saved", "save-uncertain"
ROLLED_BACK, ROLLBACK_FAILED = "rolled-back", "rollback-failed"
RESTORING, RESTORED, RESTORE_FAILED = "restoring", "restored", "restore-failed"
UNCHANGED, NOT_STARTED, SKIPPED = "unchanged", "not-started", "skipped"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_lines(lines: list[str]) -> str:
    return sha256_text("\n".join(lines) + "\n")


class Journal:
    """Appends records to one push's journal file; safe to call from worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def create(cls, state: FabricState, **header: Any) -> Journal:
        state.ensure()
        push_id = now_stamp()
        journal = cls(state.pushes / f"{push_id}.jsonl")
        journal._write({"journal": FORMAT, "event": "push", "time": _time(), "push": push_id,
                        **header}, exclusive=True)
        return journal

    def append(self, event: str, switch: str | None = None, **fields: Any) -> None:
        record: dict[str, Any] = {"time": _time(), "event": event}
        if switch is not None:
            record["switch"] = switch
        record.update(fields)
        self._write(record)

    def _write(self, record: dict[str, Any], exclusive: bool = False) -> None:
        line = json.dumps(record, sort_keys=False) + "\n"
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_EXCL if exclusive else 0)
        with self._lock:
            fd = os.open(self.path, flags, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)


def _time() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class SwitchHistory:
    switch: str
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def touched(self) -> bool:
        """A command may have been sent to it."""
        return any(e["event"] == APPLYING for e in self.events)

    @property
    def backup(self) -> Path | None:
        """The backup taken before its first change in this push (a resumed push may take
        another; the first is the fabric's state before the push)."""
        for e in self.events:
            if e["event"] == APPLYING and e.get("backup"):
                return Path(e["backup"])
        return None

    @property
    def backup_sha256(self) -> str | None:
        for e in self.events:
            if e["event"] == APPLYING and e.get("backup"):
                return str(e.get("backup_sha256") or "") or None
        return None

    @property
    def started_at(self) -> int:
        """Journal line of its first `applying` record (0 if never started)."""
        return next((int(e.get("_line", 0)) for e in self.events if e["event"] == APPLYING), 0)

    @property
    def state(self) -> str:
        return self.events[-1]["event"] if self.events else ""

    @property
    def last(self) -> dict[str, Any]:
        return self.events[-1] if self.events else {}

    @property
    def ever_saved(self) -> bool:
        """The startup config may hold the pushed config (saved, or a save that did not confirm)."""
        return any(e["event"] in (SAVED, SAVE_UNCERTAIN) or (e["event"] == APPLIED and e.get("saved"))
                   for e in self.events)


@dataclass
class JournalView:
    path: Path
    header: dict[str, Any]
    switches: dict[str, SwitchHistory]     # in the order they first appear
    ended: bool
    interrupted: bool

    @property
    def touched(self) -> list[SwitchHistory]:
        return [h for h in self.switches.values() if h.touched]


def read_journal(path: Path) -> JournalView:
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise UserError(f"cannot read the push journal: {exc.strerror}", file=str(path)) from None
    records: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            if i == len(lines) - 1:
                break          # cut short by a crash while it was written
            raise UserError(f"line {i + 1} is not JSON", file=str(path),
                            fix="the journal was edited by hand; restore it or remove it") from None
        if isinstance(record, dict):
            records.append(record)
    if not records or records[0].get("journal") != FORMAT:
        raise UserError(f"not a {FORMAT} file", file=str(path))
    view = JournalView(path, records[0], {}, False, False)
    for name in records[0].get("switches", []):
        view.switches[name] = SwitchHistory(name)
    for line_no, record in enumerate(records[1:], start=2):
        record["_line"] = line_no          # the order of events across switches
        if record.get("event") == "end":
            view.ended, view.interrupted = True, bool(record.get("interrupted"))
            continue
        if record.get("event") in ("push", "resume", "save", "rollback"):
            view.ended = False
            continue
        name = record.get("switch")
        if isinstance(name, str):
            view.switches.setdefault(name, SwitchHistory(name)).events.append(record)
    return view


def last_journal(state: FabricState) -> Path | None:
    """The newest push journal of this state directory (names are UTC times)."""
    if not state.pushes.is_dir():
        return None
    found = sorted(state.pushes.glob("*.jsonl"))
    return found[-1] if found else None


def require_last_journal(state: FabricState, outdir: Path, plan_name: str | None,
                         command: str) -> tuple[Journal, JournalView]:
    path = last_journal(state)
    if path is None:
        raise UserError(f"no push journal in {state.pushes}", field="--state-dir",
                        fix=f"`{command}` works on the last `vlanroute push`; give the "
                            "--state-dir that push used")
    view = read_journal(path)
    if plan_name and view.header.get("plan") not in (None, plan_name):
        raise UserError(f"the last push journal is for plan {view.header.get('plan')!r}, "
                        f"not {plan_name!r}", file=str(path), field="--state-dir",
                        fix="give the state directory of this fabric with --state-dir")
    return Journal(path), view
