"""The fabric's state directory: push backups and push journals, kept outside OUTDIR.

OUTDIR is replaced as a whole by every render, so nothing a push must keep may live there
(a render during a push used to delete backups). One state directory per inventory name:
`--state-dir DIR`, else `$XDG_STATE_HOME/vlanroute/<name>`, else
`~/.local/state/vlanroute/<name>` (XDG Base Directory: "state data that should persist
between restarts", https://specifications.freedesktop.org/basedir-spec/latest/).

    <state dir>/backups/<switch>-<UTC time>.cfg   running config before a push (0600)
    <state dir>/pushes/<UTC time>.jsonl            one journal per push (vlanroute.device.journal)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
import os
from pathlib import Path
import re

from vlanroute.errors import UserError

STATE_DIR_ENV = "XDG_STATE_HOME"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def now_stamp() -> str:
    """A UTC time stamp that sorts as text: 20261123T190512.123456Z."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


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
    def choose(cls, state_dir: Path | None, plan_name: str | None, outdir: Path) -> "FabricState":
        return cls(state_dir if state_dir is not None
                   else default_state_dir(fabric_name(plan_name, outdir)))

    @property
    def backups(self) -> Path:
        return self.path / "backups"

    @property
    def pushes(self) -> Path:
        return self.path / "pushes"

    def ensure(self) -> None:
        """Create the folders (owner only: backups hold password hashes), or a clear error."""
        try:
            for folder in (self.path, self.backups, self.pushes):
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the state directory: {exc.strerror}",
                            file=str(exc.filename or self.path), field="--state-dir",
                            fix="choose a writable directory with --state-dir, or set "
                                f"{STATE_DIR_ENV}") from None

    def write_backup(self, switch: str, text: str) -> Path:
        """backups/<switch>-<UTC time>.cfg, mode 0600 (running configs hold password hashes
        and SNMP communities). `switch` comes from the validated plan document (no '/', no
        leading dot), so the file stays in backups/."""
        self.ensure()
        path = self.backups / f"{switch}-{now_stamp()}.cfg"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        return path
