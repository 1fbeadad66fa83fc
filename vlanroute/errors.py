"""The one exception type for mistakes a user can fix.

The CLI turns it into a message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import errno


def _shown_path(text: str) -> str:
    """A path for a message: one longer than any name the system takes (a mistake, such as
    a name over 255 bytes) is cut in the middle."""
    return text if len(text) <= 255 else f"{text[:100]}...{text[-100:]}"


class UserError(Exception):
    """A mistake in the user's input: names the file, the field, what is wrong and the fix."""

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None,
                 fix: str | None = None, exit_code: int = 2) -> None:   # 2 = ExitCode.USAGE
        self.message = message
        self.file = file
        self.field = field
        self.fix = fix
        self.exit_code = exit_code
        super().__init__(self.render())

    def render(self) -> str:
        where = ": ".join(p for p in (_shown_path(self.file) if self.file else None, self.field) if p)
        text = f"{where}: {self.message}" if where else self.message
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class PlanError(UserError):
    """The inventory is valid on its own but no safe plan exists for it (limits, connectivity)."""


class VerificationError(Exception):
    """A plan or a rendered config failed verification. This is a bug or a tampered file."""

    def __init__(self, violations: list[str]) -> None:
        self.violations = violations
        shown = "\n  ".join(violations[:10])
        more = f"\n  ... and {len(violations) - 10} more" if len(violations) > 10 else ""
        super().__init__(f"verification failed ({len(violations)} violations):\n  {shown}{more}")


# (what, fix) for ENAMETOOLONG: also safeio/paths.py's, for a path checked before any write
NAME_TOO_LONG = ("the name is too long for the file system (a name over 255 bytes, or a path over 4096)",
                 "choose a shorter name")
_NOT_PERMITTED = "choose a directory you may write to, or fix its permissions"
# errno -> (what went wrong, the fix for it)
_DISK_PROBLEMS = {
    errno.ENOSPC: ("no space left on the device", "free some space there, or choose a directory on another file system"),
    errno.EROFS: ("the file system is read-only",
                  "choose a directory on a writable file system (or remount this one read-write)"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some of your files there, or choose a directory outside the quota"),
    errno.EACCES: ("permission denied", _NOT_PERMITTED),
    errno.EPERM: ("operation not permitted", _NOT_PERMITTED),
    errno.ENOTDIR: ("a part of the path is a file, not a directory",
                    "choose a path whose every folder is a directory"),
    errno.EEXIST: ("a file is where a directory of the path must be",
                   "choose a path whose every folder is a directory, or move that file away"),
    errno.ENAMETOOLONG: NAME_TOO_LONG,
    errno.EFBIG: ("the file is larger than this process may write (ulimit -f) or the file system takes",
                  "raise the limit (ulimit -f), or choose another file system"),
}


def disk_problem(exc: OSError) -> tuple[str, str]:
    """(what went wrong, the fix) for a failed write: a full or read-only disk, a name too long..."""
    return _DISK_PROBLEMS.get(exc.errno or 0, (exc.strerror or str(exc),
                                               "free some space, or choose a writable directory"))


def disk_error(exc: OSError, where: object) -> UserError:
    """A full or read-only file system is the user's to fix: a UserError saying which and
    where (the path the system call named, else `where`), never a traceback."""
    what, fix = disk_problem(exc)
    return UserError(f"cannot write: {what}", file=str(exc.filename or where),
                     fix=f"{fix}; nothing was replaced")
