"""Run one click command without importing `vlanroute.cli`.

`vlanroute.cli` imports every command, matplotlib among them: seconds natively and tens of
seconds under QEMU TCG, paid by every emulated host's learn call. Errors are reported the
way `vlanroute.cli.main` reports them, with the exit codes of vlanroute.exitcodes
(docs/exit-codes.md); under --json also as one `vlanroute-error/1` object on stdout.
"""

from __future__ import annotations

import sys

import click

from vlanroute.commands import output
from vlanroute.errors import UserError, VerificationError
from vlanroute.exitcodes import ExitCode


def _fail(message: str, code: int) -> int:
    click.echo(f"error: {message}" if message else "", err=True)
    if output.json_mode():
        output.emit_error(message, int(code))
    return int(code)


def _asks_for_json(argv: list[str]) -> bool:
    options = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in options


def run_command(click_command: click.Command, argv: list[str] | None = None, prog_name: str | None = None) -> int:
    """Run a click command or group; user errors become a message and an exit code, never a traceback."""
    output.reset()
    try:
        rv = click_command.main(args=argv, prog_name=prog_name or f"vlanroute {click_command.name}",
                                standalone_mode=False)
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
