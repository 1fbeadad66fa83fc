"""Where a running lab (`vlanroute lab up`) keeps its files; no asyncssh needed here.

Default: `$XDG_STATE_HOME/vlanroute/lab`, else `~/.local/state/vlanroute/lab` (one lab
per user at a time); `--state-dir` chooses another, e.g. one per OUTDIR.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from vlanroute.errors import UserError
from vlanroute.safeio.private import (WRITABLE_FIX, ensure_private_dir, ensure_private_subdir, open_private,
                                      read_private, write_private)

PASSWORD_ENV = "VLANROUTE_LAB_PASSWORD"     # parent -> daemon only, never stored
DAEMON_MODULE = "vlanroute.lab.daemon"
DAEMON_LOCK = "daemon.lock"     # held by the lab daemon for its whole life: one lab per directory
UP_LOCK = "up.lock"             # held by `lab up` from its check to the lab's start


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "vlanroute" / "lab"


class StateDir:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, name: str, text: str) -> Path:
        """Write a file whole (a reader never sees half of it), readable by the owner only,
        never through a symbolic link (vlanroute.safeio.private)."""
        self.ensure()
        return write_private(self.path / name, text, f"lab file {name}")

    def ensure(self) -> None:
        """The directory, mode 0700: it holds the switches' running configs (password hashes
        in a real switch's backup used as a seed); a looser existing one is refused."""
        ensure_private_dir(self.path, "lab state directory")

    def write_running(self, switch: str, text: str) -> Path:
        """running/<switch>.cfg, the config a switch had when the lab stopped (mode 0600)."""
        folder = ensure_private_subdir(self.path, "running", "lab's running configs folder")
        return write_private(folder / f"{switch}.cfg", text, "running config")

    def read(self, name: str) -> str | None:
        """A file of the state directory, or None if it is missing; anything else there (a
        FIFO, a link, a directory, an unreadable or huge file) is a UserError, never a
        block or a traceback (vlanroute.safeio.private)."""
        return read_private(self.path / name, f"lab file {name}")

    def remove(self, *names: str) -> None:
        for name in names:
            try:
                (self.path / name).unlink(missing_ok=True)
            except OSError as exc:
                raise UserError(f"cannot remove the lab file {name}: {exc.strerror}", file=str(self.path),
                                field="--state-dir", fix=WRITABLE_FIX) from None

    def lock(self, name: str) -> int | None:
        """An exclusive flock on `name` in the state directory, or None if another process
        holds it; the lock lasts while the returned descriptor is open (closed with the
        process, also on kill -9). The holder's process id is written into the file."""
        fd = open_private(self.path / name, os.O_RDWR | os.O_CREAT, f"lab lock {name}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    def holder(self, name: str) -> int | None:
        """The process id written into lock `name` (its last holder), if any."""
        try:
            text = self.read(name)
        except UserError:
            return None
        return int(text) if text and text.strip().isdigit() else None

    def lab(self) -> dict[str, object] | None:
        text = self.read("lab.json")
        try:
            data = json.loads(text) if text else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def running_pid(self) -> int | None:
        """The lab daemon's process id if it is alive, else None: the one lab.json names, or
        the one holding the daemon lock of this directory (a daemon whose lab.json another
        `lab up` removed, or that is still starting, is found and stopped too)."""
        lab = self.lab()
        pid = lab.get("pid") if lab else None
        if isinstance(pid, int) and daemon_alive(pid):
            return pid
        held = self.holder(DAEMON_LOCK)
        return held if held is not None and daemon_alive(held, self.path) else None


def daemon_alive(pid: int, state_dir: Path | None = None) -> bool:
    """Is `pid` a running lab daemon (not a reused process id), of `state_dir` if given?"""
    try:
        cmdline = [part.decode(errors="replace") for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
    except OSError:
        return False
    if DAEMON_MODULE not in cmdline:
        return False
    return state_dir is None or str(state_dir) in cmdline
