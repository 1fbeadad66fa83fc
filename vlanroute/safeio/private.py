"""Private directories and files: owner only, never reached through a symbolic link.

The state directories (push backups hold running configs with password hashes; the lab's
hold its switches' configs) must not be readable or writable by others, and nothing in them
may be a symbolic link: push would truncate or write the link's target (a lock file linked
to ~/.bashrc). A looser existing directory is refused, not tightened behind the user's
back: it may be shared on purpose, and the fix is one chmod.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vlanroute.errors import UserError

DIR_MODE = 0o700
FILE_MODE = 0o600
STATE_FILE_LIMIT = 64 << 20      # a state file: a journal, a lab's lab.json or cable list
WRITABLE_FIX = "make the state directory writable for this user, or choose another with --state-dir"


def _check_dir(path: Path, what: str, field: str | None, fix: str) -> None:
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise UserError(f"cannot use the {what}: {exc.strerror}", file=str(path), field=field, fix=fix) from None
    if stat.S_ISLNK(st.st_mode):
        raise UserError(f"the {what} is a symbolic link, which vlanroute does not follow there",
                        file=str(path), field=field,
                        fix="remove the link (nothing in a state directory is ever a link), then run again")
    if not stat.S_ISDIR(st.st_mode):
        raise UserError(f"the {what} exists and is not a directory", file=str(path), field=field,
                        fix="move it away, or choose another state directory")
    if st.st_uid != os.geteuid():
        raise UserError(f"the {what} belongs to another user (uid {st.st_uid})", file=str(path), field=field,
                        fix="choose a state directory of your own")
    if st.st_mode & 0o077:
        raise UserError(f"the {what} has mode {stat.S_IMODE(st.st_mode):04o}: others may read or change "
                        "what it holds (running configs with password hashes, push journals)",
                        file=str(path), field=field,
                        fix=f"chmod 700 {path} (vlanroute creates it so), or choose another state directory")


def ensure_private_dir(path: Path, what: str = "state directory", field: str | None = "--state-dir",
                       fix: str = "choose a writable directory of your own with --state-dir") -> None:
    """`path` as a directory of mode 0700 owned by this user, made if missing (its parents
    too, with the default mode); the top itself may be reached through a link the user
    chose (--state-dir /data/state -> ...), so it is checked where it resolves to."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except FileExistsError:
        pass                                  # not a directory: _check_dir names it
    except OSError as exc:
        raise UserError(f"cannot create the {what}: {exc.strerror}", file=str(exc.filename or path),
                        field=field, fix=fix) from None
    _check_dir(Path(os.path.realpath(path)), what, field, fix)


def ensure_private_subdir(parent: Path, name: str, what: str, field: str | None = "--state-dir") -> Path:
    """parent/name as a private directory, never a link (mkdir does not follow one: EEXIST)."""
    path = parent / name
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UserError(f"cannot create the {what}: {exc.strerror}", file=str(path), field=field,
                        fix="make the state directory writable for this user, or choose another") from None
    _check_dir(path, what, field, "remove it, vlanroute makes it again")
    return path


def open_private(path: Path, flags: int, what: str, field: str | None = "--state-dir") -> int:
    """os.open with mode 0600 that never follows a symbolic link at `path` (O_NOFOLLOW)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except OSError as exc:
        if os.path.islink(path):
            raise UserError(f"the {what} is a symbolic link, which vlanroute does not follow there",
                            file=str(path), field=field,
                            fix="remove the link (nothing in a state directory is ever a link), then run again") from None
        raise UserError(f"cannot open the {what}: {exc.strerror}", file=str(path), field=field,
                        fix=WRITABLE_FIX) from None


def write_private(path: Path, text: str, what: str, field: str | None = "--state-dir") -> Path:
    """Write `text` whole to `path` (mode 0600) through a temporary file renamed over it, so a
    link at `path` is replaced, never written through, and a reader never sees half."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise UserError(f"cannot write the {what}: {exc.strerror}", file=str(tmp), field=field) from None
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, what, field)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def read_private(path: Path, what: str, field: str | None = "--state-dir",
                 limit: int = STATE_FILE_LIMIT) -> str | None:
    """The text of a file in a state directory, or None if there is none. Never follows a
    symbolic link, never blocks on a FIFO, reads at most `limit` bytes: anything that is not
    a regular UTF-8 file of that size is a UserError naming it."""
    fix = f"remove {path} (vlanroute writes it again), then run again"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"cannot read the {what}: {exc.strerror}", file=str(path), field=field, fix=fix) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserError(f"the {what} is not a regular file", file=str(path), field=field, fix=fix)
        data = b""
        while chunk := os.read(fd, min(1 << 20, limit + 1 - len(data))):
            data += chunk
            if len(data) > limit:
                raise UserError(f"the {what} is larger than {limit >> 20} MiB", file=str(path), field=field, fix=fix)
    except OSError as exc:
        raise UserError(f"cannot read the {what}: {exc.strerror}", file=str(path), field=field, fix=fix) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"the {what} is not UTF-8 text", file=str(path), field=field, fix=fix) from None
