"""A path the user named, checked before anything else looks at it.

Python's `Path.is_dir()`, `exists()` and `is_symlink()` answer False for a missing path or a
symbolic-link loop, but raise for a name the system cannot take: a component over 255 bytes
or a whole path over 4096 (ENAMETOOLONG). Every check of an output path calls
`require_nameable` first, so that mistake is a UserError naming the field, not a traceback.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from vlanroute.errors import NAME_TOO_LONG, UserError


def require_nameable(path: Path, field: str) -> None:
    """UserError when the system refuses `path`'s length; anything else is left to the caller
    (a missing path is often what the caller wants)."""
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise UserError(NAME_TOO_LONG[0], file=str(path), field=field, fix=NAME_TOO_LONG[1]) from None


def require_parent_dir(path: Path, field: str) -> None:
    """UserError when the folder `path` goes in is missing or is a file (`-o afile/out`)."""
    parent = path.parent
    if not parent.is_dir():
        what = f"{parent} is a file, not a directory" if parent.exists() else f"the directory {parent} does not exist"
        raise UserError(what, field=field, fix="create it first, or choose another output path")
