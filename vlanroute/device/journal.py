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

A last line cut short by a crash is ignored when reading. A record that cannot be written
(a full disk, a read-only file system) raises JournalWriteError, with the file cut back to
its last whole line: the caller must then not take the step the record announces
(`applying` before the first command, `saving` before the save), so the journal never
knows less than the switch has done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, UTC
import errno
import hashlib
import json
import os
from pathlib import Path
import threading
from typing import Any

from vlanroute.device.statedir import FabricState, now_stamp
from vlanroute.errors import UserError, disk_error

FORMAT = "vlanroute-push-journal/1"

# Events that change what a switch runs (or may run): its last one is its state.
APPLYING, APPLIED, SAVED, SAVE_UNCERTAIN = "applying", "applied", "saved", "save-uncertain"
ROLLED_BACK, ROLLBACK_FAILED = "rolled-back", "rollback-failed"
RESTORING, RESTORED, RESTORE_FAILED = "restoring", "restored", "restore-failed"
UNCHANGED, NOT_STARTED, SKIPPED = "unchanged", "not-started", "skipped"
SAVING = "saving"       # written before the save's key is sent: the startup config may change
# One step of a split change (vlanroute.transition) applied and verified; more steps follow,
# so it is neither `applied` (save would save a half change) nor finished (resume goes on).
STEPPED = "stepped"


class JournalWriteError(UserError):
    """A journal record could not be written (ENOSPC, EROFS, ...): nothing it announces was done."""


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
        data = line.encode("utf-8")
        with self._lock:
            try:
                fd = os.open(self.path, flags, 0o600)
            except OSError as exc:
                raise _write_error(exc, self.path) from None
            try:
                size = os.fstat(fd).st_size
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(errno.ENOSPC, "short write", str(self.path))
                os.fsync(fd)
            except OSError as exc:
                try:                    # no half record: the reader would stop at it
                    os.ftruncate(fd, size)
                except OSError:
                    pass
                raise _write_error(exc, self.path) from None
            finally:
                os.close(fd)


def _write_error(exc: OSError, path: Path) -> JournalWriteError:
    problem = disk_error(exc, path)
    what = problem.message.removeprefix("cannot write: ")
    return JournalWriteError(f"cannot write the push journal: {what}", file=str(path),
                             fix=f"{problem.fix.split(';')[0] if problem.fix else 'free some space'}; "
                                 "then `vlanroute push OUTDIR --resume` continues where it stopped")


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
            if e["event"] == APPLYING and isinstance(e.get("backup"), str) and e["backup"]:
                return Path(e["backup"])
        return None

    @property
    def backup_sha256(self) -> str | None:
        for e in self.events:
            if e["event"] == APPLYING and isinstance(e.get("backup"), str) and e["backup"]:
                sha = e.get("backup_sha256")
                return sha if isinstance(sha, str) and sha else None
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
        return any(e["event"] in (SAVING, SAVED, SAVE_UNCERTAIN) or (e["event"] == APPLIED and e.get("saved"))
                   for e in self.events)


@dataclass
class JournalView:
    path: Path
    header: dict[str, Any]
    switches: dict[str, SwitchHistory]     # in the order they first appear
    ended: bool
    interrupted: bool
    # Lines that could not be read (read_journal(tolerant=True)): a switch named only there
    # is unknown to this view, so whoever acts on it must say so.
    bad_lines: list[str] = field(default_factory=list)

    @property
    def touched(self) -> list[SwitchHistory]:
        return [h for h in self.switches.values() if h.touched]


MAX_JOURNAL_BYTES = 64 << 20     # thousands of pushes' worth of records


def _record(line: str) -> dict[str, Any] | None:
    """One journal line as a record, or None if it is not one vlanroute writes."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("event"), str):
        return None
    if "switch" in record and not isinstance(record["switch"], str):
        return None
    return record


def read_journal(path: Path, tolerant: bool = False) -> JournalView:
    """The journal's records by switch. A line that is not a record (binary, edited by hand)
    raises UserError naming it, unless `tolerant` (rollback: restore every switch it can),
    then it is listed in `bad_lines`. A last line cut short by a crash is ignored."""
    try:
        if path.stat().st_size > MAX_JOURNAL_BYTES:
            raise UserError(f"the push journal is larger than {MAX_JOURNAL_BYTES >> 20} MiB", file=str(path),
                            fix="the journal was edited by hand; restore it or remove it")
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise UserError(f"cannot read the push journal: {exc.strerror}", file=str(path)) from None
    records: list[dict[str, Any]] = []
    bad: list[str] = []
    for i, line in enumerate(lines):
        record = _record(line)
        if record is None:
            if i == len(lines) - 1 and i > 0:
                break          # cut short by a crash while it was written
            if not tolerant or i == 0:
                raise UserError(f"line {i + 1} is not a journal record", file=str(path),
                                fix="the journal was edited by hand or damaged; restore it or remove it") from None
            bad.append(f"{path}: line {i + 1} is not a journal record (damaged or edited by hand); "
                       "a switch named only there is not known to this rollback")
            continue
        records.append(record)
    if not records or records[0].get("journal") != FORMAT:
        raise UserError(f"not a {FORMAT} file", file=str(path))
    view = JournalView(path, records[0], {}, False, False, bad)
    names = records[0].get("switches", [])
    for name in names if isinstance(names, list) else []:
        if isinstance(name, str):
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


# Where a push left a switch whose startup config may not hold its running config: it may
# have been changed (applying, stepped, a failed rollback) or changed and not saved
# (applied, saving, save-uncertain).
UNFINISHED = (APPLYING, STEPPED, APPLIED, SAVING, SAVE_UNCERTAIN, ROLLBACK_FAILED)


def unfinished(view: JournalView) -> dict[str, str]:
    """Switch -> its last state, for every switch the journal leaves unfinished."""
    return {name: h.state for name, h in view.switches.items() if h.state in UNFINISHED}


def last_journal(state: FabricState) -> Path | None:
    """The newest push journal of this state directory (names are UTC times)."""
    if not state.pushes.is_dir():
        return None
    found = sorted(state.pushes.glob("*.jsonl"))
    return found[-1] if found else None


def require_last_journal(state: FabricState, outdir: Path, plan_name: str | None,
                         command: str, tolerant: bool = False) -> tuple[Journal, JournalView]:
    path = last_journal(state)
    if path is None:
        raise UserError(f"no push journal in {state.pushes}", field="--state-dir",
                        fix=f"`{command}` works on the last `vlanroute push`; give the "
                            "--state-dir that push used")
    view = read_journal(path, tolerant)
    if plan_name and view.header.get("plan") not in (None, plan_name):
        raise UserError(f"the last push journal is for plan {view.header.get('plan')!r}, "
                        f"not {plan_name!r}", file=str(path), field="--state-dir",
                        fix="give the state directory of this fabric with --state-dir")
    return Journal(path), view
