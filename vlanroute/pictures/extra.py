"""The pictures need the `draw` extra (matplotlib, numpy, Pillow); no other command does, so
a plain `pip install vlanroute` leaves them out. Checked before anything imports them, so a
missing extra is a one-line error naming the install command, not a traceback."""

from __future__ import annotations

import importlib.util

from vlanroute.errors import UserError

DRAW_MODULES = ("matplotlib", "numpy", "PIL")


def require_draw_extra(command: str) -> None:
    missing = [m for m in DRAW_MODULES if not _installed(m)]
    if missing:
        raise UserError(f"vlanroute {command} needs the 'draw' extra ({', '.join(missing)} not installed)",
                        fix="pip install 'vlanroute[draw]'")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:           # a finder that refuses the name counts as not installed
        return False
