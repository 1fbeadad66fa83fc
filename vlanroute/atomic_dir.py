"""Replace an output directory by a fully written one, so readers never see a half-written tree.

Used by `render` and `draw`: both write into a temporary directory next to OUTDIR and
publish it here only once everything succeeded.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange_dirs(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    return fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def publish_dir(tmp: Path, outdir: Path) -> None:
    """Move the finished `tmp` to `outdir`, replacing what was there."""
    if not outdir.exists():
        os.rename(tmp, outdir)
        return
    if exchange_dirs(tmp, outdir):
        shutil.rmtree(tmp)          # tmp now holds the old OUTDIR
        return
    # Fallback: two renames; if the second fails, the old OUTDIR is put back.
    old = Path(tempfile.mkdtemp(dir=outdir.parent, prefix=f".{outdir.name}.old-"))
    os.rmdir(old)
    os.rename(outdir, old)
    try:
        os.rename(tmp, outdir)
    except OSError:
        os.rename(old, outdir)
        raise
    shutil.rmtree(old)
