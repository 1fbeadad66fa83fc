"""Options shared by every command that reads an inventory."""

from __future__ import annotations

import click

set_option = click.option(
    "--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
    help="Override an inventory field; the value is read as YAML (e.g. --set topology.dims=[8,8]).")
