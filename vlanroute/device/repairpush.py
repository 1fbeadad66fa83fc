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
from typing import Any, TypeVar

from vlanroute.bundle.failures import Failures, parse_failures
from vlanroute.errors import UserError
from vlanroute.safeio.reading import BUNDLE_LIMIT, load_json, read_text_file

REPAIR_FILE = "repair.json"
T = TypeVar("T")


FIX = "write the bundle again with `vlanroute repair`"


def _record(outdir: Path) -> dict[str, Any] | None:
    """OUTDIR/repair.json as JSON, or None when OUTDIR is no repair."""
    path = outdir / REPAIR_FILE
    if not os.path.lexists(path):           # anything else there (a FIFO, a link) is read, and refused
        return None
    # Within the limits of every bundle file (size, UTF-8, nesting: safeio.reading), so a
    # deeply nested repair.json is a message, not a RecursionError.
    try:
        data = load_json(read_text_file(path, limit=BUNDLE_LIMIT, what="repair record", fix=FIX), str(path))
    except ValueError as exc:
        raise UserError(f"not JSON: {exc}", file=str(path), fix=FIX) from None
    if not isinstance(data, dict):
        raise UserError("not a repair record (a JSON object)", file=str(path), fix=FIX)
    return data


def _strings(data: dict[str, Any], key: str, path: Path) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise UserError("not a list of names", file=str(path), field=key, fix=FIX)
    return value


def repair_order(outdir: Path) -> list[str] | None:
    """The switch order of OUTDIR/repair.json, or None when OUTDIR is no repair."""
    data = _record(outdir)
    return None if data is None else _strings(data, "push_order", outdir / REPAIR_FILE)


def repaired_failures(outdir: Path) -> Failures | None:
    """The failures OUTDIR/repair.json was made for, or None when OUTDIR is no repair."""
    data = _record(outdir)
    if data is None:
        return None
    path = outdir / REPAIR_FILE
    failures = data.get("failures")
    if not isinstance(failures, dict):
        raise UserError("no failures record", file=str(path), field="failures", fix=FIX)
    lists = {k: _strings(failures, k, path) for k in ("cables", "pairs", "switches")}
    return parse_failures(lists["cables"], lists["pairs"], lists["switches"],
                          fields={k: f"failures.{k}" for k in lists}, file=str(path))


def relearn_note(outdir: Path) -> str | None:
    """What the hosts do once a repair is pushed (docs/failures.md, step 5), or None for a
    bundle that is no repair: the switches on a replacement link have not learned them."""
    data = _record(outdir)
    if data is None:
        return None
    vlans = data.get("affected_vlans")
    if not isinstance(vlans, list) or not vlans:
        return "hosts: the repair changed no VLAN tree: nothing to re-learn"
    script = outdir / "hosts" / "relearn.sh"
    shown = " ".join(str(v) for v in vlans)
    if not script.is_file():
        return f"hosts: the repair changed VLAN(s) {shown}, and the plan has no hosts: nothing to re-learn"
    return (f"hosts: re-learn now in VLAN(s) {shown}: run {script} on every host (it runs the host program "
            "with --vlans for those VLANs; its header gives the ClusterShell, pdsh and Ansible lines). Until "
            "then the switches on the new links flood frames to those hosts; the refresh job re-learns by "
            "itself within its interval (docs/failures.md)")


def ordered(targets: list[T], names: list[str], name_of: Callable[[T], str]) -> list[T]:
    """`targets` in the repair's order; switches it does not name (no change) after, as they were."""
    rank = {n: i for i, n in enumerate(names)}
    return sorted(targets, key=lambda t: rank.get(name_of(t), len(rank)))
