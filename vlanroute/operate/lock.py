"""One watcher per fabric: an exclusive flock(2) on `<state dir>/watch/lock`, held for the
watcher's whole life. A second `vlanroute watch` of the same fabric (the same state
directory) stops at once with exit code 2, naming the first. The kernel releases the lock
when the process ends, however it ends: a killed watcher leaves nothing to clean up.

The watcher also takes the fabric's lock (device/statedir.lock_fabric), but only while it
acts, so that an operator's push, save or rollback can run between its actions (and makes
it wait: a busy fabric is tried again later).
"""

from __future__ import annotations

import fcntl
import json
import os

from vlanroute.device.statedir import FabricState, now_stamp
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.operate.journal import watch_dir
from vlanroute.safeio.private import open_private


class WatcherLock:
    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lock_watcher(state: FabricState) -> WatcherLock:
    path = watch_dir(state) / "lock"
    fd = open_private(path, os.O_RDWR | os.O_CREAT, "watcher's lock file")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise UserError(f"another vlanroute watch {holder} already follows this fabric", file=str(path),
                        field="--state-dir", fix="stop it first (systemctl stop, or kill that process); "
                        "one watcher per fabric", exit_code=int(ExitCode.USAGE)) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps({"pid": os.getpid(), "since": now_stamp()}) + "\n").encode(), 0)
    return WatcherLock(fd)


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        since = str(info["since"])
        if not since.replace(".", "").replace("T", "").replace("Z", "").isdigit():
            return ""
        return f"(pid {int(info['pid'])}, since {since})"
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return ""
