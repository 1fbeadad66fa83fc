"""`vlanroute export nautobot OUTDIR`: a rendered plan written into the site's other tools
(commands/nautobot.py; docs/import.md)."""

from __future__ import annotations

import click

from vlanroute.commands.nautobot import export_nautobot


@click.group("export")
def command() -> None:
    """Write a rendered plan into the site's other tools (Nautobot)."""


command.add_command(export_nautobot)
