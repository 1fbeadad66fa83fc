"""Structured logs of the watcher: one JSON object per line, on stderr or appended to a file.

    {"time": "2026-12-01T03:12:09.412+00:00", "event": "failure", "fabric": "seed-torus",
     "failures": {"cables": [], "pairs": ["sw1:sw2"], "switches": []}, ...}

Every record has `time` (UTC), `event` and `fabric`; the other keys depend on the event
(docs/watch.md lists them). Nothing secret is ever in a record: the SSH password is only in
the credentials object, never in an event.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from vlanroute.safeio.private import open_private


# What --quiet still prints on stderr: the events a person must see.
PROBLEMS = frozenset({"heal-failed", "needs-person", "gave-up", "unreachable", "notify-failed", "flapping",
                      "journal-failed", "plan-changed"})


class EventLog:
    def __init__(self, fabric: str, stream: IO[str] | None = None, path: Path | None = None,
                 quiet: bool = False) -> None:
        self.fabric = fabric
        self.quiet = quiet
        self._stream = stream
        self._file: IO[str] | None = None
        if path is not None:
            fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, "watch log", field="--events")
            self._file = os.fdopen(fd, "a", buffering=1)
        self._lock = threading.Lock()
        self.seen: list[dict[str, Any]] = []          # kept for --once's exit code and the tests

    def __call__(self, event: str, **fields: Any) -> dict[str, Any]:
        record = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), "event": event,
                  "fabric": self.fabric, **fields}
        line = json.dumps(record, default=str) + "\n"
        with self._lock:
            self.seen.append(record)
            shown = self._stream if self._stream is not None else sys.stderr
            for out in (None if self.quiet and event not in PROBLEMS else shown, self._file):
                if out is None:
                    continue
                try:
                    out.write(line)
                    out.flush()
                except (OSError, ValueError):
                    pass            # a log that cannot be written never stops the watcher
        return record

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
