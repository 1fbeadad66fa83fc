"""The fabric's history: what every switch ran before and after each change.

Every push (and every rollback) records the state of the whole fabric it started from and
the one it reached, as files of the state directory:

    <state dir>/states/<id>.json      (0600, written whole)
    {"format": "vlanroute-fabric-state/1", "state": "20261129T101500.123456Z-before",
     "time": "2026-11-29T10:15:00.123+00:00", "kind": "before" | "after",
     "command": "push" | "rollback", "journal": "<journal file name>" | null,
     "plan": NAME, "plan_sha256": ..., "outdir": ...,
     "switches": {"sw1": {"backup": "<state dir>/backups/sw1-....cfg", "sha256": ...},
                  "sw3": {"unknown": "cannot connect: ..."}},
     "cabling": [["sw1", "1/g47", "sw2", "1/g47"], ...]}

A switch's running config is a backup file (backups/, as push writes them); a switch that
could not be read is `unknown`. `vlanroute rollback --list` shows the states, `rollback
--to STATE` goes back to one by the same loop-free machinery as a push: by its id (or a
unique beginning of it), or by a time (`2026-11-29T10:15`: the newest state recorded at or
before it). The backups a state names are kept by the backup pruning rule (backups.py) for
the newest KEEP_STATES states.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, UTC
import json
from pathlib import Path
import re
from typing import Any, Literal

from vlanroute.device.statedir import FabricState, now_stamp
from vlanroute.errors import UserError
from vlanroute.names import NAME_PATTERN
from vlanroute.safeio.private import ensure_private_subdir, write_private
from vlanroute.transition.fabric import Wire

FORMAT = "vlanroute-fabric-state/1"
KEEP_STATES = 20
MAX_STATE_BYTES = 32 << 20
StateKind = Literal["before", "after"]
_ID = re.compile(r"\d{8}T\d{6}\.\d{6}Z-(before|after)")
_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True)
class SwitchRecord:
    backup: Path | None                 # the running config, None: unknown
    sha256: str | None = None
    unknown: str | None = None          # why it could not be read


@dataclass(frozen=True)
class StateRecord:
    id: str
    time: str
    kind: StateKind
    command: str
    journal: str | None
    plan: str | None
    plan_sha256: str | None
    outdir: str | None
    switches: dict[str, SwitchRecord]
    cabling: tuple[Wire, ...]
    path: Path

    def describe(self) -> str:
        known = sum(1 for s in self.switches.values() if s.backup is not None)
        what = f"{self.kind} {self.command}"
        return (f"{self.id}  {self.time[:19].replace('T', ' ')} UTC  {what:<15} plan {self.plan or '?'}, "
                f"{known} of {len(self.switches)} switches read")


def states_dir(state: FabricState) -> Path:
    return state.path / "states"


def record_state(state: FabricState, kind: StateKind, command: str, *, journal: Path | None,
                 plan: str | None, plan_sha256: str | None, outdir: Path | None,
                 switches: dict[str, tuple[Path, str] | str], cabling: list[Wire]) -> StateRecord:
    """Write one state: per switch (backup path, sha256) or the reason it is unknown."""
    state.ensure()
    folder = ensure_private_subdir(state.path, "states", "fabric states folder")
    sid = f"{now_stamp()}-{kind}"
    data: dict[str, Any] = {
        "format": FORMAT, "state": sid, "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "kind": kind, "command": command, "journal": journal.name if journal else None,
        "plan": plan, "plan_sha256": plan_sha256, "outdir": str(outdir) if outdir else None,
        "switches": {name: ({"backup": str(rec[0]), "sha256": rec[1]} if isinstance(rec, tuple)
                            else {"unknown": rec}) for name, rec in sorted(switches.items())},
        "cabling": [[w.a, w.a_port, w.b, w.b_port] for w in sorted(set(cabling))]}
    path = folder / f"{sid}.json"
    write_private(path, json.dumps(data, indent=1) + "\n", "fabric state")
    return _parse(data, path)


def _parse(data: Any, path: Path) -> StateRecord:
    def bad(why: str) -> UserError:
        return UserError(f"not a fabric state vlanroute wrote: {why}", file=str(path),
                         fix="the file was edited by hand or damaged; restore it or remove it")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad(f"no {FORMAT} format")
    sid, kind = data.get("state"), data.get("kind")
    if not isinstance(sid, str) or not _ID.fullmatch(sid) or kind not in ("before", "after"):
        raise bad("its id or kind")
    switches: dict[str, SwitchRecord] = {}
    raw = data.get("switches")
    if not isinstance(raw, dict):
        raise bad("switches")
    for name, rec in raw.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name) or not isinstance(rec, dict):
            raise bad(f"switch {name!r}")
        if isinstance(rec.get("backup"), str):
            sha = rec.get("sha256")
            switches[name] = SwitchRecord(Path(rec["backup"]), sha if isinstance(sha, str) else None)
        else:
            switches[name] = SwitchRecord(None, unknown=str(rec.get("unknown", "unknown")))
    wires = []
    for row in data.get("cabling") or []:
        if (not isinstance(row, list) or len(row) != 4 or not all(isinstance(x, str) for x in row)
                or not _NAME.fullmatch(row[0]) or not _NAME.fullmatch(row[2])):
            raise bad(f"cable {row!r}")
        wires.append(Wire(*row))

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None
    return StateRecord(sid, text("time") or "", kind, text("command") or "push", text("journal"), text("plan"),
                       text("plan_sha256"), text("outdir"), switches, tuple(wires), path)


def read_state(path: Path) -> StateRecord:
    try:
        if path.stat().st_size > MAX_STATE_BYTES:
            raise UserError("the fabric state file is too large", file=str(path))
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UserError(f"cannot read the fabric state: {exc}", file=str(path),
                        fix="restore the file or remove it") from None
    return _parse(data, path)


def list_states(state: FabricState) -> list[StateRecord]:
    """Every readable state, oldest first (a damaged file is skipped: it names itself on use)."""
    folder = states_dir(state)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.json")):
        if not _ID.fullmatch(path.stem):
            continue
        try:
            out.append(read_state(path))
        except UserError:
            continue
    return out


def find_state(state: FabricState, key: str) -> StateRecord:
    """A state by its id, a unique beginning of its id, or a time (the newest at or before)."""
    states = list_states(state)
    if not states:
        raise UserError(f"no fabric state is recorded in {states_dir(state)}", field="--to",
                        fix="states are recorded by every push and rollback; give the --state-dir they used")
    exact = [s for s in states if s.id == key]
    if exact:
        return exact[0]
    begins = [s for s in states if s.id.startswith(key)]
    if len(begins) == 1:
        return begins[0]
    if len(begins) > 1:
        raise UserError(f"{len(begins)} states begin with {key!r}", field="--to",
                        fix="give more of the id (`vlanroute rollback OUTDIR --list` shows them)")
    when = _time(key)
    if when is None:
        raise UserError(f"no recorded state is {key!r}", field="--to",
                        fix="give a state id or a time such as 2026-11-29T10:15 (`vlanroute rollback OUTDIR --list`)")
    before = [s for s in states if s.time and datetime.fromisoformat(s.time) <= when]
    if not before:
        raise UserError(f"no state was recorded at or before {key}", field="--to",
                        fix=f"the oldest is {states[0].id}")
    return before[-1]


def _time(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def last_cabling(state: FabricState) -> tuple[Wire, ...]:
    """The cables of the newest recorded state (the fabric as it was last seen)."""
    states = list_states(state)
    return states[-1].cabling if states else ()


def kept_backups(state: FabricState) -> set[str]:
    """Backup file names the newest KEEP_STATES states name: the pruning keeps them."""
    return {rec.backup.name for s in list_states(state)[-KEEP_STATES:] for rec in s.switches.values()
            if rec.backup is not None}
