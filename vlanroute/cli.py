"""Command-line entry point: one click group, one module per command under vlanroute.commands.

Every command turns a UserError into a message on stderr and a non-zero exit code.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from vlanroute.commands.runner import run_command

# One line per command: vlanroute/commands/<name>.py exporting `command` named <name>.
COMMAND_MODULES: list[str] = [
    "push",
    "save",
    "rollback",
    "audit",
    "plan",
    "algorithms",
    "analyze",
    "render",
    "learn",
    "verify",
    "emulate",
    "draw",
    "report",
    "lab",
    "import",
    "export",
    "cabling",
    "discover",
    "repair",
    "whatif",
    "watch",
]
# A command whose name is a Python keyword lives in a module of another name.
MODULE_OF = {"import": "importer"}


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (or when --help lists them).

    `vlanroute learn` runs from cron on every host: it should not pay for netmiko,
    networkx and pydantic imports it never uses.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMAND_MODULES:
            return None
        module = MODULE_OF.get(cmd_name, cmd_name)
        command: click.Command = importlib.import_module(f"vlanroute.commands.{module}").command
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vlanroute")
@click.option("-v", "--verbose", "verbosity", count=True,
              help="Log progress to stderr: -v info, -vv debug, -vvv also netmiko's and paramiko's.")
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path), envvar="VLANROUTE_LOG_FILE",
              show_envvar=True, help="Append vlanroute's debug log to FILE (created 0600; secrets masked).")
def group(verbosity: int, log_file: Path | None) -> None:
    """VLAN routing for Ethernet HPC clusters with loops."""
    if verbosity or log_file is not None:
        from vlanroute.device.logsecrets import configure
        try:
            configure(verbosity, log_file)
        except OSError as exc:
            raise click.BadParameter(f"cannot write {log_file}: {exc.strerror}", param_hint="--log-file") from None


def main(argv: list[str] | None = None) -> int:
    return run_command(group, argv, prog_name="vlanroute")


if __name__ == "__main__":
    sys.exit(main())
