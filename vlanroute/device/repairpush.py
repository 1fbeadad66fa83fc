"""Push a repaired bundle (`vlanroute repair`) in the loop-free order its repair.json gives.

A repair removes the memberships of dead (and, with --extra-changes, exchanged) links and
adds those of replacement links. Each switch's commands add before they remove
(device/order.py: memberships in phase 1, removals in phase 3), so the order of the
switches is what keeps every VLAN loop-free between two switches: routing/repair.py
`push_order` computes it (the switches that only lose memberships first) and proves it on
a model of the memberships; push sends the switches one at a time in that order, and stops
at the first failure, whose rollback returns the fabric to a state the order went through.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from vlanroute.errors import UserError
from vlanroute.safeio.reading import BUNDLE_LIMIT, load_json, read_text_file

REPAIR_FILE = "repair.json"
T = TypeVar("T")


def repair_order(outdir: Path) -> list[str] | None:
    """The switch order of OUTDIR/repair.json, or None when OUTDIR is no repair."""
    path = outdir / REPAIR_FILE
    if not os.path.lexists(path):           # anything else there (a FIFO, a link) is read, and refused
        return None
    fix = "write the bundle again with `vlanroute repair`"
    # Within the limits of every bundle file (size, UTF-8, nesting: safeio.reading), so a
    # deeply nested repair.json is a message, not a RecursionError.
    try:
        data = load_json(read_text_file(path, limit=BUNDLE_LIMIT, what="repair record", fix=fix), str(path))
    except ValueError as exc:
        raise UserError(f"not JSON: {exc}", file=str(path), fix=fix) from None
    order = data.get("push_order") if isinstance(data, dict) else None
    if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
        raise UserError("not a list of switch names", file=str(path), field="push_order",
                        fix="write the bundle again with `vlanroute repair`")
    return order


def ordered(targets: list[T], names: list[str], name_of: Callable[[T], str]) -> list[T]:
    """`targets` in the repair's order; switches it does not name (no change) after, as they were."""
    rank = {n: i for i, n in enumerate(names)}
    return sorted(targets, key=lambda t: rank.get(name_of(t), len(rank)))
