"""The fabric's state directory: push backups and push journals, kept outside OUTDIR.

OUTDIR is replaced as a whole by every render, so nothing a push must keep may live there
(a render during a push used to delete backups). One state directory per inventory name:
`--state-dir DIR`, else `$XDG_STATE_HOME/vlanroute/<name>`, else
`~/.local/state/vlanroute/<name>` (XDG Base Directory: "state data that should persist
between restarts", https://specifications.freedesktop.org/basedir-spec/latest/).

    <state dir>/backups/<switch>-<UTC time>.cfg   running config before a push (0600)
    <state dir>/pushes/<UTC time>.jsonl            one journal per push (vlanroute.device.journal)
    <state dir>/sessions/<switch>-<UTC time>.log   push's SSH session log per connection (0600)
    <state dir>/lock                               held by the push, save or rollback at work
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, UTC
import fcntl
import json
import os
from pathlib import Path
import re
import threading

from vlanroute.errors import UserError
from vlanroute.safeio.private import ensure_private_dir, ensure_private_subdir, open_private

STATE_DIR_ENV = "XDG_STATE_HOME"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def now_stamp() -> str:
    """A UTC time stamp that sorts as text: 20261123T190512.123456Z."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def default_state_dir(name: str) -> Path:
    base = os.environ.get(STATE_DIR_ENV) or str(Path.home() / ".local" / "state")
    return Path(base) / "vlanroute" / name


def fabric_name(plan_name: str | None, outdir: Path) -> str:
    """The plan's name (a validated NAME_PATTERN name), else the OUTDIR's folder name made
    safe for a path: the key of the state directory."""
    if plan_name:
        return plan_name
    name = _SAFE.sub("_", Path(os.path.abspath(outdir)).name).lstrip(".")
    return name or "unnamed"


@dataclass(frozen=True)
class FabricState:
    path: Path

    @classmethod
    def choose(cls, state_dir: Path | None, plan_name: str | None, outdir: Path) -> FabricState:
        """The state directory; refused inside OUTDIR, which every render replaces as a whole
        (the backups and journals there would go with it)."""
        chosen = state_dir if state_dir is not None else default_state_dir(fabric_name(plan_name, outdir))
        where, out = Path(os.path.realpath(chosen)), Path(os.path.realpath(outdir))
        if where == out or out in where.parents:
            raise UserError(f"the state directory {chosen} is inside OUTDIR {outdir}, which every "
                            "render replaces as a whole: its backups and push journals would be lost",
                            field="--state-dir" if state_dir is not None else STATE_DIR_ENV,
                            fix="choose a state directory outside OUTDIR")
        return cls(chosen)

    @property
    def backups(self) -> Path:
        return self.path / "backups"

    @property
    def pushes(self) -> Path:
        return self.path / "pushes"

    def ensure(self) -> None:
        """Create the folders (owner only: backups hold password hashes), or a clear error:
        a looser existing one, or a symbolic link at backups/ or pushes/, is refused
        (vlanroute.safeio.private)."""
        ensure_private_dir(self.path, fix="choose a writable directory of your own with --state-dir, "
                                          f"or set {STATE_DIR_ENV}")
        ensure_private_subdir(self.path, "backups", "backups folder")
        ensure_private_subdir(self.path, "pushes", "push journals folder")

    def write_backup(self, switch: str, text: str) -> Path:
        """backups/<switch>-<UTC time>.cfg, mode 0600 (running configs hold password hashes
        and SNMP communities). `switch` comes from the validated plan document (no '/', no
        leading dot), so the file stays in backups/."""
        self.ensure()
        path = self.backups / f"{switch}-{now_stamp()}.cfg"
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, "backup file")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        return path


class FabricLock:
    """The fabric's lock: one push, save or rollback at a time per state directory.

    Two operators (or a cron job and an operator) working on one fabric at once would
    interleave their changes and their journals: a rollback reading the journal of a push
    still under way restores switches the push is about to change. flock(2) is released by
    the kernel when the holding process ends, however it ends, so a crashed push leaves no
    stale lock behind. Advisory: it guards vlanroute against itself, not against other tools.
    One process holds it once for all its threads: the Nornir task runs one `api.push` per
    switch in parallel threads of one run, which its caller orchestrates as one operation.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._released = False

    def release(self) -> None:
        with _HELD_GUARD:
            if self._released:
                return
            self._released = True
            fd, users = _HELD[self.path]
            if users > 1:
                _HELD[self.path] = (fd, users - 1)
                return
            del _HELD[self.path]
            os.close(fd)                # closing the descriptor releases the flock

    def __enter__(self) -> FabricLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_HELD: dict[Path, tuple[int, int]] = {}      # lock file -> (descriptor, holders in this process)
_HELD_GUARD = threading.Lock()


def lock_fabric(state: FabricState, command: str, degrade: bool = False) -> FabricLock:
    """Take the state directory's lock for `command`, or a UserError naming who holds it.
    `degrade` (rollback): a lock file that cannot be written is locked read-only."""
    if degrade:
        try:
            state.ensure()
        except UserError:
            if not (state.path / "lock").is_file():
                raise
    else:
        state.ensure()
    path = Path(os.path.realpath(state.path)) / "lock"     # the lock itself is never followed
    with _HELD_GUARD:
        if path in _HELD:
            fd, users = _HELD[path]
            _HELD[path] = (fd, users + 1)
            return FabricLock(path)
        try:
            fd = open_private(path, os.O_RDWR | os.O_CREAT, "fabric's lock file")
            writable = True
        except UserError:
            if not degrade or not path.is_file():
                raise
            # The state directory read-only (or full, or not ours to write): a rollback must
            # still run (docs/push.md). flock needs no write access; the holder is not noted.
            fd = open_private(path, os.O_RDONLY, "fabric's lock file")
            writable = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise UserError(f"another vlanroute {holder} is working on this fabric; {command} waits for "
                            "nothing and changes nothing", file=str(path), field="--state-dir",
                            fix="let it finish (the lock goes when its process ends, also if it "
                                "crashes), then run this again") from None
        if writable:
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, (json.dumps({"command": command, "pid": os.getpid(), "since": now_stamp()})
                               + "\n").encode(), 0)
            except OSError:
                pass                    # who holds it is a courtesy; the flock is the lock
        _HELD[path] = (fd, 1)
        return FabricLock(path)


def _holder(fd: int) -> str:
    """'push (pid 4242, since 20261123T190512.123456Z)' from the lock file, as well as it reads."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        command, since = str(info["command"]), str(info["since"])
        if not (command.isalpha() and _SAFE.search(since) is None):
            return "command"        # not written by lock_fabric: print nothing from it
        return f"{command} (pid {int(info['pid'])}, since {since})"
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return "command"
