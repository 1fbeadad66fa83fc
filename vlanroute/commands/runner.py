"""Run one click command without importing `vlanroute.cli`.

`vlanroute.cli` imports every command, matplotlib among them: seconds natively and tens of
seconds under QEMU TCG, paid by every emulated host's learn call. Errors are reported the
way `vlanroute.cli.main` reports them, with the exit codes of vlanroute.exitcodes
(docs/exit-codes.md); under --json also as one `vlanroute-error/1` object on stdout.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from collections.abc import Iterator
from typing import Any

import click

from vlanroute.commands import output
from vlanroute.errors import NAME_TOO_LONG, UserError, VerificationError, disk_problem
from vlanroute.exitcodes import ExitCode


def _fail(message: str, code: int) -> int:
    click.echo(f"error: {message}" if message else "", err=True)
    if output.json_mode():
        output.emit_error(message, int(code))
    return int(code)


def _asks_for_json(argv: list[str]) -> bool:
    options = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in options


def _stdout_failed(exc: OSError) -> int:
    """stdout cannot take what the command printed: a reader that went away (`| head -0`)
    or a full device (`> /dev/full`). Said on stderr, never a traceback; stdout is pointed at
    /dev/null so that the interpreter's last flush at exit does not fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    if isinstance(exc, BrokenPipeError):
        # The reader closed the pipe: it wanted no more, as `head` does. Nothing to say on
        # stderr (as with other tools); 141 = 128 + SIGPIPE, as shells report such an end.
        return int(ExitCode.BROKEN_PIPE)
    what, fix = disk_problem(exc)
    where = "standard output" if exc.filename is None else str(exc.filename)
    try:
        # not disk_error's "nothing was replaced": stdout is no file of ours, and it got a part
        click.echo(f"error: {where}: cannot write: {what}\n  fix: {fix}; what it holds is incomplete", err=True)
    except OSError:
        pass
    return int(ExitCode.USAGE)


def _stdout_is_devnull() -> bool:
    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError, AttributeError):
        return False


def run_command(click_command: click.Command, argv: list[str] | None = None, prog_name: str | None = None) -> int:
    """Run a click command or group; user errors become a message and an exit code, never a traceback."""
    try:
        with _whole_writes_to_a_file():
            return _run(click_command, argv, prog_name)
    except OSError as exc:
        # Only stdout's own errors should get here: every command turns its files' errors into
        # a UserError (errors.disk_error); a failed stdout is also met by the error reporting.
        if isinstance(exc, BrokenPipeError) or exc.errno in _STDOUT_ERRNOS:
            return _stdout_failed(exc)
        if exc.errno == errno.ENAMETOOLONG and exc.filename is not None:
            # A path the user named, met by a check before safeio.paths' own: still the user's to fix.
            return _fail(UserError(NAME_TOO_LONG[0], file=str(exc.filename),
                                   fix=NAME_TOO_LONG[1]).render(), ExitCode.USAGE)
        raise


class _WholeWriter(io.RawIOBase):
    """stdout's file descriptor, written whole or not at all: Python's buffered writer takes a
    short write (a file that reaches `ulimit -f` or fills its disk) as done and drops the rest,
    so `vlanroute plan --json > plan.json` could end cut off with exit code 0. Here the write
    is retried, and the retry raises the error (EFBIG, ENOSPC) that the runner reports."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            wrote = os.write(self._fd, view[done:])
            if wrote == 0:                  # never for a regular file, but never loop for ever
                raise OSError(errno.EIO, "standard output took no bytes")
            done += wrote
        return done


@contextlib.contextmanager
def _whole_writes_to_a_file() -> Iterator[None]:
    """While a command runs, stdout on a regular file goes through `_WholeWriter`; on a
    terminal or a pipe (a write there waits or fails whole) and under a test's capture,
    stdout is left alone."""
    old = sys.stdout
    try:
        regular = isinstance(old, io.TextIOWrapper) and stat.S_ISREG(os.fstat(old.fileno()).st_mode)
    except (OSError, ValueError):           # io.UnsupportedOperation is a ValueError and an OSError
        regular = False
    if not regular:
        yield
        return
    old.flush()
    new = io.TextIOWrapper(io.BufferedWriter(_WholeWriter(old.fileno())), encoding=old.encoding,
                           errors=old.errors, line_buffering=bool(old.line_buffering))
    sys.stdout = new
    try:
        yield
        new.flush()
    finally:
        sys.stdout = old
        try:
            new.detach()            # the descriptor stays open: it is still `old`'s
        except (OSError, ValueError):
            pass


_STDOUT_ERRNOS = (errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG)


def _run(click_command: click.Command, argv: list[str] | None, prog_name: str | None) -> int:
    output.reset()
    try:
        was_null = _stdout_is_devnull()
        try:
            rv = click_command.main(args=argv, prog_name=prog_name or f"vlanroute {click_command.name}",
                                    standalone_mode=False)
        except SystemExit as exc:
            # click and rich meet EPIPE themselves and exit 1: click wraps stdout in a
            # _PacifyFlushWrapper (click/core.py, Command.main), rich points stdout at
            # /dev/null (Console.on_broken_pipe). Report it with the code of one met here.
            if exc.code == 1 and (type(sys.stdout).__name__ == "_PacifyFlushWrapper"
                                  or (not was_null and _stdout_is_devnull())):
                raise BrokenPipeError(errno.EPIPE, "Broken pipe") from None
            raise
        sys.stdout.flush()              # a full stdout fails here, inside the handlers below
    except UserError as exc:
        return _fail(exc.render(), exc.exit_code)
    except VerificationError as exc:
        # A rendered config or plan failed its check: the check found a problem.
        return _fail(str(exc), ExitCode.FAILED_CHECK)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return int(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        # A usage error found while parsing (unknown option, bad value) stops click before the
        # --json callback runs: look at the arguments, so stdout still parses (docs/json.md).
        if output.json_mode() or _asks_for_json(sys.argv[1:] if argv is None else argv):
            output.emit_error(exc.format_message(), exc.exit_code)
        return exc.exit_code
    except KeyboardInterrupt:
        return _fail("interrupted", ExitCode.INTERRUPTED)
    return int(rv) if isinstance(rv, int) else int(ExitCode.OK)
