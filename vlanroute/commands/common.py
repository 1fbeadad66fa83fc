"""Options shared by every command that reads an inventory."""

from __future__ import annotations

from typing import Any, Callable

import click

set_option = click.option(
    "--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
    help="Override an inventory field; the value is read as YAML (e.g. --set topology.dims=[8,8]).")


def inventory_command(f: Callable[..., Any]) -> Callable[..., Any]:
    return set_option(f)
