"""The `--state-dir` option of push, save and rollback (vlanroute.device.statedir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Callable

import click


def state_dir_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Where push keeps backups and journals (default: $XDG_STATE_HOME/vlanroute/<plan "
             "name>, else ~/.local/state/vlanroute/<plan name>); never inside OUTDIR.")(f)
