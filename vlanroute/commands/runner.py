"""Run one click command without importing `vlanroute.cli`.

`vlanroute.cli` imports every command, matplotlib among them: seconds natively and tens of
seconds under QEMU TCG, paid by every emulated host's learn call. Errors are reported the
way `vlanroute.cli.main` reports them.
"""

from __future__ import annotations

import click

from vlanroute.errors import UserError, VerificationError


def run_command(click_command: click.Command, argv: list[str] | None = None, prog_name: str | None = None) -> int:
    """Run a click command or group; user errors become a message and an exit code, never a traceback."""
    try:
        rv = click_command.main(args=argv, prog_name=prog_name or f"vlanroute {click_command.name}",
                                standalone_mode=False)
    except UserError as exc:
        click.echo(f"error: {exc.render()}", err=True)
        return exc.exit_code
    except VerificationError as exc:
        click.echo(f"error: {exc}", err=True)
        return 3
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    return rv if isinstance(rv, int) else 0
