"""Write one output file a user named (`discover -o`, `import ansible -o`): whole or not at
all, and never through a symbolic link at that path (it could point at ~/.bashrc or at a
file of another user's, and the write would replace that file's content)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vlanroute.errors import UserError, disk_error
from vlanroute.safeio.paths import require_nameable


def write_output(path: Path, text: str, field: str = "-o/--output") -> Path:
    """`text` to `path` through a temporary file renamed over it; a link or a directory at
    `path` is refused, nothing is written."""
    require_nameable(path, field)
    if path.is_symlink():
        raise UserError("is a symbolic link; vlanroute does not write through one", file=str(path),
                        field=field, fix="give the path of the file itself (or remove the link)")
    if path.is_dir():
        raise UserError("is a directory", file=str(path), field=field, fix="give a file name")
    folder = path.parent
    tmp = None
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        tmp = Path(name)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)         # as a plain open() would have made it
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)                 # replaces a link made meanwhile, never follows it
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise disk_error(exc, path) from None
    return path
