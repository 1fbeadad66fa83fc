"""Command-line entry point: one click group, one module per command under vlanroute.commands.

Every command turns a UserError into a message on stderr and a non-zero exit code.
"""

from __future__ import annotations

import importlib
import sys

import click

from vlanroute.leancli import lean_main

# One line per command module: vlanroute/commands/<module>.py exporting `command`.
COMMAND_MODULES: list[str] = [
    "push",
    "audit",
    "plan",
    "analyze",
    "render",
    "learn",
    "verify",
    "emulate",
    "draw",
    "report",
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vlanroute")
def group() -> None:
    """VLAN routing for Ethernet HPC clusters with loops."""


for _name in COMMAND_MODULES:
    group.add_command(importlib.import_module(f"vlanroute.commands.{_name}").command)


def main(argv: list[str] | None = None) -> int:
    return lean_main(group, argv, prog_name="vlanroute")


if __name__ == "__main__":
    sys.exit(main())
