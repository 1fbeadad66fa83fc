"""The watcher's journal: `<state dir>/watch/journal.jsonl`, one JSON object per line.

Written ahead, as the push journal is (device/journal.py): each record is appended and
fsync'ed before the step it announces is taken, so a watcher killed at any moment (SIGKILL,
a power cut) finds on restart what it was doing and how far it got:

    {"journal": "vlanroute-watch-journal/1", "event": "start", "time": ..., "pid": 4242, "outdir": ..., ...}
    {"event": "intent", "action": ID, "mode": "auto", "failures": {...}, "strategy": "repair", ...}
    {"event": "bundle", "action": ID, "bundle": "<state dir>/watch/bundles/ID-repair", ...}
    {"event": "pushing", "action": ID, "bundle": ..., "stamp": "<UTC time>", "resume": false}
    {"event": "pushed", "action": ID, "exit_code": 0, "journal": "<state dir>/pushes/....jsonl", ...}
    {"event": "audited", "action": ID, "ok": true, ...}
    {"event": "done", "action": ID, "outcome": "healed", "failures": {...}}

An action's `done` record closes it; `failures` there is the failure set the fabric is now
set up for (what the watcher compares the links with). A last line cut short by a crash is
ignored. A record that cannot be written stops the action before its step (the caller
raises), exactly as a push does.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vlanroute.device.statedir import FabricState
from vlanroute.errors import UserError, disk_error
from vlanroute.safeio.private import ensure_private_subdir, open_private

FORMAT = "vlanroute-watch-journal/1"
MAX_BYTES = 32 << 20           # then the journal starts again (the old one kept as .1)


def watch_dir(state: FabricState) -> Path:
    state.ensure()
    return ensure_private_subdir(state.path, "watch", "watcher's folder")


class WatchJournalError(UserError):
    """A watch journal record could not be written: the step it announces is not taken."""


class WatchJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def of(cls, state: FabricState) -> WatchJournal:
        return cls(watch_dir(state) / "journal.jsonl")

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), "event": event}
        if event == "start":
            record = {"journal": FORMAT, **record}
        record.update(fields)
        data = (json.dumps(record) + "\n").encode()
        with self._lock:
            self._rotate()
            fd = open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, "watch journal")
            try:
                size = os.fstat(fd).st_size
                try:
                    if os.write(fd, data) != len(data):
                        raise OSError(28, "short write")
                    os.fsync(fd)
                except OSError as exc:
                    try:
                        os.ftruncate(fd, size)
                    except OSError:
                        pass
                    problem = disk_error(exc, self.path)
                    raise WatchJournalError(f"cannot write the watch journal: "
                                            f"{problem.message.removeprefix('cannot write: ')}",
                                            file=str(self.path), fix=problem.fix) from None
            finally:
                os.close(fd)
        return record

    def _rotate(self) -> None:
        try:
            if self.path.stat().st_size > MAX_BYTES:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        except FileNotFoundError:
            pass

    def records(self) -> list[dict[str, Any]]:
        """Every whole record (a last line cut short by a crash, or a line that is no record,
        is skipped)."""
        text = ""
        for path in (self.path.with_name(self.path.name + ".1"), self.path):     # the rotated one first
            try:
                text += path.read_bytes().decode("utf-8", errors="replace") + "\n"
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise UserError(f"cannot read the watch journal: {exc.strerror}", file=str(path)) from None
        out = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("event"), str):
                out.append(record)
        return out


@dataclass
class Action:
    id: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def first(self, event: str) -> dict[str, Any] | None:
        return next((r for r in self.records if r["event"] == event), None)

    def last(self, event: str) -> dict[str, Any] | None:
        return next((r for r in reversed(self.records) if r["event"] == event), None)

    @property
    def intent(self) -> dict[str, Any]:
        return self.first("intent") or {}

    @property
    def done(self) -> bool:
        return self.first("done") is not None


@dataclass
class History:
    actions: list[Action]
    acted: dict[str, list[str]]            # the failure set of the last closed action (empty: the plan)

    @property
    def unfinished(self) -> Action | None:
        last = self.actions[-1] if self.actions else None
        return last if last is not None and not last.done else None


EMPTY: dict[str, list[str]] = {"cables": [], "pairs": [], "switches": []}


def history(records: list[dict[str, Any]]) -> History:
    actions: dict[str, Action] = {}
    acted = dict(EMPTY)
    for r in records:
        aid = r.get("action")
        if not isinstance(aid, str):
            continue
        actions.setdefault(aid, Action(aid)).records.append(r)
        if r["event"] == "done" and isinstance(r.get("failures"), dict):
            acted = {k: [str(x) for x in r["failures"].get(k, [])] for k in EMPTY}
    return History(list(actions.values()), acted)
