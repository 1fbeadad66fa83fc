"""Options shared by every command that reads an inventory."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

set_option = click.option(
    "--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
    help="Override an inventory field; the value is read as YAML (e.g. --set topology.dims=[8,8]).")

# Gb/s: above every Ethernet speed (IEEE 802.3df: 800 Gb/s), so a typo (1e9) is caught.
MAX_LINK_SPEED = 10_000.0


def _link_speed(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A link speed in Gb/s: finite and within 0.001..MAX_LINK_SPEED (click's FloatRange
    lets nan through: every comparison with it is false)."""
    if value is None:
        return None
    if not math.isfinite(value) or not 0.001 <= value <= MAX_LINK_SPEED:
        raise click.BadParameter(f"{value} is not a link speed: give Gb/s between 0.001 and "
                                 f"{MAX_LINK_SPEED:,.0f}, e.g. 10 for 10GbE", ctx=ctx, param=param)
    return value


def link_speed_option(default: float | None, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--link-speed", "link_speed", type=float, default=default, show_default=default is not None,
                        callback=_link_speed, metavar="GBPS", help=help)
