"""The decorator of every compiled kernel: numba.njit, cached on disk. Importing this module
imports numba; callers check routing/jit.py first.

numba checks a cached kernel against its own file only, not against the files of the kernels
it calls (acyclic/kernel_parts.py, whatif/pairs_kernel.py): after a change to those alone it
would load the old machine code. So the kernels are cached in a folder of their own per
version of every kernel source (`cache_dir`), under NUMBA_CACHE_DIR where the user set one,
else under the user's cache folder; a change to any kernel compiles them all again, once.
Folders of other versions left unused for UNUSED_DAYS are removed, so that upgrades do not
pile them up.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numba

F = TypeVar("F", bound=Callable[..., Any])
_config: Any = numba.config          # its settings are set at run time: no types for them
UNUSED_DAYS = 30
_FOLDER = re.compile(r"numba-[0-9a-f]{16}")


@functools.cache
def cache_dir() -> str:
    """The cache folder of this version of the kernels' sources (every *kernel*.py of
    vlanroute/routing)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.rglob("*kernel*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    base = _config.CACHE_DIR or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "vlanroute")
    folder = os.path.join(base, "numba-" + digest.hexdigest()[:16])
    prune(base, keep=folder)
    return folder


def prune(base: str, keep: str) -> None:
    """Mark `keep` used (its time set to now) and remove the other versions' folders under
    `base` unused for UNUSED_DAYS. Best effort: a folder that cannot be written is left as
    it is, and numba then uses its own cache places."""
    try:
        os.makedirs(keep, exist_ok=True)
        os.utime(keep)
        entries = list(os.scandir(base))
    except OSError:
        return
    cutoff = time.time() - UNUSED_DAYS * 86400
    for entry in entries:
        try:
            stale = (_FOLDER.fullmatch(entry.name) is not None and entry.path != keep
                     and entry.is_dir(follow_symlinks=False)
                     and entry.stat(follow_symlinks=False).st_mtime < cutoff)
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)


def jit(f: F) -> F:
    """numba.njit, cached on disk in `cache_dir` (numba falls back to its own places where
    that folder cannot be written, and compiles on each run where it finds none)."""
    saved = _config.CACHE_DIR
    _config.CACHE_DIR = cache_dir()     # read by numba's cache locator while decorating
    try:
        return cast(F, numba.njit(cache=True)(f))
    except RuntimeError:             # no cache locator: compiled on each run instead
        return cast(F, numba.njit(f))
    finally:
        _config.CACHE_DIR = saved
