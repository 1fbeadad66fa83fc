"""The console the table commands (analyze, algorithms) print with: as wide as the terminal
(or $COLUMNS), rich wrapping cells to fit; into a pipe, where no terminal sets a width,
`pipe_width` columns, so scripts and files get the whole table on one line per row."""

from __future__ import annotations

import os
import sys

from rich.console import Console


def table_console(pipe_width: int) -> Console:
    isatty = getattr(sys.stdout, "isatty", None)     # a replaced stdout may have none
    if (isatty is not None and isatty()) or os.environ.get("COLUMNS", "").isdigit():
        return Console()              # rich reads the terminal's width, or $COLUMNS
    return Console(width=pipe_width)
