"""Replace an output directory by a fully written one, so readers never see a half-written tree.

Used by `render` and `draw`: both write into a temporary directory next to OUTDIR and
publish it here only once everything succeeded.
"""

from __future__ import annotations

from collections.abc import Iterator
import contextlib
import ctypes
import os
import shutil
import signal
import tempfile
import threading
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


class _Terminated(BaseException):
    """SIGTERM arrived while a temporary directory existed (see `cleanup_on_sigterm`)."""


@contextlib.contextmanager
def cleanup_on_sigterm() -> Iterator[None]:
    """Within: SIGTERM unwinds the stack like Ctrl-C, so the callers' `except BaseException`
    remove their temporary directory; then the process ends by SIGTERM as it would have
    (a service manager sees the same end). Only in the main thread (signals go there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: object) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        raise                       # not reached: the default action ends the process
    finally:
        signal.signal(signal.SIGTERM, previous)
