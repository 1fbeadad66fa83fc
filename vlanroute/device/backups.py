"""Old push backups pruned by a stated rule (docs/push.md, "Backups: what is kept").

Every push, dry runs included, writes the running config of each switch it reads to
backups/<switch>-<UTC time>.cfg before anything else; a site that dry-runs from cron would
collect one file per switch per run for ever. Before a new backup of a switch is written,
that switch's older backups are pruned; a backup is kept when it is

1. referenced by the last push journal (the only one `save`, `rollback` and a resumed push
   read: it is the fabric's way back);
2. among the newest KEEP_PUSHED backups referenced by any journal (earlier pushes);
3. among the newest KEEP_UNREFERENCED backups referenced by no journal (dry runs, and pushes
   stopped before their journal named the backup);
4. younger than KEEP_YOUNG_S: a push under way (another process: dry runs take no lock) may
   not have written the journal record that references it yet;
5. named by one of the newest KEEP_STATES recorded fabric states (history.py): `rollback
   --to` can go back to them.

Everything else of that switch is deleted. Backups of other switches are left alone (each
worker thread prunes the switch it backs up).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from vlanroute.device.history import kept_backups
from vlanroute.device.journal import last_journal
from vlanroute.device.statedir import FabricState

KEEP_PUSHED = 10
KEEP_UNREFERENCED = 2
KEEP_YOUNG_S = 3600


def referenced_backups(state: FabricState) -> tuple[set[str], set[str]]:
    """(every backup file name some journal references, those the last journal references)."""
    every: set[str] = set()
    last: set[str] = set()
    newest = last_journal(state)
    for path in sorted(state.pushes.glob("*.jsonl")) if state.pushes.is_dir() else []:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            backup = record.get("backup") if isinstance(record, dict) else None
            if isinstance(backup, str) and backup:
                every.add(Path(backup).name)
                if path == newest:
                    last.add(Path(backup).name)
    return every, last


def prune_backups(state: FabricState, switch: str, now: float | None = None) -> list[Path]:
    """Delete `switch`'s backups the rule above does not keep; the deleted paths."""
    if not state.backups.is_dir():
        return []
    now = time.time() if now is None else now
    mine = re.compile(re.escape(switch) + r"-\d{8}T\d{6}(\.\d+)?Z\.cfg")
    files = sorted((p for p in state.backups.iterdir() if mine.fullmatch(p.name)), key=lambda p: p.name, reverse=True)
    every, last = referenced_backups(state)
    pushed = [p for p in files if p.name in every]
    unreferenced = [p for p in files if p.name not in every]
    keep = ({p.name for p in pushed[:KEEP_PUSHED]} | {p.name for p in unreferenced[:KEEP_UNREFERENCED]} | last
            | kept_backups(state))
    deleted = []
    for p in files:
        if p.name in keep:
            continue
        try:
            if now - p.stat().st_mtime < KEEP_YOUNG_S:
                continue
            p.unlink()
        except FileNotFoundError:
            continue
        deleted.append(p)
    return deleted
