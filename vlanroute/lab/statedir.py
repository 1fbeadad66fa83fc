"""Where a running lab (`vlanroute lab up`) keeps its files; no asyncssh needed here.

Default: `$XDG_STATE_HOME/vlanroute/lab`, else `~/.local/state/vlanroute/lab` (one lab
per user at a time); `--state-dir` chooses another, e.g. one per OUTDIR.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from vlanroute.safeio.private import ensure_private_dir, ensure_private_subdir, write_private

PASSWORD_ENV = "VLANROUTE_LAB_PASSWORD"     # parent -> daemon only, never stored
DAEMON_MODULE = "vlanroute.lab.daemon"


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
        try:
            return (self.path / name).read_text()
        except FileNotFoundError:
            return None

    def remove(self, *names: str) -> None:
        for name in names:
            (self.path / name).unlink(missing_ok=True)

    def lab(self) -> dict[str, object] | None:
        text = self.read("lab.json")
        try:
            data = json.loads(text) if text else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def running_pid(self) -> int | None:
        """The lab daemon's process id if it is alive, else None."""
        lab = self.lab()
        pid = lab.get("pid") if lab else None
        if not isinstance(pid, int):
            return None
        return pid if daemon_alive(pid) else None


def daemon_alive(pid: int) -> bool:
    """Is `pid` a running lab daemon (not a reused process id)?"""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(part.decode(errors="replace") == DAEMON_MODULE for part in cmdline)
